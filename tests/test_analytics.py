"""The closed forms in specsim.measure.analytics against brute force and their exact limits."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specsim.measure import analytics

alphas = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
ks = st.integers(min_value=1, max_value=16)
costs = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
verify_costs = st.floats(min_value=0.5, max_value=10.0, allow_nan=False)


def prefix_law_by_enumeration(alpha: float, k: int) -> list[float]:
    """P(j = i) from all 2**K accept/reject patterns: j is the number of accepts before the first reject."""
    law = [0.0] * (k + 1)
    for pattern in itertools.product((True, False), repeat=k):
        p = 1.0
        for accepted in pattern:
            p *= alpha if accepted else 1.0 - alpha
        j = pattern.index(False) if False in pattern else k
        law[j] += p
    return law


def prefix_law_by_loop(alpha: float, k: int) -> list[float]:
    """The truncated geometric law written out term by term, without the closed form."""
    law = []
    survive = 1.0  # probability that the first i proposals were all accepted
    for _ in range(k):
        law.append(survive * (1.0 - alpha))
        survive *= alpha
    law.append(survive)
    return law


def brute_expected_prefix(alpha: float, k: int) -> float:
    return sum(i * p for i, p in enumerate(prefix_law_by_loop(alpha, k)))


# ---- the lesson's worked example -------------------------------------------------------------


def test_lesson_example_rounds_to_the_published_numbers():
    assert f"{analytics.expected_accepted_prefix(0.7, 4):.2f}" == "1.77"
    assert f"{analytics.tokens_per_loop(0.7, 4):.2f}" == "2.77"
    assert f"{analytics.cost_per_loop(4, 0.13):.2f}" == "1.52"
    assert f"{analytics.speedup(0.7, 4, 0.13):.2f}" == "1.82"


# ---- agreement with brute force ----------------------------------------------------------------


@pytest.mark.parametrize("k", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("alpha", [0.0, 0.1, 0.5, 0.7, 0.93, 1.0])
def test_prefix_distribution_matches_enumeration_of_all_outcomes(alpha, k):
    np.testing.assert_allclose(analytics.prefix_distribution(alpha, k), prefix_law_by_enumeration(alpha, k),
                               rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("k", [1, 4, 7])
@pytest.mark.parametrize("alpha", [0.2, 0.7])
def test_expected_kept_share_matches_enumeration(alpha, k):
    law = prefix_law_by_enumeration(alpha, k)
    kept_at = [sum(law[i:]) for i in range(1, k + 1)]  # slot i is kept when j >= i
    np.testing.assert_allclose(analytics.expected_kept_share(alpha, k), kept_at, rtol=1e-12)


@settings(max_examples=200, deadline=None)
@given(alpha=alphas, k=ks)
def test_expected_prefix_equals_the_sum_over_the_truncated_geometric_law(alpha, k):
    assert analytics.expected_accepted_prefix(alpha, k) == pytest.approx(brute_expected_prefix(alpha, k),
                                                                        rel=1e-6, abs=1e-6)
    assert analytics.tokens_per_loop(alpha, k) == pytest.approx(brute_expected_prefix(alpha, k) + 1.0,
                                                               rel=1e-6, abs=1e-6)


@settings(max_examples=100, deadline=None)
@given(alpha=alphas, k=ks)
def test_prefix_distribution_is_a_probability_law(alpha, k):
    law = analytics.prefix_distribution(alpha, k)
    assert law.shape == (k + 1,)
    assert np.all(law >= 0.0)
    assert law.sum() == pytest.approx(1.0, abs=1e-12)


# ---- bounds and monotonicity -------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(alpha=alphas, k=ks)
def test_tokens_per_loop_lies_between_one_and_k_plus_one(alpha, k):
    tokens = analytics.tokens_per_loop(alpha, k)
    assert 1.0 - 1e-12 <= tokens <= k + 1 + 1e-9
    wasted = analytics.wasted_draft_tokens(alpha, k)
    assert -1e-9 <= wasted <= k + 1e-12


@settings(max_examples=200, deadline=None)
@given(a1=alphas, a2=alphas, k=ks, c=costs, v=verify_costs)
def test_tokens_and_speedup_never_fall_as_acceptance_rises(a1, a2, k, c, v):
    lo, hi = sorted((a1, a2))
    assert analytics.tokens_per_loop(lo, k) <= analytics.tokens_per_loop(hi, k) + 1e-9
    assert analytics.speedup(lo, k, c, v) <= analytics.speedup(hi, k, c, v) + 1e-9
    assert analytics.wasted_draft_tokens(lo, k) >= analytics.wasted_draft_tokens(hi, k) - 1e-9


@settings(max_examples=100, deadline=None)
@given(alpha=alphas, k=st.integers(min_value=1, max_value=15))
def test_tokens_per_loop_never_falls_as_k_rises_and_stays_under_the_ceiling(alpha, k):
    assert analytics.tokens_per_loop(alpha, k) <= analytics.tokens_per_loop(alpha, k + 1) + 1e-12
    assert analytics.expected_accepted_prefix(alpha, k) <= analytics.prefix_limit(alpha) + 1e-9


def test_prefix_limit_is_what_a_long_draft_approaches():
    for alpha in (0.1, 0.5, 0.7, 0.9):
        assert analytics.expected_accepted_prefix(alpha, 400) == pytest.approx(analytics.prefix_limit(alpha))
    assert analytics.prefix_limit(0.5) == 1.0
    assert analytics.prefix_limit(1.0) == math.inf


# ---- exact limits --------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [1, 4, 16])
def test_alpha_zero_yields_exactly_one_token_and_costs_only_drafting(k):
    assert analytics.tokens_per_loop(0.0, k) == 1.0
    assert analytics.expected_accepted_prefix(0.0, k) == 0.0
    assert analytics.wasted_draft_tokens(0.0, k) == k
    assert analytics.speedup(0.0, k, 0.13) == pytest.approx(1.0 / (k * 0.13 + 1.0))


@pytest.mark.parametrize("k", [1, 4, 16])
def test_alpha_one_is_the_exact_limit_not_a_division_by_zero(k):
    with np.errstate(all="raise"):
        assert analytics.tokens_per_loop(1.0, k) == k + 1
        assert analytics.expected_accepted_prefix(1.0, k) == k
        assert analytics.wasted_draft_tokens(1.0, k) == 0.0
        assert analytics.speedup(1.0, k, 0.25, 1.5) == (k + 1) / (k * 0.25 + 1.5)
    assert analytics.tokens_per_loop(1.0 - 1e-9, k) == pytest.approx(k + 1, rel=1e-6)


# ---- costs, speedup, optimum ---------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(alpha=alphas, k=ks, c=costs, v=verify_costs)
def test_speedup_is_tokens_per_loop_over_cost(alpha, k, c, v):
    assert analytics.cost_per_loop(k, c, v) == pytest.approx(k * c + v)
    assert analytics.cost_per_loop(k, c) == pytest.approx(k * c + 1.0)
    assert analytics.speedup(alpha, k, c, v) == pytest.approx((brute_expected_prefix(alpha, k) + 1.0) / (k * c + v),
                                                             rel=1e-6)


@settings(max_examples=150, deadline=None)
@given(alpha=alphas, c=costs, v=verify_costs, k_max=st.integers(min_value=1, max_value=16))
def test_optimal_k_is_the_argmax_found_by_trying_every_k(alpha, c, v, k_max):
    values = {k: (brute_expected_prefix(alpha, k) + 1.0) / (k * c + v) for k in range(1, k_max + 1)}
    best = max(values.values())
    found = analytics.optimal_k(alpha, c, v, k_max=k_max)
    assert 1 <= found <= k_max
    assert analytics.speedup(alpha, found, c, v) == pytest.approx(best, rel=1e-9)
    # no smaller K is clearly better (ties within rounding may go either way)
    assert all(values[k] <= best * (1 + 1e-9) for k in range(1, found))


def test_optimal_k_for_the_lesson_settings_and_the_extremes():
    ks_ = range(1, 17)
    by_hand = max(ks_, key=lambda k: (brute_expected_prefix(0.7, k) + 1) / (0.13 * k + 1))
    assert analytics.optimal_k(0.7, 0.13) == by_hand
    assert analytics.optimal_k(0.0, 0.13) == 1  # a useless draft: the fewest drafts
    assert analytics.optimal_k(1.0, 0.0) == analytics.K_MAX  # free and always right: the most


# ---- vectorised calls ----------------------------------------------------------------------------


def test_vectorised_calls_equal_scalar_calls():
    a = np.linspace(0.0, 1.0, 11)[:, None]
    k = np.arange(1, 17)[None, :]
    grids = {
        "tokens": (analytics.tokens_per_loop(a, k), lambda x, y: analytics.tokens_per_loop(x, y)),
        "prefix": (analytics.expected_accepted_prefix(a, k), lambda x, y: analytics.expected_accepted_prefix(x, y)),
        "waste": (analytics.wasted_draft_tokens(a, k), lambda x, y: analytics.wasted_draft_tokens(x, y)),
        "speedup": (analytics.speedup(a, k, 0.2, 1.1), lambda x, y: analytics.speedup(x, y, 0.2, 1.1)),
    }
    for name, (grid, scalar) in grids.items():
        assert grid.shape == (11, 16), name
        for i in range(11):
            for j in range(16):
                value = scalar(float(a[i, 0]), int(k[0, j]))
                assert isinstance(value, float), name
                assert grid[i, j] == pytest.approx(value, rel=1e-12), name
    np.testing.assert_allclose(analytics.cost_per_loop(k, 0.2), [[kk * 0.2 + 1 for kk in range(1, 17)]])
    np.testing.assert_allclose(analytics.prefix_limit(a[:, 0]), [analytics.prefix_limit(float(x)) for x in a[:, 0]])


def test_tokens_per_loop_by_position_is_the_geometric_model_when_every_rate_is_alpha():
    for alpha in (0.0, 0.3, 0.7, 1.0):
        for k in range(1, 9):
            assert analytics.tokens_per_loop_by_position([alpha] * k, k) == pytest.approx(
                float(analytics.tokens_per_loop(alpha, k)))


def test_tokens_per_loop_by_position_multiplies_the_rates_and_carries_the_last():
    rates = [0.4, 0.5, 0.8]
    assert analytics.tokens_per_loop_by_position(rates, 2) == pytest.approx(1 + 0.4 + 0.4 * 0.5)
    assert analytics.tokens_per_loop_by_position(rates, 4) == pytest.approx(
        1 + 0.4 + 0.2 + 0.2 * 0.8 + 0.2 * 0.8 * 0.8)
    # rising rates with the same first-slot chance keep more than one α at the first rate
    assert analytics.tokens_per_loop_by_position(rates, 3) > float(analytics.tokens_per_loop(0.4, 3))
    assert analytics.speedup_by_position(rates, 2, 0.1, 1.0) == pytest.approx((1 + 0.4 + 0.2) / 1.2)
    with pytest.raises(ValueError):
        analytics.tokens_per_loop_by_position([], 3)


def test_the_profile_takes_the_cheapest_k_a_measurement_cannot_tell_from_the_best():
    """Issue 64, item 4: the profile's predictions for K = 1..6 lay within ±3 % of each other and it took K = 4, then
    K = 3, where K = 1-2 ran fastest on unseen prompts. Ks whose intervals reach the best one's are a tie; the
    smallest of them drafts the fewest guesses."""
    predicted = {1: 1.23, 2: 1.24, 3: 1.25, 4: 1.26, 5: 1.20, 6: 1.15}
    assert analytics.best_k(predicted) == 4
    wide = dict.fromkeys(predicted, 0.03)
    assert analytics.within_noise(predicted, wide, max_loss=1.0) == (1, 2, 3, 4, 5)  # 1.15 × 1.03 < 1.26 × 0.97
    assert analytics.cheapest_k(predicted, wide) == 2  # K = 1 is 2.4 % below the best: more than a tie may cost
    assert analytics.within_noise(predicted, wide) == (2, 3, 4)
    narrow = dict.fromkeys(predicted, 0.005)
    assert analytics.within_noise(predicted, narrow) == (3, 4) and analytics.cheapest_k(predicted, narrow) == 3
    assert analytics.cheapest_k(predicted, {}) == analytics.best_k(predicted)  # an exact measurement: the argmax
