"""The in-practice page (pages/practice.py)."""
