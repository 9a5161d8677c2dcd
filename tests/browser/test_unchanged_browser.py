"""The p-versus-q widget in a real browser: presets, keyboard and mouse move q, and everything follows."""

from __future__ import annotations

import numpy as np
import pytest

from app.unchanged import pq
from specsim.lesson import unchanged
from tests.browser.conftest import act, alerts, drag, goto, metrics, plot_trace, press_key, screenshot, slider_value


def _weights(page) -> list[int]:
    return [int(slider_value(page, f"q weight of {label}")) for label in pq.LABELS]


def _check(page) -> np.ndarray:
    """Metrics and the first two charts agree with the weights the sliders show; return q."""
    q = unchanged.normalise(_weights(page))
    kept = unchanged.accepted_mass(pq.TARGET_P, q)
    shown = metrics(page)
    assert shown[:2] == [f"{kept:.3f}", f"{1 - kept:.3f}"]
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 3 && "
                           "Array.from(document.querySelectorAll('.js-plotly-plot')).every(g => g._fullData)")
    drawn_q = plot_trace(page, 0, "draft q")["y"]
    assert drawn_q == pytest.approx(list(q), abs=1e-12)
    parts = plot_trace(page, 1, "kept proposal: min(p, q)")["y"]
    assert parts == pytest.approx(list(np.minimum(pq.TARGET_P, q)), abs=1e-12)
    return q


def test_presets_keyboard_and_mouse_move_q(page):
    goto(page, "unchanged")
    _check(page)
    act(page, lambda: page.get_by_role("button", name="draft agrees (q = p)").click())
    assert _weights(page) == list(pq.PRESETS["draft agrees (q = p)"])
    assert metrics(page)[:2] == ["1.000", "0.000"]
    press_key(page, f"q weight of {pq.LABELS[0]}", "ArrowRight", 3)
    assert _weights(page)[0] == pq.PRESETS["draft agrees (q = p)"][0] + 3
    _check(page)
    drag(page, f"q weight of {pq.LABELS[4]}", 1.0)
    assert _weights(page)[4] == 100
    q = _check(page)
    assert q[4] > pq.TARGET_P[4]  # now the draft over-proposes the last token, and a rejection is possible
    screenshot(page, "why-unchanged")


def test_a_refused_seed_is_named_and_the_check_says_which_seed_it_used(page):
    """Issue 39 (7): -5 or 2147483648 stayed in the box, in red, while the χ² used the previous seed."""
    goto(page, "unchanged")
    box = page.get_by_role("textbox", name="Seed", exact=False)
    act(page, lambda: (box.fill("7"), box.press("Enter")))
    chi = page.get_by_text("speculative steps with this q").inner_text()
    for bad in ("-5", "2147483648"):
        act(page, lambda bad=bad: (box.fill(bad), box.press("Enter")))
        told = " ".join(alerts(page))
        assert f"not '{bad}'" in told and "still use seed 7" in told
        assert page.get_by_text("speculative steps with this q").inner_text() == chi
