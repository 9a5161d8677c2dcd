"""Why a run was as fast as it was: the cost model's losses, the sentences, and the figure."""

from __future__ import annotations

import math

import pytest

from app.live.why_figures import loop_cost_figure
from specsim.lesson.explain import budget_sentence, decider_sentence, slowdown_sentence
from specsim.measure import analytics
from specsim.measure.costmodel import CostModel


def budget(alpha=0.23, k=5, c=0.15, v=2.3, other=0.0, k_max=None):
    return CostModel(k_max=k_max or k, k=k, draft_passes=k,
                     alpha=alpha, tokens_per_loop=float(analytics.tokens_per_loop(alpha, k)),
                     plain_pass_s=0.01, draft_cost=c, verify_cost=v, verify_cost_raw=v, other_cost=other,
                     plain_tokens_per_s=1.0, spec_tokens_per_s=1.0)


@pytest.mark.parametrize("alpha,k,c,v", [(0.23, 5, 0.15, 2.3), (0.8, 4, 0.05, 1.1), (0.0, 3, 0.3, 1.0),
                                         (0.95, 8, 0.0, 1.6)])
def test_losses_multiply_to_the_gap_from_the_ideal(alpha, k, c, v):
    b = budget(alpha, k, c, v)
    assert b.speedup == pytest.approx(float(analytics.speedup(alpha, k, c, v)))
    assert math.prod(b.losses().values()) == pytest.approx((k + 1) / b.speedup)
    assert all(loss >= 1 - 1e-12 for loss in b.losses().values())


def test_each_factor_can_decide():
    assert budget(alpha=0.23, c=0.05, v=1.2).decider() == "acceptance"
    assert budget(alpha=0.9, k=3, c=0.05, v=3.0).decider() == "verification"
    assert budget(alpha=0.9, k=3, c=1.0, v=1.0).decider() == "drafting"
    assert "only 23% were kept" in decider_sentence(budget(alpha=0.23, c=0.05, v=1.2))
    assert "checking up to 4 tokens" in decider_sentence(budget(alpha=0.9, k=3, c=0.05, v=3.0))
    assert "3.0 draft passes" in decider_sentence(budget(alpha=0.9, k=3, c=1.0, v=1.0))


def test_projection_only_changes_v():
    b = budget(v=2.3)
    assert b.projected_speedup == pytest.approx(float(analytics.speedup(0.23, 5, 0.15, 1.0)))
    assert b.projected_speedup > b.speedup


def test_slowdown_is_explained_only_when_slower():
    slow, fast = budget(), budget(alpha=0.8, k=4, c=0.05, v=1.1)
    assert slow.speedup < 1 and fast.speedup > 1
    text = slowdown_sentence(slow)
    assert text is not None and f"{slow.loop_cost:.2f}" in text and f"{slow.tokens_per_loop:.2f}" in text
    assert slowdown_sentence(fast) is None
    assert "slower" in budget_sentence(slow) and "faster" in budget_sentence(fast)


def test_figure_shows_the_three_bars_with_computed_lengths():
    b = budget()
    fig = loop_cost_figure(b)
    plain, draft, verify = fig.data
    assert plain.x[0] == pytest.approx(b.tokens_per_loop)
    assert draft.x[1] == pytest.approx(b.drafting) and verify.x[1] == pytest.approx(b.verify_cost)
    assert verify.x[2] == 1.0  # the projection
    assert f"{b.speedup:.2f}×" in [a.text for a in fig.layout.annotations]


def test_bookkeeping_is_a_fourth_factor_and_can_decide():
    b = budget(alpha=0.9, k=4, c=0.02, v=1.05, other=1.5)
    assert math.prod(b.losses().values()) == pytest.approx((4 + 1) / b.speedup)
    assert b.speedup == pytest.approx(b.tokens_per_loop / (0.08 + 1.05 + 1.5))
    assert b.decider() == "bookkeeping" and "between the passes" in decider_sentence(b)
    fig = loop_cost_figure(b)
    assert fig.data[-1].name.startswith("bookkeeping") and fig.data[-1].x[1] == pytest.approx(1.5)
    assert len(loop_cost_figure(budget()).data) == 3  # none to show


def test_a_lookup_that_sometimes_finds_nothing_is_judged_out_of_its_k():
    # prompt lookup at K = 3 proposing 1.4 tokens per loop on average: at most K + 1 = 4, not 2 (issue 23)
    b = budget(alpha=0.2, k=1.4, c=0.0, v=1.0, k_max=3)
    assert "out of at most 4" in decider_sentence(b)


def test_slowdown_names_bookkeeping_when_it_is_a_reason():
    b = budget(alpha=0.1, k=2, c=0.01, v=1.0, other=0.4)
    assert "bookkeeping between passes adds 0.40" in slowdown_sentence(b)


def test_a_win_names_what_won_it_and_a_loss_what_held_it_back():
    """Issue 60, item 6: the default recording won 3.5×; its sentence names α and τ first, not only its largest
    loss (v); a run slower than plain decoding names what held it back most."""
    from app import recording
    from app.live import why_speed

    run = recording.shipped_runs()["win_run"]
    won, _ = why_speed.budget(run.spec, run.plain)
    assert won.speedup > 1 and won.decider() == "verification"
    text = decider_sentence(won)
    assert text.startswith(f"What won it: of the guesses the target judged, {won.alpha:.0%} were kept (α")
    assert f"τ = {won.tokens_per_loop:.2f} tokens" in text and f"{won.loop_cost:.2f} target passes" in text
    assert f"What held it back most: checking up to {won.k_max + 1} tokens" in text
    lost = budget(alpha=0.23, c=0.05, v=1.2)
    assert lost.speedup < 1
    assert decider_sentence(lost).startswith("What held it back most: of the guesses the target judged, only 23%")
    assert "What won it" not in decider_sentence(lost)
    # a win held back most by its rejections says so without contradicting what won it
    mixed = budget(alpha=0.6, k=4, c=0.02, v=1.0)
    assert mixed.speedup > 1 and mixed.decider() == "acceptance"
    assert "the other 40% of the judged guesses were refused" in decider_sentence(mixed)


# ---- bar labels: level, and left out where the bar is too short for them ----------------------------------------


def test_bar_labels_stay_level_and_small_bars_carry_none():
    from app.live import figures as live
    from tests.live_traces import hand_trace

    tiny = budget(alpha=0.7, k=4, c=0.005, v=1.2)
    fig = loop_cost_figure(tiny)
    draft = next(t for t in fig.data if t.name.endswith("(K·c)"))
    assert list(draft.text) == ["", "", ""]  # 0.02 passes: too short a bar for "draft 0.02"
    assert fig.layout.uniformtext.mode == "hide"
    for t in fig.data:
        if t.text is not None:
            assert t.textangle == 0
    wide = loop_cost_figure(budget(alpha=0.7, k=4, c=0.3, v=1.2))
    assert next(t for t in wide.data if t.name.endswith("(K·c)")).text[1] == "draft 1.20"
    alternatives = live.alternatives_figure(hand_trace().iterations[0], 3)
    assert all(t.textangle == 0 for t in alternatives.data)


def test_bar_label_fits_or_is_left_out():
    from app.live.why_figures import bar_label

    assert bar_label("draft 0.52", 0.52, 3.0) == "draft 0.52"
    assert bar_label("draft 0.02", 0.02, 3.0) == ""
    assert bar_label("x", 0.0, 0.0) == ""
