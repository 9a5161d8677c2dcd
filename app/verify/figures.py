"""Figures of the "Is verification free here?" page: pure builders, measured or modelled numbers in."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from app.palette import DRAFT, MUTED, PLAIN, TARGET
from specsim.measure.passcost import FLAT_TOLERANCE


def verify_curve_figure(ns: Sequence[int], v: Sequence[float], flat_until: int, ridge: float | None) -> go.Figure:
    """Measured v(n) with the free level v = 1, the part within :data:`FLAT_TOLERANCE` of it shaded, and the roofline
    fit max(1, n / R) when it fits (``ridge`` None: the curve has no corner a roofline could describe, so no fit is
    drawn). The shading says "within 10 %", not "flat": a curve that rises from its first extra token stays within
    10 % for a few tokens too, and calling that part flat would draw the corner the text says it lacks."""
    ns = list(ns)
    fig = go.Figure()
    if flat_until > 1:
        fig.add_vrect(x0=0.5, x1=flat_until + 0.5, fillcolor=TARGET, opacity=0.12, line_width=0,
                      annotation_text=f"within {FLAT_TOLERANCE:.0%} of one pass", annotation_position="top left")
    fig.add_vrect(x0=flat_until + 0.5, x1=max(ns) + 0.5, fillcolor=PLAIN, opacity=0.08, line_width=0,
                  annotation_text=f"more than {FLAT_TOLERANCE:.0%} above", annotation_position="top right")
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
