"""What frames every lesson page: "What you will learn" at the top, "Take away" and "Next" at the bottom, and in the
sidebar the glossary and the learner's progress through the path. Texts from :mod:`specsim.lesson.path`."""

from __future__ import annotations

import streamlit as st

from app import state
from app.layout import PAGES, all_pages, script_path
from specsim.lesson.path import frames

LEARN_SECTION = next(iter(PAGES))  # "Learn": the lesson pages, in the order a learner should read them


def lesson_pages() -> list:
    return list(PAGES[LEARN_SECTION])


def next_page(script: str):
    """The page after ``script`` on the path: the next lesson page, then the first test."""
    pages = all_pages()
    i = next(i for i, p in enumerate(pages) if p.script == script)
    return pages[i + 1] if i + 1 < len(pages) else None


def opening(script: str) -> None:
    """The page's objectives, right under its title."""
    frame = frames()[script]
    st.markdown("**What you will learn**\n\n" + "\n".join(f"- {goal}" for goal in frame.learn))


def closing(script: str) -> None:
    """The take-away and the next page."""
    frame = frames()[script]
    st.divider()
    st.markdown(f"**Take away.** {frame.take_away}")
    following = next_page(script)
    if following is not None:
        st.page_link(script_path(following.script), label=f"Next: {following.title}", icon=following.icon)


def seen_paths() -> set[str]:
    """The url paths of the pages opened this session; the default page, served at / (or at its "-default" path),
    counts as its own url path."""
    home = next(p.url_path for p in all_pages() if p.default)
    return {(path.removesuffix("-default") or home) for path in state.get(state.PAGES_SEEN) if path is not None}


def sidebar() -> None:
    """The glossary and the learner's progress, on every page."""
    from app import glossary, predict

    visited = seen_paths()
    lesson = lesson_pages()
    done = [p for p in lesson if p.url_path in visited]
    with st.sidebar:
        unread = next((p for p in lesson if p not in done), None)
        st.caption(f"Your path: {len(done)} of {len(lesson)} lesson pages opened"
                   + (f"; the first unread is {unread.title}" if unread is not None else "") + ". "
                   + tests_progress() + (" " + predict.progress() if predict.progress() else ""))
        predict.switch()
        glossary.expander(label="Glossary", in_sidebar=True)


def tests_progress() -> str:
    """What the learner has done of the tests this session."""
    from app.quiz.common import cached_knowledge, cached_sequence
    from specsim.lesson import quiz_attempts

    parts = []
    attempt = state.get(state.KQ_ATTEMPT)
    if attempt is not None and attempt.finished:
        try:
            questions = cached_knowledge()
            parts.append(f"knowledge check: {quiz_attempts.score(questions, attempt)} of {len(questions)}")
        except Exception:  # noqa: BLE001  a bad quiz file is the quiz page's to report, not the sidebar's
            parts.append("knowledge check: finished")
    elif attempt is not None and any(a is not None for a in attempt.answers):
        parts.append(f"knowledge check: {sum(a is not None for a in attempt.answers)} of {len(attempt.answers)} "
                     "answered")
    else:
        parts.append("knowledge check: not started")
    order = state.get(state.SEQ_ATTEMPT)
    solved = False
    # a right order counts once checked, and only when the learner found it before asking to see the answer
    if order is not None and order.checked and not order.shown:
        try:
            solved = order.solved(cached_sequence().accepted_orders)
        except Exception:  # noqa: BLE001
            solved = False
    parts.append("order one round: solved" if solved else "order one round: not solved yet")
    return "Tests: " + "; ".join(parts) + "."
