"""Order one round: a case drawn per attempt (greedy or sampled, every guess kept or one refused); its steps in order
(tap or drag), the cards that are steps of other cases left in the tray."""

import streamlit as st

from app.quiz import sequence as sequence_quiz
from app.quiz.common import sequence_quiz_or_stop

st.title("Order one round")
sequence_quiz.render(sequence_quiz_or_stop())
