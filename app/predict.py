"""Predict, then see: before a page shows an answer, the learner commits a guess, and the page compares.

A page calls :func:`ask` where an answer would appear. Until the learner has guessed for the question and its
context (the calculator's sliders, the run on screen, the drawn pair), :func:`ask` draws a small form and returns
False, and the page leaves the answer out; after a guess it says how close the guess was and returns True. Guesses
are kept for the session, so coming back to the same settings shows the same comparison. The sidebar's switch,
"Show answers without guessing", turns the whole thing off.

How close a guess was is a pure function of the guess and the truth (:func:`judge`), tested without Streamlit.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import streamlit as st

from app import state


@dataclass(frozen=True)
class Field:
    """One number the learner guesses."""

    name: str
    label: str
    lo: float
    hi: float
    step: float
    whole: bool = False

    def describe(self) -> str:
        lo, hi = (int(self.lo), int(self.hi)) if self.whole else (self.lo, self.hi)
        return f"{self.label} takes a {'whole number' if self.whole else 'number'} from {lo:g} to {hi:g}"


@dataclass(frozen=True)
class Prediction:
    """A guess and the truth it was compared with."""

    guess: dict[str, float]
    truth: dict[str, float]
    close: bool  # within the question's tolerance on every field


def relative_gap(guess: float, truth: float) -> float:
    """|guess − truth| as a share of |truth| (0 when both are 0)."""
    if truth == 0:
        return 0.0 if guess == 0 else float("inf")
    return abs(guess - truth) / abs(truth)


def judge(guess: dict[str, float], truth: dict[str, float], tolerance: dict[str, float]) -> bool:
    """True when every guessed number lies within its tolerance (a share of the truth) of the truth."""
    return all(relative_gap(float(guess[name]), float(truth[name])) <= tolerance[name] for name in truth)


def gap_words(guess: float, truth: float, unit: str = "") -> str:
    """'spot on', or how far off and in which direction, e.g. '12 % high'."""
    gap = relative_gap(guess, truth)
    if gap < 0.005:
        return "spot on"
    if gap == float("inf"):
        return f"off by {abs(guess - truth):g}{unit}"
    return f"{100 * gap:.0f} % {'high' if guess > truth else 'low'}"


def answers_shown() -> bool:
    return bool(state.get(state.SHOW_ANSWERS))


def switch() -> None:
    """The switch that shows every answer without a guess first (drawn in the sidebar by :mod:`app.frame`)."""
    st.toggle("Show answers without guessing", key=state.bound(state.SHOW_ANSWERS),
                      help="The calculator, Why the output is unchanged and Live decoding ask for a prediction and "
                           "hide their answer until you have guessed. Turn this on to see those answers straight "
                           "away. The tests keep their answers for the end either way.")
    state.keep([state.SHOW_ANSWERS])


def progress() -> str:
    """What the learner has guessed this session, for the sidebar ('' before the first guess)."""
    made = list(state.get(state.PREDICTIONS).values())
    if not made:
        return ""
    close = sum(p.close for p in made)
    return f"Predictions: {len(made)} made, {close} close."


def recorded(qid: str, context: Hashable) -> Prediction | None:
    return state.get(state.PREDICTIONS).get((qid, context))


def ask(qid: str, context: Hashable, question: str, fields: Sequence[Field], truth: dict[str, float],
        close: Callable[[dict[str, float]], bool], verdict: Callable[[Prediction], str]) -> bool:
    """Ask for a guess before the answer shows; return True once the answer may show.

    ``context`` names what the answer depends on (a new context asks again); ``close`` says whether a guess counts
    as close (often :func:`judge` with tolerances); ``verdict`` writes the comparison.
    """
    made = recorded(qid, context)
    if made is not None:
        (st.success if made.close else st.info)(verdict(made), icon=":material/psychology:")
        return True
    if answers_shown():
        return True
    with st.form(key=f"{state.PREDICT_FORM}{qid}", border=True):
        st.markdown(f"**Predict first.** {question}")
        cols = st.columns(len(fields))
        typed = {}
        for col, field in zip(cols, fields, strict=True):
            typed[field.name] = col.number_input(
                field.label, min_value=field.lo, max_value=field.hi, step=field.step, value=None,
                format="%d" if field.whole else "%.2f", key=f"{state.PREDICT_BOX}{qid}_{field.name}")
        pressed = st.form_submit_button("Check my guess")
    if pressed:
        missing = [f for f in fields if typed[f.name] is None]
        if missing:
            st.warning("Type a guess first: " + "; ".join(f.describe() for f in missing) + ".")
        else:
            guess = {name: (int(v) if f.whole else float(v))
                     for (name, v), f in zip(typed.items(), fields, strict=True)}
            state.get(state.PREDICTIONS)[(qid, context)] = Prediction(guess, dict(truth), bool(close(guess)))
            st.rerun()  # the whole app, not only a fragment: the sidebar's count of predictions follows
    st.caption("The answer shows once you have guessed. (The sidebar's switch shows answers without guessing.)")
    return False
