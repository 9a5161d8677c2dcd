"""The Wilson score interval of a measured share (specsim.measure.proportion), against scipy's."""

from __future__ import annotations

import math

import pytest
from scipy.stats import binomtest

from specsim.measure.proportion import wilson_interval


@pytest.mark.parametrize("kept,checked", [(0, 2), (2, 2), (14, 24), (0, 1), (35, 42), (480, 1000)])
def test_the_interval_is_scipys_wilson_interval(kept, checked):
    expected = binomtest(kept, checked).proportion_ci(method="wilson")
    assert wilson_interval(kept, checked) == pytest.approx((expected.low, expected.high))


def test_no_trials_give_no_interval_and_impossible_counts_are_refused():
    assert all(math.isnan(x) for x in wilson_interval(0, 0))
    with pytest.raises(ValueError):
        wilson_interval(3, 2)
