"""One iteration's token tree, drawn: a pure builder, an iteration in, a plotly figure out.

Depth runs left to right (the root, the context's last token, at depth 0); the guesses at one depth stand in a
column, the draft's best scored at the top. An edge joins each guess to its parent. Colours are the verdicts of the
chain's chips: kept (green, ✓), refused (red, ✗), never checked (grey, ·); the target's own +1 token (purple) sits in a
row of its own above the guesses, one depth past the last kept node.
"""

from __future__ import annotations

import plotly.graph_objects as go

from app.palette import EXTRA, KEPT, MUTED, PLAIN, REJECTED
from specsim.core.trace import Iteration, TreeRecord
from specsim.lesson.replay import visible

MARK = {"root": "", "kept": "✓", "refused": "✗", "unchecked": "·"}
COLOUR = {"root": PLAIN, "kept": KEPT, "refused": REJECTED, "unchecked": MUTED}
NAME = {"root": "the context's last token (the root)", "kept": "kept guess", "refused": "refused guess",
        "unchecked": "guess never checked"}


def layout(tree: TreeRecord) -> list[tuple[int, float]]:
    """(depth, row) of every node: depth from the root, rows 0, 1, ... down each depth's column in score order."""
    depth = [0] * len(tree.nodes)
    for i, node in enumerate(tree.nodes):
        if node.parent >= 0:
            depth[i] = depth[node.parent] + 1
    rows: dict[int, list[int]] = {}
    for i in sorted(range(len(tree.nodes)), key=lambda i: (-tree.nodes[i].score, i)):
        rows.setdefault(depth[i], []).append(i)
    place = {i: (d, float(r)) for d, column in rows.items() for r, i in enumerate(column)}
    return [place[i] for i in range(len(tree.nodes))]


def tree_figure(it: Iteration) -> go.Figure:
    """The tree ``it`` verified in one pass, with the verdict on every guess and the +1 token."""
    tree = it.tree
    if tree is None:
        raise ValueError("this iteration drafted a chain, not a tree")
    where = layout(tree)
    fig = go.Figure()
    xs, ys = [], []
    for i, node in enumerate(tree.nodes):
        if node.parent >= 0:
            (x0, y0), (x1, y1) = where[node.parent], where[i]
            xs += [x0, x1, None]
            ys += [y0, y1, None]
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line={"color": MUTED, "width": 1}, hoverinfo="skip",
                             showlegend=False, name="edges"))
    for status in ("root", "kept", "refused", "unchecked"):
        nodes = [i for i, node in enumerate(tree.nodes) if node.status == status]
        if not nodes:
            continue
        fig.add_trace(go.Scatter(
            x=[where[i][0] for i in nodes], y=[where[i][1] for i in nodes], mode="markers+text",
            marker={"color": COLOUR[status], "size": 14, "symbol": "circle"}, name=NAME[status],
            text=[f"{MARK[status]} {visible(tree.nodes[i].token.text)!s}".strip() for i in nodes],
            textposition="middle right",
            customdata=[[tree.nodes[i].token.prob, tree.nodes[i].score, visible(tree.nodes[i].target_top.text),
                         tree.nodes[i].target_top.prob] for i in nodes],
            hovertemplate=("%{text}<br>q = %{customdata[0]:.3f} (the draft, after its parent)<br>score = "
                           "%{customdata[1]:.3f}<br>the target's top next token: %{customdata[2]} "
                           "(p = %{customdata[3]:.3f})<extra></extra>") if status != "root" else
                          "%{text} (the root)<extra></extra>"))
    path = tree.kept_path()
    last = path[-1] if path else 0
    x, y = where[last]
    plus = -1.0  # a row of its own above the guesses, one depth past the last kept node
    fig.add_trace(go.Scatter(x=[x + 1], y=[plus], mode="markers+text", name="the target's +1 token",
                             marker={"color": EXTRA, "size": 14, "symbol": "diamond"},
                             text=[f"+1 {visible(it.extra.text)!s}"], textposition="middle right",
                             hovertemplate=f"the target's own token ({it.extra_kind})<extra></extra>"))
    fig.add_trace(go.Scatter(x=[x, x + 1], y=[y, plus], mode="lines", line={"color": EXTRA, "dash": "dot"},
                             hoverinfo="skip", showlegend=False, name="to the +1 token"))
    depth = max(d for d, _ in where) + 1
    rows = max(r for _, r in where) + 1
    fig.update_layout(
        title=f"This loop's tree: {len(tree.nodes) - 1} guesses read in one pass of {tree.width_read} tokens, "
              f"{len(path)} kept",
        xaxis={"title": "depth (tokens after the context)", "dtick": 1, "range": [-0.3, depth + 0.9],
               "zeroline": False},
        yaxis={"title": "rank at its depth", "autorange": "reversed", "showticklabels": False, "zeroline": False,
               "showgrid": False},
        height=170 + 40 * max(rows, 3), margin={"l": 40, "r": 20, "t": 50, "b": 90},
        legend={"orientation": "h", "y": -0.3, "yanchor": "top"}, plot_bgcolor="white")
    return fig
