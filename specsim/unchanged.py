"""Why speculative sampling leaves the output distribution unchanged, on a small vocabulary.

The rule (Leviathan et al., 2023, algorithm 1; Chen et al., 2023): the draft proposes x ~ q; the
target keeps it with probability min(1, p(x)/q(x)); after a rejection it draws from
norm(max(0, p − q)). Then for every token x

    P(out = x) = q(x)·min(1, p(x)/q(x)) + P(reject)·r(x)
               = min(p(x), q(x))        + (1 − Σ min(p, q))·max(0, p(x) − q(x)) / Σ max(0, p − q)
               = min(p(x), q(x))        + max(0, p(x) − q(x))                   = p(x),

because Σ max(0, p − q) = 1 − Σ min(p, q) (both sides are the mass where p exceeds q). Greedy
decoding is the limit T → 0: p and q become one-hot, min(1, p/q) is 1 when the two argmaxes agree
and 0 otherwise, and the residual is the target's argmax.

Plain numpy over a handful of tokens, so the page, its tests and its chi-square check share one rule.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike


def normalise(weights: ArrayLike) -> np.ndarray:
    """Non-negative weights -> a probability vector (an error for all zeros or a negative weight)."""
    w = np.asarray(weights, dtype=float)
    if np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError("weights must be finite and non-negative")
    total = w.sum()
    if total <= 0:
        raise ValueError("at least one weight must be positive")
    return w / total


def acceptance_chance(p: ArrayLike, q: ArrayLike) -> np.ndarray:
    """min(1, p(x)/q(x)) for each token; NaN where q(x) = 0 (the draft never proposes it)."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(q > 0, np.minimum(1.0, p / np.where(q > 0, q, 1.0)), np.nan)


def accepted_mass(p: ArrayLike, q: ArrayLike) -> float:
    """Σ min(p, q): the chance that a proposal x ~ q is kept."""
    return float(np.minimum(np.asarray(p, dtype=float), np.asarray(q, dtype=float)).sum())


def residual(p: ArrayLike, q: ArrayLike) -> np.ndarray | None:
    """norm(max(0, p − q)), or None when p ≤ q everywhere (then a rejection never happens)."""
    positive = np.maximum(0.0, np.asarray(p, dtype=float) - np.asarray(q, dtype=float))
    mass = positive.sum()
    return positive / mass if mass > 1e-12 else None


def output_distribution(p: ArrayLike, q: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """The two parts of P(out = x): kept directly, min(p, q), and drawn after a rejection."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    kept = np.minimum(p, q)
    r = residual(p, q)
    resampled = np.zeros_like(p) if r is None else (1.0 - kept.sum()) * r
    return kept, resampled


def speculative_draws(p: ArrayLike, q: ArrayLike, n: int, seed: int = 0) -> np.ndarray:
    """``n`` independent outputs of one speculative step (propose, accept or reject, resample)."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    rng = np.random.default_rng(seed)
    proposed = rng.choice(len(q), size=n, p=q)
    keep = rng.random(n) < np.nan_to_num(acceptance_chance(p, q))[proposed]
    r = residual(p, q)
    out = proposed.copy()
    if r is not None and (~keep).any():
        out[~keep] = rng.choice(len(p), size=int((~keep).sum()), p=r)
    return out


def draft_draws(q: ArrayLike, n: int, seed: int = 0) -> np.ndarray:
    """``n`` samples of the draft alone, for contrast: what comes out without the target's check."""
    return np.random.default_rng(seed).choice(len(np.asarray(q)), size=n, p=np.asarray(q, dtype=float))


def chi2_survival_gamma(a: float, x: float) -> float:
    """Q(a, x) = Γ(a, x) / Γ(a): series below a + 1, continued fraction above (Numerical Recipes 6.2)."""
    if x <= 0:
        return 1.0
    log_front = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        ap = a
        for _ in range(1000):
            ap += 1
            term *= x / ap
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return max(0.0, 1.0 - total * math.exp(log_front))
    tiny = 1e-300
    b, c, d = x + 1 - a, 1 / tiny, 1 / (x + 1 - a)
    h = d
    for i in range(1, 1000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        step = d * c
        h *= step
        if abs(step - 1) < 1e-15:
            break
    return math.exp(log_front) * h


@dataclass(frozen=True)
class ChiSquare:
    """Pearson's goodness-of-fit test of observed counts against expected probabilities."""

    statistic: float
    dof: int
    p_value: float  # the chance of a statistic at least this large if the counts really follow p


def chi_square(counts: ArrayLike, probs: ArrayLike) -> ChiSquare:
    """Σ (observed − expected)² / expected over tokens with p > 0; dof = such tokens − 1."""
    counts, probs = np.asarray(counts, dtype=float), np.asarray(probs, dtype=float)
    n = counts.sum()
    used = probs > 0
    if np.any(counts[~used] > 0):
        return ChiSquare(math.inf, int(used.sum()) - 1, 0.0)  # a token p forbids came out
    expected = n * probs[used]
    stat = float(((counts[used] - expected) ** 2 / expected).sum())
    dof = int(used.sum()) - 1
    return ChiSquare(stat, dof, chi2_survival_gamma(dof / 2, stat / 2) if dof > 0 else 1.0)
