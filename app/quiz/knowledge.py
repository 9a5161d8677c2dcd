"""The knowledge check: one question at a time, right or wrong after each answer, a review at the end.

The explanations wait for the review: an explanation shown after question 10 could give away question 15, so none
is shown until every question is answered.

The attempt (seed of the option shuffle and of the transfer questions' numbers, answers, current question) is one
:class:`specsim.lesson.quiz_attempts.KnowledgeAttempt` under ``state.KQ_ATTEMPT``, so it survives page switches.
The review names, for each wrong answer, the page and the section to read again.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from app import state
from app.layout import all_pages, script_path
from app.quiz import params as quiz_params
from app.quiz.common import new_seed
from specsim.lesson.quiz import Question, Revisit, questions_for
from specsim.lesson.quiz_attempts import (
    KnowledgeAttempt,
    advance,
    answer_current,
    option_order,
    review,
    score,
    to_revisit,
)

EXPLANATIONS_LATER = ("Why each answer is right, and what each wrong option mistakes, is explained with your results, "
                      "once every question is answered.")


def current_attempt(questions: Sequence[Question]) -> KnowledgeAttempt:
    """The attempt in progress, started on first use or when the number of questions changed."""
    attempt = state.get(state.KQ_ATTEMPT)
    if attempt is None:  # a new session (e.g. the page was reloaded): the address bar may hold the progress
        attempt = quiz_params.restore(quiz_params.KNOWLEDGE_PARAM,
                                      lambda text: quiz_params.decode_knowledge(text, questions))
    if attempt is None or len(attempt.answers) != len(questions):
        attempt = KnowledgeAttempt.start(len(questions), new_seed())
    state.put(state.KQ_ATTEMPT, attempt)
    return attempt


def _answer(chosen: int) -> None:
    state.put(state.KQ_ATTEMPT, answer_current(state.get(state.KQ_ATTEMPT), chosen))


def _next() -> None:
    state.put(state.KQ_ATTEMPT, advance(state.get(state.KQ_ATTEMPT)))


def _retake() -> None:
    old = state.get(state.KQ_ATTEMPT)
    state.put(state.KQ_ATTEMPT, KnowledgeAttempt.start(len(old.answers), new_seed(old.seed)))


def _question(questions: Sequence[Question], attempt: KnowledgeAttempt) -> None:
    n, total, question = attempt.current, len(questions), questions[attempt.current]
    head, points = st.columns([3, 1])
    head.subheader(f"Question {n + 1} of {total}")
    points.markdown(f"**Score: {score(questions, attempt)}**")
    st.progress(n / total)
    st.caption(question.topic)
    st.markdown(f"##### {question.prompt}")
    chosen = attempt.answers[n]
    order = option_order(question, attempt.seed)
    if chosen is None:
        for idx in order:
            st.button(question.options[idx], key=f"{state.KQ_OPTION_BUTTON}{idx}", on_click=_answer, args=(idx,),
                      width="stretch")
        return
    for idx in order:
        mark = "✅" if idx == question.answer else ("❌" if idx == chosen else "▫️")
        st.markdown(f"{mark} {question.options[idx]}")
    if chosen == question.answer:
        st.success("Right.")
    else:
        st.error(f"Not quite. The right answer: **{question.correct_option}**")
    st.caption(EXPLANATIONS_LATER)
    last = n + 1 == total
    st.button("See my results" if last else "Next question", key=state.KQ_NEXT_BUTTON, on_click=_next, type="primary")


def revisit_label(revisit: Revisit) -> str:
    """'Page title: “section”' for a revisit, the page's title from the lesson's outline."""
    page = next((p for p in all_pages() if p.url_path == revisit.page), None)
    return f"{page.title if page else revisit.page}: “{revisit.section}”"


def _revisit_link(revisit: Revisit, numbers: Sequence[int] | None = None) -> None:
    page = next((p for p in all_pages() if p.url_path == revisit.page), None)
    label = revisit_label(revisit) + (f" (question{'s' if len(numbers) > 1 else ''} "
                                      f"{', '.join(map(str, numbers))})" if numbers else "")
    if page is None:
        st.markdown(f"- {label}")
    else:
        st.page_link(script_path(page.script), label=label, icon=page.icon)


def _review(questions: Sequence[Question], attempt: KnowledgeAttempt) -> None:
    total, got = len(questions), score(questions, attempt)
    st.subheader(f"You scored {got} / {total}")
    if got == total:
        st.success("Every answer right.")
    st.button("Retake the quiz (new shuffle, new numbers)", key=state.KQ_RETAKE_BUTTON, on_click=_retake,
              type="primary")
    sections = to_revisit(questions, attempt)
    if sections:
        st.markdown("**What to read again**, in the lesson's order of the questions you missed:")
        for revisit, numbers in sections:
            _revisit_link(revisit, numbers)
    for item in review(questions, attempt):
        with st.container(border=True):
            st.markdown(f"{'✅' if item.is_correct else '❌'} **{item.number}. {item.prompt}**")
            if item.is_correct:
                st.markdown(f"Your answer: {item.chosen}")
            else:
                st.markdown(f"Your answer: {item.chosen or '(none)'}  \nRight answer: **{item.correct}**")
                if item.revisit is not None:
                    st.markdown(f"Revisit: {revisit_label(item.revisit)}")
            st.caption(item.explanation)


def render(questions: Sequence[Question]) -> None:
    """The current question with its feedback, or the review once every question is answered."""
    attempt = current_attempt(questions)
    questions = questions_for(questions, attempt.seed)  # this attempt's numbers
    pristine = attempt.current == 0 and all(a is None for a in attempt.answers)
    quiz_params.remember(quiz_params.KNOWLEDGE_PARAM, quiz_params.encode_knowledge(attempt), pristine)  # for a reload
    if attempt.finished:
        _review(questions, attempt)
    else:
        _question(questions, attempt)
