"""Figures of the "Serving many requests" page: pure builders, modelled numbers in."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from app.palette import DRAFT, MUTED, PLAIN, TARGET


def batch_figure(batches: Sequence[int], speedups: Mapping[str, Sequence[float]], current: int,
                 k: int | None = None) -> go.Figure:
    """Modelled speedup against batch size, one line per model (a ridge R, a context length), with 1× and the
    current batch marked; ``k``, the K every line drafts, goes in the title."""
    fig = go.Figure()
    colours = [DRAFT, PLAIN, TARGET, MUTED]
    for (name, ys), colour in zip(speedups.items(), colours, strict=False):
        fig.add_scatter(x=list(batches), y=list(ys), mode="lines+markers", name=name, line={"color": colour})
    top = max([1.0, *(y for ys in speedups.values() for y in ys)]) * 1.08
    fig.add_scatter(x=[min(batches), max(batches)], y=[1.0, 1.0], mode="lines", name="plain decoding (1×)",
                    line={"dash": "dot", "color": "black", "width": 1}, hoverinfo="skip")
    fig.add_scatter(x=[current, current], y=[0.0, top], mode="lines", name=f"your batch size, B = {current}",
                    line={"dash": "dash", "color": "black"}, hoverinfo="skip")
    # On a log axis an annotation's x is log10 of the data value (plotly draws x = 1 at B = 10).
    fig.add_annotation(x=math.log10(current), y=top, text=f"B = {current}", showarrow=False, xanchor="left",
                       yanchor="bottom")
    at_k = "" if k is None else f" at K = {k}"
    fig.update_layout(title=f"Model: speedup{at_k} as the batch grows (weights only, and with each sequence's cache)",
                      height=360,
                      xaxis={"title": "batch size B (sequences decoded together)", "type": "log",
                             "tickvals": list(batches), "ticktext": [str(b) for b in batches]},
                      yaxis={"title": "speedup (model)", "range": [0, top * 1.1]},
                      margin={"l": 10, "r": 10, "t": 50, "b": 40}, legend={"orientation": "h", "y": -0.25})
    return fig
