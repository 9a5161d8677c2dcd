"""Under the hood in a real browser: the figures plotly draws are the ones specsim.lesson.hood computes from the run."""

from __future__ import annotations

import math

import pytest

from specsim.lesson import hood, recorded
from tests.browser.conftest import act, goto, plot_trace, screenshot

RUNS = {r.name: recorded.load(r.path) for r in recorded.RECIPES}


def _drawn(page, name: str) -> dict:
    """The first plotly trace called ``name``, once it is drawn."""
    page.wait_for_function(
        "(name) => Array.from(document.querySelectorAll('.js-plotly-plot')).some("
        "g => g._fullData && g._fullData.some(d => d.name === name))", arg=name, timeout=30_000)
    return plot_trace(page, None, name)


def test_the_cache_mask_and_position_figures_are_the_runs_own(page):
    goto(page, "hood")
    for name in RUNS:
        title = next(r.title for r in recorded.RECIPES if r.name == name)
        choice = page.get_by_role("radio", name=title, exact=False)
        if not choice.is_checked():  # the first recording is picked when the page opens
            act(page, lambda c=choice: c.check(force=True))
        trace = RUNS[name].spec
        step = hood.teaching_step(trace)  # the page opens each run on its teaching iteration
        it = trace.iterations[step]
        story = hood.cache_story(it)
        target = _drawn(page, "target cache")
        c = story.lengths
        assert target["y"] == [c.target_before, c.target_written, c.target_kept]
        if c.draft_before is not None:
            assert _drawn(page, "draft cache")["y"] == [c.draft_before, c.draft_drafted, c.draft_kept]
        rows = _drawn(page, "target's top token: p")
        assert len(rows["y"]) == it.k + 1  # one row per input of the pass: the last kept token and K guesses
        model = hood.position_model(trace)
        measured = _drawn(page, "rᵢ: kept when reached (this run)")
        assert len(measured["y"]) == len(model.by_position)
        for drawn, rate in zip(measured["y"], model.by_position, strict=True):  # a position never checked: a gap
            assert drawn is None if math.isnan(rate) else drawn == pytest.approx(rate)
        chances = _drawn(page, "Σ min(p, q) per checked slot")
        assert chances["y"] == pytest.approx([o.chance for o in hood.slot_overlaps(trace)])
    screenshot(page, "hood-figures")
