"""Four variants (placeholder until issue 7 lands)."""

import streamlit as st

st.title("Four variants")
st.warning("This part of specsim is not built yet. It is planned, and this page says so plainly until it is.")
