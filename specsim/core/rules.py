"""The acceptance rule's sums and the sampler's warp, written once for both kinds of array that carry p and q: numpy
arrays (the pages, and a class replica, which never imports torch) and torch tensors (the engine). Each works on the
last dimension.

- :func:`accepted_mass`: Σ min(p, q), the chance that a guess x ~ q is kept, 1 − TV(p, q);
- :func:`residual`: norm(max(0, p − q)), what the +1 token is drawn from after a rejection, with its mass;
- :func:`tempered` and :func:`cut`: the temperature, then the sampler's cuts of a distribution (top-k, top-p, then
  min-p), which the target and the draft both go through before the rule compares them.

``specsim.core.sampling`` (the engine) and ``specsim.lesson.unchanged`` (the page that teaches the rule) both call
these, so the rule the page shows is the rule that runs.
"""

from __future__ import annotations

import sys
from typing import Any

NO_RESIDUAL = 1e-12
"""Below this mass p ≤ q everywhere (up to rounding): a rejection has probability 0 and there is no residual."""


def _torch(x: Any):
    """torch, when ``x`` is a tensor (never imported here: a class replica runs without it); else None."""
    torch = sys.modules.get("torch")
    return torch if torch is not None and isinstance(x, torch.Tensor) else None


def _minimum(p: Any, q: Any) -> Any:
    """Element-wise min(p, q) with the array library of ``p``."""
    torch = _torch(p)
    if torch is not None:
        return torch.minimum(p, q)
    import numpy as np

    return np.minimum(p, q)


def _sorted_down(x: Any) -> tuple[Any, Any]:
    """(values, positions) of the last dimension, largest first; equal values keep their order."""
    torch = _torch(x)
    if torch is not None:
        return torch.sort(x, dim=-1, descending=True, stable=True)
    import numpy as np

    order = np.argsort(-x, axis=-1, kind="stable")
    return np.take_along_axis(x, order, axis=-1), order


def _unsorted(like: Any, values: Any, order: Any) -> Any:
    """``values`` (sorted by ``order``) put back where ``order`` took them from."""
    torch = _torch(like)
    if torch is not None:
        return torch.zeros_like(like).scatter(-1, order, values)
    import numpy as np

    out = np.zeros_like(like)
    np.put_along_axis(out, order, values, axis=-1)
    return out


def _keep(probs: Any, kept: Any) -> Any:
    """``probs`` where ``kept``, 0 elsewhere, renormalised over the last dimension."""
    out = probs * kept
    return out / out.sum(-1, keepdims=True) if _torch(probs) is None else out / out.sum(-1, keepdim=True)


def tempered(logits: Any, temperature: float) -> Any:
    """softmax(logits / T) over the last dimension for any T > 0, however small.

    In float32, logits / 1e-40 overflow to inf and softmax returns nan. Subtracting the largest logit first (the
    same distribution) leaves values <= 0, and dividing those by T in float64 gives finite numbers or -inf, never
    nan: as T shrinks, the distribution tends to the argmax (split evenly between tied maxima), which is the true
    limit. A tensor comes back in float32 like every other distribution in the engine; a logit of -inf (a token
    with probability 0) keeps probability 0.
    """
    torch = _torch(logits)
    if torch is not None:
        shifted = logits.double() - logits.double().amax(dim=-1, keepdim=True)
        return torch.softmax(shifted / temperature, dim=-1).float()
    import numpy as np

    logits = np.asarray(logits, dtype=float)
    shifted = np.exp((logits - logits.max(axis=-1, keepdims=True)) / temperature)
    return shifted / shifted.sum(axis=-1, keepdims=True)


def cut(probs: Any, top_k: int | None = None, top_p: float | None = None, min_p: float | None = None) -> Any:
    """The sampler's cuts, in transformers' order, each renormalised: the ``top_k`` most likely tokens (ties with
    the k-th stay), then the fewest most likely of those whose mass reaches ``top_p`` (a token stays while the mass
    before it is below top_p, so the top token always does), then the tokens at least ``min_p`` times as likely as
    the top one (transformers' ``MinPLogitsWarper``). None, or a cut that keeps everything, changes nothing.
    """
    if top_k is not None and top_k < probs.shape[-1]:
        values, _ = _sorted_down(probs)
        probs = _keep(probs, probs >= values[..., top_k - 1:top_k])
    if top_p is not None and top_p < 1.0:
        values, order = _sorted_down(probs)
        mass_before = values.cumsum(-1) - values
        probs = _keep(probs, _unsorted(probs, (mass_before < top_p) * 1.0, order) > 0)
    if min_p is not None and min_p > 0.0:
        values, _ = _sorted_down(probs)
        probs = _keep(probs, probs >= min_p * values[..., :1])
    return probs


def accepted_mass(p: Any, q: Any) -> Any:
    """Σ_x min(p(x), q(x)) over the last dimension: E_{x~q}[min(1, p(x)/q(x))], Leviathan et al. (2023)'s β for
    one slot. Rows of a matrix give one value each; a numpy 0-d result for vectors, a tensor for tensors."""
    return _minimum(p, q).sum(-1)


def residual(p: Any, q: Any) -> tuple[Any | None, float]:
    """(norm(max(0, p − q)), its mass before normalising) for one distribution; (None, mass) when the mass is at most
    :data:`NO_RESIDUAL`: p ≤ q everywhere, and a rejection never happens."""
    positive = (p - q).clip(min=0.0)
    mass = float(positive.sum())
    return (positive / mass if mass > NO_RESIDUAL else None), mass


__all__ = ["NO_RESIDUAL", "accepted_mass", "cut", "residual", "tempered"]
