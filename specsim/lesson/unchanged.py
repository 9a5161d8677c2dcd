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

Numpy over a handful of tokens for the page's pictures. The sums and the warp are the engine's own functions
(:mod:`specsim.core.rules`: Σ min(p, q), the residual, the temperature and the top-k / top-p cuts), called with numpy
arrays here and torch tensors in the engine, so the page's chi-square check tests the rule that runs;
``tests/test_unchanged.py`` also holds this module equal to the engine's torch functions on random distributions.
Numpy, not torch, because a class's app replicas never load torch (issue 52): this page's sliders answer in the
replica, and only the whole-block check (:mod:`specsim.lesson.blockcheck`) runs the engine, on a worker in class
mode.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from specsim.core import rules

NO_RESIDUAL = rules.NO_RESIDUAL  # below this mass a rejection never happens (the engine's own threshold)


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
    """The engine's min(1, p(x)/q(x)) for each token; NaN where q(x) = 0 (the draft never proposes it)."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(q > 0, np.minimum(1.0, p / q), np.nan)


def accepted_mass(p: ArrayLike, q: ArrayLike) -> float:
    """Σ min(p, q): the chance that a proposal x ~ q is kept (the engine's
    :func:`specsim.core.sampling.accepted_mass`)."""
    return float(rules.accepted_mass(np.asarray(p, dtype=float), np.asarray(q, dtype=float)))


def total_variation(p: ArrayLike, q: ArrayLike) -> float:
    """TV(p, q) = ½ Σ |p − q| (:func:`specsim.lesson.overlap.total_variation`); Σ min(p, q) = 1 − TV(p, q)."""
    return float(0.5 * np.abs(np.asarray(p, dtype=float) - np.asarray(q, dtype=float)).sum())


def tempered(probs: ArrayLike, temperature: float) -> np.ndarray:
    """A distribution at temperature T > 0 from its T = 1 probabilities: softmax(log p / T), by the engine's own
    :func:`specsim.core.rules.tempered`. A token with probability 0 keeps probability 0."""
    with np.errstate(divide="ignore"):
        return rules.tempered(np.log(np.asarray(probs, dtype=float)), temperature)


def warped(probs: ArrayLike, temperature: float = 1.0, top_k: int | None = None,
           top_p: float | None = None, min_p: float | None = None) -> np.ndarray:
    """The distribution a sampler draws from, from the T = 1 probabilities: :func:`tempered`, then the ``top_k`` most
    likely tokens (ties at the k-th kept too), then the smallest set of them whose mass reaches ``top_p``, then those
    at least ``min_p`` times as likely as the top one, each renormalised: the engine's own cuts
    (:func:`specsim.core.rules.cut`), in its order (transformers' order)."""
    return rules.cut(tempered(probs, temperature), top_k, top_p, min_p)


def overlap_by_temperature(p: ArrayLike, q: ArrayLike, temperatures: ArrayLike) -> np.ndarray:
    """Σ min(p_T, q_T) at each temperature, p and q being the models' distributions at T = 1, warped as the engine
    warps them (:func:`specsim.lesson.overlap.accepted_mass_by_temperature`). T = 0 is the greedy rule: the draft's
    argmax
    is kept iff it is the target's argmax too."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    return np.array([float(np.argmax(q) == np.argmax(p)) if t <= 0 else accepted_mass(tempered(p, t), tempered(q, t))
                     for t in (float(t) for t in np.asarray(temperatures))])


def residual(p: ArrayLike, q: ArrayLike) -> np.ndarray | None:
    """The engine's norm(max(0, p − q)), or None when p ≤ q everywhere (then a rejection never happens)."""
    return rules.residual(np.asarray(p, dtype=float), np.asarray(q, dtype=float))[0]


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
    return ChiSquare(stat, dof, chi2_sf(stat, dof) if dof > 0 else 1.0)


def chi2_sf(x: float, dof: int) -> float:
    """P(χ² with ``dof`` degrees of freedom ≥ x), scipy's ``chi2.sf``, by its closed form for whole dof (the regularised
    upper incomplete gamma Q(dof/2, x/2)): e^(−y) Σ_{i<m} yⁱ/i! for dof = 2m, and erfc(√y) + e^(−y) Σ_{1≤i≤m}
    y^(i−½)/Γ(i+½) for dof = 2m + 1, with y = x/2, each term in logs. Written out because importing scipy.special
    costs a class replica 13 MB it has no other use for; ``tests/test_unchanged.py`` holds it to scipy's."""
    if x <= 0:
        return 1.0
    y, m = x / 2, dof // 2
    if dof % 2 == 0:
        return min(1.0, sum(math.exp(-y + i * math.log(y) - math.lgamma(i + 1)) for i in range(m)))
    return min(1.0, math.erfc(math.sqrt(y)) + sum(math.exp(-y + (i - 0.5) * math.log(y) - math.lgamma(i + 0.5))
                                                  for i in range(1, m + 1)))


@dataclass(frozen=True)
class MeasuredOverlap:
    """A real pair's chance of keeping a guess against temperature, as ``scripts/measure_overlap.py`` wrote it:
    Σ min(p_T, q_T) averaged over the positions of the target's greedy answers, the same text read at every T, not
    text sampled at that T (T = 0: how often the two argmaxes agree)."""

    target: str
    draft: str
    text: str
    prompts: int
    positions: int
    temperatures: tuple[float, ...]
    accepted_mass: tuple[float, ...]
    domains: dict[str, tuple[float, ...]]  # domain -> its curve at the same temperatures

    def at(self, temperature: float) -> float:
        """The measured value at one of the measured temperatures."""
        return self.accepted_mass[self.temperatures.index(temperature)]

    @property
    def greedy(self) -> float:
        return self.at(0.0)

    @property
    def highest(self) -> tuple[float, float]:
        """(T, value) where the curve is highest."""
        return max(zip(self.temperatures, self.accepted_mass, strict=True), key=lambda tv: tv[1])


def measured_overlap(path=None) -> MeasuredOverlap:
    """The committed measurement (``specsim.core.paths.OVERLAP_MEASURED``)."""
    import json

    from specsim.core.paths import OVERLAP_MEASURED

    raw = json.loads((path or OVERLAP_MEASURED).read_text(encoding="utf-8"))
    return MeasuredOverlap(raw["target"], raw["draft"], raw["text"], raw["prompts"], raw["positions"],
                           tuple(raw["temperatures"]), tuple(raw["accepted_mass"]),
                           {name: tuple(d["accepted_mass"]) for name, d in raw["domains"].items()})
