"""The live page's "Why this speed" panel, on hand-built traces (no model runs)."""

from __future__ import annotations

import dataclasses

from app import state
from app.live import run as live_run
from app.live import why_speed
from specsim.core.prompt_sets import EXAMPLES
from specsim.lesson import explain
from tests.conftest import ROOT, open_page
from tests.live_traces import hand_plain, hand_trace, iteration, slot


def _slow_run():
    """Every first guess rejected: one token per loop, each loop dearer than a plain pass."""
    its = tuple(iteration(i, 4 + i, [slot(1, 13, "rejected", 0.05, 0.9, True, t=0.001),
                                     slot(2, 16, "unchecked", 0.0, 0.7, True, t=0.001)],
                          14, "correction", (14,), verify=0.012) for i in range(10))
    spec = dataclasses.replace(hand_trace(), iterations=its, generated_ids=(14,) * 10, total_time_s=0.02 + 0.15)
    return spec, hand_plain(generated=(14,) * 10)


def _page_with(spec, plain):
    at = open_page(None)
    at.session_state[state.LIVE_TRACE] = spec
    at.session_state[state.LIVE_PLAIN] = plain
    at.switch_page(str(ROOT / "pages" / "live.py")).run()
    assert not at.exception, at.exception
    return at


def test_fast_run_names_its_decider_and_has_no_win_button():
    spec, plain = dataclasses.replace(hand_trace(), total_time_s=0.02 + 0.064), hand_plain()  # no gaps
    at = _page_with(spec, plain)
    b, fair = why_speed.budget(spec, plain)
    assert "Why this speed" in [h.value for h in at.subheader]
    assert any(explain.decider_sentence(b) in m.value for m in at.markdown)
    assert any(explain.budget_sentence(b) in m.value for m in at.markdown)
    assert any(f"{b.projected_speedup:.2f}×" in c.value and "Projection" in c.value for c in at.caption)
    assert b.speedup > 1
    assert state.LIVE_WIN_BUTTON not in [btn.key for btn in at.button]


def test_slow_run_says_why_and_one_click_runs_the_winning_example(monkeypatch):
    spec, plain = _slow_run()
    calls = []
    monkeypatch.setattr(live_run, "start", lambda settings: calls.append(settings))
    at = _page_with(spec, plain)
    b, fair = why_speed.budget(spec, plain)
    assert fair.headline <= 1.0 and b.speedup < 1
    assert any(explain.slowdown_sentence(b) == i.value for i in at.info)
    at.button(key=state.LIVE_WIN_BUTTON).click().run()
    assert not at.exception
    assert len(calls) == 1  # ran at once, without a second click
    assert calls[0].drafter == why_speed.WIN_DRAFTER and calls[0].prompt == EXAMPLES[why_speed.WIN_EXAMPLE]
    at.run()
    assert len(calls) == 1  # and only once


def test_gpu_projection_labels_the_cpu_draft_cost():
    at = open_page("live.py")
    assert not at.exception
    projection = [c.value for c in at.caption if c.value.startswith("Projection, not a measurement")]
    assert projection and all("measured on this CPU (c = " in p for p in projection)
