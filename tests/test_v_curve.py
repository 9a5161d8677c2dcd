"""The calculator with v(K + 1) from a curve: the best K moves when checking more tokens costs more."""

from __future__ import annotations

import numpy as np
import pytest

from app import state
from app.calculator import v_curve
from app.calculator.figures import k_sweep_figure
from specsim.measure import analytics
from tests.conftest import open_page, open_tab


def test_a_steep_curve_moves_the_best_k_down():
    ks = np.arange(analytics.K_MIN, analytics.K_MAX + 1)
    flat, steep = np.ones(len(ks)), np.array([max(1.0, (k + 1) / 4) for k in ks])
    k_flat, _ = v_curve.best(0.8, 0.05, flat)
    k_steep, speed = v_curve.best(0.8, 0.05, steep)
    assert k_flat == analytics.optimal_k(0.8, 0.05, 1.0) and k_steep < k_flat
    brute = max(ks, key=lambda k: float(analytics.speedup(0.8, k, 0.05, steep[k - 1])))
    assert k_steep == brute and speed == pytest.approx(float(analytics.speedup(0.8, brute, 0.05, steep[brute - 1])))
    fig = k_sweep_figure(0.8, 0.05, steep, 4)
    star = next(t for t in fig.data if t.name == "best K")
    assert list(star.x) == [k_steep]


def test_the_calculator_offers_the_curves_and_names_the_best_k(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECSIM_CACHE", str(tmp_path))  # no measured profile: the two models only
    at = open_tab(open_page("calculator.py"), "When v grows with K")
    assert not at.exception
    radio = at.radio(key=state.widget_key(state.CALC_V_CURVE))
    assert radio.options == list(v_curve.MODELS)
    radio.set_value(list(v_curve.MODELS)[1]).run()
    ks = np.arange(analytics.K_MIN, analytics.K_MAX + 1)
    k, speed = v_curve.best(0.7, 0.13, np.array([max(1.0, (kk + 1) / 4) for kk in ks]))
    assert any(f"is **{k}** ({speed:.2f}×)" in m.value for m in at.markdown)
