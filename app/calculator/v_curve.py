"""The calculator's "when v depends on K" section: the K trade-off with v(K + 1) from a curve, not one v.

Curves: this machine's measured v(n) (``python -m specsim.measure.machine``, or a measurement on the verify page),
and two roofline models, v(n) = max(1, n / R): a GPU serving one request (the app's one R,
``specsim.core.defaults.GPU_RIDGE``, flat for every K here) and a CPU that runs short of arithmetic early (R = 4).
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from app import state
from app.calculator import figures as figs
from app.charts import chart
from app.settings import CalcSettings
from specsim.core.defaults import GPU_RIDGE
from specsim.lesson import roofline
from specsim.measure import analytics

MODELS = {f"a GPU serving one request (roofline, R = {GPU_RIDGE})": float(GPU_RIDGE),
          "a compute-bound CPU (roofline, R = 4)": 4.0}


def measured() -> tuple[str, np.ndarray] | None:
    """This machine's v(K + 1) for K = K_MIN..K_MAX and the curve's name, where one was measured (the machine
    profile, else a measurement on the verify page); None where neither was."""
    from app import class_profile as app_profile  # here, not at the top: out of a class it imports torch (1.6 s)

    ks = np.arange(analytics.K_MIN, analytics.K_MAX + 1)
    profile = app_profile.cached()
    curve = state.get(state.VERIFY_CURVE)
    if profile is not None:
        return ("this machine, measured (python -m specsim.measure.machine)",
                np.array([max(1.0, profile.v.get(int(k) + 1, profile.v[max(profile.v)])) for k in ks]))
    if curve is not None:
        return "this machine, measured on the verify page", np.array([max(1.0, curve.v_at(int(k) + 1)) for k in ks])
    return None


def curves() -> dict[str, np.ndarray]:
    """v(K + 1) for K = K_MIN..K_MAX, by curve name; the measured one first when there is one."""
    ks = np.arange(analytics.K_MIN, analytics.K_MAX + 1)
    here = measured()
    out: dict[str, np.ndarray] = {} if here is None else {here[0]: here[1]}
    for name, ridge in MODELS.items():
        out[name] = np.array([roofline.roofline_pass_cost(k + 1, ridge) for k in ks])
    return out


def best(alpha: float, c: float, v: np.ndarray) -> tuple[int, float]:
    """The best K (:func:`specsim.measure.analytics.best_k`) and its speedup, with v(K + 1) from the curve (one per
    K)."""
    speeds = analytics.speedup_by_k(alpha, c, {int(k) + 1: float(vk) for k, vk in zip(
        range(analytics.K_MIN, analytics.K_MAX + 1), v, strict=True)})
    k = analytics.best_k(speeds)
    return k, speeds[k]


def section(s: CalcSettings) -> None:
    st.subheader("When checking more tokens costs more")
    st.markdown(
        "The slider's v is one number for every K, but a pass over K + 1 tokens costs more as K grows once the "
        "hardware runs short of arithmetic. A **roofline** model says when: a pass over n tokens costs "
        "v(n) = max(1, n / R), where the ridge point R is how many tokens one pass can score before its arithmetic, "
        "not reading the weights, sets its time (the page *Is verification free here?* derives it). Pick a curve of "
        "v(K + 1) and watch the best K move.")
    options = curves()
    if state.get(state.CALC_V_CURVE) not in options:
        state.show(state.CALC_V_CURVE, next(iter(options)))
    name = st.radio("v(K + 1) from", list(options), key=state.bound(state.CALC_V_CURVE), horizontal=False,
                    on_change=state.keep, args=([state.CALC_V_CURVE],))
    v = options[name]
    k_curve, speed_curve = best(s.alpha, s.draft_cost, v)
    k_flat = analytics.optimal_k(s.alpha, s.draft_cost, s.verify_cost)
    chart(figs.k_sweep_figure(s.alpha, s.draft_cost, v, s.k), key=state.CALC_V_CURVE_CHART)
    st.markdown(f"With v(K + 1) from {name}, the best K at α = {s.alpha:.0%} and c = {s.draft_cost:.2f} is "
                f"**{k_curve}** ({speed_curve:.2f}×); with the constant v = {s.verify_cost:.2f} above it is "
                f"{k_flat}. At your K = {s.k}, this curve has v = {v[s.k - analytics.K_MIN]:.2f}.")
