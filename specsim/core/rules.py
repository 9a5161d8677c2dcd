"""The acceptance rule's two sums, written once for both kinds of array that carry p and q: numpy arrays (the pages,
and a class replica, which never imports torch) and torch tensors (the engine). Each works on the last dimension.

- :func:`accepted_mass`: Σ min(p, q), the chance that a guess x ~ q is kept, 1 − TV(p, q);
- :func:`residual`: norm(max(0, p − q)), what the +1 token is drawn from after a rejection, with its mass.

``specsim.core.sampling`` (the engine) and ``specsim.lesson.unchanged`` (the page that teaches the rule) both call
these, so the rule the page shows is the rule that runs.
"""

from __future__ import annotations

import sys
from typing import Any

NO_RESIDUAL = 1e-12
"""Below this mass p ≤ q everywhere (up to rounding): a rejection has probability 0 and there is no residual."""


def _minimum(p: Any, q: Any) -> Any:
    """Element-wise min(p, q) with the array library of ``p`` (torch only when p is a tensor: no import here)."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(p, torch.Tensor):
        return torch.minimum(p, q)
    import numpy as np

    return np.minimum(p, q)


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


__all__ = ["NO_RESIDUAL", "accepted_mass", "residual"]
