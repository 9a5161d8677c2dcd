"""The "why this speed" figure: one average loop's cost next to the plain passes it replaced."""

from __future__ import annotations

import plotly.graph_objects as go

from app.palette import DRAFT, INK, MUTED, PLAIN, TARGET
from specsim.measure.costmodel import CostModel

ROWS = ("plain decoding of the same tokens", "speculative loop, measured here",
        "projection: memory-bound accelerator (v = 1)")
SHOWN_OTHER = 0.005  # bookkeeping below this many passes per loop is left out of the picture
PLOT_WIDTH_PX, CHAR_PX = 600, 7  # a narrow plot area and a wide character, so a label that "fits" really does


def bar_label(text: str, width: float, axis_max: float) -> str:
    """``text`` for a bar ``width`` long on an axis up to ``axis_max``, or "" when it would not fit across the bar
    (plotly would shrink or turn it; a label too small to read is better left to the hover)."""
    return text if axis_max > 0 and width / axis_max * PLOT_WIDTH_PX >= CHAR_PX * len(text) else ""


def loop_cost_figure(b: CostModel) -> go.Figure:
    """Stacked bars in target passes: plain (the loop's tokens), the measured loop (K·c + v, plus bookkeeping),
    and the v = 1 projection."""
    fig = go.Figure()
    y = list(ROWS)
    projected = b.drafting + 1.0 + b.other_cost
    axis_max = max(b.tokens_per_loop, b.loop_cost, projected) * 1.35

    def labels(texts: list[str], widths: list[float]) -> list[str]:
        return [bar_label(t, w, axis_max) for t, w in zip(texts, widths, strict=True)]

    inside = {"textposition": "inside", "textangle": 0, "insidetextanchor": "middle"}
    fig.add_bar(y=y, x=[b.tokens_per_loop, 0, 0], orientation="h", name="plain passes replaced", marker_color=PLAIN,
                text=labels([f"{b.tokens_per_loop:.2f} passes for {b.tokens_per_loop:.2f} tokens", "", ""],
                            [b.tokens_per_loop, 0, 0]),
                hovertemplate="%{x:.2f} plain passes<extra></extra>", **inside)
    fig.add_bar(y=y, x=[0, b.drafting, b.drafting], orientation="h",
                name=b.drafting_words(), marker_color=DRAFT,
                text=labels(["", f"draft {b.drafting:.2f}", f"draft {b.drafting:.2f}"], [0, b.drafting, b.drafting]),
                hovertemplate="drafting: %{x:.2f} target passes<extra></extra>", **inside)
    fig.add_bar(y=y, x=[0, b.verify_cost, 1.0], orientation="h", name="verification pass (v)",
                marker_color=[TARGET, TARGET, MUTED], marker_pattern_shape=["", "", "/"],
                text=labels(["", f"verify {b.verify_cost:.2f}", "verify 1 (projected)"], [0, b.verify_cost, 1.0]),
                hovertemplate="verification: %{x:.2f} target passes<extra></extra>", **inside)
    if b.other_cost >= SHOWN_OTHER:
        fig.add_bar(y=y, x=[0, b.other_cost, b.other_cost], orientation="h", name="bookkeeping between passes (o)",
                    marker_color=INK, hovertemplate="bookkeeping: %{x:.2f} target passes<extra></extra>")
    notes = [f"{b.tokens_per_loop:.2f} tokens", f"{b.speedup:.2f}×", f"{b.projected_speedup:.2f}× (projection)"]
    for row, total, note in zip(y, (b.tokens_per_loop, b.loop_cost, projected), notes, strict=True):
        fig.add_annotation(y=row, x=total, text=note, showarrow=False, xanchor="left", xshift=6)
    fig.update_layout(barmode="stack", height=290, margin={"l": 10, "r": 10, "t": 40, "b": 40},
                      title=f"One average loop: {b.tokens_per_loop:.2f} tokens for {b.loop_cost:.2f} target passes",
                      legend={"orientation": "h", "y": -0.45},
                      uniformtext={"minsize": 10, "mode": "hide"})  # plotly hides, never shrinks, what still overflows
    fig.update_xaxes(title="cost in one-token target passes", range=[0, axis_max])
    fig.update_yaxes(autorange="reversed")
    return fig
