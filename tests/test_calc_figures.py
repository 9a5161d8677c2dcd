"""The calculator's figure builders and sentences, checked on their data against specsim.measure.analytics."""

from __future__ import annotations

import math

import numpy as np
import pytest

from app.calculator import figures as figs
from app.calculator import text as calc_text
from app.settings import CalcSettings
from specsim.measure import analytics


def trace(fig, name: str, xaxis: str | None = None):
    found = [t for t in fig.data if t.name == name and (xaxis is None or (t.xaxis or "x") == xaxis)]
    assert len(found) == 1, [t.name for t in fig.data]
    return found[0]


# ---- one loop ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("alpha", "k"), [(0.7, 4), (0.0, 5), (1.0, 3), (0.5, 16), (0.9, 8), (0.3, 1)])
def test_iteration_picture_keeps_the_rounded_expected_prefix_and_puts_plus_one_on_the_first_rejected(alpha, k):
    prefix = analytics.expected_accepted_prefix(alpha, k)
    kept = math.floor(prefix + 0.5)
    fig = figs.iteration_figure(k, prefix)
    assert list(trace(fig, "draft proposals").x) == list(range(1, k + 1))
    assert list(trace(fig, "draft proposals").text) == [f"t+{i}" for i in range(1, k + 1)]
    assert list(trace(fig, "kept").x) == list(range(1, kept + 1))
    assert list(trace(fig, "rejected").x) == list(range(kept + 1, min(kept + 1, k) + 1))
    assert list(trace(fig, "never checked").x) == list(range(kept + 2, k + 1))
    assert set(trace(fig, "kept").text) <= {"✓"} and set(trace(fig, "rejected").text) <= {"✗"}
    assert list(trace(fig, "+1 from the target").x) == [kept + 1]
    target = trace(fig, "target pass")
    assert min(target.x) < 1 and max(target.x) > k  # one pass spans every proposal


def test_iteration_picture_for_the_lesson_example_keeps_two():
    fig = figs.iteration_figure(4, analytics.expected_accepted_prefix(0.7, 4))
    assert list(trace(fig, "kept").x) == [1, 2] and list(trace(fig, "rejected").x) == [3]
    assert list(trace(fig, "never checked").x) == [4]
    assert list(trace(fig, "+1 from the target").x) == [3]


def test_all_kept_puts_plus_one_after_the_last_slot_and_nothing_kept_puts_it_first():
    assert list(trace(figs.iteration_figure(6, 6.0), "+1 from the target").x) == [7]
    assert list(trace(figs.iteration_figure(6, 0.0), "+1 from the target").x) == [1]
    assert len(trace(figs.iteration_figure(6, 0.0), "kept").x) == 0


# ---- K sweep ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("alpha", "c", "v", "k"), [(0.7, 0.13, 1.0, 4), (0.5, 0.05, 1.0, 12), (0.9, 0.3, 1.4, 1),
                                                    (0.2, 0.13, 1.0, 16)])
def test_k_sweep_marks_the_optimum_and_highlights_the_current_k(alpha, c, v, k):
    fig = figs.k_sweep_figure(alpha, c, v, k)
    ks = list(range(1, 17))
    speed = trace(fig, "speedup")
    assert list(speed.x) == ks
    np.testing.assert_allclose(speed.y, [analytics.speedup(alpha, kk, c, v) for kk in ks])
    np.testing.assert_allclose(trace(fig, "tokens per loop").y, [analytics.tokens_per_loop(alpha, kk) for kk in ks])
    best = trace(fig, "best K")
    assert list(best.x) == [analytics.optimal_k(alpha, c, v)]
    assert best.y[0] == pytest.approx(max(analytics.speedup(alpha, kk, c, v) for kk in ks))
    current = [t for t in fig.data if t.name == "current K"]
    assert len(current) == 2 and all(list(t.x) == [k] for t in current)
    ys = sorted(t.y[0] for t in current)
    assert ys == pytest.approx(sorted([analytics.tokens_per_loop(alpha, k), analytics.speedup(alpha, k, c, v)]))


# ---- waste -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("alpha", "k"), [(0.7, 4), (0.5, 9), (0.95, 16), (0.0, 1)])
def test_waste_bars_split_each_k_into_kept_and_wasted_with_current_k_in_full_colour(alpha, k):
    fig = figs.waste_figure(alpha, k)
    kept, wasted = trace(fig, "kept on average, E[j]"), trace(fig, "wasted draft tokens, K − E[j]")
    ks = np.arange(1, 17)
    np.testing.assert_allclose(wasted.y, [analytics.wasted_draft_tokens(alpha, kk) for kk in ks])
    np.testing.assert_allclose(np.asarray(kept.y) + np.asarray(wasted.y), ks)
    opacity = np.asarray(kept.marker.opacity)
    assert opacity[k - 1] == 1.0 and np.all(np.delete(opacity, k - 1) < 1.0)


def test_waste_figure_draws_the_prefix_ceiling_only_when_it_is_in_view():
    at_half = figs.waste_figure(0.5, 4)
    assert list(trace(at_half, "ceiling of E[j], α/(1−α)").y) == [1.0, 1.0]
    assert not [t for t in figs.waste_figure(0.99, 4).data if t.name.startswith("ceiling")]


# ---- heatmap -----------------------------------------------------------------------------------------


def test_heatmap_z_is_the_speedup_on_the_grid_with_the_current_point_marked():
    c, v = 0.13, 1.1
    fig = figs.speedup_heatmap(c, v, current_k=6, current_alpha_pct=55)
    heat = trace(fig, "speedup")
    assert list(heat.x) == list(range(1, 17)) and list(heat.y) == list(range(0, 101))
    z = np.asarray(heat.z)
    for i, a in enumerate(heat.y):
        for j, k in enumerate(heat.x):
            assert z[i, j] == pytest.approx(analytics.speedup(a / 100, k, c, v), rel=1e-12)
    current = trace(fig, "current settings")
    assert (list(current.x), list(current.y)) == ([6], [55])
    assert list(trace(fig, "best K for each α").x) == [analytics.optimal_k(a / 100, c, v) for a in range(101)]
    white = [pos for pos, colour in heat.colorscale if colour == "#f7f7f7"]
    assert heat.zmin + white[0] * (heat.zmax - heat.zmin) == pytest.approx(1.0)  # white is exactly 1×
    assert np.asarray(trace(fig, "break-even, 1×").z) == pytest.approx(z)


@pytest.mark.parametrize("zmax", [0.4, 1.0, 1.6, 5.5])
def test_break_even_colour_scale_is_white_at_one(zmax):
    scale = figs.break_even_colorscale(zmax)
    positions = [pos for pos, _ in scale]
    assert positions == sorted(positions) and positions[0] == 0.0 and positions[-1] <= 1.0
    white = next(pos for pos, colour in scale if colour == "#f7f7f7")
    assert white == pytest.approx(min(1.0 / zmax, 1.0))


def test_heatmap_shows_the_prefix_stalling_at_half_acceptance_and_the_collapse_at_low_acceptance():
    fig = figs.speedup_heatmap(0.13, 1.0, 4, 70)
    heat = trace(fig, "speedup")
    prefix, z = np.asarray(heat.customdata), np.asarray(heat.z)
    row50 = list(heat.y).index(50)
    assert prefix[row50, 15] - prefix[row50, 4] < 0.04  # K = 5 to 16 adds almost nothing at α = 50 %
    assert np.all(np.diff(z[row50, 1:]) < 0)  # past K = 2, every extra draft token loses speed at α = 50 %
    assert np.all(z[: list(heat.y).index(10) + 1] < 1.0)  # at α ≤ 10 % no K beats plain decoding


# ---- sentences -----------------------------------------------------------------------------------------


def test_loop_sentence_carries_the_lesson_example():
    text = calc_text.loop_sentence(CalcSettings())
    for shown in ("4 draft passes", "0.13×", "1.52 target passes", "2.77 tokens", "1.82× faster"):
        assert shown in text


@pytest.mark.parametrize("s", [CalcSettings(k=1, alpha_pct=90, draft_cost=0.05),
                               CalcSettings(k=11, alpha_pct=35, draft_cost=0.4, verify_cost=1.3)])
def test_loop_sentence_numbers_follow_the_formulas(s):
    text = calc_text.loop_sentence(s)
    cost = analytics.cost_per_loop(s.k, s.draft_cost, s.verify_cost)
    assert f"{cost:.2f} target passes" in text
    assert f"{analytics.tokens_per_loop(s.alpha, s.k):.2f} tokens" in text
    assert f"{analytics.speedup(s.alpha, s.k, s.draft_cost, s.verify_cost):.2f}×" in text
    assert ("slower" in text) == (analytics.speedup(s.alpha, s.k, s.draft_cost, s.verify_cost) < 1)
    assert ("1 draft pass " in text) == (s.k == 1)


def test_best_k_and_ceiling_and_useless_draft_sentences():
    s = CalcSettings(k=2, alpha_pct=80, draft_cost=0.05)
    best = analytics.optimal_k(0.8, 0.05)
    assert f"**{best}**" in calc_text.best_k_sentence(s)
    assert f"{analytics.speedup(0.8, 2, 0.05):.2f}×" in calc_text.best_k_sentence(s)
    assert "4.00" in calc_text.ceiling_sentence(s)  # 0.8 / 0.2
    assert "without limit" in calc_text.ceiling_sentence(CalcSettings(alpha_pct=100))
    assert f"{1 / (2 * 0.05 + 1):.2f}×" in calc_text.useless_draft_sentence(s)


# ---- a useless draft costs K·c + (v − 1), the drafting time alone only at v = 1 ----------------------


@pytest.mark.parametrize(("k", "c", "v"), [(4, 0.13, 1.0), (2, 0.05, 1.0), (4, 0.13, 1.4), (8, 0.3, 2.0)])
def test_useless_draft_sentence_computes_which_case_applies(k, c, v):
    s = CalcSettings(k=k, draft_cost=c, verify_cost=v)
    text = calc_text.useless_draft_sentence(s)
    loss = analytics.useless_draft_loss(k, c, v)
    assert loss == pytest.approx(k * c + (v - 1))
    assert f"{loss:.2f} target passes per loop" in text
    assert f"{analytics.speedup(0.0, k, c, v):.2f}×" in text
    if v == 1.0:
        assert "only the drafting time" in text
    else:
        assert "K·c + (v − 1)" in text and f"v − 1 = {v - 1:.2f}" in text
        assert "nothing else" not in text and "only the drafting time" not in text


@pytest.mark.parametrize("v", [1.0, 1.3])
def test_useless_draft_sentence_gives_the_bound_and_says_to_watch_alpha(v):
    s = CalcSettings(k=4, alpha_pct=70, draft_cost=0.13, verify_cost=v)
    text = calc_text.useless_draft_sentence(s)
    assert "safe to switch on" not in text and "small, bounded downside" not in text
    assert f"{calc_text.fmt(analytics.speedup(0.0, 4, 0.13, v))}× the plain speed" in text
    assert "KV cache" in text and "switch speculation off" in text


# ---- the loop figure: only the first rejection is red, the slots after it grey (as on the live page) -------


@pytest.mark.parametrize(("k", "prefix"), [(4, 2.0), (6, 0.0), (3, 3.0), (5, 1.2)])
def test_loop_figure_draws_never_checked_slots_grey(k, prefix):
    from app import palette
    from app.calculator.figures import expected_kept_slots, iteration_figure

    fig = iteration_figure(k, prefix)
    kept = expected_kept_slots(prefix, k)
    colour_of = {}
    for t in fig.data:
        if t.y is not None and len(t.y) and all(y == 1 for y in t.y):  # the verdict row
            for x in t.x:
                colour_of[x] = t.marker.color
    assert [colour_of[x] for x in range(1, k + 1)] == (
        [palette.KEPT] * kept + [palette.REJECTED] * min(1, k - kept) + [palette.MUTED] * max(0, k - kept - 1))
