"""Closed forms for speculative decoding (Leviathan et al., 2023, section 3; Chen et al., 2023).

Model: the draft proposes K tokens; each is accepted independently with probability alpha,
and the target keeps the longest accepted prefix j, then adds one token of its own. So j is a
geometric variable truncated at K:

    P(j = i) = alpha**i * (1 - alpha)   for i < K,      P(j = K) = alpha**K.

Every function accepts scalars or numpy arrays (broadcast together) and returns the same shape.
alpha = 1 and alpha = 0 are evaluated as exact limits, never as 0/0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from specsim.core.defaults import K_MAX, K_MIN


def _out(x: np.ndarray) -> float | np.ndarray:
    return float(x) if np.ndim(x) == 0 else x


def tokens_per_loop(alpha: ArrayLike, k: ArrayLike) -> float | np.ndarray:
    """E[j] + 1 = (1 - alpha**(K+1)) / (1 - alpha): tokens one draft-verify loop yields.

    Written as the finite sum 1 + alpha + ... + alpha**K, which is exact at alpha = 1 (K + 1).
    """
    a, kk = np.broadcast_arrays(np.asarray(alpha, dtype=float), np.asarray(k, dtype=float))
    near_one = np.isclose(a, 1.0, rtol=0.0, atol=1e-12)
    safe = np.where(near_one, 0.5, a)
    closed = (1.0 - safe ** (kk + 1.0)) / (1.0 - safe)
    return _out(np.where(near_one, kk + 1.0, closed))


def expected_accepted_prefix(alpha: ArrayLike, k: ArrayLike) -> float | np.ndarray:
    """E[j] = alpha (1 - alpha**K) / (1 - alpha): how many of the K proposals are kept on average."""
    return _out(np.asarray(tokens_per_loop(alpha, k)) - 1.0)


def cost_per_loop(k: ArrayLike, draft_cost: ArrayLike, verify_cost: ArrayLike = 1.0) -> float | np.ndarray:
    """Cost of one loop in target passes: K draft passes at ``draft_cost`` each plus one verification.

    ``verify_cost`` is what one target pass over K+1 tokens costs relative to a one-token pass
    (1 in the lesson's idealisation; measured values are a little above 1 on a CPU).
    """
    kk = np.asarray(k, dtype=float)
    return _out(kk * np.asarray(draft_cost, dtype=float) + np.asarray(verify_cost, dtype=float))


def speedup(
    alpha: ArrayLike, k: ArrayLike, draft_cost: ArrayLike, verify_cost: ArrayLike = 1.0
) -> float | np.ndarray:
    """Tokens per loop divided by the loop's cost: the speedup over one target pass per token."""
    return _out(np.asarray(tokens_per_loop(alpha, k)) / np.asarray(cost_per_loop(k, draft_cost, verify_cost)))


def speedup_one_pass(
    alpha: ArrayLike, k: ArrayLike, pass_cost: ArrayLike, verify_cost: ArrayLike = 1.0
) -> float | np.ndarray:
    """The speedup of a drafter that writes all K guesses in one pass of cost ``pass_cost`` (Medusa's heads, PARD's
    parallel draft): tokens per loop over pass_cost + v, where a chained draft pays K·c + v. Same acceptance model:
    one α for every slot, which flatters heads that guess far ahead without seeing the guesses before."""
    return _out(np.asarray(tokens_per_loop(alpha, k)) / (np.asarray(pass_cost, dtype=float)
                                                          + np.asarray(verify_cost, dtype=float)))


def wasted_draft_tokens(alpha: ArrayLike, k: ArrayLike) -> float | np.ndarray:
    """Draft proposals thrown away per loop on average: K - E[j]."""
    return _out(np.asarray(k, dtype=float) - np.asarray(expected_accepted_prefix(alpha, k)))


def useless_draft_loss(k: ArrayLike, draft_cost: ArrayLike, verify_cost: ArrayLike = 1.0) -> float | np.ndarray:
    """What a draft that is never right (alpha = 0) costs per loop, in target passes: K c + (v - 1).

    Such a loop still yields one token (the target's own) for K c + v passes, where plain decoding pays
    one. At v = 1 the loss is the drafting time K c alone; a verification pass dearer than a plain one
    adds its excess v - 1.
    """
    return _out(np.asarray(cost_per_loop(k, draft_cost, verify_cost)) - 1.0)


def tokens_per_loop_by_position(rates: Sequence[float], k: int) -> float:
    """Tokens per loop when guess j is kept with its own chance ``rates[j - 1]`` given every earlier guess was:
    1 + r₁ + r₁r₂ + … + r₁⋯r_K. Past the measured positions the last rate carries on. Equal rates give
    :func:`tokens_per_loop` (the geometric model is the case of one α for every slot)."""
    if not rates:
        raise ValueError("at least one measured position is needed")
    kept, total = 1.0, 1.0
    for j in range(k):
        kept *= float(rates[min(j, len(rates) - 1)])
        total += kept
    return total


def speedup_by_position(rates: Sequence[float], k: int, draft_cost: float, verify_cost: float = 1.0) -> float:
    """:func:`tokens_per_loop_by_position` over the loop's cost K·c + v."""
    return tokens_per_loop_by_position(rates, k) / float(cost_per_loop(k, draft_cost, verify_cost))


def best_k(speedups: Mapping[int, float]) -> int:
    """The K with the highest speedup, the smallest such K on a tie (fewer wasted guesses).

    The one argmax over K: the calculator, the machine profile and the bench all choose K here, from closed-form
    or measured speedups alike.
    """
    if not speedups:
        raise ValueError("no K to choose from")
    return min(speedups, key=lambda k: (-speedups[k], k))


TIE_LOSS = 0.02
"""A tie costs at most this share of the best prediction. Two predictions share their c and their v(n) curve, so
their intervals overlap more than the two could differ: on a busy machine every K's interval reached the best's, and
the cheapest, K = 1, ran 10 % below the best on unseen prompts (docs/measurements/trees-2026-12-06.md)."""


def within_noise(speedups: Mapping, noise: Mapping, max_loss: float = TIE_LOSS) -> tuple:
    """The Ks a measurement cannot tell from the best: those whose 95 % interval (``speedups[k]`` ± ``noise[k]``, a
    share of it) reaches the best K's interval, and whose prediction is at most ``max_loss`` below the best's. The
    best K is always among them. (Any settings may be the keys: the machine profile passes chains and trees.)"""
    best = best_k(speedups)
    floor = speedups[best] * (1 - noise.get(best, 0.0))
    return tuple(sorted(k for k, s in speedups.items()
                        if s * (1 + noise.get(k, 0.0)) >= floor and s >= speedups[best] * (1 - max_loss)))


def cheapest_k(speedups: Mapping[int, float], noise: Mapping[int, float]) -> int:
    """The K to run from measured speedups: the smallest K :func:`within_noise` of the best (it drafts the fewest
    guesses, so it wastes the least where the measurement cannot tell the Ks apart); :func:`best_k` when the
    measurement is exact."""
    return min(within_noise(speedups, noise))


def speedup_by_k(alpha: float, draft_cost: float, verify_cost: float | Mapping[int, float] = 1.0,
                 k_min: int = K_MIN, k_max: int = K_MAX) -> dict[int, float]:
    """The closed-form speedup at every K in [k_min, k_max]. ``verify_cost`` is one v for every K, or v(n) by pass
    size n (then K uses v(K + 1), where measured; a reading below 1 is noise and counts as 1)."""
    if isinstance(verify_cost, Mapping):
        return {k: float(speedup(alpha, k, draft_cost, max(1.0, verify_cost[k + 1])))
                for k in range(k_min, k_max + 1) if k + 1 in verify_cost}
    return {k: float(speedup(alpha, k, draft_cost, verify_cost)) for k in range(k_min, k_max + 1)}


def optimal_k(alpha: float, draft_cost: float, verify_cost: float | Mapping[int, float] = 1.0, k_min: int = K_MIN,
              k_max: int = K_MAX) -> int:
    """The K in [k_min, k_max] with the highest closed-form speedup (:func:`best_k` of :func:`speedup_by_k`)."""
    return best_k(speedup_by_k(alpha, draft_cost, verify_cost, k_min, k_max))


def prefix_distribution(alpha: float, k: int) -> np.ndarray:
    """P(j = i) for i = 0..K: the truncated geometric law of the accepted prefix."""
    i = np.arange(k + 1, dtype=float)
    probs = alpha**i * (1.0 - alpha)
    probs[k] = alpha**k
    return probs


def expected_kept_share(alpha: float, k: int) -> np.ndarray:
    """P(slot i is kept) = alpha**i for i = 1..K: later slots need every earlier one to survive.

    The prediction that :meth:`specsim.core.trace.Trace.kept_share_by_position` measures.
    """
    return float(alpha) ** np.arange(1, k + 1, dtype=float)


def prefix_limit(alpha: ArrayLike) -> float | np.ndarray:
    """The ceiling of E[j] as K grows without bound: alpha / (1 - alpha) (infinite at alpha = 1).

    However many tokens the draft proposes, the expected accepted prefix never exceeds this,
    which is why raising K stops paying off long before K itself stops growing.
    """
    a = np.asarray(alpha, dtype=float)
    near_one = np.isclose(a, 1.0, rtol=0.0, atol=1e-12)
    safe = np.where(near_one, 0.5, a)
    return _out(np.where(near_one, np.inf, safe / (1.0 - safe)))


def alpha_for_speedup(speedup_: float, k: int, draft_cost: float, verify_cost: float = 1.0) -> float | None:
    """The acceptance rate α at which speedup(α, K, c, v) equals ``speedup_``: the lesson's maths run backwards.

    tokens per loop is increasing in α, from 1 (α = 0) to K + 1 (α = 1), so the answer is unique where it
    exists; None when the reported speedup lies outside what any α can give at this K, c and v.
    Found by Brent's method (scipy) to 1e-12: exact enough for two decimals.
    """
    tokens = speedup_ * float(cost_per_loop(k, draft_cost, verify_cost))
    if not 1.0 - 1e-12 <= tokens <= k + 1.0 + 1e-12:
        return None
    from scipy.optimize import brentq  # imported here: most pages never back-solve, and scipy is slow to import

    tokens = min(max(tokens, 1.0), k + 1.0)
    # tokens_per_loop as the finite sum 1 + α + … + α^K on plain floats: the root-finder calls it dozens of times,
    # and the array version's checks cost 60 µs a call (the knowledge check's draws call it thousands of times)
    return float(brentq(lambda a: sum(a**j for j in range(int(k) + 1)) - tokens, 0.0, 1.0, xtol=1e-12))
