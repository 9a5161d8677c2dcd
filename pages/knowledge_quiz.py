"""Knowledge check: 20 multiple-choice questions covering the whole lesson."""

import streamlit as st

from app.widgets import knowledge_quiz
from app.widgets.quiz_common import knowledge_quiz_or_stop

st.title("Knowledge check")
knowledge_quiz.render(knowledge_quiz_or_stop())
