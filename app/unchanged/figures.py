"""Figures of the "why the output is unchanged" page: pure builders, probability vectors in, figures out."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from app.palette import DRAFT, EXTRA, MUTED, TARGET
from specsim.lesson import unchanged


def pq_figure(labels: Sequence[str], p: Sequence[float], q: Sequence[float], cut: bool = False) -> go.Figure:
    """Target p and draft q side by side per token, with min(p, q), the part a proposal keeps, outlined. ``cut``:
    the distributions after top-k and top-p, named p′ and q′ as the page's text names them."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    chance = unchanged.acceptance_chance(p, q)
    tp, tq = ("p′", "q′") if cut else ("p", "q")
    after = " after top-k and top-p" if cut else ""
    fig = go.Figure()
    fig.add_bar(x=list(labels), y=p, name=f"target {tp}{after}", marker_color=TARGET, offsetgroup="p")
    fig.add_bar(x=list(labels), y=q, name=f"draft {tq}{after}", marker_color=DRAFT, offsetgroup="q",
                customdata=chance, hovertemplate=f"{tq} = %{{y:.3f}}<br>kept with chance min(1, {tp}/{tq}) = "
                                                 f"%{{customdata:.3f}}<extra>draft {tq}</extra>")
    fig.add_scatter(x=list(labels), y=np.minimum(p, q), mode="markers", name=f"min({tp}, {tq}): accepted mass",
                    marker={"symbol": "line-ew", "size": 40, "line": {"width": 4, "color": "black"}})
    fig.update_layout(title=f"Σ min({tp}, {tq}) = {unchanged.accepted_mass(p, q):.3f}: the chance a proposal is kept",
                      barmode="group", yaxis={"title": "probability", "range": [0, max(p.max(), q.max()) * 1.15]},
                      height=360, margin={"l": 10, "r": 10, "t": 50, "b": 40}, legend={"orientation": "h", "y": -0.2})
    return fig


def output_parts_figure(labels: Sequence[str], p: Sequence[float], q: Sequence[float]) -> go.Figure:
    """The output's two sources stacked per token, kept directly and drawn after a rejection, against p."""
    p = np.asarray(p, dtype=float)
    kept, resampled = unchanged.output_distribution(p, q)
    r = unchanged.residual(p, q)
    fig = go.Figure()
    fig.add_bar(x=list(labels), y=kept, name="kept proposal: min(p, q)", marker_color=TARGET)
    fig.add_bar(x=list(labels), y=resampled, name="after a rejection: (1 − Σ min(p, q)) · norm(max(0, p − q))",
                marker_color=EXTRA)
    fig.add_scatter(x=list(labels), y=p, mode="markers", name="target p",
                    marker={"symbol": "line-ew", "size": 40, "line": {"width": 3, "color": "black"}})
    if r is not None:
        fig.add_scatter(x=list(labels), y=r, mode="lines+markers", name="residual norm(max(0, p − q)), sums to 1",
                        line={"dash": "dot", "color": MUTED})
    fig.update_layout(barmode="stack", title="What comes out: the two parts add up to p on every token",
                      yaxis={"title": "probability"}, height=380, margin={"l": 10, "r": 10, "t": 50, "b": 40},
                      legend={"orientation": "h", "y": -0.25})
    return fig


def sampled_figure(labels: Sequence[str], counts: Sequence[int], p: Sequence[float],
                   q: Sequence[float]) -> go.Figure:
    """Observed output frequencies of many speculative steps next to p (and q, what the draft alone gives)."""
    counts = np.asarray(counts, dtype=float)
    n = counts.sum()
    fig = go.Figure()
    fig.add_bar(x=list(labels), y=counts / n, name=f"speculative output, {int(n):,} draws", marker_color=TARGET,
                opacity=0.85)
    fig.add_scatter(x=list(labels), y=list(p), mode="markers", name="target p",
                    marker={"symbol": "line-ew", "size": 40, "line": {"width": 3, "color": "black"}})
    fig.add_scatter(x=list(labels), y=list(q), mode="markers", name="draft q (no correction)",
                    marker={"symbol": "x", "size": 12, "color": DRAFT})
    fig.update_layout(title="Histogram of the sampled outputs", yaxis={"title": "share of draws"}, height=340,
                      margin={"l": 10, "r": 10, "t": 50, "b": 40}, legend={"orientation": "h", "y": -0.2})
    return fig


def acceptance_rows(labels: Sequence[str], p: Sequence[float], q: Sequence[float]) -> list[dict]:
    """One table row per token: p, q, min(1, p/q), and the residual's share."""
    chance = unchanged.acceptance_chance(p, q)
    r = unchanged.residual(p, q)
    return [{"token": lab, "target p": round(float(pi), 3), "draft q": round(float(qi), 3),
             "kept with chance min(1, p/q)": "never proposed" if np.isnan(c) else f"{c:.3f}",
             "residual norm(max(0, p − q))": "—" if r is None else f"{r[i]:.3f}"}
            for i, (lab, pi, qi, c) in enumerate(zip(labels, p, q, chance, strict=True))]


def temperature_figure(temperatures: Sequence[float], overlaps: Sequence[float], greedy: float,
                       at_one: float) -> go.Figure:
    """Σ min(p_T, q_T) against the temperature both models sample at, with T = 1 (the bars above) marked
    and the greedy limit T → 0 drawn as a point at T = 0."""
    fig = go.Figure()
    fig.add_scatter(x=temperatures, y=overlaps, mode="lines", name="Σ min(p_T, q_T)", line={"color": TARGET},
                    hovertemplate="T = %{x:.2f}<br>chance kept %{y:.3f}<extra></extra>")
    fig.add_scatter(x=[0.0], y=[greedy], mode="markers", name=f"greedy (T → 0): {greedy:.0f}",
                    marker={"size": 11, "color": EXTRA, "symbol": "diamond"})
    fig.add_scatter(x=[1.0], y=[at_one], mode="markers", name=f"T = 1, the bars above: {at_one:.3f}",
                    marker={"size": 11, "color": DRAFT})
    fig.update_layout(title="The chance a guess is kept, as both models' temperature moves",
                      xaxis={"title": "temperature T (both models)"},
                      yaxis={"title": "Σ min(p_T, q_T) = 1 − TV", "range": [0, 1.05]}, height=340,
                      margin={"l": 10, "r": 10, "t": 50, "b": 40}, legend={"orientation": "h", "y": -0.25})
    return fig


def measured_temperature_figure(measured: unchanged.MeasuredOverlap) -> go.Figure:
    """A real pair's measured Σ min(p_T, q_T) against T (``scripts/measure_overlap.py``), read at the positions of the
    target's greedy answers, the same text at every T: all positions in bold, each kind of text faint, the greedy
    agreement at T = 0 marked as in the toy's figure."""
    fig = go.Figure()
    for name, curve in measured.domains.items():
        fig.add_scatter(x=list(measured.temperatures), y=list(curve), mode="lines", name=name, opacity=0.35,
                        line={"width": 1, "color": MUTED}, legendgroup="domains", showlegend=False,
                        hovertemplate=f"{name}<br>T = %{{x:.2f}}<br>chance kept %{{y:.3f}}<extra></extra>")
    fig.add_scatter(x=list(measured.temperatures), y=list(measured.accepted_mass), mode="lines+markers",
                    name=f"all {measured.positions:,} positions of greedy answers", line={"color": TARGET, "width": 3},
                    hovertemplate="T = %{x:.2f}<br>chance kept %{y:.3f}<extra></extra>")
    fig.add_scatter(x=[0.0], y=[measured.greedy], mode="markers", name=f"greedy (T = 0): {measured.greedy:.3f}",
                    marker={"size": 11, "color": EXTRA, "symbol": "diamond"})
    fig.add_scatter(x=[1.0], y=[measured.at(1.0)], mode="markers", name=f"T = 1: {measured.at(1.0):.3f}",
                    marker={"size": 11, "color": DRAFT})
    top = max(max(measured.accepted_mass), *(max(c) for c in measured.domains.values()))
    fig.update_layout(title="Measured on the target's greedy answers (grey: each kind of prompt)",
                      xaxis={"title": "temperature T (both models)"},
                      yaxis={"title": "mean Σ min(p_T, q_T)", "range": [0, min(1.05, top * 1.3)]}, height=340,
                      margin={"l": 10, "r": 10, "t": 50, "b": 40}, legend={"orientation": "h", "y": -0.25})
    return fig
