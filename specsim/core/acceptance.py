"""Steps 3-4 of one speculative iteration: accept the longest agreeing prefix, then choose the +1 token.

The rule of Leviathan et al. (2023, algorithm 1) and Chen et al. (2023): slot i is kept with probability
min(1, p_i(x_i) / q_i(x_i)) (greedy: iff x_i is the target's top choice); at the first rejection the
target draws its own token from norm(max(0, p − q)); when every proposal is kept it adds a bonus token
from p_{K+1}. Used by the speculative step (:mod:`specsim.core.engine`, and :mod:`specsim.core.loop_parts` for its
:class:`Verdict`), the model drafters' token trees (:mod:`specsim.core.trees`) and the token trees of the variants
(:mod:`specsim.variants.tree`); ``tests/test_layers.py`` keeps this list whole.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

import torch

from specsim.core.drafters import Proposal
from specsim.core.sampling import SamplingConfig, acceptance_probability, residual_distribution, sample, uniform


@dataclass
class Verdict:
    """The outcome of checking one proposal run (steps 3-4)."""

    n_accepted: int = 0
    extra: int = -1  # the target's own +1 token
    extra_kind: str = "bonus"  # "correction" (greedy), "resample" (sampling) or "bonus"
    accept_probs: list[float] = field(default_factory=list)  # min(1, p/q) per slot (greedy: 1 or 0)
    draws: list[float | None] = field(default_factory=list)  # the uniform numbers drawn (greedy: None)
    residual: torch.Tensor | None = None  # norm(max(0, p - q)) at the rejected slot (sampling)
    residual_mass: float = 0.0
    ended: bool = False  # an accepted proposal was end-of-text: nothing after it was checked, no +1 token


def verify(
    draft_tokens: list[int], proposal: Proposal, target_probs: torch.Tensor, sampling: SamplingConfig,
    generator: torch.Generator | None, eos: Collection[int] = (),
) -> Verdict:
    """Steps 3-4: keep the longest accepted prefix of the proposals, then choose the +1 token.

    ``target_probs[i]`` is the target's distribution at draft slot i; row K is the bonus position.
    An accepted proposal in ``eos`` ends the text: later proposals are neither checked nor counted.
    """
    verdict = Verdict()
    for i, token in enumerate(draft_tokens):
        if sampling.greedy:
            verdict.accept_probs.append(1.0 if int(torch.argmax(target_probs[i])) == token else 0.0)
        else:
            verdict.accept_probs.append(acceptance_probability(float(target_probs[i, token]), proposal.q[i]))
    for token, accept_prob in zip(draft_tokens, verdict.accept_probs, strict=True):
        draw = None if sampling.greedy else uniform(generator)
        verdict.draws.append(draw)
        if not (accept_prob == 1.0 if draw is None else draw < accept_prob):
            break  # the first rejection ends the run; later slots stay unchecked
        verdict.n_accepted += 1
        if token in eos:
            verdict.ended = True
            break

    p = target_probs[verdict.n_accepted]
    if verdict.ended:  # the text is over: the +1 token is recorded (the target's top choice), never emitted
        verdict.extra = int(torch.argmax(p))
    elif verdict.n_accepted == len(draft_tokens):  # every proposal kept: a bonus token from p
        verdict.extra = int(torch.argmax(p)) if sampling.greedy else sample(p, generator)
    elif sampling.greedy:  # the target's own choice replaces the rejected proposal
        verdict.extra, verdict.extra_kind = int(torch.argmax(p)), "correction"
    else:  # resample from what p has and q lacks: norm(max(0, p - q))
        q = proposal.q_probs[verdict.n_accepted].to(p.device)
        verdict.residual, verdict.residual_mass = residual_distribution(p, q)
        verdict.extra, verdict.extra_kind = sample(verdict.residual, generator), "resample"
    return verdict
