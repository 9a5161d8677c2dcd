"""The "Is verification free here?" page's section on serving many requests at once: K under load, a batch
whose requests accept differently, and the draft's own KV cache; every figure from :mod:`specsim.lesson.roofline`."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import plotly.graph_objects as go

from app.palette import DRAFT, TARGET
from specsim.lesson import roofline
from specsim.lesson import serving as stacks
from specsim.measure import analytics


def load_rows(alpha: float, draft_cost: float, ridge: int, context: int,
              batches: Sequence[int]) -> list[tuple[int, int, float]]:
    """(B, the best K, its modelled speedup) per batch size; K = 0 where speculation should be off."""
    return [(b, *roofline.best_k_under_load(alpha, draft_cost, b, ridge, context)) for b in batches]


def load_figure(rows: Sequence[tuple[int, int, float]]) -> go.Figure:
    """The best K by batch size (bars) and the speedup it gives (line); a bar at 0 means: switch speculation off."""
    labels = [str(b) for b, _, _ in rows]
    fig = go.Figure()
    fig.add_bar(x=labels, y=[k for _, k, _ in rows], name="best K (0: speculation off)", marker_color=DRAFT,
                hovertemplate="B = %{x}: best K = %{y}<extra></extra>")
    fig.add_scatter(x=labels, y=[s for _, _, s in rows], mode="lines+markers+text", name="its speedup (model)",
                    yaxis="y2", line={"color": TARGET, "width": 3}, text=[f"{s:.2f}×" for _, _, s in rows],
                    textposition="top center", hovertemplate="B = %{x}: %{y:.2f}×<extra></extra>")
    fig.update_layout(title="The best K at each batch size, and what it buys", height=360,
                      xaxis={"title": "batch size B", "type": "category"}, yaxis={"title": "best K"},
                      yaxis2={"title": "speedup", "overlaying": "y", "side": "right", "rangemode": "tozero",
                              "dtick": 0.5, "tickformat": ".1f", "showgrid": False},
                      legend={"orientation": "h", "y": -0.3}, margin={"t": 50, "b": 10})
    return fig


def load_text(rows: Sequence[tuple[int, int, float]], alpha: float, draft_cost: float, ridge: int,
              context: int) -> str:
    first_b, first_k, first_s = rows[0]
    text = (f"At α = {alpha:.2f}, c = {draft_cost:.2f}, R = {ridge} and a context of {context:,} tokens, the best K "
            f"at B = {first_b} is {first_k} ({first_s:.2f}×).")
    shorter = next(((b, k, s) for b, k, s in rows if 0 < k < first_k), None)
    if shorter is not None:
        text += f" Load shortens it: at B = {shorter[0]} the best K is {shorter[1]} ({shorter[2]:.2f}×)."
    off = next((b for b, k, _ in rows if k == 0), None)
    if off is not None:
        text += (f" From B = {off} no K beats plain decoding in this model, so a server should stop speculating at "
                 "that load.")
    else:
        text += (f" Up to B = {rows[-1][0]} some K still pays here: the cache reads keep the step waiting on memory "
                 "(move the context slider down to see speculation switch off).")
    weights_gb = roofline.LLAMA_31_8B.weight_bytes / 1e9
    full = next((b for b, _, _ in rows if roofline.kv_cache_gb(b, context) + weights_gb > roofline.GPU_MEMORY_GB), None)
    if full is not None:
        text += (f" From B = {full} the batch's cache and the weights no longer fit one {roofline.GPU_MEMORY_GB} GB "
                 "GPU: larger batches at this context need several GPUs.")
    return text


def schedule_text(rows: Sequence[tuple[int, int, float]]) -> str:
    """How a server applies the chart: vLLM's K by concurrency (with this model's schedule), and SGLang's fixed
    settings."""
    return ("A server can follow this chart. vLLM's *Dynamic Speculative Decoding* "
            f"({stacks.VLLM_RELEASE}) takes a list of batch-size ranges, each with its K, and K = 0 switches "
            "speculation off for a range; the schedule below is this model's best K at every batch size. (Older "
            "guides name `disable_by_batch_size`: it stopped working when vLLM retired its V0 engine, gone entirely by "
            f"v0.11.0, and has since been deleted.) {stacks.SGLANG_TUNING}")


@functools.lru_cache(maxsize=32)
def best_k_every_batch(alpha: float, draft_cost: float, ridge: int, context: int,
                       largest: int) -> tuple[tuple[int, int], ...]:
    """(B, the best K) at every batch size from 1 to ``largest``, not only at the chart's powers of two. Kept for
    the sliders' last settings: it is 4,000 modelled speedups (about 0.15 s), and every script run of the page
    asks again."""
    return tuple((b, roofline.best_k_under_load(alpha, draft_cost, b, ridge, context)[0])
                 for b in range(1, largest + 1))


def schedule_snippet(alpha: float, draft_cost: float, ridge: int, context: int, largest: int,
                     k_default: int) -> stacks.Snippet:
    """vLLM's schedule from the model's best K at every batch size up to ``largest``."""
    every = best_k_every_batch(alpha, draft_cost, ridge, context, largest)
    return stacks.vllm_dynamic_snippet(stacks.dynamic_schedule(every), k_default)


def mixed_text(alpha: float, k: int, draft_cost: float, batch: int, ridge: int, context: int) -> str:
    """Half the batch accepting well, half poorly, against a batch that all accepts at their mean. A batch of one
    request cannot be split, so at B = 1 the example takes B = 2."""
    note = " (B = 1 is a single request, so this example takes B = 2)" if batch < 2 else ""
    batch = max(batch, 2)
    low, high = max(0.05, alpha - 0.25), min(0.95, alpha + 0.25)
    mean = (low + high) / 2
    mixed = roofline.mixed_batch_speedup([low, high], k, draft_cost, batch, ridge, context)
    even = roofline.mixed_batch_speedup([mean], k, draft_cost, batch, ridge, context)
    tau_low, tau_high = analytics.tokens_per_loop(low, k), analytics.tokens_per_loop(high, k)
    return (f"**Requests accept differently.** One step verifies every request's K = {k} guesses, whatever each "
            f"keeps: a batch of B = {batch} with half its requests at α = {low:.2f} (τ = {tau_low:.2f} tokens a "
            f"step) and half at α = {high:.2f} (τ = {tau_high:.2f}) writes their mean τ per request{note}, "
            f"{mixed:.2f}× plain decoding in this model, against {even:.2f}× if all were at α = {mean:.2f}. The "
            "batch as a whole does not lose by the spread (τ curves upward in α), but its requests do not share "
            "alike: both pay the same step, and the low-α ones get fewer tokens from it. That is why servers tune "
            "K per workload and watch acceptance per request.")


def draft_cache_text(batch: int, context: int) -> str:
    draft, target = roofline.LLAMA_32_1B, roofline.LLAMA_31_8B
    share = roofline.draft_cache_share(draft, target)
    draft_gb = roofline.kv_cache_gb(batch, context, draft)
    target_gb = roofline.kv_cache_gb(batch, context, target)
    return (f"**The draft has a cache too.** A separate draft model keeps its own KV cache for every sequence it "
            f"drafts for: {draft.name} beside {target.name} stores {draft.kv_bytes_per_token // 1024} KiB a token "
            f"against {target.kv_bytes_per_token // 1024} KiB, {share:.0%} on top of the target's cache at every "
            f"context length; at B = {batch} and {context:,} tokens that is {draft_gb:,.1f} GB beside "
            f"{target_gb:,.1f} GB. A draft head that is one decoder layer reading the target's features (EAGLE, an MTP "
            f"module) keeps one layer's cache, 1/{target.layers} of a {target.layers}-layer target's if its layer "
            "has the same shape; Medusa's heads keep none. MagicDec's draft keeps only a fixed window of recent "
            "tokens (StreamingLLM), so its cache stops growing with the context.")
