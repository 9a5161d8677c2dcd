"""Order one round (placeholder until issue 5 lands)."""

import streamlit as st

st.title("Order one round")
st.warning("This part of specsim is not built yet. It is planned, and this page says so plainly until it is.")
