"""v(n) on this machine: the curve's reading (flat part, slope, roofline fit), the batch model, a real measurement."""

from __future__ import annotations

import pytest

from specsim.lesson import roofline
from specsim.measure import analytics, passcost
from specsim.measure.passcost import VerifyCurve
from tests.live_traces import one_torch_thread

_threads = pytest.fixture(scope="module", autouse=True)(one_torch_thread)


def gpu_like(ridge=6.0, ns=(1, 2, 3, 4, 5, 6, 8, 12, 16)):
    """A made-up curve that follows the roofline exactly: flat to n = R, then n / R."""
    return VerifyCurve(ns=ns, seconds=tuple(0.01 * max(1.0, n / ridge) for n in ns), context=10, repeats=1)


def test_a_roofline_curve_is_read_back():
    curve = gpu_like()
    assert curve.v[0] == 1.0 and curve.v_at(8) == pytest.approx(8 / 6)
    assert curve.flat_until() == 6
    assert curve.ridge() == pytest.approx(6.0)
    assert curve.slope() == pytest.approx(1 / 6)


def test_no_flat_part():
    curve = VerifyCurve(ns=(1, 2, 4), seconds=(0.01, 0.015, 0.02), context=10, repeats=1)
    assert curve.flat_until() == 1 and curve.v_at(3) == pytest.approx(1.75)


def test_batch_model_limits():
    # a batch far below R: verification stays free, the calculator's speedup with v = 1
    assert roofline.batched_verify_cost(1, 4, ridge=256) == 1.0
    assert roofline.batched_speedup(0.7, 4, 0.13, 1, 256) == pytest.approx(float(analytics.speedup(0.7, 4, 0.13)))
    # a batch far above R: every pass is compute-bound, so a pass over K + 1 tokens costs K + 1 plain passes
    assert roofline.batched_verify_cost(1024, 4, ridge=16) == pytest.approx(5.0)
    gains = [roofline.batched_speedup(0.7, 4, 0.13, b, 64) for b in (1, 8, 32, 128)]
    assert gains == sorted(gains, reverse=True) and gains[-1] < 1 < gains[0]


def test_a_measurement_of_the_bundled_target_reads_as_a_curve(bundled_target):
    costs = passcost.measure_pass_costs(bundled_target, ns=(1, 2, 4), repeats=2, warmup=1)
    curve = VerifyCurve.of(costs, context=40, device="cpu", threads=1)
    assert curve.ns == (1, 2, 4) and all(s > 0 for s in curve.seconds)
    assert curve.v[0] == 1.0 and curve.v[2] == pytest.approx(costs.v(4)) and curve.dtype == costs.dtype
    # what the page offers is the monotone fit, never below 1 (a tiny model's v(4) can read below 1: noise)
    assert curve.v_at(4) == pytest.approx(curve.v_fitted[2]) and curve.v_fitted[2] >= max(1.0, curve.v_fitted[1])


def test_figures_plot_the_curve_and_the_model():
    from app.serving.figures import batch_figure
    from app.verify.figures import verify_curve_figure

    curve = gpu_like()
    fig = verify_curve_figure(curve.ns, curve.v, curve.flat_until(), curve.ridge())
    measured = next(t for t in fig.data if t.name == "measured v(n)")
    assert list(measured.y) == pytest.approx(list(curve.v))
    batches = (1, 4, 16)
    ys = [roofline.batched_speedup(0.7, 4, 0.13, b, 8) for b in batches]
    fig = batch_figure(batches, {"R = 8": ys}, 4)
    assert list(fig.data[0].y) == ys and list(fig.layout.xaxis.tickvals) == list(batches)


def test_a_measured_curve_carries_its_monotone_fit_so_a_class_replica_never_fits_it():
    """VerifyCurve.of fits v(n) where it is measured (a worker, in a class); the fit is the one the page computed."""
    costs = passcost.PassCosts({1: 0.030, 2: 0.0282, 3: 0.031, 4: 0.029, 8: 0.05}, "bfloat16", 5)
    curve = VerifyCurve.of(costs, context=45)
    assert curve.fitted and curve.fitted == VerifyCurve(curve.ns, curve.seconds, 45, 5).v_fitted
    assert list(curve.fitted) == sorted(curve.fitted) and min(curve.fitted) >= 1.0
    assert curve.fitted != curve.v  # the dip at n = 2 and n = 4 is fitted away


def test_the_page_and_the_profile_time_v_with_one_loop_and_one_estimator(monkeypatch):
    """Issue 53, item 3: measure_pass_costs (the verify page, a class worker) and profile_timing.time_v (the profile)
    take their rounds from time_pass_rounds and read v(n) with v_from_rounds: the median over rounds of each round's
    ratio, which a burst of load in one round moves less than the ratio of the medians."""
    from specsim.measure import profile_timing

    loads = [1.0, 1.0, 3.0, 1.0, 1.0, 1.0, 3.0, 1.0]  # every other round slowed down by a burst, all sizes alike

    def rounds(target, ns, rng, warmup=1, **_):
        for i in range(10_000):
            load = loads[i % len(loads)]
            yield {n: load * 0.01 * max(1.0, n / 2) for n in ns}

    monkeypatch.setattr(passcost, "time_pass_rounds", rounds)

    class Target:
        device, dtype = "cpu", "torch.float32"

    costs = passcost.measure_pass_costs(Target(), ns=(1, 2, 4, 6), repeats=len(loads))
    expected = passcost.v_from_rounds([{n: 0.01 * max(1.0, n / 2) for n in (1, 2, 4, 6)}])
    assert {n: costs.v(n) for n in (1, 2, 4, 6)} == expected == {1: 1.0, 2: 1.0, 4: 2.0, 6: 3.0}
    assert VerifyCurve.of(costs).v == tuple(expected.values())
    profile = profile_timing.time_v(Target(), (1, 2, 4, 6), log=lambda _: None)
    assert profile.raw == expected


def test_the_roofline_is_claimed_only_where_it_fits():
    """A review found "Fitted here, R = 7.9" under a CPU curve that rises steadily from n = 1 (slope 0.034 a token):
    max(1, n / 7.9) reaches 2.0 at n = 16 where the curve is at 1.5. A curve with a corner fits; a straight rise does
    not, and the page then says so instead of naming an R."""
    assert gpu_like().roofline_fits() and gpu_like().roofline_gap() < 1e-9
    ns = (1, 2, 3, 4, 6, 8, 12, 16)
    steady = VerifyCurve(ns=ns, seconds=tuple(0.01 * (1 + 0.034 * (n - 1)) for n in ns), context=10, repeats=1)
    assert not steady.roofline_fits() and steady.roofline_gap() > 0.3


def test_the_verify_page_names_no_ridge_for_a_curve_without_a_corner():
    from app import state
    from tests.conftest import ROOT, open_page

    ns = (1, 2, 3, 4, 6, 8, 12, 16)
    steady = VerifyCurve(ns=ns, seconds=tuple(0.01 * (1 + 0.034 * (n - 1)) for n in ns), context=10, repeats=1)
    for curve, named in ((steady, False), (gpu_like(), True)):
        at = open_page(None)
        at.session_state[state.VERIFY_CURVE] = curve
        at.switch_page(str(ROOT / "pages" / "verify.py")).run()
        slope = next(m.value for m in at.markdown if m.value.startswith("**Slope:**"))
        assert ("Fitted to this curve, R = " in slope) is named
        assert ("has no such corner" in slope) is not named
