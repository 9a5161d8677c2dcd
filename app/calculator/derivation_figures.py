"""The calculator's derivation figure: the share of proposals kept, E[j] / K, falling as K grows."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from app.palette import DRAFT, MUTED
from specsim.measure import analytics


def kept_share_figure(alpha: float, current_k: int, k_max: int = analytics.K_MAX,
                      others: tuple[float, ...] = (0.5, 0.9)) -> go.Figure:
    """E[j] / K against K at the chosen α (bold) and a few other acceptance rates (thin)."""
    ks = np.arange(1, k_max + 1)
    fig = go.Figure()
    for a in others:
        if abs(a - alpha) > 1e-9:
            fig.add_scatter(x=ks, y=np.asarray(analytics.expected_accepted_prefix(a, ks)) / ks, mode="lines",
                            name=f"α = {a:.0%}", line={"color": MUTED, "width": 1})
    share = np.asarray(analytics.expected_accepted_prefix(alpha, ks)) / ks
    fig.add_scatter(x=ks, y=share, mode="lines+markers", name=f"α = {alpha:.0%} (your setting)",
                    line={"color": DRAFT, "width": 3})
    fig.add_scatter(x=[current_k], y=[share[current_k - 1]], mode="markers", name=f"K = {current_k}",
                    marker={"size": 14, "symbol": "x", "color": "black"})
    fig.update_layout(title="Share of the K proposals kept, E[j] / K: it falls as K grows", height=340,
                      xaxis={"title": "K", "dtick": 1}, yaxis={"title": "E[j] / K", "range": [0, 1.02]},
                      margin={"l": 10, "r": 10, "t": 50, "b": 40}, legend={"orientation": "h", "y": -0.25})
    return fig
