"""The chi-square check of sampled tokens, through the app's one chi-square (specsim.unchanged.chi_square)."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
from scipy import stats

from specsim.unchanged import chi_square


def chi_square_z(counts: Counter, expected_probs: dict, n: int, min_expected: float = 5.0) -> float:
    """The chi-square p-value as a normal z-score; large z (say > 4) means the sample does not fit.

    Cells with an expected count under ``min_expected`` are pooled into one, as the textbook asks; a
    sample outside the support is impossible (z = inf).
    """
    if any(cell not in expected_probs for cell in counts):
        return math.inf
    big = [cell for cell, prob in expected_probs.items() if n * prob >= min_expected]
    small = [cell for cell in expected_probs if cell not in big]
    observed = [counts.get(cell, 0) for cell in big] + ([sum(counts.get(c, 0) for c in small)] if small else [])
    probs = [expected_probs[cell] for cell in big] + ([sum(expected_probs[c] for c in small)] if small else [])
    result = chi_square(np.array(observed, dtype=float), np.array(probs, dtype=float) / sum(probs))
    return math.inf if result.p_value <= 0 else float(stats.norm.isf(result.p_value))
