"""Knowledge check: 20 multiple-choice questions covering the whole lesson, then worked exercises with checked
answers."""

import streamlit as st

from app.quiz import exercises
from app.quiz import knowledge as knowledge_quiz
from app.quiz.common import knowledge_quiz_or_stop

st.title("Knowledge check")
knowledge_quiz.render(knowledge_quiz_or_stop())
st.divider()
exercises.render()
