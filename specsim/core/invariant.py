"""A position-invariant target: a position's logits do not depend on how many positions share the pass.

Greedy speculative decoding promises the target's own tokens. That holds only if the logits the target
gives position i inside one verification pass over K + 1 tokens are *bitwise* the logits it gives the
same position when plain decoding computes it alone. Floating-point addition is not associative, so
any reduction whose order depends on the number of rows in the pass breaks the promise: an argmax
that sits on a near-tie can flip ("Defeating Nondeterminism in LLM Inference", Thinking Machines,
2025; vLLM's batch-invariant mode).

On this CPU (measured, see docs/measurements/invariant-log-2026-12-01-to-03.md; how it works: docs/invariant.md):

- where the CPU has AMX tiles, every linear runs through :class:`KernelLinear` (:func:`specsim.core.fused.rows_linear`):
  invariant by construction, and as fast for K + 1 rows as for one, so the guarantee costs nothing;
- elsewhere, bfloat16 ``F.linear`` is row-invariant for every projection of SmolLM2-135M except the MLP's down
  projection (1536 -> 576), whose kernel changes its reduction split when more than 5 rows share a
  call. :class:`ChunkedLinear` sums that product over fixed 768-column chunks instead, so the split no
  longer depends on the row count;
- scaled-dot-product attention picks other kernels (and reduction orders) for one query and for many.
  :func:`invariant_attention` computes each query row with reductions whose order is fixed by the
  row's own key length, in float32, and is plugged in through transformers' attention interface.

Why a loop over rows: batching the rows into one float32 matmul (the M = rows x groups product), padding
key lengths to shared buckets, or an elementwise score with a length-dependent softmax sum all broke bitwise
equality on this CPU; cumulative-sum reductions kept it but cost more than the loop. The loop costs one small
attention per new position and layer (v(5) about 1.2 here).

Prefill (many prompt positions at once) keeps the fast SDPA path: plain and speculative decoding share
the same prefill, so only the decode-phase passes (1 to ``MAX_INVARIANT_QUERIES`` new tokens) need to
agree with each other.
"""

from __future__ import annotations

import warnings

import torch
import torch.nn.functional as F
from torch import nn

from specsim.core import fused
from specsim.core.cpu import cpu_flags
from specsim.core.defaults import MAX_INVARIANT_QUERIES

ATTENTION_NAME = "specsim_invariant"

DOWN_CHUNK = 768
"""Column chunk of the down projection: a reduction split that does not change with the row count."""


def cpu_supports_bf16() -> bool:
    """Whether this CPU has native bfloat16 arithmetic (AVX512-BF16 or AMX), where bf16 is the fast dtype."""
    return bool(cpu_flags() & {"avx512_bf16", "amx_bf16"})


def cpu_has_avx2_fma() -> bool:
    """Whether this CPU has AVX2 and FMA, which the fused linear kernel's AVX2 route needs."""
    return {"avx2", "fma"} <= cpu_flags()


def cpu_prefers_bf16() -> bool:
    """Whether bfloat16 with the invariant path is this CPU's default: native bfloat16 arithmetic, or AVX2 + FMA,
    where the AVX2 route reads half the bytes of float32 weights (measured on an AMD EPYC without bfloat16
    arithmetic: one-token pass 40 ms against 65 ms in float32, v(3) 1.10 against 1.83)."""
    return cpu_supports_bf16() or cpu_has_avx2_fma()


class ChunkedLinear(nn.Module):
    """``x @ W.T (+ b)`` summed over fixed column chunks of W, in float32, so each row's result is
    computed the same way whatever the number of rows."""

    def __init__(self, linear: nn.Linear, chunk: int = DOWN_CHUNK) -> None:
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.chunk = chunk
        self.weight = linear.weight  # kept as one parameter, so the state dict is unchanged
        self.bias = linear.bias

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        total = None
        for start in range(0, self.in_features, self.chunk):
            part = F.linear(x[..., start:start + self.chunk], self.weight[:, start:start + self.chunk]).float()
            total = part if total is None else total + part
        if self.bias is not None:
            total = total + self.bias.float()
        return total.to(x.dtype)


class KernelLinear(nn.Module):
    """A linear whose decode passes (up to ``MAX_INVARIANT_QUERIES`` rows) run through the fused row-invariant
    kernel; larger passes (prefill) and a switched-off kernel take ``fallback``, the probed stock path, except
    prefill passes of up to :func:`specsim.core.fused.prefill_rows` rows, where the kernel is the faster one."""

    def __init__(self, linear: nn.Linear, fallback: nn.Module) -> None:
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.weight = linear.weight  # the same parameter: state dict and tied embeddings unchanged
        self.bias = linear.bias
        self.fallback = fallback if fallback is not linear else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.numel() // self.in_features
        kernel = fused.linear_kernel()
        if kernel is None or rows > max(MAX_INVARIANT_QUERIES, fused.prefill_rows()):
            return self.fallback(x) if self.fallback is not None else F.linear(x, self.weight, self.bias)
        out = fused.rows_linear(x.reshape(rows, self.in_features), self.weight)  # refuses a GPU's tensors
        if self.bias is not None:
            out = out + self.bias.float()
        return out.to(x.dtype).reshape(*x.shape[:-1], self.out_features)


def invariant_attention(module: nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                        attention_mask: torch.Tensor | None, scaling: float | None = None, dropout: float = 0.0,
                        **kwargs) -> tuple[torch.Tensor, None]:
    """Causal attention whose result for each query row does not depend on how many rows are computed.

    query: (batch, heads, n, d); key, value: (batch, kv_heads, L, d), the last n keys being the new
    positions. Returns (batch, n, heads, d) like every transformers attention function.
    """
    n = query.shape[2]
    if n > MAX_INVARIANT_QUERIES:  # prefill: the fast path, shared by every decoder
        if key.shape[2] > n:  # a decode pass this large (a big token tree) is not covered: say so, once per size
            _warn_stock_pass(n)
        from transformers.integrations.sdpa_attention import sdpa_attention_forward

        return sdpa_attention_forward(module, query, key, value, attention_mask, scaling=scaling, dropout=dropout,
                                      **kwargs)
    batch, heads, _, dim = query.shape
    kv_heads, length = key.shape[1], key.shape[2]
    groups = heads // kv_heads
    scale = scaling if scaling is not None else dim ** -0.5
    q = query.float().reshape(batch, kv_heads, groups, n, dim) * scale  # scaling q is elementwise: invariant
    if fused.kernel() is not None:  # the same guarantee, one C++ call per layer
        allowed = None
        if not _masks_only_the_future(attention_mask, n, length):
            allowed = (attention_mask if attention_mask.dtype == torch.bool else attention_mask == 0)[:, 0]
        out = fused.attend(q.contiguous(), key.float().transpose(-1, -2).contiguous(), value.float(), allowed)
        return out.reshape(batch, heads, n, dim).transpose(1, 2).to(query.dtype).contiguous(), None
    keys_t, v = key.float().transpose(-1, -2), value.float()  # (b, kvh, d, L), (b, kvh, L, d)
    if _masks_only_the_future(attention_mask, n, length):
        rows = [_attend(q[:, :, :, i], keys_t[..., :length - n + i + 1], v[:, :, :length - n + i + 1])
                for i in range(n)]  # row i sees keys 0 .. length - n + i, exactly as when it is decoded alone
        out = torch.stack(rows, dim=3)
    else:  # padding or a tree mask: each row attends to exactly its visible keys, gathered in order
        out = q.new_empty(batch, kv_heads, groups, n, dim)
        for b in range(batch):
            for i in range(n):
                row = attention_mask[b, 0, i]
                visible = (row if row.dtype == torch.bool else row == 0).nonzero().squeeze(-1)
                out[b, :, :, i] = _attend(q[b:b + 1, :, :, i], keys_t[b:b + 1, ..., visible],
                                          v[b:b + 1, :, visible])[0]
    return out.reshape(batch, heads, n, dim).transpose(1, 2).to(query.dtype).contiguous(), None


_WARNED: set[int] = set()


def _warn_stock_pass(n: int) -> None:
    if n not in _WARNED:
        _WARNED.add(n)
        warnings.warn(f"a decode pass over {n} new tokens exceeds the position-invariant path's "
                      f"{MAX_INVARIANT_QUERIES} and ran on stock kernels: its logits may differ from one-token "
                      "passes", stacklevel=3)


def _attend(q: torch.Tensor, keys_t: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """softmax(q k^T) v for one (pre-scaled) query row per head group, in float32: (b, kvh, g, d)."""
    return torch.matmul(torch.softmax(torch.matmul(q, keys_t), dim=-1), v)


def _masks_only_the_future(attention_mask: torch.Tensor | None, n: int, length: int) -> bool:
    """Whether the mask hides nothing but the causal future (so slicing each row's keys is enough)."""
    if attention_mask is None:
        return True
    allowed = attention_mask if attention_mask.dtype == torch.bool else attention_mask == 0
    rows = torch.arange(n, device=allowed.device)[:, None] + (length - n)
    past = torch.arange(length, device=allowed.device)[None, :] <= rows  # (n, length)
    return bool(torch.all(allowed[..., -n:, :] | ~past))


def _rows_invariant(layer: nn.Module, in_features: int, dtype: torch.dtype, device: str | torch.device,
                    max_rows: int = MAX_INVARIANT_QUERIES) -> bool:
    """Whether every row of ``layer(x[:m])`` equals ``layer(x[i:i+1])`` for m = 2 .. max_rows, at the
    current thread count (a kernel may split its work by thread count, so verdicts are kept per count;
    the probe never changes the process's thread count, which other users of a server share)."""
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(max_rows, in_features, generator=generator).to(device=device, dtype=dtype)
    with torch.inference_mode():
        alone = torch.cat([layer(x[i:i + 1]) for i in range(max_rows)])
        return all(torch.equal(layer(x[:m]), alone[:m]) for m in range(2, max_rows + 1))


_VERDICTS: dict[tuple, int | bool | None] = {}
"""Probe results per (in, out, dtype, device, threads): the chunk a linear of that shape needs (None: none);
and per ("kernel", in, out, threads): whether the fused linear kernel passed the same check."""


def make_position_invariant(model: nn.Module) -> list[str]:
    """Switch a transformers causal LM to the invariant decode path, in place; return what was changed.

    Attention goes through :func:`invariant_attention`. Each distinct linear shape is probed on this
    machine, and a linear whose rows are not invariant is replaced by a :class:`ChunkedLinear` with the
    first chunk that makes it so. Where the fused linear kernel runs (:func:`specsim.core.fused.linear_kernel`),
    every linear becomes a :class:`KernelLinear`, with the probed path kept for prefill and as a fallback.
    """
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register(ATTENTION_NAME, invariant_attention)
    def invariant_mask(*args, **kwargs):
        """No mask for a causal decode pass without padding: each row's keys are sliced to its own past."""
        from transformers.masking_utils import causal_mask_function

        padding, q_length = kwargs.get("attention_mask"), kwargs.get("q_length", args[1] if len(args) > 1 else None)
        if (q_length is not None and q_length <= MAX_INVARIANT_QUERIES  # larger passes take SDPA, which needs it
                and kwargs.get("mask_function", causal_mask_function) is causal_mask_function
                and kwargs.get("local_size") is None and (padding is None or bool(padding.all()))):
            return None
        return sdpa_mask(*args, **kwargs)

    AttentionMaskInterface.register(ATTENTION_NAME, invariant_mask)
    model.set_attn_implementation(ATTENTION_NAME)
    changed = [f"attention: {ATTENTION_NAME}"]
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            if type(child) is not nn.Linear:
                continue
            shape = (child.in_features, child.out_features)
            probe = (*shape, child.weight.dtype, str(child.weight.device), torch.get_num_threads())
            if probe not in _VERDICTS:
                _VERDICTS[probe] = _pick_chunk(child)
            chunk = _VERDICTS[probe]
            replacement = ChunkedLinear(child, chunk) if chunk is not None else child
            where = f"{name}.{child_name}" if name else child_name
            if _kernel_fits(child):
                setattr(module, child_name, KernelLinear(child, replacement))
                changed.append(f"{where}: {shape[0]}->{shape[1]} through the fused linear kernel")
            elif chunk is not None:
                setattr(module, child_name, replacement)
                changed.append(f"{where}: {shape[0]}->{shape[1]} summed over {chunk}-column chunks")
    return changed


def _kernel_fits(linear: nn.Linear) -> bool:
    """Whether the fused linear kernel takes this layer here, checked row for row like the stock probe."""
    if fused.linear_kernel() is None or linear.weight.dtype != torch.bfloat16 or linear.weight.device.type != "cpu":
        return False
    if linear.in_features % 32 or linear.out_features % 16:
        return False
    probe = ("kernel", linear.in_features, linear.out_features, torch.get_num_threads())
    if probe not in _VERDICTS:
        _VERDICTS[probe] = _rows_invariant(KernelLinear(linear, linear), linear.in_features, linear.weight.dtype,
                                           linear.weight.device)
    return bool(_VERDICTS[probe])


def _pick_chunk(linear: nn.Linear) -> int | None:
    device, dtype = linear.weight.device, linear.weight.dtype
    if _rows_invariant(linear, linear.in_features, dtype, device):
        return None
    for chunk in (DOWN_CHUNK, 512, 384, 256, 128):
        if chunk < linear.in_features and _rows_invariant(ChunkedLinear(linear, chunk), linear.in_features,
                                                          dtype, device):
            return chunk
    raise RuntimeError(f"no row-invariant split found for a {linear.in_features}->{linear.out_features} linear")
