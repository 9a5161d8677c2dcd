"""The probability arithmetic of speculative sampling (Leviathan et al., 2023, algorithm 1).

Every function here works on float32 probability vectors over the target's vocabulary, so the
rules a student reads in the lesson are exactly the ones the engine runs:

- ``warp``: logits -> probabilities at a temperature, optionally cut to the top-k tokens and the top-p nucleus
  (transformers' order: temperature, then top-k, then top-p). The draft's q and the target's p are warped alike
  before the ratio min(1, p/q), and a rejected slot's residual comes from the warped p: the output then follows
  the warped target, which is what sampling with those settings means;
- ``acceptance_probability``: min(1, p(x) / q(x)) for a proposed token x;
- ``residual_distribution``: norm(max(0, p - q)), where a rejected slot draws its replacement;
- ``accepted_mass``: Σ min(p, q), the chance that rule keeps a guess drawn from q.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from specsim.core import rules


@dataclass(frozen=True)
class SamplingConfig:
    """How tokens are chosen. ``temperature == 0`` means greedy (argmax), with no division by zero. ``top_k`` keeps
    the k most likely tokens (ties at the k-th kept too, as transformers does), ``top_p`` the smallest set whose
    mass reaches p, ``min_p`` the tokens at least min_p times as likely as the top one; None keeps every token."""

    temperature: float = 0.0
    top_p: float | None = None
    top_k: int | None = None
    min_p: float | None = None

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0.0

    def __post_init__(self) -> None:
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if self.top_p is not None and not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.top_k is not None and self.top_k < 1:
            raise ValueError(f"top_k must be at least 1, got {self.top_k}")
        if self.min_p is not None and not 0.0 <= self.min_p <= 1.0:
            raise ValueError(f"min_p is a share of the top token's probability, in [0, 1]; got {self.min_p}")


def warp(logits: torch.Tensor, config: SamplingConfig) -> torch.Tensor:
    """The distribution a sampler draws from: softmax(logits / T), cut to the top-k tokens, to the top-p nucleus, then
    to min-p (:func:`specsim.core.rules.cut`).

    Greedy configs get plain softmax(logits): the probabilities shown to the user, never sampled.
    Works on the last dimension, in float32.
    """
    logits = logits.float()
    if config.greedy:
        return torch.softmax(logits, dim=-1)
    return rules.cut(rules.tempered(logits, config.temperature), config.top_k, config.top_p, config.min_p)


def sample(probs: torch.Tensor, generator: torch.Generator | None) -> int:
    """Draw one token id from a probability vector (on the generator's device)."""
    if generator is not None and probs.device != generator.device:
        probs = probs.to(generator.device)
    return int(torch.multinomial(probs, 1, generator=generator).item())


def uniform(generator: torch.Generator | None) -> float:
    """One draw of U(0, 1), compared with min(1, p/q) to accept or reject a proposal."""
    device = generator.device if generator is not None else "cpu"
    return float(torch.rand(1, generator=generator, device=device))


def acceptance_probability(p: float, q: float) -> float:
    """min(1, p/q): the chance of keeping a token the draft proposed with probability q.

    q > 0 always holds for a token the draft actually sampled; q == 0 is treated as "keep iff p > 0".
    """
    if q <= 0.0:
        return 1.0 if p > 0.0 else 0.0
    return min(1.0, p / q)


def residual_distribution(p: torch.Tensor, q: torch.Tensor) -> tuple[torch.Tensor, float]:
    """norm(max(0, p - q)) and its mass before normalising (the probability of a rejection).

    When p <= q everywhere (p == q up to rounding) the mass is 0 and a rejection had probability 0;
    we then return p itself rather than dividing 0 by 0. Any choice is correct on a null event.
    """
    leftover, mass = rules.residual(p, q)
    return (p, 0.0) if leftover is None else (leftover, mass)


def accepted_mass(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """Σ_x min(p(x), q(x)) over the last dimension: the chance a guess x ~ q is kept, before it is drawn.

    It is E_{x~q}[min(1, p(x)/q(x))] = Σ_x q(x) min(1, p(x)/q(x)), Leviathan et al. (2023)'s acceptance rate
    β of one slot, and equals 1 - TV(p, q) (total variation: half the L1 distance) and 1 minus the residual's
    mass Σ max(0, p - q). Rows of a matrix give one value each.
    """
    return rules.accepted_mass(p, q)


def top_tokens(probs: torch.Tensor, n: int) -> list[tuple[int, float]]:
    """The n most likely token ids with their probabilities, most likely first."""
    return top_rows(probs[None], n)[0]


def top_rows(probs: torch.Tensor, n: int) -> list[list[tuple[int, float]]]:
    """:func:`top_tokens` of every row of a (rows, vocab) matrix, in one call.

    Equal probabilities are frequent (bfloat16 logits have 8 significant bits) and ``topk`` lists them in no
    set order, so each list is ordered by probability, then by id: the first entry is the token ``argmax``
    picks, the one greedy decoding writes.
    """
    values, ids = torch.topk(probs, min(n, probs.shape[-1]), dim=-1)
    return [sorted(zip(i, v, strict=True), key=lambda pair: (-pair[1], pair[0]))
            for i, v in zip(ids.tolist(), values.tolist(), strict=True)]
