"""The standalone draft's forward pass written out in plain torch, with a preallocated KV cache.

A draft pass is one token through two small decoder layers: a few million multiply-adds, well under a
millisecond of arithmetic. Through ``LlamaForCausalLM`` the same pass pays for a general-purpose model
around it (the mask builder, the cache object, the output classes, one Python call per sub-module),
which costs more than the arithmetic and puts the draft at about an eighth of a target pass (c ≈ 0.12).
Here the pass is the textbook one, and nothing else:

    x = embedding[token]
    for each layer:
        h = rms_norm(x) * w_in
        q, k, v = h @ W_qkv          (q, k rotated by their position: RoPE)
        append k, v to the cache      (a preallocated tensor; rolling back is moving a pointer)
        x = x + softmax(q kᵀ / √d) v @ W_o
        h = rms_norm(x) * w_post
        x = x + (silu(h @ W_gate) * (h @ W_up)) @ W_down
    logits = (rms_norm(x) * w_final) @ Eᵀ          (the tied embedding, over the draft's vocabulary)

It is the same maths as the Llama module it reads its weights from (tests compare the two), so the
draft proposes the same tokens; only its cost changes. Where the fused kernels run, the same steps run
as one C++ call (:func:`specsim.core.fused` ``draft_pass``): no Python between them, which halves the pass
again (about 0.5 against 0.9 ms a pass here, measured in
``docs/measurements/invariant-log-2026-12-01-to-03.md``). The Python below stays the reference that tests
compare that call with, and runs a prompt's prefill (``ONE_CALL_ROWS``).

It runs in the target's dtype, as the stock draft did; with bfloat16 on a CPU where the fused linear kernel
runs, the weights are bfloat16 and the activations float32, and on the kernel's AVX2 route the weights are int8 with
one scale per row, half the bytes to read (see ``LeanLlama.__init__``).
"""

from __future__ import annotations

from typing import NamedTuple

import torch
import torch.nn.functional as F

ONE_CALL_ROWS = 32
"""Passes of up to this many tokens (every pass of a decoding loop) run as the one C++ call. A prompt's
prefill takes the Python steps: their attention (SDPA, on every core) beats the call's plain loop on long
inputs (200 tokens: 17 against 28 ms here). Both fill the same cache the same way."""


class LeanCache:
    """Keys and values of every layer in one tensor each, [layers, kv heads, capacity, head dim].

    ``length`` positions are valid. It answers the two calls the engine's cache code makes
    (``get_seq_length`` and ``crop``), so the drafter rolls it back like a transformers cache.
    """

    def __init__(self, layers: int, kv_heads: int, head_dim: int, dtype: torch.dtype, device, capacity: int = 512):
        self.keys = torch.empty(layers, kv_heads, capacity, head_dim, dtype=dtype, device=device)
        self.values = torch.empty_like(self.keys)
        self.length = 0

    def get_seq_length(self) -> int:
        return self.length

    def crop(self, max_length: int) -> None:
        """Keep the first ``max_length`` positions (negative: drop that many from the end), as transformers does."""
        self.length = max(0, self.length + max_length if max_length < 0 else min(max_length, self.length))

    def reserve(self, length: int) -> None:
        """Grow the capacity (doubling) so ``length`` positions fit; the valid part is kept."""
        capacity = self.keys.shape[2]
        if length <= capacity:
            return
        while capacity < length:
            capacity *= 2
        for name in ("keys", "values"):
            old = getattr(self, name)
            new = old.new_empty(old.shape[0], old.shape[1], capacity, old.shape[3])
            new[:, :, : self.length] = old[:, :, : self.length]
            setattr(self, name, new)


class Int8Matrix(NamedTuple):
    """A weight matrix W [out, in] as int8 values and one float32 scale per output row: W ≈ q · scale[:, None].
    Each row's scale is its largest magnitude over 127, so every weight is rounded to the nearest of 255 evenly spaced
    values over its row's range. Read by the fused kernel's ``rows_linear_q8``: half the bytes of bfloat16."""

    q: torch.Tensor  # [out, in] int8
    scale: torch.Tensor  # [out] float32

    @classmethod
    def of(cls, weight: torch.Tensor) -> Int8Matrix:
        w = weight.detach().float()
        scale = w.abs().amax(dim=1).clamp_min(torch.finfo(torch.float32).tiny) / 127
        return cls(torch.round(w / scale[:, None]).clamp(-127, 127).to(torch.int8).contiguous(), scale.contiguous())


def int8_available() -> bool:
    """Whether the fused kernel reads int8 weights here (``rows_linear_q8``: a build with AVX2 and FMA)."""
    from specsim.core import fused

    module = fused.kernel()
    return fused.linear_kernel() is not None and module is not None and bool(module.q8_ready())


class LeanLlama:
    """A Llama-architecture draft (``StandaloneDraft``) as plain tensors and one forward function."""

    def __init__(self, draft: torch.nn.Module, dtype: torch.dtype | None = None, one_call: bool = True,
                 int8: bool | None = None):
        config, model = draft.config, draft.llama.model
        weight = model.embed_tokens.weight
        self.dtype = dtype or weight.dtype
        self.device = weight.device
        self.heads, self.kv_heads = config.num_attention_heads, config.num_key_value_heads
        self.head_dim = getattr(config, "head_dim", None) or config.hidden_size // self.heads
        self.eps = config.rms_norm_eps
        if getattr(config, "attention_bias", False) or getattr(config, "mlp_bias", False):
            raise ValueError("the lean forward covers Llama drafts without biases")
        rope = getattr(config, "rope_parameters", None) or {}
        if rope.get("rope_type", "default") != "default":
            raise ValueError(f"the lean forward covers the default RoPE, not {rope.get('rope_type')}")
        theta = float(rope.get("rope_theta", getattr(config, "rope_theta", 10000.0)))
        self.inv_freq = 1.0 / (theta ** (torch.arange(0, self.head_dim, 2, dtype=torch.float) / self.head_dim))
        self.inv_freq = self.inv_freq.to(self.device)

        # Each weight matrix W [out, in] is kept as a tensor M that ``self._times(x, M)`` turns into x Wᵀ:
        # - bfloat16 on a CPU where the fused row-invariant linear kernel runs (any of its routes; the draft's
        #   float32 rows take its AVX2 code): M is W in bfloat16 as stored, read once and widened to float32; the
        #   activations stay in float32. Stock bfloat16 matmuls are slow there (one row: 63 against 26 µs for a
        #   576 x 576 product, measured on an AMD EPYC).
        # - float32: M is Wᵀ stored [in, out], so one row times it reads memory in order; the 8k-row head
        #   then costs a third of what it does as stored (the same CPU).
        # - otherwise (bfloat16 without the kernel, or CUDA): M is a transposed view of W, as in nn.Linear.
        # - int8 (on the kernel's AVX2 and AVX-512 BF16 routes unless SPECSIM_DRAFT_INT8=0, or ``int8=True``): M is an
        #   :class:`Int8Matrix`, read by the kernel's ``rows_linear_q8``: half the bytes again. A draft pass is
        #   bound by reading its weights (13.4 MB in bfloat16 for the default draft), and a guess only has to be
        #   likely, not exact: the target checks it (docs/measurements/draft-int8-2026-12-07.md: held-out α
        #   0.3771 -> 0.3783 at K = 2, c 0.066 -> 0.045).
        from specsim.core import environment, fused

        kernel = fused.linear_kernel() if self.dtype == torch.bfloat16 and self.device.type == "cpu" else None
        self.kernel = kernel is not None and config.hidden_size % 16 == 0 and config.intermediate_size % 16 == 0
        # by default on the routes it was measured on (AVX2 on a Zen 3, AVX-512 BF16 on a Zen 4, whose float32 draft
        # rows run the same AVX2 code); AMX reads bfloat16 in tiles, int8 is unmeasured there
        measured = self.kernel and fused.kernel().linear_path() in ("avx2", "avx512bf16")
        wanted = (environment.current().draft_int8 and measured) if int8 is None else int8
        if int8 and not (self.kernel and int8_available()):
            raise ValueError(f"int8 draft weights need the fused kernel's AVX2 code: {fused.status()}")
        self.int8 = bool(wanted and self.kernel and int8_available())
        if self.kernel:
            self.dtype, layout = torch.float32, "int8" if self.int8 else "bf16 as stored"
            q8 = fused.kernel().rows_linear_q8
            self._times = (lambda x, m: q8(x, m.q, m.scale)) if self.int8 else kernel  # every matrix is int8, or none
        else:
            self._times, layout = torch.matmul, "in-out" if self.dtype == torch.float32 else "view"

        def matrix(t: torch.Tensor) -> torch.Tensor | Int8Matrix:
            t = t.detach()
            if layout == "int8":
                return Int8Matrix.of(t)
            if layout == "bf16 as stored":
                return t.to(torch.bfloat16).contiguous()
            if layout == "in-out":
                return t.T.to(self.dtype).contiguous()
            return t.to(self.dtype).contiguous().T

        def cast(t: torch.Tensor) -> torch.Tensor:
            return t.detach().to(self.dtype).contiguous()

        self.embed = cast(weight)
        self.layers = []
        for layer in model.layers:
            attn, mlp = layer.self_attn, layer.mlp
            self.layers.append((
                cast(layer.input_layernorm.weight),
                matrix(torch.cat([attn.q_proj.weight, attn.k_proj.weight, attn.v_proj.weight])),
                matrix(attn.o_proj.weight),
                cast(layer.post_attention_layernorm.weight),
                matrix(torch.cat([mlp.gate_proj.weight, mlp.up_proj.weight])),
                matrix(mlp.down_proj.weight),
            ))
        self.norm = cast(model.norm.weight)
        self.head = matrix(draft.llama.lm_head.weight[: draft.n_out])
        # The whole pass as one C++ call where the kernel runs (``one_call=False``: the Python steps below).
        self.one_call = fused.kernel().draft_pass if self.kernel and one_call else None
        # draft_pass reads each matrix with its rows' scales (empty for a norm or a bfloat16 matrix)
        none = torch.empty(0)
        self._flat = [w.q if isinstance(w, Int8Matrix) else w for layer in self.layers for w in layer]
        self._scales = [w.scale if isinstance(w, Int8Matrix) else none for layer in self.layers for w in layer]
        self._head = (self.head.q, self.head.scale) if isinstance(self.head, Int8Matrix) else (self.head, none)
        self.to_small = draft.to_small
        self._cos = self._sin = torch.empty(0, self.head_dim)

    def new_cache(self) -> LeanCache:
        return LeanCache(len(self.layers), self.kv_heads, self.head_dim, self.dtype, self.device)

    def _rope(self, end: int) -> tuple[torch.Tensor, torch.Tensor]:
        """cos and sin of positions 0..end-1 (the table grows by doubling)."""
        if self._cos.shape[0] < end:
            size = max(end, 2 * self._cos.shape[0], 512)
            freqs = torch.arange(size, dtype=torch.float, device=self.device)[:, None] * self.inv_freq[None]
            angles = torch.cat([freqs, freqs], dim=-1)
            self._cos, self._sin = angles.cos().to(self.dtype), angles.sin().to(self.dtype)
        return self._cos, self._sin

    def _rms_norm(self, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        x32 = x.float()
        return weight * (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)).to(self.dtype)

    @staticmethod
    def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        half = x.shape[-1] // 2
        return x * cos + torch.cat([-x[..., half:], x[..., :half]], dim=-1) * sin

    def _layers(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, mask: torch.Tensor | None,
                cache: LeanCache, start: int) -> torch.Tensor:
        """Every decoder layer over the new rows ``x`` (the module docstring's loop), their keys and values written
        to the cache from ``start``; ``mask`` (rows, cached + rows) says what each row attends to (None: all)."""
        n = x.shape[0]
        end = start + n
        q_width, kv_width = self.heads * self.head_dim, self.kv_heads * self.head_dim
        for i, (w_in, w_qkv, w_o, w_post, w_gate_up, w_down) in enumerate(self.layers):
            qkv = self._times(self._rms_norm(x, w_in), w_qkv)
            q = qkv[:, :q_width].view(n, self.heads, self.head_dim).transpose(0, 1)
            k = qkv[:, q_width : q_width + kv_width].view(n, self.kv_heads, self.head_dim).transpose(0, 1)
            v = qkv[:, q_width + kv_width :].view(n, self.kv_heads, self.head_dim).transpose(0, 1)
            cache.keys[i, :, start:end] = self._rotate(k, cos, sin)
            cache.values[i, :, start:end] = v
            attended = F.scaled_dot_product_attention(
                self._rotate(q, cos, sin)[None], cache.keys[i : i + 1, :, :end], cache.values[i : i + 1, :, :end],
                attn_mask=mask, enable_gqa=self.heads != self.kv_heads)
            x = x + self._times(attended[0].transpose(0, 1).reshape(n, q_width), w_o)
            gate, up = self._times(self._rms_norm(x, w_post), w_gate_up).chunk(2, dim=-1)
            x = x + self._times(F.silu(gate) * up, w_down)
        cache.length = end
        return x

    @torch.inference_mode()
    def tree_forward(self, ids: list[int], positions: list[int], allowed: torch.Tensor,
                     cache: LeanCache) -> torch.Tensor:
        """Tree nodes after the cached positions, each at its own position (its depth) and attending where
        ``allowed`` (n, cached + n) says: the Python steps of :meth:`forward` with a tree mask. Every node's
        logits; the nodes' entries are appended to the cache."""
        n, start = len(ids), cache.length
        end = start + n
        cache.reserve(end)
        cos, sin = self._rope(max(positions) + 1)
        where = torch.tensor(positions, dtype=torch.long, device=self.device)
        cos, sin = cos[where], sin[where]
        x = self.embed[self.to_small[torch.tensor(ids, dtype=torch.long, device=self.device)]]
        mask = allowed.to(self.device)
        x = self._layers(x, cos, sin, mask, cache, start)
        return self._times(self._rms_norm(x, self.norm), self.head)

    @torch.inference_mode()
    def forward(self, ids: list[int], cache: LeanCache) -> torch.Tensor:
        """Feed target ids ``ids`` after the ``cache.length`` cached positions; logits at the last one."""
        n, start = len(ids), cache.length
        end = start + n
        cache.reserve(end)
        cos, sin = self._rope(end)
        cos, sin = cos[start:end], sin[start:end]
        index = self.to_small[torch.tensor(ids, dtype=torch.long, device=self.device)]
        x = self.embed[index]  # [n, d]
        if self.one_call is not None and n <= ONE_CALL_ROWS:
            logits = self.one_call(x, self._flat, self._scales, cache.keys, cache.values, cos, sin, start,
                                   self.heads, self.kv_heads, self.eps, self.norm, *self._head)
            cache.length = end
            return logits
        mask = None
        if n > 1:  # query i sees every cached key and the new keys up to its own position
            mask = torch.arange(end, device=self.device)[None] <= torch.arange(start, end, device=self.device)[:, None]
        x = self._layers(x, cos, sin, mask, cache, start)
        return self._times(self._rms_norm(x[-1:], self.norm), self.head)[0]
