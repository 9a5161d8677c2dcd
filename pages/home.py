"""The idea (placeholder until issue 2 lands)."""

import streamlit as st

st.title("The idea")
st.warning("This part of specsim is not built yet. It is planned, and this page says so plainly until it is.")
