"""Drafters that run a causal LM with their own KV cache: :class:`ModelDrafter` (a second, smaller model, possibly
with a reduced output vocabulary) and :class:`EarlyExitDrafter` (the target's own first layers and head, cut out by
:func:`truncated_model`), and :func:`draft_cache_length`, the length of such a drafter's cache.

They follow the protocol of :mod:`specsim.core.drafters` and propose through its
:func:`~specsim.core.drafters.propose_by_passes`.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import torch
from transformers import DynamicCache

from specsim.core.defaults import DRAFT_MODEL
from specsim.core.drafters import Drafter, PromptLookupDrafter, Proposal, common_prefix, crop_cache, propose_by_passes
from specsim.core.sampling import SamplingConfig


def draft_cache_length(drafter: Drafter) -> int | None:
    """Positions in a :class:`ModelDrafter`'s KV cache (one per token read); None for any other drafter."""
    return drafter.cache.get_seq_length() if isinstance(drafter, ModelDrafter) else None


class ModelDrafter:
    """A second causal LM proposes tokens one forward pass at a time, with its own KV cache.

    ``vocab_map`` (optional) maps the draft's output ids to target ids (``vocab_map[small_id] =
    target_id``) for a draft trained with a reduced output vocabulary; q is 0 on every other target
    token. The draft reads target ids as input. Without a map, the draft and target share ids and
    only the shared range is used (padded embedding rows differ between model sizes).
    """

    kind = DRAFT_MODEL
    needs_target_hidden = False

    def __init__(self, model: torch.nn.Module, name: str = "draft model", vocab_map: Sequence[int] | None = None,
                 copy_from: PromptLookupDrafter | None = None):
        self.model = model.eval()
        self.name = name
        self.copy_from = copy_from  # set: copy where the text repeats itself (see propose_by_passes)
        self.device = next(model.parameters()).device
        self._given_map = None if vocab_map is None else torch.as_tensor(vocab_map, dtype=torch.long)
        self.vocab_map: torch.Tensor | None = None
        self.vocab_size = 0
        self.cache = self._new_cache()
        self.cached: list[int] = []  # the token ids whose keys and values are in ``cache``

    def _new_cache(self):
        return DynamicCache()

    def start(self, prompt_ids: Sequence[int], vocab_size: int, target_hidden: torch.Tensor | None = None) -> None:
        """Forget the previous run and prefill the context except its last token (the prefill's choice)."""
        self.vocab_size = vocab_size
        self.vocab_map = None
        self.cache = self._new_cache()
        self.cached = []
        if len(prompt_ids) > 1:
            self._forward(list(prompt_ids[:-1]))

    def _forward(self, ids: list[int]) -> torch.Tensor:
        """Feed ``ids`` after the cached ones; return the logits at the last position."""
        input_ids = torch.tensor([ids], dtype=torch.long, device=self.device)
        out = self.model(input_ids=input_ids, past_key_values=self.cache, use_cache=True, logits_to_keep=1)
        self.cached.extend(ids)
        return out.logits[0, -1]

    def map_for(self, width: int) -> torch.Tensor:
        """draft output id -> target id, built once the draft's logit width is known."""
        if self.vocab_map is None:
            if self._given_map is not None:
                if len(self._given_map) != width:
                    raise ValueError(f"vocab_map has {len(self._given_map)} entries; the draft outputs {width} logits")
                if int(self._given_map.max()) >= self.vocab_size:
                    raise ValueError("vocab_map points outside the target's vocabulary")
                self.vocab_map = self._given_map.to(self.device)
            else:
                self.vocab_map = torch.arange(min(width, self.vocab_size), device=self.device)
        return self.vocab_map

    def observe(self, context: Sequence[int], target_hidden: torch.Tensor | None = None) -> None:
        """Roll the cache back to the longest prefix it shares with the context the target kept."""
        keep = common_prefix(self.cached, context)
        crop_cache(self.cache, keep)
        del self.cached[keep:]

    # ---- token trees (specsim.core.trees): the context once, then one pass per depth over the nodes it expands ----

    def read_context(self, context: Sequence[int]) -> torch.Tensor:
        """Roll the cache back to what it shares with ``context`` (never past its last token), read the rest;
        return the logits after the context's last token (the tree's root)."""
        return self._forward(self._unread(context))

    def _unread(self, context: Sequence[int]) -> list[int]:
        """Roll the cache back to the longest prefix it shares with ``context``, never past the context's last token
        (that token is the first input of the next pass); return the tokens it has yet to read."""
        keep = min(common_prefix(self.cached, context), len(context) - 1)
        crop_cache(self.cache, keep)
        del self.cached[keep:]
        return list(context[keep:])

    def tree_pass(self, ids: list[int], positions: list[int], allowed: torch.Tensor, nodes: Sequence[int] = (),
                  parents: Sequence[int] = ()) -> torch.Tensor:
        """Read tree nodes after the cached positions: node i sits at ``positions[i]`` and attends to the cache
        entries and new nodes where ``allowed[i]`` (n, cached + n) is True. Returns every node's logits; the
        entries stay in the cache until :meth:`rewind`. (``nodes`` and their ``parents``, the tree's numbering, are
        for a drafter whose input is its parent's output, as the EAGLE head's.)"""
        out = self.model(input_ids=torch.tensor([ids], dtype=torch.long, device=self.device),
                         attention_mask=allowed[None, None].to(self.device),
                         position_ids=torch.tensor([positions], dtype=torch.long, device=self.device),
                         past_key_values=self.cache, use_cache=True)
        return out.logits[0]

    def rewind(self) -> None:
        """Forget the tree passes' entries: the cache holds the context read by :meth:`read_context` again."""
        crop_cache(self.cache, len(self.cached))

    def propose(
        self, context: Sequence[int], k: int, sampling: SamplingConfig, generator: torch.Generator | None,
        stop_below: float = 0.0,
    ) -> Proposal:
        # The cache must end before the context's last token: that token is the first input. After a
        # full acceptance this also feeds the draft's own last proposal, which it never saw.
        pending = self._unread(context)

        def draft_pass(unread: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
            nonlocal pending
            ids, pending = pending + unread, []
            logits = self._forward(ids)
            return logits, self.map_for(logits.shape[-1])

        copy = None
        if self.copy_from is not None:
            def copy(proposed: list[int]) -> int | None:
                return self.copy_from.next_copy(context, proposed)

        return propose_by_passes(draft_pass, k, self.vocab_size, sampling, generator, self.device, copy, stop_below)


def truncated_model(model: torch.nn.Module, n_layers: int) -> torch.nn.Module:
    """The same model with only its first ``n_layers`` blocks, sharing every weight (no copies).

    Works for the usual ``XForCausalLM(model=XModel(embed_tokens, layers, norm, ...), lm_head)``
    layout (Llama, Qwen2, Mistral, SmolLM...). The result is an ordinary causal LM, so it can also
    serve as ``assistant_model`` for transformers' own assisted generation.
    """
    total = len(model.model.layers)
    if not 1 <= n_layers <= total:
        raise ValueError(f"early exit needs 1..{total} layers, got {n_layers}")
    config = copy.deepcopy(model.config)
    config.num_hidden_layers = n_layers
    if getattr(config, "layer_types", None):
        config.layer_types = list(config.layer_types)[:n_layers]
    with torch.device("meta"):
        shallow = type(model)(config)
    for name in list(shallow._modules):
        if name != "model":
            setattr(shallow, name, getattr(model, name))
    for name in list(shallow.model._modules):
        source = getattr(model.model, name)
        setattr(shallow.model, name, torch.nn.ModuleList(source[:n_layers]) if name == "layers" else source)
    leftovers = [n for n, t in [*shallow.named_parameters(), *shallow.named_buffers()] if t.is_meta]
    if leftovers:
        raise ValueError(f"cannot share these weights for early exit: {leftovers[:3]}")
    shallow.generation_config = copy.deepcopy(model.generation_config)
    return shallow.eval()


class EarlyExitDrafter(ModelDrafter):
    """The target's first L layers, then its own final norm and head: a draft with no extra weights.

    It keeps its own KV cache for those L layers (the target's cache belongs to the target).
    """

    kind = "early_exit"

    def __init__(self, target_model: torch.nn.Module, n_layers: int):
        total = len(target_model.model.layers)
        super().__init__(truncated_model(target_model, n_layers), name=f"early exit after layer {n_layers}/{total}")
        self.n_layers = n_layers
