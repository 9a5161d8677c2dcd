"""Figures of the "In practice" page: acceptance per domain."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.palette import DRAFT, TARGET
from specsim.lesson.domains import DomainResult


def domain_figure(results: Sequence[DomainResult]) -> go.Figure:
    """Acceptance and tokens per loop for each domain, same pair, side by side."""
    names = [r.domain for r in results]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("acceptance α (kept ÷ checked)", "tokens per loop"))
    fig.add_bar(x=names, y=[r.alpha for r in results], marker_color=DRAFT, row=1, col=1, name="α",
                text=[f"{r.alpha:.0%}" for r in results], textposition="outside", textangle=0)
    fig.add_bar(x=names, y=[r.tokens_per_loop for r in results], marker_color=TARGET, row=1, col=2,
                name="tokens per loop", text=[f"{r.tokens_per_loop:.2f}" for r in results], textposition="outside",
                textangle=0)
    fig.update_yaxes(range=[0, 1.1], row=1, col=1)
    fig.update_layout(height=340, showlegend=False, margin={"l": 10, "r": 10, "t": 50, "b": 40},
                      title="Same draft and target, different kinds of text")
    return fig
