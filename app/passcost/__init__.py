"""The is-verification-free page (pages/verify_free.py)."""
