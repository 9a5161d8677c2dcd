"""The batch-size caveat, as a model: a roofline's ridge point, and what it makes of v at batch size B.

A pass over n tokens (summed over the batch) costs max(1, n / R) one-token passes
(:func:`roofline_pass_cost`): free while it waits on reading the weights, and dearer once its
arithmetic takes longer, past the ridge point R. That counts the weights only.

A decoding step runs its kernels one after the other, so its time is the *sum* of each kernel's roofline, never
one max over the whole step (:func:`step_kernels`): the weight GEMMs take max(reading the weights, their
arithmetic), the attention kernels max(reading every sequence's KV cache, attention's arithmetic). Cache reads,
which no batching shares, add time beside the GEMMs; they cannot hide the GEMMs' arithmetic. At long context they
are most of a large batch's step, so the GEMMs' extra arithmetic is a smaller share of it and v stays nearer 1
(MagicDec: Chen, Tiwari, Sadhukhan et al., 2024). Pure arithmetic, so the pages that explain it load no model
library (:mod:`specsim.measure.passcost` is the measurement).
"""

from __future__ import annotations

from dataclasses import dataclass

from specsim.core.defaults import GPU_RIDGE  # noqa: F401  (readers take roofline.GPU_RIDGE beside A100 and H100)
from specsim.measure import analytics


def roofline_pass_cost(tokens: float, ridge: float) -> float:
    """A pass over ``tokens`` tokens (summed over the batch), in one-token passes: max(1, tokens / R), where R is
    the ridge point (tokens per pass before the pass becomes compute-bound)."""
    return max(1.0, tokens / ridge)


@dataclass(frozen=True)
class Accelerator:
    """A datasheet's dense bfloat16 arithmetic and memory bandwidth, enough to place a roofline's ridge."""

    name: str
    tflops: float  # dense bf16 tensor-core TFLOP/s
    tb_per_s: float  # memory bandwidth, TB/s

    @property
    def ridge_tokens(self) -> float:
        """R: tokens one pass can carry before arithmetic, not reading the weights, sets its time.

        Per token a pass does 2 FLOPs per weight (multiply and add) and reads each bf16 weight (2 bytes) once,
        whatever the number of tokens: the pass is memory-bound while tokens · 2 FLOPs / 2 bytes stays below
        the chip's FLOPs per byte, so R = FLOP/s ÷ bytes/s.
        """
        return self.tflops / self.tb_per_s


A100 = Accelerator("A100 SXM (80 GB)", 312.0, 2.04)
H100 = Accelerator("H100 SXM", 989.0, 3.35)
H200 = Accelerator("H200 SXM", 989.0, 4.8)  # the H100's chip with faster, larger memory (HBM3e)
# GPU_RIDGE (from specsim.core.defaults) lies between A100.ridge_tokens and H100.ridge_tokens.
GPU_MEMORY_GB = 80  # one A100 or H100 (80 GB): where a batch's KV cache stops fitting beside the weights


def batched_verify_cost(batch: int, k: int, ridge: float) -> float:
    """v at batch size B: a pass over B·(K+1) tokens against a plain pass over B tokens (both batched)."""
    return roofline_pass_cost(batch * (k + 1), ridge) / roofline_pass_cost(batch, ridge)


def batched_speedup(alpha: float, k: int, draft_cost: float, batch: int, ridge: float) -> float:
    """Model: the calculator's speedup with v from the roofline at batch size B (c kept as given)."""
    return float(analytics.speedup(alpha, k, draft_cost, batched_verify_cost(batch, k, ridge)))


# ---- the KV cache: reads that do not amortise over the batch (MagicDec: Chen, Tiwari, Sadhukhan et al., 2024) ----


@dataclass(frozen=True)
class Transformer:
    """A decoder's shape from its config: what one decoding step reads (weights, each sequence's KV cache) and
    computes (2 FLOPs per weight per token, plus attention over the context)."""

    name: str
    vocab: int
    hidden: int  # d_model = heads · head_dim
    intermediate: int  # the gated MLP's width
    layers: int
    heads: int
    kv_heads: int  # grouped-query attention: keys and values are stored for these heads only
    tied_embeddings: bool = False
    bytes_per_value: int = 2  # bfloat16 weights and cache

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def params(self) -> int:
        """Weights of the linear layers and embeddings (norms are too small to count)."""
        kv = self.kv_heads * self.head_dim
        attention = 2 * self.hidden * self.hidden + 2 * self.hidden * kv  # q and o, k and v
        mlp = 3 * self.hidden * self.intermediate  # gate, up, down
        embeddings = self.vocab * self.hidden * (1 if self.tied_embeddings else 2)
        return self.layers * (attention + mlp) + embeddings

    @property
    def weight_bytes(self) -> int:
        return self.params * self.bytes_per_value

    @property
    def kv_bytes_per_token(self) -> int:
        """One token's cache: a key and a value per layer, for the KV heads only."""
        return 2 * self.layers * self.kv_heads * self.head_dim * self.bytes_per_value

    def kv_share(self, context: int) -> float:
        """One sequence's cache at ``context`` tokens, as a fraction of the weights' bytes."""
        return context * self.kv_bytes_per_token / self.weight_bytes

    def attention_share(self, context: int) -> float:
        """Attention's FLOPs for one new token at ``context`` tokens (q·kᵀ and the weighted sum of v, 2·d FLOPs
        per context token each, per layer), as a fraction of the weights' 2 FLOPs per parameter."""
        return 4 * self.layers * self.hidden * context / (2 * self.params)


LLAMA_31_8B = Transformer("Llama 3.1 8B", vocab=128_256, hidden=4096, intermediate=14_336, layers=32, heads=32,
                          kv_heads=8)
"""The long-context model MagicDec measures, from its config.json (untied embeddings, 8 KV heads for 32 query heads)."""


@dataclass(frozen=True)
class StepKernels:
    """One decoding step, kernel by kernel, in units of reading the weights once: what each kernel reads and what it
    computes. Each kernel takes the longer of the two; the step takes the sum of its kernels."""

    weights_read: float  # the GEMMs read every weight once for the whole batch: 1
    gemm_arithmetic: float  # B·n tokens at 2 FLOPs per weight, against R tokens per weight-read: B·n / R
    cache_read: float  # every sequence reads its own KV cache: B · context · (cache bytes per token) / weight bytes
    attention_arithmetic: float  # B·n new tokens attend over the context

    @property
    def gemm(self) -> float:
        return max(self.weights_read, self.gemm_arithmetic)

    @property
    def attention(self) -> float:
        return max(self.cache_read, self.attention_arithmetic)

    @property
    def total(self) -> float:
        return self.gemm + self.attention

    @property
    def gemm_memory_bound(self) -> bool:
        return self.weights_read >= self.gemm_arithmetic

    @property
    def attention_memory_bound(self) -> bool:
        return self.cache_read >= self.attention_arithmetic


def step_kernels(tokens_per_sequence: int, batch: int, ridge: float, context: int = 0,
                 model: Transformer = LLAMA_31_8B) -> StepKernels:
    """One decoding step over ``batch`` sequences, each adding ``tokens_per_sequence`` tokens after ``context``
    cached ones: the weight GEMMs' and the attention kernels' reads and arithmetic (2 FLOPs per weight per token;
    2·d FLOPs per cached token for q·kᵀ and again for the weighted sum of v, per layer)."""
    tokens = batch * tokens_per_sequence
    return StepKernels(weights_read=1.0, gemm_arithmetic=tokens / ridge,
                       cache_read=batch * model.kv_share(context),
                       attention_arithmetic=tokens * model.attention_share(context) / ridge)


def step_cost(tokens_per_sequence: int, batch: int, ridge: float, context: int = 0,
              model: Transformer = LLAMA_31_8B) -> float:
    """A step's time in units of reading the weights once: the sum of its kernels' rooflines,
    max(weights, GEMM arithmetic) + max(KV cache, attention arithmetic). At ``context = 0`` this is
    :func:`roofline_pass_cost` over B·n tokens."""
    return step_kernels(tokens_per_sequence, batch, ridge, context, model).total


def kv_verify_cost(batch: int, k: int, ridge: float, context: int, model: Transformer = LLAMA_31_8B) -> float:
    """v at batch B and ``context`` cached tokens per sequence: a step adding K + 1 tokens per sequence against a
    plain step adding one. Both read the same caches; the longer the context, the larger the share of the step those
    reads take, and the nearer 1 the ratio, though the GEMMs turn compute-bound at B·(K + 1) = R at any context."""
    return step_cost(k + 1, batch, ridge, context, model) / step_cost(1, batch, ridge, context, model)


def kv_speedup(alpha: float, k: int, draft_cost: float, batch: int, ridge: float, context: int,
               model: Transformer = LLAMA_31_8B) -> float:
    """Model: the calculator's speedup with v from :func:`kv_verify_cost` (c kept as given)."""
    return float(analytics.speedup(alpha, k, draft_cost, kv_verify_cost(batch, k, ridge, context, model)))


def memory_bound_batches(k: int, ridge: float) -> float:
    """The largest batch whose verification step (K + 1 tokens a sequence) still has memory-bound GEMMs:
    B·(K + 1) ≤ R, at every context length (the cache adds attention time; it changes nothing in the GEMMs).
    0 when even one sequence's K + 1 tokens pass R."""
    return ridge / (k + 1) if k + 1 <= ridge else 0.0


def attention_memory_bound_tokens(ridge: float, model: Transformer = LLAMA_31_8B) -> float:
    """How many new tokens a sequence can attend with in one step before its attention kernel is compute-bound:
    n · (attention FLOPs per cached token) ≤ R · (cache bytes per cached token), the same at every context and
    batch size (grouped-query attention reads one key and value for several query heads)."""
    return ridge * model.kv_share(1) / model.attention_share(1)


def kv_cache_gb(batch: int, context: int, model: Transformer = LLAMA_31_8B) -> float:
    """The batch's KV cache in GB (10⁹ bytes), beside the weights' :attr:`Transformer.weight_bytes`."""
    return batch * context * model.kv_bytes_per_token / 1e9


# ---- serving many requests: K under load, mixed acceptance, the draft's own cache -------------------------------


def best_k_under_load(alpha: float, draft_cost: float, batch: int, ridge: float, context: int,
                      ks: range = range(1, 17), model: Transformer = LLAMA_31_8B) -> tuple[int, float]:
    """The K with the highest modelled speedup (:func:`kv_speedup`) at batch B, and that speedup; ``(0, 1.0)``
    when no K beats plain decoding, which is when a server should switch speculation off for that load."""
    best = max(ks, key=lambda k: kv_speedup(alpha, k, draft_cost, batch, ridge, context, model))
    speedup = kv_speedup(alpha, best, draft_cost, batch, ridge, context, model)
    return (best, speedup) if speedup > 1.0 else (0, 1.0)


def mixed_batch_speedup(alphas: list[float], k: int, draft_cost: float, batch: int, ridge: float, context: int,
                        model: Transformer = LLAMA_31_8B) -> float:
    """A continuous batch whose requests accept differently: each drafts K and all are verified in one step, so
    the step writes Σ τ(α_i, K) tokens for the cost of K·c + v; the batch's speedup is the *mean* τ over that cost
    (``alphas`` are the requests' acceptances, spread evenly over the batch)."""
    mean_tau = sum(float(analytics.tokens_per_loop(a, k)) for a in alphas) / len(alphas)
    return mean_tau / (k * draft_cost + kv_verify_cost(batch, k, ridge, context, model))


SMOLLM2_135M = Transformer("SmolLM2-135M-Instruct", vocab=49_152, hidden=576, intermediate=1536, layers=30, heads=9,
                           kv_heads=3, tied_embeddings=True)
"""The bundled target, from its config (30 layers, 3 KV heads of 64, tied embeddings): 134.5M parameters."""

LLAMA_32_1B = Transformer("Llama 3.2 1B", vocab=128_256, hidden=2048, intermediate=8192, layers=16, heads=32,
                          kv_heads=8, tied_embeddings=True)
"""A draft for :data:`LLAMA_31_8B` with the same tokenizer, from its config.json (16 layers, 8 KV heads of 64)."""


def draft_cache_share(draft: Transformer = LLAMA_32_1B, target: Transformer = LLAMA_31_8B) -> float:
    """The draft's KV cache per token as a share of the target's: memory a server sets aside beside the target's
    cache for every sequence that speculates, at every context length."""
    return draft.kv_bytes_per_token / target.kv_bytes_per_token
