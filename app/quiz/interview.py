"""The interview questions: each with a short model answer, the long worked one, and key points the learner ticks
to grade their own answer. The ticks live under ``state.IV_TICKED`` (a plain key), so they survive page switches.

The key points are an answer's outline, so they stay hidden until the learner opens the model answer with its button
(kept under ``state.IV_SHOWN``): a learner answers first, then grades."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from app import state
from app.layout import all_pages, script_path
from specsim.lesson.interview import Question


def point_key(qid: str, index: int) -> str:
    return f"{state.IV_POINT_CHECKBOX}{qid}_{index}"


def ticked(qid: str) -> frozenset[int]:
    """The key points of question ``qid`` the learner has ticked this session."""
    return state.get(state.IV_TICKED).get(qid, frozenset())


def _toggle(qid: str, index: int) -> None:
    marks = set(ticked(qid))
    (marks.add if st.session_state[point_key(qid, index)] else marks.discard)(index)
    state.put(state.IV_TICKED, {**state.get(state.IV_TICKED), qid: frozenset(marks)})


def score_line(q: Question) -> str:
    got = len(ticked(q.id))
    return f"Your answer made {got} of the {len(q.points)} key points."


def shown(qid: str) -> bool:
    """Whether the learner has opened the model answer of question ``qid`` this session."""
    return qid in state.get(state.IV_SHOWN)


def _show(qid: str) -> None:
    state.put(state.IV_SHOWN, state.get(state.IV_SHOWN) | {qid})


def _question(number: int, q: Question) -> None:
    pages = {p.url_path: p for p in all_pages()}
    with st.container(border=True):
        st.markdown(f"**{number}. {q.question}**")
        if not shown(q.id):
            st.button("Show the model answer", key=f"{state.IV_SHOW_BUTTON}{q.id}", on_click=_show, args=(q.id,),
                      help="Answer aloud or on paper first; the model answer and the points to grade it by follow.")
            return
        st.markdown("**Model answer.** " + q.short)
        page = pages[q.page]
        st.page_link(script_path(page.script), label=f"Where it is taught: {page.title}", icon=page.icon)
        with st.expander("The long answer"):
            st.markdown(q.answer)
        st.caption("Grade your own answer: tick each point it made.")
        marks = ticked(q.id)
        for i, point in enumerate(q.points):
            key = point_key(q.id, i)
            st.session_state[key] = i in marks  # the ticks live in IV_TICKED; the widget only shows them
            st.checkbox(point, key=key, on_change=_toggle, args=(q.id, i))
        st.markdown(score_line(q))


def render(questions: Sequence[Question]) -> None:
    """Every question, with its answers behind expanders and its key points to tick."""
    done = sum(bool(ticked(q.id)) for q in questions)
    st.caption(f"Graded so far: {done} of {len(questions)} questions.")
    for number, q in enumerate(questions, start=1):
        _question(number, q)
