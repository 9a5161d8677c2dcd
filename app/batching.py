"""The batch-size model in sentences, shared by *Is verification free here?* (the ridge point) and *Serving many
requests* (batching, the KV cache): every figure from :mod:`specsim.lesson.roofline`."""

from __future__ import annotations

import math

from app.settings import CalcSettings
from specsim.core import published
from specsim.lesson import roofline
from specsim.measure import analytics


def datasheet_sentence() -> str:
    """Where a data-centre GPU's ridge point lies, worked out from datasheets, the one R this app uses for it, and
    why measured knees come earlier (the full account, on *Serving many requests*)."""
    a, h = roofline.A100, roofline.H100
    return (f"For a GPU, R follows from its datasheet: per token a pass does 2 FLOPs per weight and reads each "
            f"bfloat16 weight (2 bytes) once, so R = FLOP/s ÷ bytes/s. The {a.name} gives {a.tflops:g} TFLOP/s ÷ "
            f"{a.tb_per_s:g} TB/s ≈ {a.ridge_tokens:.0f} tokens, the {h.name} {h.tflops:g} ÷ {h.tb_per_s:g} ≈ "
            f"{h.ridge_tokens:.0f}. This app takes R = {roofline.GPU_RIDGE}, a round figure between the two, as its "
            "GPU's ridge: a pass over K + 1 ≤ 17 tokens is deep in the flat part, which is why the papers could treat "
            "verification as free. A datasheet's R is an upper bound: measured knees come earlier for GEMMs with "
            "few rows (they use only part of the tensor cores' width), and for weights stored in fewer bytes than "
            "they are multiplied in (8- or 4-bit weights, bfloat16 arithmetic: each byte read carries more "
            "arithmetic). A mixture of experts' v rises at small batch for another reason: the K + 1 tokens of a "
            "check route to more experts, so the pass reads more weights (further down this page).")


def ridge_sentence() -> str:
    """A data-centre GPU's ridge point in short, for *Is verification free here?*; *Serving many requests* carries
    the datasheet arithmetic (:func:`datasheet_sentence`)."""
    a, h = roofline.A100, roofline.H100
    return (f"On a data-centre GPU, R is about {a.ridge_tokens:.0f} tokens for the {a.name} and "
            f"{h.ridge_tokens:.0f} for the {h.name}, from their datasheets, and this app takes R = "
            f"{roofline.GPU_RIDGE}. A pass over K + 1 ≤ 17 tokens is deep in the flat part there, which is why the "
            "papers could treat verification as free. *Serving many requests* works these figures out and shows "
            "where the knee comes earlier, a mixture-of-experts target among them.")


ROOFLINE_DEFINITION = ("a *roofline* models a pass as limited by memory or by arithmetic, whichever runs out first; "
                       "its *ridge point* R is how many tokens a pass carries before arithmetic sets its time. ")


def roofline_paragraph() -> str:
    """What a roofline and its ridge point are, with a GPU's R in short (for *Is verification free here?* when it
    shows no curve)."""
    return "A" + ROOFLINE_DEFINITION[1:] + ridge_sentence()


def datasheet_paragraph() -> str:
    """The roofline recalled from *Is verification free here?*, then a GPU's R worked out from datasheets (for
    *Serving many requests*)."""
    return "Recall from *Is verification free here?* that " + ROOFLINE_DEFINITION + datasheet_sentence()


def gemm_bound_clause(k: int, ridge: int) -> str:
    """Up to which batch the weight GEMMs of a verification step wait on memory, or that no batch does."""
    limit = roofline.memory_bound_batches(k, ridge)
    if limit < 1:
        return f"no batch size: one sequence's K + 1 = {k + 1} tokens already pass R = {ridge}"
    return f"B ≤ {math.floor(limit)}"


def batching_sentence(calc: CalcSettings, batch: int, gpu_r: int, context: int) -> str:
    """Both regimes at the chosen B, R and context, every figure from :mod:`specsim.lesson.roofline`."""
    free = float(analytics.speedup(calc.alpha, calc.k, calc.draft_cost, 1.0))
    v_w = roofline.batched_verify_cost(batch, calc.k, gpu_r)
    s_w = roofline.batched_speedup(calc.alpha, calc.k, calc.draft_cost, batch, gpu_r)
    text = (f"At the calculator's α = {calc.alpha_pct} %, K = {calc.k} and c = {calc.draft_cost:.2f}, with B = {batch} "
            f"and R = {gpu_r}: **weights only**, v = {v_w:.2f} and a speedup of {s_w:.2f}× (the GEMMs wait on "
            f"memory for {gemm_bound_clause(calc.k, gpu_r)})")
    if context:
        v_kv = roofline.kv_verify_cost(batch, calc.k, gpu_r, context)
        s_kv = roofline.kv_speedup(calc.alpha, calc.k, calc.draft_cost, batch, gpu_r, context)
        plain = roofline.step_kernels(1, batch, gpu_r, context)
        gb = roofline.kv_cache_gb(batch, context)
        dilutes = (", which dilutes the GEMMs' extra arithmetic" if batch * (calc.k + 1) > gpu_r else
                   ", and the GEMMs have no extra arithmetic yet at this batch")
        text += (f"; **at context {context:,}**, v = {v_kv:.2f} and {s_kv:.2f}× (reading the cache is "
                 f"{plain.attention / plain.total:.0%} of a plain step here{dilutes}; the batch's cache is "
                 f"{gb:,.1f} GB beside {roofline.LLAMA_31_8B.weight_bytes / 1e9:.1f} "
                 "GB of weights")
        text += (f", more than one {roofline.GPU_MEMORY_GB} GB GPU holds)"
                 if gb + roofline.LLAMA_31_8B.weight_bytes / 1e9 > roofline.GPU_MEMORY_GB else ")")
    text += (f"; against {free:.2f}× with free verification. The model keeps c as given, and so flatters both: the "
             "draft's own passes also grow with the batch, and at long context with its own cache, which is why "
             "MagicDec drafts with a small fixed-size cache.")
    return text


def kv_paragraph(model: roofline.Transformer, gpu_r: int) -> str:
    """How the cache enters the step: a kernel of its own, added to the GEMMs, never hiding their arithmetic."""
    attention_tokens = roofline.attention_memory_bound_tokens(gpu_r, model)
    share = model.heads // model.kv_heads  # query heads per cached key and value: R ÷ share is the bound (a test)
    return (
        f"**With the KV cache.** Each sequence also reads its own cache every step: {model.kv_bytes_per_token // 1024} "
        f"KiB per cached token for {model.name} ({model.layers} layers × a key and a value × {model.kv_heads} KV "
        f"heads × {model.head_dim} values × {model.bytes_per_value} bytes), against {model.weight_bytes / 1e9:.1f} GB "
        "of weights. Those reads do not amortise over the batch: B sequences read B caches. A step runs its kernels "
        "one after another, so its time is the **sum** of their rooflines: max(reading the weights, the GEMMs' "
        "arithmetic) + max(reading the caches, attention's arithmetic). The attention kernels stay memory-bound "
        f"while a sequence brings fewer than about {attention_tokens:.0f} new tokens (R = {gpu_r} ÷ {share}: each "
        f"cached key and value serves {share} of this model's {model.heads} query heads ({model.kv_heads} KV heads, "
        f"grouped-query attention), so each new token does {share} times the arithmetic per byte read; with fewer "
        "heads sharing them, attention stays memory-bound for more tokens), "
        "so the K + 1 "
        "tokens of a verification read each cache once, for the price of one. The GEMMs still turn compute-bound "
        "once B·(K + 1) passes R, at any context; what a long context changes is the share of the step they "
        "take. When the cache reads are most of the step, the GEMMs' extra arithmetic is a small part of it and v "
        f"stays near 1. MagicDec ({published.MAGICDEC_SPEEDUP.source}) studies this regime and reports "
        f"{published.MAGICDEC_SPEEDUP.figure} on {published.MAGICDEC_SPEEDUP.setting}.")
