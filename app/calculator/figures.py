"""Plotly figures for the calculator page. Pure: numbers in, ``go.Figure`` out, no Streamlit.

Trace names are part of the contract (tests look traces up by name), so change them with care.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.palette import (
    BREAK_EVEN,
    DRAFT,
    EXTRA,
    FASTER,
    FASTER_LIGHT,
    INK,
    KEPT,
    MUTED,
    REJECTED,
    SLOWER,
    SLOWER_LIGHT,
    TARGET,
)
from specsim.measure import analytics


def expected_kept_slots(expected_prefix: float, k: int) -> int:
    """E[j] rounded half up to a whole slot count in [0, K], for drawing one typical loop."""
    return int(min(max(math.floor(expected_prefix + 0.5), 0), k))


def iteration_figure(k: int, expected_prefix: float) -> go.Figure:
    """One draft-verify loop for K proposals, with the expected number of kept slots.

    Rows, top to bottom: the draft's K sequential proposals, the target's single parallel pass over
    all of them, its verdict (✓ kept, ✗ the first rejection, grey · never checked, as on the live page),
    and the output: the kept tokens plus the target's own token (purple +1) on the first rejected slot,
    or after the last slot when all are kept.
    """
    kept = expected_kept_slots(expected_prefix, k)
    about = "" if float(expected_prefix) == kept else "about "  # an average drawn as whole slots, or an exact loop
    slots = list(range(1, k + 1))
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        name="draft proposals", x=slots, y=[3] * k, mode="markers+text", text=[f"t+{i}" for i in slots],
        marker={"symbol": "square", "size": 38, "color": DRAFT}, textfont={"color": "white"},
        hovertemplate="draft proposes t+%{x} (one small pass each, in order)<extra></extra>",
    ))
    fig.add_trace(go.Scatter(
        name="target pass", x=[0.6, k + 1.4], y=[2, 2], mode="lines", line={"color": TARGET, "width": 30},
        hovertemplate="the target scores every slot at once: one pass<extra></extra>",
    ))
    fig.add_trace(go.Scatter(
        name="kept", x=slots[:kept], y=[1] * kept, mode="markers+text", text=["✓"] * kept,
        marker={"symbol": "square", "size": 38, "color": KEPT}, textfont={"color": "white", "size": 18},
        hovertemplate="slot %{x}: the target agrees, kept<extra></extra>",
    ))
    rejected, unchecked = slots[kept:kept + 1], slots[kept + 1:]
    fig.add_trace(go.Scatter(
        name="rejected", x=rejected, y=[1] * len(rejected), mode="markers+text", text=["✗"] * len(rejected),
        marker={"symbol": "square", "size": 38, "color": REJECTED}, textfont={"color": "white", "size": 18},
        hovertemplate="slot %{x}: the target disagrees, rejected<extra></extra>",
    ))
    fig.add_trace(go.Scatter(
        name="never checked", x=unchecked, y=[1] * len(unchecked), mode="markers+text", text=["·"] * len(unchecked),
        marker={"symbol": "square", "size": 38, "color": MUTED}, textfont={"color": "white", "size": 18},
        hovertemplate="slot %{x}: after the first rejection, never checked and thrown away<extra></extra>",
    ))
    fig.add_trace(go.Scatter(
        name="output", x=slots[:kept], y=[0] * kept, mode="markers+text", text=[f"t+{i}" for i in slots[:kept]],
        marker={"symbol": "square", "size": 38, "color": KEPT}, textfont={"color": "white"},
        hovertemplate="kept token t+%{x}<extra></extra>",
    ))
    fig.add_trace(go.Scatter(
        name="+1 from the target", x=[kept + 1], y=[0], mode="markers+text", text=["+1"],
        marker={"symbol": "square", "size": 38, "color": EXTRA}, textfont={"color": "white", "size": 16},
        hovertemplate="the target's own token for this slot, free from the same pass<extra></extra>",
    ))
    fig.add_annotation(x=(k + 2) / 2, y=2, text="target verifies: one parallel pass", showarrow=False,
                       font={"color": "black"})
    fig.update_layout(
        showlegend=False, height=300, margin={"l": 10, "r": 10, "t": 40, "b": 10},
        title=f"One loop, K = {k}: {about}{kept} kept, then the target's own token, {kept + 1} tokens out",
        plot_bgcolor="rgba(0,0,0,0)",
        xaxis={"range": [0.3, k + 1.7], "visible": False},
        yaxis={"range": [-0.6, 3.6], "tickvals": [3, 2, 1, 0],
               "ticktext": ["draft proposes", "target verifies", "verdict", "output"], "showgrid": False},
    )
    return fig


def k_sweep_figure(alpha: float, draft_cost: float, verify_cost: float | np.ndarray, current_k: int,
                   k_max: int = analytics.K_MAX) -> go.Figure:
    """Tokens per loop (left) and speedup (right) against K, best K starred, current K highlighted.

    ``verify_cost`` is one v for every K, or v(K + 1) for K = 1..k_max (a measured or modelled curve)."""
    ks = np.arange(analytics.K_MIN, k_max + 1)
    tokens = np.asarray(analytics.tokens_per_loop(alpha, ks))
    speed = np.asarray(analytics.speedup(alpha, ks, draft_cost, verify_cost))
    best = analytics.best_k(dict(zip(ks.tolist(), speed.tolist(), strict=True)))  # the one argmax over K
    fig = make_subplots(rows=1, cols=2, subplot_titles=("tokens per loop, E[j] + 1", "speedup vs plain decoding"))
    fig.add_trace(go.Scatter(name="K + 1 (every proposal kept)", x=ks, y=ks + 1, mode="lines",
                             line={"color": MUTED, "dash": "dot"}), row=1, col=1)
    fig.add_trace(go.Scatter(name="tokens per loop", x=ks, y=tokens, mode="lines+markers",
                             line={"color": KEPT}), row=1, col=1)
    fig.add_trace(go.Scatter(name="speedup", x=ks, y=speed, mode="lines+markers", line={"color": DRAFT}),
                  row=1, col=2)
    fig.add_trace(go.Scatter(name="break-even", x=[ks[0], ks[-1]], y=[1, 1], mode="lines",
                             line={"color": REJECTED, "dash": "dash"}), row=1, col=2)
    fig.add_trace(go.Scatter(name="best K", x=[best], y=[speed[best - ks[0]]], mode="markers",
                             marker={"symbol": "star", "size": 20, "color": TARGET,
                                     "line": {"color": "black", "width": 1}}), row=1, col=2)
    i = current_k - ks[0]
    for col, y in ((1, tokens[i]), (2, speed[i])):
        fig.add_trace(go.Scatter(name="current K", x=[current_k], y=[y], mode="markers", legendgroup="current",
                                 showlegend=col == 1,
                                 marker={"size": 16, "color": "rgba(0,0,0,0)", "line": {"color": EXTRA, "width": 3}}),
                      row=1, col=col)
    fig.update_xaxes(title_text="K (draft tokens per loop)", dtick=1)
    fig.update_layout(height=380, margin={"l": 10, "r": 10, "t": 50, "b": 10},
                      legend={"orientation": "h", "y": -0.25})
    return fig


def waste_figure(alpha: float, current_k: int, k_max: int = analytics.K_MAX) -> go.Figure:
    """Each K's proposals split into kept on average (E[j]) and wasted (K − E[j]), stacked to K."""
    ks = np.arange(analytics.K_MIN, k_max + 1)
    kept = np.asarray(analytics.expected_accepted_prefix(alpha, ks))
    wasted = np.asarray(analytics.wasted_draft_tokens(alpha, ks))
    opacity = np.where(ks == current_k, 1.0, 0.45)
    fig = go.Figure()
    fig.add_trace(go.Bar(name="kept on average, E[j]", x=ks, y=kept, marker={"color": KEPT, "opacity": opacity}))
    fig.add_trace(go.Bar(name="wasted draft tokens, K − E[j]", x=ks, y=wasted,
                         marker={"color": REJECTED, "opacity": opacity}))
    limit = float(analytics.prefix_limit(alpha))
    if math.isfinite(limit) and limit <= k_max:
        fig.add_trace(go.Scatter(name="ceiling of E[j], α/(1−α)", x=[ks[0] - 0.5, ks[-1] + 0.5], y=[limit, limit],
                                 mode="lines", line={"color": "black", "dash": "dash"}))
    fig.update_layout(barmode="stack", height=340, margin={"l": 10, "r": 10, "t": 40, "b": 10},
                      title="Where the K proposals go (current K in full colour)",
                      xaxis={"title": "K (draft tokens per loop)", "dtick": 1},
                      yaxis={"title": "draft tokens per loop"},
                      legend={"orientation": "h", "y": -0.25})
    return fig


def break_even_colorscale(zmax: float) -> list[list]:
    """Red below 1× (slower than plain decoding), white at exactly 1×, blue above, for a 0..zmax colour axis."""
    mid = min(1.0 / zmax, 1.0) if zmax > 0 else 1.0
    scale = [[0.0, SLOWER], [mid / 2, SLOWER_LIGHT], [mid, BREAK_EVEN]]
    if mid < 1.0:
        scale += [[mid + (1 - mid) * 0.25, FASTER_LIGHT], [1.0, FASTER]]
    return scale


def speedup_heatmap(draft_cost: float, verify_cost: float, current_k: int, current_alpha_pct: int,
                    k_max: int = analytics.K_MAX, alpha_step_pct: int = 1) -> go.Figure:
    """Speedup over K × acceptance (percent): 1× white and outlined, best K per α traced, current point marked."""
    ks = np.arange(analytics.K_MIN, k_max + 1)
    alpha_pct = np.arange(0, 100 + alpha_step_pct, alpha_step_pct)
    kk, aa = np.meshgrid(ks, alpha_pct / 100.0)
    z = np.asarray(analytics.speedup(aa, kk, draft_cost, verify_cost))
    prefix = np.asarray(analytics.expected_accepted_prefix(aa, kk))
    best = [analytics.optimal_k(a / 100.0, draft_cost, verify_cost, analytics.K_MIN, k_max) for a in alpha_pct]
    fig = go.Figure()
    fig.add_trace(go.Heatmap(
        name="speedup", x=ks, y=alpha_pct, z=z, customdata=prefix, zmin=0.0, zmax=float(z.max()),
        colorscale=break_even_colorscale(float(z.max())), colorbar={"title": "speedup"},
        hovertemplate="K = %{x}, α = %{y} %<br>speedup %{z:.2f}×<br>E[j] = %{customdata:.2f}<extra></extra>",
    ))
    fig.add_trace(go.Contour(
        name="break-even, 1×", x=ks, y=alpha_pct, z=z, autocontour=False, showscale=False, showlegend=True,
        contours={"start": 1.0, "end": 1.0, "size": 1.0, "coloring": "lines"},
        colorscale=[[0.0, INK], [1.0, INK]],  # with coloring="lines" the scale sets the colour
        line={"dash": "dot", "width": 2}, hoverinfo="skip",
    ))
    fig.add_trace(go.Scatter(name="best K for each α", x=best, y=alpha_pct, mode="lines",
                             line={"color": "black", "width": 2, "shape": "hv"}))
    fig.add_trace(go.Scatter(name="current settings", x=[current_k], y=[current_alpha_pct], mode="markers",
                             marker={"symbol": "x", "size": 16, "color": EXTRA,
                                     "line": {"color": "white", "width": 2}}))
    fig.update_layout(height=460, margin={"l": 10, "r": 10, "t": 40, "b": 10},
                      title="Speedup for every K and acceptance rate (red: slower than plain decoding)",
                      xaxis={"title": "K (draft tokens per loop)", "dtick": 1},
                      yaxis={"title": "acceptance rate α (%)"}, legend={"orientation": "h", "y": -0.2})
    return fig


def prefix_distribution_figure(alpha: float, k: int) -> go.Figure:
    """P(j = i) for i = 0..K, the truncated geometric law of the accepted prefix, with E[j] marked."""
    probs = analytics.prefix_distribution(alpha, k)
    mean = float(analytics.expected_accepted_prefix(alpha, k))
    fig = go.Figure(go.Bar(x=list(range(k + 1)), y=probs, marker_color=KEPT, name="P(j)",
                           text=[f"{p:.0%}" for p in probs], textposition="outside", textangle=0,
                           hovertemplate="P(j = %{x}) = %{y:.1%}<extra></extra>"))
    fig.add_vline(x=mean, line_dash="dash", line_color=INK,
                  annotation_text=f"E[j] = {mean:.2f}", annotation_position="top")
    fig.update_layout(title=f"How many of the K = {k} guesses are kept: P(j) at α = {alpha:.0%}", height=300,
                      margin={"l": 10, "r": 10, "t": 60, "b": 40}, showlegend=False)
    fig.update_xaxes(title="j, guesses kept in one loop", dtick=1)
    fig.update_yaxes(title="probability", tickformat=".0%", range=[0, max(probs) * 1.25])
    return fig


def position_sweep_figure(ks: np.ndarray, by_position: list[float], one_alpha: list[float], alpha: float,
                          measured: int, current_k: int) -> go.Figure:
    """Tokens per loop against K from acceptance measured at each position, and from one α for every slot;
    positions past the ``measured`` ones carry the last rate (drawn dotted)."""
    ks = np.asarray(ks)
    fig = go.Figure()
    fig.add_scatter(name=f"one α = {alpha:.2f} for every slot", x=ks, y=one_alpha, mode="lines+markers",
                    line={"color": DRAFT})
    inside = ks <= measured
    fig.add_scatter(name="measured by position", x=ks[inside], y=np.asarray(by_position)[inside], mode="lines+markers",
                    line={"color": KEPT})
    if (~inside).any():
        tail = ks >= measured
        fig.add_scatter(name="past the measured positions (last rate carried)", x=ks[tail],
                        y=np.asarray(by_position)[tail], mode="lines", line={"color": KEPT, "dash": "dot"})
    i = current_k - int(ks[0])
    fig.add_scatter(name="current K", x=[current_k], y=[by_position[i]], mode="markers",
                    marker={"size": 16, "color": "rgba(0,0,0,0)", "line": {"color": EXTRA, "width": 3}})
    fig.update_layout(title="Tokens per loop: measured by position against one α", height=360,
                      xaxis={"title": "K (draft tokens per loop)", "dtick": 1}, yaxis={"title": "tokens per loop"},
                      margin={"l": 10, "r": 10, "t": 50, "b": 10}, legend={"orientation": "h", "y": -0.25})
    return fig
