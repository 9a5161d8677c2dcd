"""Streamlit widgets, one module per concept; pages lay them out."""
