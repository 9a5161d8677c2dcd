"""The calculator run backwards: the acceptance rate that explains a speedup a paper reported, and the
distribution of j in words."""

from __future__ import annotations

import streamlit as st

from app import state
from app.calculator.text import fmt_c
from app.settings import CalcSettings
from specsim.core import published
from specsim.measure import analytics


def distribution_sentence(alpha: float, k: int) -> str:
    """What the bars of P(j = i) say, with the two ends computed."""
    probs = analytics.prefix_distribution(alpha, k)
    mean = float(analytics.expected_accepted_prefix(alpha, k))
    if k == 1:
        return (f"A loop keeps j = 0 or 1 of its one guess: none with chance {probs[0]:.0%} (the guess is wrong), "
                f"one with chance {probs[1]:.0%} (α). The mean, E[j] = {mean:.2f}, is the loop drawn above; a single "
                "loop is rarely average.")
    return (f"A loop keeps j of its {k} guesses: none with chance {probs[0]:.0%} (the first guess is wrong), all "
            f"{k} with chance {probs[k]:.0%} (α^{k}). The mean, E[j] = {mean:.2f}, is the loop drawn above; a "
            "single loop is rarely average.")


def alpha_text(speedup: float, k: int, c: float, v: float) -> str:
    alpha = analytics.alpha_for_speedup(speedup, k, c, v)
    if alpha is None:
        lo, hi = float(analytics.speedup(0.0, k, c, v)), float(analytics.speedup(1.0, k, c, v))
        return f"out of reach: at K = {k}, c = {fmt_c(c)}, v = {v:.2f} every α gives {lo:.2f}× to {hi:.2f}×"
    return f"α = {alpha:.0%}"


def parse_speedup(text: str, k: int, c: float, v: float) -> tuple[float | None, str | None]:
    """The speedup typed in the box, or None and a message naming the limit it broke.

    A reported speedup must beat plain decoding (above 1×), and no α can give more than every guess kept:
    (K + 1) ÷ (K·c + v), which is K + 1 at most, when drafting and checking are free.
    """
    cleaned = str(text).strip().rstrip("×xX").strip().replace(",", ".")
    try:
        value = float(cleaned)
    except ValueError:
        return None, f"'{text}' is not a number: type a speedup such as 1.92."
    top = float(analytics.speedup(1.0, k, c, v))
    if not value > 1.0 or value != value:
        return None, (f"{text} is refused: a reported speedup must be above 1×, faster than plain decoding; "
                      "no acceptance rate explains a gain of 1× or less.")
    if value > top:
        return None, (f"{text} is refused: at K = {k}, c = {fmt_c(c)} and v = {v:.2f} even a draft whose every guess "
                      f"is kept gives at most (K + 1) ÷ (K·c + v) = {top:.2f}× (and never more than K + 1 = {k + 1}×, "
                      "when drafting and checking are free).")
    return value, None


def section(s: CalcSettings) -> None:
    """Back-solve α from a reported speedup at the calculator's K, c and v, and from Chen et al.'s runs."""
    st.subheader("Run it backwards: what acceptance does a paper's speedup imply?")
    st.markdown(
        "Many papers headline a speedup. Some also give acceptance: Leviathan et al. tabulate α for many "
        "draft–target pairs, and EAGLE, Medusa and vLLM report the mean acceptance length τ (tokens per loop). "
        "Where only a speedup is given, turn the closed form around: given K, c and v, exactly one α gives it, "
        "because tokens per loop grows with α.")
    typed = st.text_input("Reported speedup (×)", key=state.bound(state.CALC_REPORTED_SPEEDUP),
                          on_change=state.keep, args=([state.CALC_REPORTED_SPEEDUP],),
                          help="A speedup over plain decoding, such as 1.92 or 2.46×")
    reported, problem = parse_speedup(typed, s.k, s.draft_cost, s.verify_cost)
    if problem is not None:
        st.error(problem, icon="⚠️")
    else:
        st.markdown(f"At K = {s.k}, c = {fmt_c(s.draft_cost)} and v = {s.verify_cost:.2f}, a speedup of "
                    f"{reported:.2f}× means {alpha_text(reported, s.k, s.draft_cost, s.verify_cost)}.")
    c = round(published.CHEN_2023.draft_cost, 2)
    rows = [f"- {run.task}: {run.speedup:.2f}× at K = {run.k} gives {alpha_text(run.speedup, run.k, c, 1.0)}"
            for run in published.REPORTED_RUNS]
    st.markdown(f"{published.REPORTED_RUNS[0].source} measured, with c = {fmt_c(c)} and v taken as 1:\n"
                + "\n".join(rows)
                + "\n\nThe calculator's 70 % is where its slider starts, not a measured figure. These back-solved "
                "rates are lower bounds: taking v = 1 prices the check at one plain pass, and a dearer check would "
                "need a higher α to reach the same speedup.")
