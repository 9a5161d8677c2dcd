"""The chi-square check of sampled tokens, through the app's one chi-square (specsim.lesson.unchanged.chi_square)."""

from __future__ import annotations

import math
from collections import Counter

from scipy import stats

from specsim.lesson.blockcheck import pooled_chi_square


def chi_square_z(counts: Counter, expected_probs: dict, n: int, min_expected: float = 5.0) -> float:
    """The chi-square p-value as a normal z-score; large z (say > 4) means the sample does not fit.

    Cells with an expected count under ``min_expected`` are pooled into one, as the textbook asks; a
    sample outside the support is impossible (z = inf).
    """
    assert sum(counts.values()) == n
    result = pooled_chi_square(counts, expected_probs, min_expected)
    return math.inf if result.p_value <= 0 else float(stats.norm.isf(result.p_value))
