"""How far a measured share can be trusted: the Wilson score interval for k successes in n trials.

Wilson (1927), "Probable inference, the law of succession, and statistical inference", JASA 22: unlike the normal
approximation p ± z·√(p(1 − p)/n), it stays inside [0, 1] and is not zero-width at 0 of n or n of n, so a rate
measured on a handful of loops shows how little it says.
"""

from __future__ import annotations

import math

Z_95 = 1.959963984540054  # the normal quantile of 0.975: a 95 % two-sided interval


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval for the share ``successes / trials`` (NaN, NaN when there were no trials)."""
    if trials <= 0:
        return math.nan, math.nan
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must lie between 0 and trials ({trials}), not {successes}")
    share, z2 = successes / trials, z * z
    centre = (share + z2 / (2 * trials)) / (1 + z2 / trials)
    half = z / (1 + z2 / trials) * math.sqrt(share * (1 - share) / trials + z2 / (4 * trials * trials))
    return max(0.0, centre - half), min(1.0, centre + half)
