"""The why-the-output-is-unchanged page (pages/why_unchanged.py)."""
