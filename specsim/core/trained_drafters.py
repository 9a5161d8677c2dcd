"""Plug the trained drafts into the engine: a drafter for the EAGLE-style draft, and one loader for both.

The standalone draft is an ordinary causal LM that reads target ids, so the engine's
:class:`~specsim.core.model_drafters.ModelDrafter` can run it with ``vocab_map = id_map``. The shipped drafter,
:class:`LeanStandaloneDrafter`, is that same drafter with the draft's forward pass written out
(:mod:`specsim.core.draft_forward`): the same tokens at a fraction of the cost.

:class:`EagleDrafter` keeps the target's last hidden states f_t (the engine hands over those of every
kept position in ``observe``; the prompt's come from the engine's prefill, in ``start``) and the draft's own KV cache
over the inputs (f_t, x_{t+1}). To propose, it first catches up on the inputs whose true features are
known, then continues on its own predicted features, and finally crops its cache back to the true part.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch
from transformers import DynamicCache

from specsim.core.draft_forward import LeanLlama
from specsim.core.draft_nets import EagleDraft, StandaloneDraft, load_draft
from specsim.core.drafters import Proposal, crop_cache, hidden_request, propose_by_passes, target_features
from specsim.core.model_drafters import ModelDrafter
from specsim.core.sampling import SamplingConfig


class EagleDrafter:
    """Feature-level drafter (EAGLE-style): reads the target's hidden states, proposes on its own features."""

    kind = "eagle"
    needs_target_hidden = True

    def __init__(self, draft: EagleDraft, target_model: torch.nn.Module, name: str = "EAGLE-style draft"):
        self.draft = draft.eval()
        self.target_model = target_model
        self.name = name
        self.vocab_size = 0
        self.feats = torch.empty(0)
        self.cache = DynamicCache()
        self.n_true = 0  # cached inputs built from true target features
        self.feature_layers = draft.feature_layers or None  # EAGLE-3 style: the engine hands these layers over

    @property
    def device(self) -> torch.device:
        return self.draft.embed.weight.device

    def start(self, prompt_ids: Sequence[int], vocab_size: int, target_hidden: torch.Tensor | None = None) -> None:
        """Forget the previous run; take the target's features of the context except its last token.

        The engine hands them over from its prefill pass; without them (a caller of its own), they cost
        one target pass here.
        """
        self.vocab_size = vocab_size
        self.cache, self.n_true = DynamicCache(), 0
        if target_hidden is not None:
            self.feats = target_hidden.float().to(self.device)[: max(len(prompt_ids) - 1, 0)]
            return
        ids = torch.tensor([list(prompt_ids[:-1])], dtype=torch.long, device=self.device)
        if ids.shape[1] == 0:
            width = self.draft.config.hidden_size * max(1, len(self.draft.feature_layers))
            self.feats = torch.empty(0, width, device=self.device)
            return
        with torch.inference_mode():
            out = self.target_model.model(input_ids=ids, output_hidden_states=hidden_request(self))
            self.feats = target_features(out.hidden_states, self.feature_layers)[0].float()

    def observe(self, context: Sequence[int], target_hidden: torch.Tensor | None = None) -> None:
        """Append the target's features of the newly kept positions (the context's last token has none)."""
        if target_hidden is None:
            raise ValueError("the EAGLE drafter needs the target's hidden states")
        self.feats = torch.cat([self.feats, target_hidden.float().to(self.device)])[: len(context) - 1]

    def _catch_up(self, context: Sequence[int], n_true: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Read the inputs (f_t, x_{t+1}) for t < ``n_true`` that the cache has not read, on the target's true
        features (when it has read them all, the root's input again, for its outputs). Returns the draft's predicted
        features and logits after the root, the context's last token: what its first guess reads."""
        crop_cache(self.cache, min(self.n_true, n_true))
        done = min(self.cache.get_seq_length(), n_true - 1)
        crop_cache(self.cache, done)
        feats = self.feats[done:n_true][None].to(self.draft.embed.weight.dtype)
        nxt = torch.tensor([list(context[done + 1 : n_true + 1])], dtype=torch.long, device=self.device)
        h, logits, self.cache = self.draft(feats, nxt, past_key_values=self.cache, use_cache=True)
        self.n_true = n_true
        return h[:, -1:], logits[0, -1]

    def propose(
        self, context: Sequence[int], k: int, sampling: SamplingConfig, generator: torch.Generator | None,
        stop_below: float = 0.0,
    ) -> Proposal:
        n_true = min(len(self.feats), len(context) - 1)  # inputs (f_t, x_{t+1}) for t < n_true
        feats = None

        def draft_pass(unread: list[int]) -> tuple[torch.Tensor, torch.Tensor] | None:
            """First catch up on the inputs with true features, then continue on the draft's own."""
            nonlocal feats
            if not unread:  # it never copies, so it has read all but the last guess
                if n_true == 0:
                    return None
                feats, logits = self._catch_up(context, n_true)
            else:
                nxt = torch.tensor([[unread[-1]]], dtype=torch.long, device=self.device)
                h, out, self.cache = self.draft(feats, nxt, past_key_values=self.cache, use_cache=True)
                feats, logits = h[:, -1:], out[0, -1]
            return logits, self.draft.id_map

        with torch.inference_mode():
            proposal = propose_by_passes(draft_pass, k, self.vocab_size, sampling, generator, self.device,
                                         stop_below=stop_below)
        crop_cache(self.cache, self.n_true)  # drop the entries built on the draft's own guesses
        return proposal

    # ---- token trees (specsim.core.trees): node i reads (its parent's predicted features, its token) ----

    def map_for(self, width: int) -> torch.Tensor:
        return self.draft.id_map

    def read_context(self, context: Sequence[int]) -> torch.Tensor:
        """Catch up on the inputs with true features; the logits after the root, whose predicted features the
        root's children read."""
        n_true = min(len(self.feats), len(context) - 1)
        if n_true < 1:
            raise ValueError("the EAGLE drafter's tree needs a context of at least two tokens")
        with torch.inference_mode():
            h, logits = self._catch_up(context, n_true)
        self._tree_h = {0: h[0, -1]}
        return logits

    def tree_pass(self, ids: list[int], positions: list[int], allowed: torch.Tensor, nodes: Sequence[int] = (),
                  parents: Sequence[int] = ()) -> torch.Tensor:
        with torch.inference_mode():
            feats = torch.stack([self._tree_h[p] for p in parents])[None]
            h, logits, self.cache = self.draft(
                feats, torch.tensor([ids], dtype=torch.long, device=self.device), past_key_values=self.cache,
                position_ids=torch.tensor([positions], dtype=torch.long, device=self.device), use_cache=True,
                attention_mask=allowed[None, None].to(self.device))
        self._tree_h.update({node: h[0, row] for row, node in enumerate(nodes)})
        return logits[0]

    def rewind(self) -> None:
        crop_cache(self.cache, self.n_true)
        self._tree_h = {}


class LeanStandaloneDrafter(ModelDrafter):
    """:class:`~specsim.core.model_drafters.ModelDrafter` for a standalone draft, its passes run by
    :class:`LeanLlama`."""

    def __init__(self, draft: StandaloneDraft, name: str, dtype: torch.dtype | None = None,
                 int8: bool | None = None):
        self.lean = LeanLlama(draft, dtype=dtype, int8=int8)
        super().__init__(draft, name, vocab_map=draft.id_map.tolist())

    def _new_cache(self):
        return self.lean.new_cache()

    def _forward(self, ids: list[int]) -> torch.Tensor:
        logits = self.lean.forward(ids, self.cache)
        self.cached.extend(ids)
        return logits

    def tree_pass(self, ids: list[int], positions: list[int], allowed: torch.Tensor, nodes: Sequence[int] = (),
                  parents: Sequence[int] = ()) -> torch.Tensor:
        return self.lean.tree_forward(ids, positions, allowed, self.cache)


def make_drafter(folder: str | Path, target_model: torch.nn.Module, dtype: torch.dtype = torch.float32,
                 device: str | torch.device = "cpu"):
    """The engine drafter for a shipped draft folder: ModelDrafter (standalone) or EagleDrafter."""
    draft, id_map = load_draft(folder, dtype=dtype)
    draft = draft.to(device)
    if draft.kind == "eagle":
        return EagleDrafter(draft, target_model, f"{Path(folder).name} (EAGLE-style head trained here: reads the "
                                                 "target's hidden states)")
    return LeanStandaloneDrafter(draft, f"{Path(folder).name} (small draft model trained here)")
