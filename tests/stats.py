"""A chi-square goodness-of-fit check without scipy (Wilson-Hilferty normal approximation)."""

from __future__ import annotations

import math
from collections import Counter


def chi_square_z(counts: Counter, expected_probs: dict, n: int, min_expected: float = 5.0) -> float:
    """z-score of Pearson's chi-square statistic; large z (say > 4) means the sample does not fit.

    Cells with an expected count under ``min_expected`` are pooled into one, as the textbook asks.
    """
    statistic, cells = 0.0, 0
    pooled_observed, pooled_expected = 0, 0.0
    for cell, prob in expected_probs.items():
        expected = n * prob
        if expected < min_expected:
            pooled_observed += counts.get(cell, 0)
            pooled_expected += expected
            continue
        statistic += (counts.get(cell, 0) - expected) ** 2 / expected
        cells += 1
    outside = sum(c for cell, c in counts.items() if cell not in expected_probs)
    pooled_observed += outside
    if pooled_expected > 0:
        statistic += (pooled_observed - pooled_expected) ** 2 / pooled_expected
        cells += 1
    elif outside:
        return math.inf  # a sample the exact distribution says is impossible
    dof = max(cells - 1, 1)
    a = 2.0 / (9.0 * dof)
    return ((statistic / dof) ** (1.0 / 3.0) - (1.0 - a)) / math.sqrt(a)
