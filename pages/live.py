"""Live decoding (placeholder until issue 4 lands)."""

import streamlit as st

st.title("Live decoding")
st.warning("This part of specsim is not built yet. It is planned, and this page says so plainly until it is.")
