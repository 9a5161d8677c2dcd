"""Order one round: put the five steps of a draft-and-verify round in order (tap or drag)."""

import streamlit as st

from app.quiz import sequence as sequence_quiz
from app.quiz.common import sequence_quiz_or_stop

st.title("Order one round")
sequence_quiz.render(sequence_quiz_or_stop())
