"""The two draft architectures, their initialisation from the target, and save/load.

Both drafts work on a reduced vocabulary: ``id_map[small_id] = target_id`` lists the tokens the target
actually emits (most frequent first). Any other target token enters as an UNK slot and gets no output
logit at all, so the draft's q is 0 there and speculative decoding stays lossless.

- :class:`StandaloneDraft` — a small Llama (``LlamaForCausalLM``) that reads target ids, maps them to
  its own, and returns logits over ``id_map`` (the classic draft model of the lesson). Its tied
  embedding starts as the target's embedding rows projected by PCA to the draft width.
- :class:`EagleDraft` — a feature-level draft in the spirit of EAGLE (Li et al., 2024): at position t it
  reads the target's last hidden state f_t and the embedding of token t+1, fuses them (one linear
  layer), runs one Llama decoder layer (its own KV cache) and predicts f_{t+1}; the target's own
  (tied, reduced) embedding turns that into logits for token t+2. At draft time it feeds its own
  predicted features back in. With ``feature_layers`` (EAGLE-3, Li et al., 2025) it reads, in place
  of f_t alone, the target's hidden states after a low, a middle and the last layer side by side; one
  linear map (``lift``) brings them to the draft's width, and its own predictions (already that wide)
  skip it.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from torch import nn
from transformers import LlamaConfig, LlamaForCausalLM, LlamaModel


class _VocabMixin:
    """Target id -> draft id lookup (UNK for tokens outside ``id_map``)."""

    def _init_vocab(self, id_map: torch.Tensor, target_vocab: int) -> None:
        self.register_buffer("id_map", id_map.long().clone(), persistent=True)
        to_small = torch.full((target_vocab,), len(id_map), dtype=torch.long)
        to_small[id_map.long()] = torch.arange(len(id_map))
        self.register_buffer("to_small", to_small, persistent=False)

    @property
    def n_out(self) -> int:
        return len(self.id_map)


class StandaloneDraft(_VocabMixin, nn.Module):
    """A small causal LM over a reduced vocabulary; call it with target ids like any HF causal LM."""

    kind = "standalone"

    def __init__(self, config: LlamaConfig, id_map: torch.Tensor, target_vocab: int):
        super().__init__()
        self._init_vocab(id_map, target_vocab)
        self.llama = LlamaForCausalLM(config)
        self.config = config

    def forward(self, input_ids: torch.Tensor, **kwargs):
        out = self.llama(input_ids=self.to_small[input_ids], **kwargs)
        out.logits = out.logits[..., : self.n_out]  # the UNK slot is never proposed
        return out

    def hidden(self, input_ids: torch.Tensor) -> torch.Tensor:
        """Last hidden states (training computes logits only where there is a target)."""
        return self.llama.model(input_ids=self.to_small[input_ids]).last_hidden_state

    def logits(self, h: torch.Tensor) -> torch.Tensor:
        return self.llama.lm_head(h)[..., : self.n_out]


class EagleDraft(_VocabMixin, nn.Module):
    """Feature-level draft: (f_t, embed(x_{t+1})) -> f_{t+1} -> logits for x_{t+2}."""

    kind = "eagle"

    def __init__(self, config: LlamaConfig, id_map: torch.Tensor, target_vocab: int):
        super().__init__()
        self._init_vocab(id_map, target_vocab)
        d = config.hidden_size
        self.config = config
        self.embed = nn.Embedding(len(id_map) + 1, d)  # rows of the target's embedding (+ UNK)
        self.fuse = nn.Linear(2 * d, d, bias=True)
        self.body = LlamaModel(config)  # its own embed_tokens is unused (vocab_size 1)
        self.feature_layers = [int(i) for i in getattr(config, "feature_layers", None) or []]
        n = max(1, len(self.feature_layers))
        self.lift = nn.Linear(n * d, d, bias=False) if n > 1 else None

    def lift_feats(self, feats: torch.Tensor) -> torch.Tensor:
        """True target features brought to the draft's width (the draft's own predictions are already there).

        Fused features: each lower layer's residual stream is RMS-normalised first (its scale grows with
        depth); the last layer's comes after the target's final norm already.
        """
        d = self.config.hidden_size
        if self.lift is None or feats.shape[-1] == d:
            return feats
        parts = list(feats.split(d, dim=-1))
        parts[:-1] = [F.rms_norm(p, (d,), eps=self.config.rms_norm_eps) for p in parts[:-1]]
        return self.lift(torch.cat(parts, dim=-1))

    def forward(self, feats: torch.Tensor, next_ids: torch.Tensor, past_key_values=None, position_ids=None,
                use_cache: bool = False, with_logits: bool = True, attention_mask: torch.Tensor | None = None):
        """feats [B, T, d] (f_t; [B, T, n*d] fused target features), next_ids [B, T] target ids (x_{t+1})
        -> (predicted f_{t+1}, logits, cache). ``attention_mask``: a 4D mask for a token tree (optional)."""
        x = self.fuse(torch.cat([self.lift_feats(feats), self.embed(self.to_small[next_ids])], dim=-1))
        out = self.body(inputs_embeds=x, past_key_values=past_key_values, position_ids=position_ids,
                        use_cache=use_cache, attention_mask=attention_mask)
        h = out.last_hidden_state
        return h, self.logits(h) if with_logits else None, out.past_key_values

    def logits(self, h: torch.Tensor) -> torch.Tensor:
        return h @ self.embed.weight[: self.n_out].T


def choose_vocab(counts: torch.Tensor, size: int, special_ids: list[int], min_count: float = 1,
                 fill_by_id: bool = False) -> torch.Tensor:
    """Special tokens, then target tokens seen at least ``min_count`` times (most frequent first).

    With ``fill_by_id`` the rest of ``size`` is filled with the lowest unused ids: BPE ids follow merge
    order, so low ids are the tokens that were frequent in the tokenizer's own (much larger) corpus.
    """
    order = torch.argsort(counts, descending=True, stable=True)
    keep = [int(i) for i in special_ids]
    seen = set(keep)
    for i in order.tolist():
        if len(keep) >= size or counts[i] < min_count:
            break
        if i not in seen:
            keep.append(i)
            seen.add(i)
    for i in range(len(counts)) if fill_by_id else ():
        if len(keep) >= size:
            break
        if i not in seen:
            keep.append(i)
            seen.add(i)
    return torch.tensor(keep, dtype=torch.long)


@torch.no_grad()
def extend_vocab(draft: StandaloneDraft | EagleDraft, new_ids: torch.Tensor, target) -> StandaloneDraft | EagleDraft:
    """The same draft with ``new_ids`` appended to its vocabulary (a trained draft keeps its weights).

    EAGLE-style: the new rows are the target's own embedding rows. Standalone: a least-squares map from
    the target's embeddings to the draft's trained ones (fitted on the known rows) places the new rows.
    """
    emb = target.get_input_embeddings().weight.detach().float()
    old, n = draft.id_map, draft.n_out
    id_map = torch.cat([old, new_ids.long()])
    if isinstance(draft, EagleDraft):
        new = EagleDraft(draft.config, id_map, len(draft.to_small))
        state = {k: v for k, v in draft.state_dict().items() if k not in ("id_map", "embed.weight")}
        new.load_state_dict(state, strict=False)
        new.embed.weight.copy_(torch.cat([draft.embed.weight[:n], emb[new_ids], draft.embed.weight[n:]]))
        new.embed.weight.requires_grad_(False)
        return new
    rows = draft.llama.get_input_embeddings().weight
    fit = torch.linalg.lstsq(emb[old], rows[:n]).solution
    config = LlamaConfig.from_dict(draft.config.to_dict())
    config.vocab_size = len(id_map) + 1
    new = StandaloneDraft(config, id_map, len(draft.to_small))
    state = {k: v for k, v in draft.state_dict().items() if "embed_tokens" not in k and "lm_head" not in k
             and k != "id_map"}
    new.load_state_dict(state, strict=False)
    new.llama.get_input_embeddings().weight.copy_(torch.cat([rows[:n], emb[new_ids] @ fit, rows[n:]]))
    new.llama.tie_weights()
    return new


def _pca_rows(rows: torch.Tensor, width: int) -> torch.Tensor:
    """Project rows onto their top ``width`` principal directions, rescaled to the rows' typical norm."""
    centred = rows - rows.mean(0)
    _, _, v = torch.linalg.svd(centred, full_matrices=False)
    out = centred @ v[:width].T
    if out.shape[1] < width:  # fewer rows than the width (tiny runs): pad with zeros
        out = torch.cat([out, torch.zeros(len(out), width - out.shape[1])], dim=1)
    return out * (0.02 * width**0.5 / out.norm(dim=-1).mean())


def build_standalone(target, id_map: torch.Tensor, layers: int, width: int, seed: int = 0) -> StandaloneDraft:
    """A fresh standalone draft whose embedding is the target's (mapped rows + UNK), PCA-projected."""
    torch.manual_seed(seed)
    tc = target.config
    heads = max(1, width // 64)
    config = LlamaConfig(vocab_size=len(id_map) + 1, hidden_size=width, intermediate_size=int(width * 8 / 3) // 16 * 16,
                         num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads,
                         max_position_embeddings=tc.max_position_embeddings, rope_theta=getattr(tc, "rope_theta", 1e5),
                         rms_norm_eps=tc.rms_norm_eps, tie_word_embeddings=True, bos_token_id=None, eos_token_id=None,
                         pad_token_id=None)
    draft = StandaloneDraft(config, id_map, tc.vocab_size)
    emb = target.get_input_embeddings().weight.detach().float()
    rows = torch.cat([emb[id_map], emb.mean(0, keepdim=True)])
    with torch.no_grad():
        draft.llama.get_input_embeddings().weight.copy_(_pca_rows(rows, width))
    draft.llama.tie_weights()
    return draft


def build_eagle(target, id_map: torch.Tensor, layers: int = 1, seed: int = 0,
                init_from_last: bool = True, feature_layers: list[int] | None = None) -> EagleDraft:
    """A fresh EAGLE-style draft: target embedding rows, decoder layer(s) copied from the target's last.

    ``feature_layers`` (hidden-state indices, low to high, the last one the target's last) makes it read
    fused features; its ``lift`` starts by passing the last layer's through, i.e. as the plain draft.
    """
    torch.manual_seed(seed)
    tc = target.config
    config = LlamaConfig(vocab_size=1, hidden_size=tc.hidden_size, intermediate_size=tc.intermediate_size,
                         num_hidden_layers=layers, num_attention_heads=tc.num_attention_heads,
                         num_key_value_heads=tc.num_key_value_heads, max_position_embeddings=tc.max_position_embeddings,
                         rope_theta=getattr(tc, "rope_theta", 1e5), rms_norm_eps=tc.rms_norm_eps,
                         bos_token_id=None, eos_token_id=None, pad_token_id=None)
    if feature_layers:
        if list(feature_layers) != sorted(set(feature_layers)) or feature_layers[-1] != tc.num_hidden_layers:
            raise ValueError(f"feature layers must rise and end at the target's last ({tc.num_hidden_layers}): "
                             f"{feature_layers}")
        config.feature_layers = [int(i) for i in feature_layers]
    draft = EagleDraft(config, id_map, tc.vocab_size)
    emb = target.get_input_embeddings().weight.detach().float()
    d = tc.hidden_size
    with torch.no_grad():
        draft.embed.weight.copy_(torch.cat([emb[id_map], emb.mean(0, keepdim=True)]))
        draft.fuse.weight.zero_()
        draft.fuse.weight[:, :d].copy_(torch.eye(d) * 0.5)  # start as an average of feature and embedding
        draft.fuse.weight[:, d:].copy_(torch.eye(d) * 0.5)
        draft.fuse.bias.zero_()
        if draft.lift is not None:
            draft.lift.weight.zero_()
            draft.lift.weight[:, -d:].copy_(torch.eye(d))
        draft.body.norm.weight.copy_(target.model.norm.weight)
        if init_from_last:
            for i, layer in enumerate(draft.body.layers):
                src = target.model.layers[len(target.model.layers) - len(draft.body.layers) + i]
                layer.load_state_dict(src.state_dict())
    draft.embed.weight.requires_grad_(False)  # the target's head stays the target's head
    return draft


def save_draft(draft: StandaloneDraft | EagleDraft, folder: Path, meta: dict | None = None) -> None:
    """Weights (float16 safetensors), the Llama config, the kind and the id map (json)."""
    folder.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().to(torch.float16 if v.is_floating_point() else v.dtype).contiguous()
             for k, v in draft.state_dict().items() if k not in ("id_map", "llama.lm_head.weight")}
    save_file(state, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps(draft.config.to_dict(), indent=1, default=str))
    (folder / "draft.json").write_text(json.dumps({"kind": draft.kind, "target_vocab": len(draft.to_small),
                                                   **(meta or {})}, indent=1))
    (folder / "id_map.json").write_text(json.dumps(draft.id_map.tolist()))


def load_draft(folder: str | Path, dtype: torch.dtype = torch.float32) -> tuple[nn.Module, list[int]]:
    """(draft model, id_map) from a folder written by :func:`save_draft`; the model is in eval mode."""
    folder = Path(folder)
    info = json.loads((folder / "draft.json").read_text())
    config = LlamaConfig.from_dict(json.loads((folder / "config.json").read_text()))
    id_map = torch.tensor(json.loads((folder / "id_map.json").read_text()), dtype=torch.long)
    cls = {"standalone": StandaloneDraft, "eagle": EagleDraft}[info["kind"]]
    draft = cls(config, id_map, info["target_vocab"])
    raw = load_file(str(folder / "model.safetensors"))
    state = {k: v.float() if v.is_floating_point() else v for k, v in raw.items()}
    missing, unexpected = draft.load_state_dict(state, strict=False)
    if unexpected or [k for k in missing if k not in ("id_map", "llama.lm_head.weight")]:
        raise ValueError(f"{folder}: weights do not match the config ({missing[:3]}, {unexpected[:3]})")
    if isinstance(draft, StandaloneDraft):
        draft.llama.tie_weights()
    return draft.to(dtype).eval(), id_map.tolist()
