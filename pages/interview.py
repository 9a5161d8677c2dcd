"""Interview questions: open questions on speculative decoding, each with a short model answer, the long worked one,
key points to grade one's own answer by, and where it is taught."""

import streamlit as st

from app.quiz import interview as interview_view
from specsim.lesson import interview

st.title("Interview questions")
st.caption(
    "Questions of the kind asked in machine-learning systems interviews. Try each one aloud or on paper before opening "
    "its model answer, then tick the key points your answer made; every answer links to the page of this app that "
    "teaches the idea.")
interview_view.render(interview.load())
