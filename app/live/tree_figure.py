"""One iteration's token tree, drawn: a pure builder, an iteration in, a plotly figure out.

Depth runs left to right (the root, the context's last token, at depth 0). Each branch has rows of its own, so no
two edges cross: a guess's children sit from its own row down, the draft's best scored first, so the top row is the
draft's favourite path. Colours are the verdicts of the walk down the tree: kept (green, ✓), refused where the walk
stopped (red, ✗), passed over beside the path because the target kept a sibling (pale red, –), never reached (grey,
·). The target's own +1 token (purple diamond) sits in a row of its own above the tree, one depth past the last kept
guess.
"""

from __future__ import annotations

import plotly.graph_objects as go

from app.palette import EXTRA, INK, KEPT, MUTED, PLAIN, REJECTED, WRONG_CELL
from specsim.core.trace import Iteration, TreeRecord
from specsim.lesson.hood_tree import VERDICT
from specsim.lesson.replay import visible

MARK = {"root": "", "kept": "✓", "refused": "✗", "passed": "–", "untried": "○", "unchecked": "·"}
COLOUR = {"root": PLAIN, "kept": KEPT, "refused": REJECTED, "passed": WRONG_CELL, "untried": "white",
          "unchecked": MUTED}
NAME = VERDICT  # each verdict in words, as Under the hood names it too
PLUS_ONE = "the target's own +1 token (not a guess)"


def layout(tree: TreeRecord) -> list[tuple[int, float]]:
    """(depth, row) of every node: each leaf a row of its own, in depth-first order with the best scored child first,
    and each parent on the row of its first child."""
    children: dict[int, list[int]] = {}
    for i in sorted(range(1, len(tree.nodes)), key=lambda i: (-tree.nodes[i].score, i)):
        children.setdefault(tree.nodes[i].parent, []).append(i)
    place: dict[int, tuple[int, float]] = {}
    next_row = [0]

    def put(node: int, depth: int) -> float:
        kids = children.get(node, [])
        if not kids:
            row = float(next_row[0])
            next_row[0] += 1
        else:
            row = min(put(kid, depth + 1) for kid in kids)
        place[node] = (depth, row)
        return row

    put(0, 0)
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
        if node.parent >= 0:  # an elbow: down the parent's column, then across to the child
            (x0, y0), (x1, y1) = where[node.parent], where[i]
            xs += [x0, x0 + 0.5, x0 + 0.5, x1, None] if y1 != y0 else [x0, x1, None]
            ys += [y0, y0, y1, y1, None] if y1 != y0 else [y0, y1, None]
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line={"color": MUTED, "width": 1}, hoverinfo="skip",
                             showlegend=False, name="edges"))
    for status in ("root", "kept", "refused", "passed", "untried", "unchecked"):
        nodes = [i for i, node in enumerate(tree.nodes) if node.status == status]
        if not nodes:
            continue
        parents = [visible(tree.nodes[tree.nodes[i].parent].token.text) if i else "" for i in nodes]
        fig.add_trace(go.Scatter(
            x=[where[i][0] for i in nodes], y=[where[i][1] for i in nodes], mode="markers+text",
            marker={"color": COLOUR[status], "size": 15, "line": {"color": INK if status in ("passed", "untried")
                                                                   else COLOUR[status], "width": 1}},
            name=NAME[status], textfont={"size": 14, "color": INK},
            text=[f"{MARK[status]} {visible(tree.nodes[i].token.text)!s}".strip() for i in nodes],
            textposition="top center",
            customdata=[[tree.nodes[i].token.prob, tree.nodes[i].score, visible(tree.nodes[i].target_top.text),
                         tree.nodes[i].target_top.prob, parent] for i, parent in zip(nodes, parents, strict=True)],
            hovertemplate=("%{text} after %{customdata[4]}<br>q = %{customdata[0]:.3f} (the draft's probability "
                           "after its parent)<br>score = %{customdata[1]:.3f} (q multiplied down the path)<br>the "
                           "target's own next token after it: %{customdata[2]} (p = %{customdata[3]:.3f})"
                           "<extra></extra>") if status != "root" else "%{text} (the root)<extra></extra>"))
    path = tree.kept_path()
    x, _ = where[path[-1] if path else 0]
    fig.add_trace(go.Scatter(x=[x + 1], y=[-1.0], mode="markers+text", name=PLUS_ONE,
                             marker={"color": EXTRA, "size": 15, "symbol": "diamond"}, textfont={"size": 14,
                                                                                                 "color": EXTRA},
                             text=[f"+1 {visible(it.extra.text)!s}"], textposition="top center",
                             hovertemplate=f"the target's own token ({it.extra_kind}), after the last kept guess"
                                           "<extra></extra>"))
    depth = max(max(d for d, _ in where), x + 1)  # the deepest node, or the +1 after the kept path
    rows = max(r for _, r in where) + 2
    kept = f"{len(path)} kept" if path else "none kept"
    fig.update_layout(
        title=f"This loop's tree: {len(tree.nodes) - 1} guesses scored in one pass of {tree.width_read} tokens, "
              f"{kept}",
        xaxis={"title": "depth below the root (the root: the context's last token)", "dtick": 1,
               "range": [-0.4, depth + 0.6],
               "zeroline": False},
        yaxis={"showticklabels": False, "zeroline": False, "showgrid": False, "range": [rows - 0.5, -1.8]},
        height=190 + 48 * rows, margin={"l": 20, "r": 20, "t": 50, "b": 100},
        legend={"orientation": "h", "y": -0.25, "yanchor": "top"}, plot_bgcolor="white")
    return fig
