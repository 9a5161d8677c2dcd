"""The calculator page (pages/calculator.py): its controls, numbers, figures and URL."""
