"""Quiz progress in the address bar, so reloading a quiz page keeps it (issue 12).

Session state survives a visit to another page but not a reload, which opens a new session. Each
quiz therefore writes its attempt into one short URL parameter after every change, and a new
session starts from that parameter when it reads as a valid attempt for the quiz on this server
(anything else starts a fresh attempt, with a note). Pure functions encode and decode; the two
small Streamlit functions at the end read and write the parameter.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from app import state
from app.urlcodec import KNOWLEDGE_PARAM, SEQUENCE_PARAM, ours  # noqa: F401  (the quiz pages read them here)
from specsim.lesson.quiz import Question, SequenceQuiz
from specsim.lesson.quiz_attempts import KnowledgeAttempt, SequenceAttempt, fits

_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
_NONE = "-"


def _digit(i: int | None) -> str:
    return _NONE if i is None else _DIGITS[i]


def _index(ch: str, below: int) -> int | None:
    """The digit's value, or raise ValueError when it is not one below ``below``."""
    if ch == _NONE:
        return None
    i = _DIGITS.find(ch)
    if not 0 <= i < below:
        raise ValueError(ch)
    return i


def encode_knowledge(attempt: KnowledgeAttempt) -> str:
    """``seed.current.answers``: one digit per question (the option's index in the data file), - unanswered."""
    return f"{attempt.seed}.{attempt.current}.{''.join(_digit(a) for a in attempt.answers)}"


def decode_knowledge(text: str, questions: Sequence[Question]) -> KnowledgeAttempt | None:
    """The attempt ``text`` describes, or None unless it is a possible attempt at exactly these questions."""
    parts = text.split(".")
    if len(parts) != 3 or not (parts[0].isascii() and parts[0].isdigit() and len(parts[0]) <= 10):
        return None
    if not (parts[1].isascii() and parts[1].isdigit()) or len(parts[2]) != len(questions):
        return None
    if any(str(int(p)) != p for p in parts[:2]):  # one spelling per attempt (no leading zeros)
        return None
    try:
        answers = tuple(_index(ch, len(q.options)) for ch, q in zip(parts[2], questions, strict=True))
    except ValueError:
        return None
    current = int(parts[1])
    if current > len(questions) or any(a is None for a in answers[:current]):
        return None
    if any(a is not None for a in answers[current + 1:]):
        return None
    return KnowledgeAttempt(int(parts[0]), answers, current)


def encode_sequence(attempt: SequenceAttempt, quiz: SequenceQuiz) -> str:
    """``scenario.tray.slots.flags``: the scenario by its place in the file, cards by their place among the file's
    cards (which the file lists out of order, so the link does not spell the answer); - for an empty slot; flags 1
    when the learner asked for a check, plus 2 when they asked to see the answer."""
    where = {piece.id: i for i, piece in enumerate(quiz.pieces)}
    scenario = next(i for i, sc in enumerate(quiz.scenarios) if sc.id == attempt.scenario)
    tray = "".join(_digit(where[p]) for p in attempt.tray_order)
    slots = "".join(_digit(None if p is None else where[p]) for p in attempt.slots)
    return f"{_digit(scenario)}.{tray}.{slots}.{int(attempt.checked) + 2 * int(attempt.shown)}"


def decode_sequence(text: str, quiz: SequenceQuiz) -> SequenceAttempt | None:
    """The attempt ``text`` describes, or None unless it is a possible attempt at one of this quiz's scenarios
    (:func:`specsim.lesson.quiz_attempts.fits`: its steps and every card left out of it in the tray, a slot per
    card)."""
    parts = text.split(".")
    n = len(quiz.pieces)
    if len(parts) != 4 or len(parts[0]) != 1 or parts[3] not in ("0", "1", "2", "3"):
        return None
    try:
        scenario = quiz.scenarios[_index(parts[0], len(quiz.scenarios))]
        tray = [quiz.pieces[_index(ch, n)].id for ch in parts[1]]
        slots = [None if ch == _NONE else quiz.pieces[_index(ch, n)].id for ch in parts[2]]
    except (ValueError, TypeError):
        return None
    flags = int(parts[3])
    attempt = SequenceAttempt(tuple(tray), tuple(slots), bool(flags & 1), scenario.id, bool(flags & 2))
    return attempt if fits(quiz, attempt) else None


# ---- the address bar ------------------------------------------------------------------------------
def restore(param: str, decode) -> object | None:
    """The attempt in the URL parameter ``param`` (any letter case, via ``decode``), or None; a bad value gets
    a note."""
    found = ours(st.query_params.to_dict(), [param])
    if param not in found:
        return None
    attempt = decode(found[param])
    if attempt is None:
        st.warning("The progress saved in this page's address could not be read; a new attempt starts.")
    return attempt


def remember(param: str, text: str, pristine: bool = False) -> None:
    """Keep the attempt ``text`` in the address; a ``pristine`` attempt (nothing answered or placed yet) only
    where the address holds an earlier one, so arriving at a quiz adds no history entry of its own."""
    state.write_query([param], {param: text}, {param: text} if pristine else None)
