"""The idea page's picture of the mechanism: a pass predicts the next token at *every* position it reads, so K
guesses are checked, and the +1 chosen, by one pass. Pure: numbers in, figure out."""

from __future__ import annotations

import plotly.graph_objects as go

from app.palette import DRAFT, EXTRA, MUTED, TARGET


def one_pass_figure(k: int) -> go.Figure:
    """Bottom row: what the target reads (the last context token and the K guesses); top row: what it predicts after
    each of them. The prediction after token i is the check of guess i + 1; the prediction after the last guess is
    the +1 token."""
    xs = list(range(k + 1))
    read = ["last\ncontext\ntoken", *[f"guess {i}" for i in range(1, k + 1)]]
    fig = go.Figure()
    fig.add_trace(go.Scatter(name="what the target reads", x=xs, y=[0] * (k + 1), mode="markers+text",
                             text=[r.replace("\n", "<br>") for r in read],
                             marker={"symbol": "square", "size": 62, "color": [MUTED, *[DRAFT] * k]},
                             textfont={"color": ["black", *["white"] * k], "size": 11},
                             hovertemplate="input position %{x}<extra></extra>"))
    predicted = [f"checks<br>guess {i + 1}" for i in range(k)] + ["the +1<br>token"]
    fig.add_trace(go.Scatter(name="what it predicts there (one pass)", x=xs, y=[1] * (k + 1), mode="markers+text",
                             text=predicted, marker={"symbol": "square", "size": 62,
                                                     "color": [TARGET] * k + [EXTRA]},
                             textfont={"color": ["black"] * k + ["white"], "size": 11},
                             hovertemplate="the next-token prediction after input %{x}<extra></extra>"))
    for x in xs:
        fig.add_annotation(x=x, y=0.82, ax=x, ay=0.18, xref="x", yref="y", axref="x", ayref="y", showarrow=True,
                           arrowhead=2, arrowwidth=1.5, arrowcolor="black", text="")
    fig.update_layout(title=f"One target pass over {k + 1} inputs gives {k + 1} next-token predictions", height=300,
                      xaxis={"visible": False, "range": [-0.7, k + 0.7]},
                      yaxis={"visible": False, "range": [-0.6, 1.6]}, showlegend=True,
                      legend={"orientation": "h", "y": -0.05}, margin={"l": 10, "r": 10, "t": 50, "b": 10})
    return fig
