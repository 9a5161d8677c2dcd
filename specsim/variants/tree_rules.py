"""The two lossless rules for checking several candidates at one node of a token tree, as exact output
distributions over a small vocabulary (numpy; no sampling).

Which rule applies depends on how the candidates were chosen:

- **SpecInfer** (Miao et al., 2023): the candidates are drawn *independently from the draft's q* (with
  repeats possible). Try them in turn; keep candidate x with probability min(1, p(x)/q(x)); after a refusal
  replace p by its normalised residual norm(max(0, p − q)) and try the next. If all are refused, sample the
  last residual. Each step is the one-slot rule of Leviathan et al., so the output is distributed as p.
- **EAGLE-2** (Li et al., 2024): the candidates are the draft's *distinct top-k* tokens, chosen
  deterministically, so q plays no part in the test. Keep candidate x with probability p(x); after a refusal
  set p(x) = 0 and renormalise, then try the next. If all are refused, sample what is left of p. Refusing x
  and renormalising is exactly p conditioned on "not x", so the output is again distributed as p.

Applying SpecInfer's rule to distinct top-k candidates is not lossless: the min(1, p/q) test assumes the
candidate was a draw from q, and a top-k token was not (see ``residual_rule``'s use in the tests).

The app's own trees (Medusa, lookahead) decode greedily; these functions exist to teach and to check the rules.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

# The hood's worked example: a four-token vocabulary, the target's p and the draft's q at one node.
EXAMPLE_P = (0.40, 0.30, 0.20, 0.10)
EXAMPLE_Q = (0.30, 0.45, 0.05, 0.20)
EXAMPLE_CANDIDATES = 2  # candidates per node


def _dist(x: ArrayLike) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    return a / a.sum()


def residual_rule(p: ArrayLike, q: ArrayLike, candidates: Sequence[int]) -> np.ndarray:
    """The output distribution when ``candidates`` are tried in turn with SpecInfer's rule: keep x with
    probability min(1, p(x)/q(x)); on a refusal p ← norm(max(0, p − q)); when all are refused, sample p."""
    p, q = _dist(p), _dist(q)
    out, reach = np.zeros_like(p), 1.0
    for x in candidates:
        keep = min(1.0, p[x] / q[x]) if q[x] > 0 else 0.0
        out[x] += reach * keep
        reach *= 1.0 - keep
        rest = np.maximum(p - q, 0.0)
        if reach <= 0.0 or rest.sum() <= 0.0:  # p == q: the check cannot refuse, nothing is left to try
            return out
        p = rest / rest.sum()
    return out + reach * p


def renormalise_rule(p: ArrayLike, candidates: Sequence[int]) -> np.ndarray:
    """The output distribution when distinct ``candidates`` are tried in turn with EAGLE-2's rule: keep x with
    probability p(x); on a refusal set p(x) = 0 and renormalise; when all are refused, sample what is left."""
    p = _dist(p)
    out, reach = np.zeros_like(p), 1.0
    for x in candidates:
        keep = p[x]
        out[x] += reach * keep
        reach *= 1.0 - keep
        p = p.copy()
        p[x] = 0.0
        if reach <= 0.0 or p.sum() <= 0.0:
            return out
        p = p / p.sum()
    return out + reach * p


def top_k(q: ArrayLike, k: int) -> list[int]:
    """The draft's k most likely tokens, most likely first (ties by token id): EAGLE-2's candidates at a node."""
    q = np.asarray(q, dtype=float)
    return sorted(range(len(q)), key=lambda i: (-q[i], i))[:k]


def specinfer(p: ArrayLike, q: ArrayLike, n: int) -> np.ndarray:
    """SpecInfer's output distribution with ``n`` candidates drawn i.i.d. from q: every tuple of candidates
    enumerated with its probability, each checked by :func:`residual_rule` (exact; for small vocabularies)."""
    q_ = _dist(q)
    out = np.zeros_like(q_)
    for tup in itertools.product(range(len(q_)), repeat=n):
        weight = float(np.prod(q_[list(tup)]))
        if weight > 0.0:
            out += weight * residual_rule(p, q_, tup)
    return out


def eagle2(p: ArrayLike, q: ArrayLike, k: int) -> np.ndarray:
    """EAGLE-2's output distribution: the draft's top-k candidates checked by :func:`renormalise_rule`."""
    return renormalise_rule(p, top_k(q, k))


def specinfer_rule_on_top_k(p: ArrayLike, q: ArrayLike, k: int) -> np.ndarray:
    """The mistake: SpecInfer's min(1, p/q) rule applied to the draft's distinct top-k candidates."""
    return residual_rule(p, q, top_k(q, k))


def is_target(dist: ArrayLike, p: ArrayLike) -> bool:
    """Whether an output distribution is the target's p (to float rounding)."""
    return bool(np.allclose(np.asarray(dist, dtype=float), _dist(p), atol=1e-12))
