"""The is-verification-free page (pages/verify.py)."""
