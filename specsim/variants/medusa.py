"""Medusa heads: extra next-next-token predictors on the target's own last hidden state.

The target's last hidden state h_t at position t already feeds its output head, which predicts
token t+1. Medusa (Cai et al., 2024) adds K small heads on the same h_t: head k is a residual
block h -> h + SiLU(W_k h + b_k) followed by the target's own (tied) output head, and predicts
token t+k+1. One verification pass of the target therefore also yields the hidden state that
drafts the NEXT K tokens: there is no separate draft model and no extra pass to draft.

Here the heads reuse the target's output matrix restricted to a reduced vocabulary (the tokens
seen in the training data), so the shipped file holds only the K residual blocks and the list
of kept token ids (~5 MB for K = 4 on SmolLM2-135M).

Verification: :class:`MedusaDrafter` fits the engine's :class:`~specsim.core.drafters.Drafter`
protocol and proposes ONE chain (each head's top-1), checked by the engine's normal verify step;
its trace also records each head's runner-up tokens, i.e. the candidate tree Medusa could
verify. :func:`medusa_tree_generate` verifies that tree for real in one pass with tree attention
(a custom 4D mask and position ids, :mod:`specsim.variants.tree`) and keeps the longest
accepted branch.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from specsim.core.clock import now
from specsim.core.drafters import Proposal
from specsim.core.paths import MEDUSA_HEADS as ASSET
from specsim.core.sampling import SamplingConfig, top_tokens

HEAD_ALTERNATIVES = 3  # ranked tokens per head recorded in the trace (the candidate tree's width)


class MedusaHeads(nn.Module):
    """K residual blocks on the target's last hidden state; head k predicts token t+k+1."""

    def __init__(self, hidden_size: int, n_heads: int, vocab_ids: torch.Tensor):
        super().__init__()
        if n_heads < 1:
            raise ValueError("need at least one Medusa head")
        self.blocks = nn.ModuleList(nn.Linear(hidden_size, hidden_size) for _ in range(n_heads))
        for block in self.blocks:  # zero init: every head starts as the target's own next-token head
            nn.init.zeros_(block.weight)
            nn.init.zeros_(block.bias)
        self.register_buffer("vocab_ids", torch.as_tensor(vocab_ids, dtype=torch.long))
        self.meta: dict = {}

    @property
    def n_heads(self) -> int:
        return len(self.blocks)

    def extra_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def features(self, hidden: torch.Tensor) -> torch.Tensor:
        """(..., H) -> (K, ..., H): each head's residual update of the hidden state."""
        return torch.stack([hidden + nn.functional.silu(block(hidden)) for block in self.blocks])

    def logits(self, hidden: torch.Tensor, out_weight: torch.Tensor) -> torch.Tensor:
        """(..., H) -> (K, ..., V') over the reduced vocabulary; ``out_weight`` is the target's output
        matrix already restricted to ``vocab_ids``."""
        return self.features(hidden) @ out_weight.T

    def save(self, path: str | Path) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        state = {k: v.half() if v.is_floating_point() else v for k, v in self.state_dict().items()}
        torch.save({"hidden_size": self.blocks[0].in_features, "n_heads": self.n_heads, "state": state,
                    "meta": self.meta}, path)

    @classmethod
    def load(cls, path: str | Path = ASSET) -> MedusaHeads:
        """Load heads saved by :meth:`save` (weights ship in float16, run in float32)."""
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"no Medusa heads at {path}; train them: python -m specsim.variants.train_medusa")
        blob = torch.load(path, map_location="cpu", weights_only=True)
        heads = cls(blob["hidden_size"], blob["n_heads"], blob["state"]["vocab_ids"])
        heads.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in blob["state"].items()})
        heads.meta = dict(blob.get("meta", {}))
        return heads.eval()


def restricted_output(target_model: nn.Module, vocab_ids: torch.Tensor) -> torch.Tensor:
    """The target's output matrix rows for the reduced vocabulary (a copy; the target is untouched)."""
    weight = target_model.get_output_embeddings().weight
    return weight.detach().index_select(0, vocab_ids.to(weight.device)).clone()


class MedusaDrafter:
    """Drafts with Medusa heads from the hidden state the target's last verification pass produced.

    It never runs a model pass of its own: ``observe`` receives the target's last hidden states
    for the kept positions (the engine computes them because ``needs_target_hidden`` is True);
    the last one is the state that predicted the newest token, so head k guesses the k-th token
    after it. The first iteration drafts from the prefill's last state, the one that chose the first new token.
    Greedy only: the heads' q is not a distribution the target's p is compared against.
    """

    kind = "medusa"
    needs_target_hidden = True

    def __init__(self, heads: MedusaHeads, target_model: nn.Module, name: str = "Medusa heads"):
        self.heads = heads.eval()
        self.device = next(target_model.parameters()).device
        self.heads.to(self.device)
        # The heads run in float32 (the hidden state is cast up in head_probs); a 16-bit target's
        # output rows are cast up too, or the product fails with a dtype mismatch.
        self.out_weight = restricted_output(target_model, heads.vocab_ids).float()
        self.name = f"{name} (K={heads.n_heads})"
        self.hidden: torch.Tensor | None = None

    def start(self, prompt_ids, vocab_size: int, target_hidden: torch.Tensor | None = None) -> None:
        # the prefill's last state chose the first new token: the heads guess the tokens after it
        self.hidden = None if target_hidden is None or len(target_hidden) == 0 else target_hidden[-1]

    def observe(self, context, target_hidden: torch.Tensor | None = None) -> None:
        self.hidden = None if target_hidden is None or len(target_hidden) == 0 else target_hidden[-1]

    def head_probs(self, hidden: torch.Tensor) -> torch.Tensor:
        """(K, V') probabilities of each head over the reduced vocabulary."""
        with torch.inference_mode():
            return torch.softmax(self.heads.logits(hidden.float(), self.out_weight).float(), dim=-1)

    def propose(self, context, k: int, sampling: SamplingConfig, generator: torch.Generator | None,
                stop_below: float = 0.0) -> Proposal:
        if not sampling.greedy:
            raise ValueError("the Medusa drafter here is greedy only (temperature 0)")
        if self.hidden is None or k <= 0:
            return Proposal()
        start = now(self.device)
        probs = self.head_probs(self.hidden)[: min(k, self.heads.n_heads)]
        ids = self.heads.vocab_ids
        proposal = Proposal()
        for head in probs:
            index = int(torch.argmax(head))
            proposal.tokens.append(int(ids[index]))
            proposal.q.append(float(head[index]))
            proposal.top.append([(int(ids[i]), p) for i, p in top_tokens(head, HEAD_ALTERNATIVES)])
            if proposal.q[-1] < stop_below:  # the confidence stop (specsim.core.kpolicy): the later heads are dropped
                break
        elapsed = now(self.device) - start
        proposal.pass_times = [elapsed] + [0.0] * (len(proposal.tokens) - 1)  # one matmul drafts them all
        return proposal
