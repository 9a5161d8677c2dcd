"""The variants page (pages/variants.py): the guide and the measured comparison."""
