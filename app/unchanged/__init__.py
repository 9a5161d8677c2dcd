"""The why-the-output-is-unchanged page (pages/unchanged.py)."""
