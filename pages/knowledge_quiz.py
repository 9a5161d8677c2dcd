"""Knowledge check (placeholder until issue 5 lands)."""

import streamlit as st

st.title("Knowledge check")
st.warning("This part of specsim is not built yet. It is planned, and this page says so plainly until it is.")
