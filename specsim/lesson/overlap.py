"""How much the draft's q overlaps the target's p, and how temperature moves it.

One slot keeps a guess x ~ q with probability E_{x~q}[min(1, p(x)/q(x))] = Σ_x min(p(x), q(x))
(:func:`specsim.core.sampling.accepted_mass`; Leviathan et al. 2023 call it β and the acceptance rate α = E[β]).
That sum is 1 − TV(p, q), one minus the total variation distance: α is high exactly when the two models
spread their probability alike, whichever token each one prefers.

Temperature warps both: p_T ∝ p^(1/T) and q_T ∝ q^(1/T) (the engine samples both models at the run's
temperature). As T → 0 both become one-hot and the overlap becomes the greedy rule, 1 when the two argmaxes
agree and 0 otherwise; as T grows each flattens towards uniform over the tokens it can emit. When the two share
one vocabulary the overlap then tends to 1. A draft with a reduced vocabulary (the shipped one emits 8,192 of the
target's 49,152 tokens) never puts mass outside it, so the overlap tends to that share instead, |V_q| / |V_p|: high
temperature can lower α for such a pair as well as raise it (:func:`limit_overlap_at_high_temperature`).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from specsim.core.sampling import SamplingConfig, accepted_mass, warp


def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """TV(p, q) = ½ Σ_x |p(x) − q(x)| over the last dimension; 1 − TV(p, q) is :func:`accepted_mass`."""
    return 0.5 * (p - q).abs().sum(dim=-1)


def accepted_mass_at_temperature(target_logits: torch.Tensor, draft_logits: torch.Tensor, temperature: float,
                                 top_p: float | None = None, vocab_map: torch.Tensor | None = None) -> float:
    """Σ min(p_T, q_T) for one position, p and q warped as the engine warps them (T = 0: the greedy rule).

    ``draft_logits[i]`` is for target id ``vocab_map[i]`` (default: id i; a draft with more logits than the
    target has ids uses only the shared ones), and q is 0 on target ids the draft cannot propose, as in
    :class:`specsim.core.model_drafters.ModelDrafter`.
    """
    target_logits, draft_logits = target_logits.float(), draft_logits.float()
    if vocab_map is None:
        vocab_map = torch.arange(min(len(draft_logits), len(target_logits)))
    draft_logits = draft_logits[: len(vocab_map)]
    if temperature <= 0.0:  # greedy: the guess is the draft's argmax, kept iff it is the target's argmax too
        return float(int(vocab_map[torch.argmax(draft_logits)]) == int(torch.argmax(target_logits)))
    sampling = SamplingConfig(temperature, top_p)
    p = warp(target_logits, sampling)
    q = torch.zeros_like(p).index_copy_(0, vocab_map.to(p.device), warp(draft_logits, sampling))
    return float(accepted_mass(p, q))


def accepted_mass_by_temperature(target_logits: torch.Tensor, draft_logits: torch.Tensor,
                                 temperatures: Sequence[float], top_p: float | None = None,
                                 vocab_map: torch.Tensor | None = None) -> list[float]:
    """:func:`accepted_mass_at_temperature` at each temperature: the curve a page draws."""
    return [accepted_mass_at_temperature(target_logits, draft_logits, t, top_p, vocab_map) for t in temperatures]


def next_token_logits(model: torch.nn.Module, context: Sequence[int]) -> torch.Tensor:
    """A causal LM's logits for the token after ``context`` (one pass, no cache), in float32 on the CPU."""
    device = next(model.parameters()).device
    with torch.inference_mode():
        out = model(input_ids=torch.tensor([list(context)], dtype=torch.long, device=device), logits_to_keep=1)
    return out.logits[0, -1].float().cpu()


def limit_overlap_at_high_temperature(target_vocab: int, draft_vocab: int) -> float:
    """Σ min(p_T, q_T) as T → ∞: p_T uniform over the target's vocabulary, q_T over the draft's (a subset), so the
    overlap is the draft's share of the target's vocabulary (1 when they share one)."""
    if not 1 <= draft_vocab <= target_vocab:
        raise ValueError("the draft's vocabulary must be a non-empty part of the target's")
    return draft_vocab / target_vocab

