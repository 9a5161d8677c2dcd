"""The in-practice page (pages/in_practice.py)."""
