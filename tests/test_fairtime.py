"""The cost model from median pass times (specsim.measure.costmodel), the wall clock, and which one leads (fairtime)."""

from __future__ import annotations

import dataclasses

import pytest

from specsim.measure import costmodel, fairtime
from tests.live_traces import hand_plain, hand_trace, iteration, slot, with_pass_times


def test_loop_costs_by_hand():
    # hand_trace: 12 draft passes of 2 ms, 4 verifications of 10 ms, 10 tokens in 4 loops; plain 8 ms a pass
    costs = costmodel.cost_model([hand_trace()], [hand_plain()])
    assert costs.draft_cost == pytest.approx(0.25)
    assert costs.verify_cost == pytest.approx(1.25)
    assert costs.k == 3 and costs.tokens_per_loop == pytest.approx(2.5)
    assert costs.other_cost == pytest.approx(0.016 / 4 / 0.008)  # 16 ms between the passes, over 4 loops
    assert costs.loop_cost == pytest.approx(3 * 0.25 + 1.25 + 0.5)
    assert costs.speedup == pytest.approx(2.5 / 2.5)


def test_one_slow_pass_hardly_moves_the_cost_model():
    plain = hand_plain()
    times = list(plain.pass_times)
    times[1] = 1.0
    spiked = dataclasses.replace(with_pass_times(plain, times), total_time_s=plain.total_time_s + 1.0 - 0.008)
    quiet = costmodel.cost_model([hand_trace()], [plain]).speedup
    noisy = costmodel.cost_model([hand_trace()], [spiked]).speedup
    assert noisy == pytest.approx(quiet)
    # the wall clock of the same runs is thrown far off by that one pass
    assert fairtime.wall_clock_speedup(hand_trace(), spiked) > 3 * fairtime.wall_clock_speedup(hand_trace(), plain)


def test_first_plain_pass_is_a_warm_up():
    plain = hand_plain()
    cold = with_pass_times(plain, [5.0, *plain.pass_times[1:]])
    assert costmodel.cost_model([hand_trace()], [cold]).plain_pass_s == pytest.approx(0.008)


def test_verification_never_cheaper_than_a_one_token_pass():
    spec = hand_trace()
    fast = dataclasses.replace(spec, iterations=tuple(dataclasses.replace(it, verify_time_s=0.004)
                                                      for it in spec.iterations))
    costs = costmodel.cost_model([fast], [hand_plain()])
    assert costs.verify_cost_raw == pytest.approx(0.5)
    assert costs.verify_cost == 1.0


def _useless_drafter_trace():
    """Every first proposal rejected: one token per loop, 0 % acceptance."""
    its = tuple(iteration(i, 4 + i, [slot(1, 13, "rejected", 0.05, 0.9, True, t=0.0001),
                                     slot(2, 16, "unchecked", 0.0, 0.7, True, t=0.0001)],
                          14, "correction", (14,), verify=0.0081) for i in range(10))
    spec = hand_trace()
    return dataclasses.replace(spec, iterations=its, generated_ids=(14,) * 10, total_time_s=0.02 + 0.05)


def test_zero_acceptance_never_shows_more_than_one():
    spec = _useless_drafter_trace()
    assert spec.acceptance_rate == 0.0
    # a plain run slowed down by a neighbour: the wall clock says the useless drafter is 2x faster
    plain = hand_plain(generated=(14,) * 10)
    plain = dataclasses.replace(plain, total_time_s=0.02 + 0.1)
    fair = fairtime.fair_speedup([(spec, plain)])
    assert fair.measured > 1.5
    assert fair.model < 1.0
    assert not fair.agrees
    assert fair.headline <= 1.0
    assert fair.source == "cost model"
    assert "too busy" in fair.sentence()


def test_ceiling_caps_a_wall_clock_that_agrees():
    spec = _useless_drafter_trace()
    plain = hand_plain(generated=(14,) * 10)
    fair = fairtime.FairSpeedup(wall_clock=(1.1,), model=0.97, ceiling=1.0)
    assert fair.agrees and fair.headline == 1.0
    assert costmodel.cost_model([spec], [plain]).tokens_per_loop == 1.0


def test_agreeing_figures_report_the_wall_clock_median():
    fair = fairtime.FairSpeedup(wall_clock=(1.2, 3.0, 1.3), model=1.25, ceiling=2.5)
    assert fair.measured == pytest.approx(1.3)
    assert fair.agrees and fair.headline == pytest.approx(1.3)
    assert "median of 3" in fair.sentence() and "agree" in fair.sentence()


def test_tolerance_edges():
    assert fairtime.FairSpeedup((1.25,), 1.0, 9.0, tolerance=0.25).agrees
    assert not fairtime.FairSpeedup((1.26,), 1.0, 9.0, tolerance=0.25).agrees
    assert not fairtime.FairSpeedup((), 1.0, 9.0).agrees


def test_no_runs_is_a_clear_error():
    with pytest.raises(ValueError):
        fairtime.fair_speedup([])
    with pytest.raises(ValueError):
        costmodel.cost_model([hand_trace()], [dataclasses.replace(hand_plain(), iterations=())])


def test_verification_cost_is_taken_per_pass_size():
    """A drafter that finds nothing half the time: one-token checks are cheap, five-token checks dear; a
    single median over both sizes would pick one of them, the per-size medians average to the truth."""
    slots4 = [slot(i, 10, "accepted", 0.9, 0.9, True, t=0.0) for i in range(1, 5)]
    its = []
    for i in range(6):
        if i % 2:
            its.append(iteration(i, 4, slots4, 13, "bonus", (10, 10, 10, 10, 13), verify=0.016))
        else:
            its.append(iteration(i, 4, [], 13, "correction", (13,), verify=0.008))
    spec = dataclasses.replace(hand_trace(), iterations=tuple(its), generated_ids=(10,) * 18,
                               total_time_s=0.02 + 3 * 0.016 + 3 * 0.008)  # no time between the passes
    costs = costmodel.cost_model([spec], [hand_plain()])
    assert costs.verify_cost == pytest.approx((1.0 + 2.0) / 2)
    assert costs.speedup == pytest.approx(3.0 / 1.5)


def test_time_between_passes_is_counted_for_the_loop_only():
    # hand_trace: 64 ms of passes in 80 ms of decoding; hand_plain: 80 ms of passes in 100 ms
    costs = costmodel.cost_model([hand_trace()], [hand_plain()])
    assert costs.other_cost == pytest.approx(0.016 / 4 / 0.008)
    # plain decoding's gaps are not counted: a plain run slowed between its passes leaves the model alone
    slowed = dataclasses.replace(hand_plain(), total_time_s=hand_plain().total_time_s + 1.0)
    assert costmodel.cost_model([hand_trace()], [slowed]).speedup == pytest.approx(costs.speedup)


def _plain_with_pass_times(times):
    return with_pass_times(hand_plain(), times)


def test_a_baseline_split_into_two_groups_is_noise():
    # as in the old recording: 15 of 48 plain passes at 53-95 ms, the rest at about 122 ms
    times = [0.122] * 33 + [0.053 + 0.003 * i for i in range(15)]
    reason = costmodel.baseline_noise(times)
    assert reason is not None and "split" in reason
    steady = [0.122 + 0.002 * (i % 5) for i in range(48)]
    assert costmodel.baseline_noise(steady) is None


def test_a_widely_spread_baseline_is_noise():
    spread = [0.084 + 0.0036 * i for i in range(21)]  # 84-156 ms, evenly: no two groups, but a wide spread
    reason = costmodel.baseline_noise(spread)
    assert reason is not None and "spread" in reason


def test_a_noisy_baseline_is_never_shown_as_a_result():
    noisy = _plain_with_pass_times([0.008] * 6 + [0.004] * 4)
    costs = costmodel.cost_model([hand_trace()], [noisy])
    assert costs.noise is not None
    fair = fairtime.fair_speedup([(hand_trace(), noisy)])
    assert fair.noise == costs.noise and not fair.agrees and fair.source == "cost model"
    assert "noisy" in fair.sentence() and "not a result" in fair.sentence()
    quiet = fairtime.fair_speedup([(hand_trace(), _plain_with_pass_times([0.008] * 10))])
    assert quiet.noise is None


def test_the_cost_model_holds_every_figure_once():
    costs = costmodel.cost_model([hand_trace()], [hand_plain()])
    assert costs.k_max == 3 and costs.alpha == pytest.approx(0.8)
    assert costs.wall_clock_speedup == pytest.approx((10 / 0.08) / (10 / 0.1))
    assert costs.closed_form_tokens_per_loop == pytest.approx(1 + 0.8 + 0.64 + 0.512)
    assert costs.projected_speedup == pytest.approx(2.5 / (3 * 0.25 + 1.0 + 0.5))
