"""Figures of the "Is verification free here?" page: pure builders, measured or modelled numbers in."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from app.palette import DRAFT, MUTED, PLAIN, TARGET


def verify_curve_figure(ns: Sequence[int], v: Sequence[float], flat_until: int, ridge: float | None) -> go.Figure:
    """Measured v(n) with the free level v = 1, the flat part shaded, and the roofline fit max(1, n / R) when it fits
    (``ridge`` None: the curve has no corner a roofline could describe, so no fit is drawn)."""
    ns = list(ns)
    fig = go.Figure()
    if flat_until > 1:
        fig.add_vrect(x0=0.5, x1=flat_until + 0.5, fillcolor=TARGET, opacity=0.12, line_width=0,
                      annotation_text="flat: about one pass", annotation_position="top left")
    fig.add_vrect(x0=flat_until + 0.5, x1=max(ns) + 0.5, fillcolor=PLAIN, opacity=0.08, line_width=0,
                  annotation_text="rising: each token adds cost", annotation_position="top right")
    if ridge is not None:
        grid = np.linspace(1, max(ns), 200)
        fig.add_scatter(x=grid, y=np.maximum(1.0, grid / ridge), mode="lines",
                        name=f"roofline fit max(1, n / {ridge:.1f})", line={"dash": "dot", "color": MUTED})
    fig.add_scatter(x=[1, max(ns)], y=[1, 1], mode="lines", name="free: v = 1 (the calculator's assumption)",
                    line={"dash": "dash", "color": "black", "width": 1})
    fig.add_scatter(x=ns, y=list(v), mode="lines+markers", name="measured v(n)", line={"color": DRAFT, "width": 3},
                    hovertemplate="n = %{x}: %{y:.2f} one-token passes<extra></extra>")
    fig.update_layout(title="Cost of one target pass over n new tokens, in one-token passes", height=380,
                      xaxis={"title": "n: tokens in the pass (K guesses + 1)", "dtick": 1},
                      yaxis={"title": "v(n)", "rangemode": "tozero"}, margin={"l": 10, "r": 10, "t": 50, "b": 40},
                      legend={"orientation": "h", "y": -0.25})
    return fig


def batch_figure(batches: Sequence[int], speedups: Mapping[str, Sequence[float]], current: int) -> go.Figure:
    """Modelled speedup against batch size, one line per model (a ridge R, a context length), with 1× and the
    current batch marked."""
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
    fig.update_layout(title="Model: speedup as the batch grows (weights only, and with each sequence's cache)",
                      height=360,
                      xaxis={"title": "batch size B (sequences decoded together)", "type": "log",
                             "tickvals": list(batches), "ticktext": [str(b) for b in batches]},
                      yaxis={"title": "speedup (model)", "range": [0, top * 1.1]},
                      margin={"l": 10, "r": 10, "t": 50, "b": 40}, legend={"orientation": "h", "y": -0.25})
    return fig
