"""The "Is verification free here?" page's section on mixture-of-experts targets: v against K for DeepSeek-V3's
shape beside a dense model, at batch 1 and at serving scale; every figure from :mod:`specsim.lesson.moe`."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from app.palette import DRAFT, MUTED, PLAIN, TARGET
from specsim.core import published
from specsim.lesson import moe

KS = tuple(range(1, 9))
MOE_BATCHES = (1, 16, 256)


def moe_figure(ridge: int, model: moe.MixtureOfExperts = moe.DEEPSEEK_V3, ks: Sequence[int] = KS,
               batches: Sequence[int] = MOE_BATCHES) -> go.Figure:
    """v against K: the dense model (weights only, batch 1) and the mixture of experts at a few batch sizes."""
    fig = go.Figure()
    fig.add_scatter(x=list(ks), y=[moe.dense_verify_cost(1, k, ridge) for k in ks], mode="lines+markers",
                    name="dense model, B = 1", line={"color": MUTED, "dash": "dot"},
                    hovertemplate="dense, K = %{x}: v = %{y:.2f}<extra></extra>")
    for b, colour in zip(batches, (TARGET, DRAFT, PLAIN), strict=False):
        fig.add_scatter(x=list(ks), y=[model.verify_cost(b, k, ridge) for k in ks], mode="lines+markers",
                        name=f"{model.name} shape, B = {b}", line={"color": colour},
                        hovertemplate=f"B = {b}, K = %{{x}}: v = %{{y:.2f}}<extra></extra>")
    fig.update_layout(title=f"Model: v against K for a mixture of experts (R = {ridge})", height=360,
                      xaxis={"title": "K (guesses per loop)", "dtick": 1},
                      yaxis={"title": "v: verification pass ÷ plain pass", "rangemode": "tozero",
                             "tickformat": ".1f"},
                      margin={"l": 10, "r": 10, "t": 50, "b": 40}, legend={"orientation": "h", "y": -0.25})
    return fig


def moe_text(k: int, ridge: int, model: moe.MixtureOfExperts = moe.DEEPSEEK_V3) -> str:
    """What K + 1 tokens do to the experts read at batch 1, and why serving scale brings v back near 1."""
    one, many = model.experts_touched(1), model.experts_touched(k + 1)
    big = MOE_BATCHES[-1]
    share = big * (k + 1) * model.active / model.experts
    always = model.always_read_params / model.active_params
    return (f"**A mixture-of-experts target.** {model.name} has {model.experts} experts in each of its "
            f"{model.moe_layers} routed layers and sends each token to {model.active} of them, so a token reads about "
            f"{published.DEEPSEEK_V3_ACTIVE_PARAMS_B:g}B of its {model.total_params / 1e9:.0f}B weights. One token "
            f"reads {one:.0f} experts a layer; n tokens that each pick {model.active} of E = {model.experts} "
            f"independently touch on average E·(1 − (1 − {model.active}/E)^n) distinct experts, so K + 1 = {k + 1} "
            f"tokens read about {many:.0f}. The weights every token reads (attention, the shared expert, the dense "
            "layers, the output head, and the embedding, which this model counts whole though a token reads one row "
            f"of it) are {always:.0%} of a token's reads, so the verification pass reads {always:.2f} + "
            f"{1 - always:.2f} × {many:.1f} / {one:.0f} ≈ {model.read_ratio(k):.1f}× the bytes of a plain pass, "
            f"and v = {model.verify_cost(1, k, ridge):.2f} where a dense model's is "
            f"{moe.dense_verify_cost(1, k, ridge):.2f}: verification is not free, and the calculator's v = 1 does not "
            f"hold. A server batching {big} requests already reads every expert each step, and each expert still "
            f"sees few tokens (about {share:.0f}, {'below' if share <= ridge else 'above'} R = {ridge}), so the "
            f"experts cost nothing extra; v = {model.verify_cost(big, k, ridge):.2f} comes from the always-read "
            f"weights, which now carry B·(K + 1) = {big * (k + 1):,} tokens, past R.\n\n"
            "Conditions: bytes read stand for time when one memory system reads every expert (one node, or experts "
            "split by tensor parallelism); spread over many GPUs by expert parallelism, a step waits on the busiest "
            "GPU instead. The model leaves out attention and the KV cache (the dense model above shows what they "
            "add), and takes each token to pick its experts independently and evenly; real routers favour some "
            "experts and correlate from token to token, so measure v on the target before trusting the batch-1 "
            "figure.")
