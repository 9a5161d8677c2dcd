"""What both quiz pages share: loading the quiz data once, and a fresh seed per attempt."""

from __future__ import annotations

import json
import secrets

import streamlit as st

from specsim.core.defaults import SEED_MAX
from specsim.lesson import quiz


@st.cache_resource(show_spinner=False)
def cached_sequence() -> quiz.SequenceQuiz:
    return quiz.load_sequence()


@st.cache_resource(show_spinner=False)
def cached_knowledge() -> tuple[quiz.Question, ...]:
    return quiz.load_knowledge()


def _or_stop(loader, what: str):
    try:
        return loader()
    except (OSError, json.JSONDecodeError, quiz.QuizDataError) as exc:
        st.error(f"The {what} could not be loaded, so this quiz cannot run. {exc}")
        st.stop()


def sequence_quiz_or_stop() -> quiz.SequenceQuiz:
    """The sequencing quiz, or an error message in the page (and the script stops) if its file is bad."""
    return _or_stop(cached_sequence, f"sequencing quiz ({quiz.SEQUENCE_FILE.name})")


def knowledge_quiz_or_stop() -> tuple[quiz.Question, ...]:
    """The 20 questions, or an error message in the page (and the script stops) if their file is bad."""
    return _or_stop(cached_knowledge, f"knowledge check ({quiz.KNOWLEDGE_FILE.name})")


def new_seed(previous: int | None = None) -> int:
    """A random seed for a new attempt, different from the previous one."""
    while (seed := secrets.randbelow(SEED_MAX + 1)) == previous:
        pass
    return seed
