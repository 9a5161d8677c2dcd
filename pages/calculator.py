"""Speedup calculator (placeholder until issue 2 lands)."""

import streamlit as st

st.title("Speedup calculator")
st.warning("This part of specsim is not built yet. It is planned, and this page says so plainly until it is.")
