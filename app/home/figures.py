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
    fig = go.Figure()

    def boxes(name: str, x: list[int], y: float, text: list[str], colour: str, ink: str, hover: str) -> None:
        fig.add_trace(go.Scatter(name=name, x=x, y=[y] * len(x), mode="markers+text", text=text,
                                 marker={"symbol": "square", "size": 62, "color": colour},
                                 textfont={"color": ink, "size": 11}, hovertemplate=hover + "<extra></extra>"))

    # one trace per colour, so the legend names every colour on the chart (the guesses are read too)
    boxes("the last context token (read)", [0], 0, ["last<br>context<br>token"], MUTED, "black", "input position 0")
    boxes("the draft's guesses (read in the same pass)", xs[1:], 0, [f"guess {i}" for i in range(1, k + 1)], DRAFT,
          "white", "input position %{x}")
    boxes("the target's prediction there: each checks a guess", xs[:-1], 1,
          [f"checks<br>guess {i + 1}" for i in range(k)], TARGET, "black",
          "the next-token prediction after input %{x}")
    boxes("the +1 token: its prediction after the last guess", [k], 1, ["the +1<br>token"], EXTRA, "white",
          "the next-token prediction after input %{x}")
    for x in xs:
        fig.add_annotation(x=x, y=0.82, ax=x, ay=0.18, xref="x", yref="y", axref="x", ayref="y", showarrow=True,
                           arrowhead=2, arrowwidth=1.5, arrowcolor="black", text="")
    fig.update_layout(title=f"One target pass over {k + 1} inputs gives {k + 1} next-token predictions", height=300,
                      xaxis={"visible": False, "range": [-0.7, k + 0.7]},
                      yaxis={"visible": False, "range": [-0.6, 1.6]}, showlegend=True,
                      legend={"orientation": "h", "y": -0.05}, margin={"l": 10, "r": 10, "t": 50, "b": 10})
    return fig
