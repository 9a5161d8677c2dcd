"""The live page's figure builders, read back from the plotly figures they return."""

import pytest

from app import palette
from app.live import figures as fig
from specsim.lesson import replay
from specsim.measure import analytics
from tests.live_traces import hand_plain, hand_trace


def test_alternatives_show_both_models_sorted_with_the_proposal_highlighted():
    it = hand_trace().iterations[0]
    f = fig.alternatives_figure(it, 3)  # the rejected slot, where the target's own ' a' lands
    target, draft = f.data
    slot = it.slots[2]
    assert list(target.x) == sorted((t.prob for t in slot.target_top), reverse=True)
    assert list(draft.x) == sorted((t.prob for t in slot.draft_top), reverse=True)
    colours = dict(zip(f.layout.yaxis.ticktext, target.marker.color, strict=True))
    assert colours["␣sat"] == palette.REJECTED and colours["␣a"] == palette.EXTRA
    assert "rejected" in f.layout.title.text
    assert f.layout.title.text.endswith("the target wrote ␣a here")  # the reason, on the chart itself
    assert "the target wrote" not in fig.alternatives_figure(it, 1).layout.title.text  # a kept slot


def test_alternatives_after_a_full_acceptance_show_only_the_target():
    it = hand_trace().iterations[2]
    f = fig.alternatives_figure(it, it.k + 1)
    assert len(f.data) == 1 and list(f.data[0].x) == [t.prob for t in it.extra_target_top]
    with pytest.raises(ValueError):
        fig.alternatives_figure(it, it.k + 2)


def test_residual_needs_a_sampling_rejection():
    with pytest.raises(ValueError):
        fig.residual_figure(hand_trace(greedy=True).iterations[0])
    it = hand_trace(greedy=False).iterations[0]
    f = fig.residual_figure(it)
    assert list(f.data[0].y) == [0.7, 0.3]
    assert f.data[0].marker.color[0] == palette.EXTRA  # ' a' was the token drawn
    assert "0.400" in f.layout.title.text


def test_kept_share_against_alpha_powers():
    stats = replay.run_stats(hand_trace())
    f = fig.kept_share_figure(stats.kept_share, stats.alpha)
    assert list(f.data[0].y) == list(stats.kept_share)
    assert list(f.data[1].y) == pytest.approx([0.8, 0.64, 0.512])


def test_kept_histogram_with_expected_counts():
    stats = replay.run_stats(hand_trace())
    f = fig.kept_histogram_figure(stats.kept_counts, stats.alpha)
    assert list(f.data[0].y) == [1, 0, 1, 2]
    assert list(f.data[1].y) == pytest.approx(4 * analytics.prefix_distribution(0.8, 3))


def test_timeline_lays_every_pass_end_to_end_and_fills_to_the_total():
    spec, plain = hand_trace(), hand_plain()
    f = fig.timeline_figure(spec, plain)
    bars = {b.name: b for b in f.data}
    assert len(bars["draft pass"].x) == 12 and len(bars["verification"].x) == 4
    assert len(bars["plain pass"].x) == 10
    for row, trace in (("speculative", spec), ("plain", plain)):
        ends = [base + width for b in f.data for base, width, y in zip(b.base, b.x, b.y, strict=True) if y == row]
        assert max(ends) == pytest.approx(trace.total_time_s * 1000)
    # passes do not overlap: each starts where the previous one ended
    spans = sorted((base, base + w) for b in f.data for base, w, y in zip(b.base, b.x, b.y, strict=True)
                   if y == "speculative")
    assert all(a[1] == pytest.approx(b[0]) for a, b in zip(spans, spans[1:], strict=False))


def test_timeline_of_one_run():
    f = fig.timeline_figure(None, hand_plain())
    assert {y for b in f.data for y in b.y} == {"plain"}


# ---- on an exact probability tie the token the target chose comes first ------------------------------------------


def _tied_iteration(kept_first_in_record: bool):
    """Slot t+1 kept ' the' (id 10) at p = 0.214, tied exactly with ' a' (id 14), as bfloat16 ties happen."""
    from dataclasses import replace

    from tests.live_traces import tp

    it = hand_trace().iterations[0]
    tie = (tp(10, 0.214), tp(14, 0.214)) if kept_first_in_record else (tp(14, 0.214), tp(10, 0.214))
    slots = list(it.slots)
    slots[0] = replace(slots[0], p=0.214, target_top=(*tie, tp(19, 0.1)),
                       draft_top=(tp(22, 0.4), tp(10, 0.4)))  # the draft's proposal ties too, recorded second
    return replace(it, slots=tuple(slots))


@pytest.mark.parametrize("kept_first_in_record", [True, False])
def test_alternatives_put_the_kept_token_first_on_a_tie(kept_first_in_record):
    it = _tied_iteration(kept_first_in_record)
    f = fig.alternatives_figure(it, 1)
    target, draft = f.data
    assert f.layout.yaxis.ticktext[:2] == ("␣the", "␣a")
    assert target.marker.color[0] == palette.KEPT
    assert f.layout.yaxis2.ticktext[0] == "␣the"  # the draft's own proposal first among its tied tokens
    assert list(target.x) == sorted(target.x, reverse=True)


# ---- readability -------------------------------------------------------------------------------------------------


def test_timeline_legend_sits_above_the_plot_clear_of_the_x_ticks():
    f = fig.timeline_figure(hand_trace(), hand_plain())
    legend = f.layout.legend
    assert legend.orientation == "h" and legend.yanchor == "bottom" and legend.y >= 1.0
    assert f.layout.margin.t >= 90  # room for the title and the legend above the bars
