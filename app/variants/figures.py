"""Plotly figures for the variants page: pure functions, plain data in, ``go.Figure`` out."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.palette import DRAFT, EXTRA, KEPT, MUTED, REJECTED, RIGHT_CELL, TARGET, WRONG_CELL


def comparison_chart(labels: Sequence[str], tokens_per_pass: Sequence[float], speedup: Sequence[float]) -> go.Figure:
    """Two bar panels: tokens per target pass, and measured speedup against plain decoding (1 = plain)."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("Tokens per target pass", "Measured speedup vs plain"))
    fig.add_bar(x=list(labels), y=list(tokens_per_pass), marker_color=TARGET, row=1, col=1,
                text=[f"{v:.2f}" for v in tokens_per_pass], textposition="outside", textangle=0, name="tokens per pass")
    colours = [KEPT if s >= 1 else REJECTED for s in speedup]
    fig.add_bar(x=list(labels), y=list(speedup), marker_color=colours, row=1, col=2,
                text=[f"{v:.2f}x" for v in speedup], textposition="outside", textangle=0, name="speedup")
    for col in (1, 2):
        fig.add_hline(y=1.0, line_dash="dot", line_color=MUTED, row=1, col=col)
    fig.update_layout(showlegend=False, height=420, margin=dict(t=50, b=10, l=10, r=10))
    fig.update_xaxes(tickangle=-30)
    return fig


def jacobi_grid(iterates: Sequence[Sequence[str]], correct: Sequence[Sequence[bool]]) -> go.Figure:
    """Rows: Jacobi iterations (0 = the starting guess); columns: the window's positions.

    ``iterates[i][j]`` is the token text guessed at position j after iteration i, ``correct[i][j]``
    whether it already equals the fixed point (greedy decoding). Green cells spread left to right.
    """
    n_rows, n_cols = len(iterates), len(iterates[0]) if iterates else 0
    z = [[1 if ok else 0 for ok in row] for row in correct]
    fig = go.Figure(go.Heatmap(
        z=z, x=[f"t+{j + 1}" for j in range(n_cols)], y=[f"iteration {i}" for i in range(n_rows)],
        colorscale=[[0, WRONG_CELL], [1, RIGHT_CELL]], zmin=0, zmax=1, showscale=False, xgap=2, ygap=2,
        text=[[repr(t)[1:-1] for t in row] for row in iterates], texttemplate="%{text}", hoverinfo="text",
    ))
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(height=80 + 40 * n_rows, margin=dict(t=10, b=10, l=10, r=10))
    return fig


def token_tree(texts: Sequence[str], parents: Sequence[int], labels: Sequence[str], accepted: Sequence[int],
               extra_text: str) -> go.Figure:
    """A candidate tree laid out by depth; the accepted branch (and the target's own token) in colour."""
    depth = [0] * len(texts)
    for i in range(1, len(texts)):
        depth[i] = depth[parents[i]] + 1
    # y: leaves get consecutive rows, inner nodes sit at the mean of their children.
    children: dict[int, list[int]] = {i: [] for i in range(len(texts))}
    for i in range(1, len(texts)):
        children[parents[i]].append(i)
    y: dict[int, float] = {}
    counter = [0]

    def place(node: int) -> float:
        if not children[node]:
            y[node] = counter[0]
            counter[0] += 1
        else:
            y[node] = sum(place(c) for c in children[node]) / len(children[node])
        return y[node]

    place(0)
    kept = {0, *accepted}
    fig = go.Figure()
    for i in range(1, len(texts)):
        on_path = i in kept and parents[i] in kept
        fig.add_trace(go.Scatter(x=[depth[parents[i]], depth[i]], y=[y[parents[i]], y[i]], mode="lines",
                                 line=dict(color=KEPT if on_path else MUTED, width=4 if on_path else 1.5),
                                 hoverinfo="skip", showlegend=False))
    last = max(kept, key=lambda n: depth[n])
    fig.add_trace(go.Scatter(x=[depth[last], depth[last] + 1], y=[y[last], y[last]], mode="lines",
                             line=dict(color=EXTRA, dash="dot", width=3), hoverinfo="skip", showlegend=False))
    fig.add_trace(go.Scatter(
        x=[depth[i] for i in range(len(texts))] + [depth[last] + 1], y=[y[i] for i in range(len(texts))] + [y[last]],
        mode="markers+text", text=[repr(t)[1:-1] for t in texts] + [repr(extra_text)[1:-1]],
        textposition="top center", hovertext=list(labels) + ["the target's own token"], hoverinfo="text",
        marker=dict(size=16, color=[KEPT if i in kept else MUTED for i in range(len(texts))] + [EXTRA]),
        showlegend=False))
    fig.update_xaxes(title="tokens ahead of the context", dtick=1)
    fig.update_yaxes(visible=False)
    fig.update_layout(height=120 + 45 * max(counter[0], 1), margin=dict(t=20, b=10, l=10, r=10))
    return fig


def per_pass_chart(accepted: Sequence[int], draft_s: Sequence[float], verify_s: Sequence[float],
                   title: str) -> go.Figure:
    """Per iteration: guesses kept (bars, left) and time split between drafting and the target pass (right)."""
    x = list(range(1, len(accepted) + 1))
    fig = make_subplots(rows=1, cols=2, subplot_titles=("Guesses kept per iteration (+1 always)", "Time per iteration"))
    fig.add_bar(x=x, y=list(accepted), marker_color=KEPT, name="kept guesses", row=1, col=1)
    fig.add_bar(x=x, y=[1] * len(x), marker_color=EXTRA, name="target's own token", row=1, col=1)
    fig.add_bar(x=x, y=list(draft_s), marker_color=DRAFT, name="drafting (s)", row=1, col=2)
    fig.add_bar(x=x, y=list(verify_s), marker_color=TARGET, name="target pass (s)", row=1, col=2)
    fig.update_layout(barmode="stack", height=360, title=title, margin=dict(t=70, b=10, l=10, r=10))
    fig.update_xaxes(title="iteration")
    return fig
