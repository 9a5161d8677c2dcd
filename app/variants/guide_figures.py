"""Small diagrams of how each variant makes its guess: boxes and arrows, pure builders."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import plotly.graph_objects as go

from app.palette import DRAFT, EXTRA, MUTED, NAMES, PLAIN, TARGET


@dataclass(frozen=True)
class Box:
    label: str
    x: float
    y: float
    colour: str = MUTED
    width: float = 0.9


HALF_HEIGHT = 0.3


def edge_points(a: Box, b: Box, vertical: bool = False) -> tuple[tuple[float, float], tuple[float, float]]:
    """Where an arrow from box ``a`` to box ``b`` leaves and arrives: side to side, or top to bottom when
    the boxes overlap horizontally (or ``vertical`` asks for it)."""
    if (vertical or abs(b.x - a.x) < (a.width + b.width) / 2) and abs(b.y - a.y) > 1e-9:
        down = 1 if b.y < a.y else -1
        return (a.x, a.y - down * HALF_HEIGHT), (b.x, b.y + down * HALF_HEIGHT)
    right = 1 if b.x >= a.x else -1
    return (a.x + right * a.width / 2, a.y), (b.x - right * b.width / 2, b.y)


def flow_figure(boxes: Sequence[Box], arrows: Sequence[tuple[int, ...]], title: str, height: int = 220) -> go.Figure:
    """Labelled boxes joined by arrows: index pairs into ``boxes``, a third item 1 for bottom-to-top."""
    shapes = [{"type": "rect", "x0": b.x - b.width / 2, "x1": b.x + b.width / 2, "y0": b.y - HALF_HEIGHT,
               "y1": b.y + HALF_HEIGHT, "fillcolor": b.colour, "opacity": 0.85, "line": {"color": "white"}}
              for b in boxes]
    labels = [{"x": b.x, "y": b.y, "text": b.label, "showarrow": False, "font": {"color": "white", "size": 12}}
              for b in boxes]
    pointers = []
    for i, j, *vertical in arrows:
        (x0, y0), (x1, y1) = edge_points(boxes[i], boxes[j], bool(vertical and vertical[0]))
        pointers.append({"x": x1, "y": y1, "ax": x0, "ay": y0, "xref": "x", "yref": "y", "axref": "x", "ayref": "y",
                         "text": "", "showarrow": True, "arrowhead": 2, "arrowwidth": 1.5})
    xs = [b.x for b in boxes]
    ys = [b.y for b in boxes]
    # all shapes and annotations in one call: plotly checks the whole list again on every add_shape/add_annotation,
    # so adding them one at a time took 40-160 ms a figure, on every script run of the page
    fig = go.Figure()
    fig.update_layout(shapes=shapes, annotations=labels + pointers, title=title, height=height,
                      margin={"l": 5, "r": 5, "t": 40, "b": 5}, showlegend=False, plot_bgcolor="white")
    fig.update_xaxes(visible=False, range=[min(xs) - 0.7, max(xs) + 0.7])
    fig.update_yaxes(visible=False, range=[min(ys) - 0.6, max(ys) + 0.6])
    return fig


def prompt_lookup_figure() -> go.Figure:
    """The last two tokens found earlier in the context; what followed them there becomes the draft."""
    words = ["def", "add", "(", "a", ")", ":", "…", "def", "add"]
    colour = {0: TARGET, 1: TARGET, 2: DRAFT, 3: DRAFT, 4: DRAFT, 7: PLAIN, 8: PLAIN}
    boxes = [Box(w, i, 1, colour.get(i, MUTED), 0.85) for i, w in enumerate(words)]
    boxes += [Box(w, 9 + i, 0, DRAFT, 0.85) for i, w in enumerate(["(", "a", ")"])]
    return flow_figure(boxes, [(3, 10, 1)], f"Prompt lookup: the last tokens ({NAMES[PLAIN]}) match earlier text "
                       f"({NAMES[TARGET]}); what came next there ({NAMES[DRAFT]}) is copied as the guess")


def jacobi_figure(window: int = 4, iterations: int = 4) -> go.Figure:
    """A window of W guesses refined in parallel: after iteration i the first i are final."""
    boxes = []
    for it in range(iterations):
        for pos in range(window):
            done = pos < it + 1
            boxes.append(Box(f"y{pos + 1}" + ("✓" if done else "?"), pos, iterations - it,
                             TARGET if done else DRAFT, 0.85))
    arrows = [(it * window + pos, (it + 1) * window + pos) for it in range(iterations - 1) for pos in range(window)]
    return flow_figure(boxes, arrows, "Jacobi iteration: every pass re-guesses the whole window; after pass i "
                       "the first i tokens agree with greedy decoding", height=300)


def medusa_figure(heads: int = 3) -> go.Figure:
    """The target's last hidden state feeds a few small heads; head k guesses token t+k+1."""
    boxes = [Box("target's last hidden state", 0, 1, TARGET, 1.8)]
    boxes += [Box(f"head {k}: t+{k + 1}", 2.4, 2 - k, DRAFT, 1.4) for k in range(1, heads + 1)]
    boxes += [Box("tree of candidates, checked in one pass with tree attention", 5.2, 0, EXTRA, 2.4)]
    arrows = [(0, k) for k in range(1, heads + 1)] + [(k, heads + 1) for k in range(1, heads + 1)]
    return flow_figure(boxes, arrows, "Medusa: extra heads on the target guess several tokens ahead at once",
                       height=260)


def eagle_figure() -> go.Figure:
    """EAGLE: a one-layer draft reads the target's features and the next token, and predicts the next feature."""
    boxes = [Box("target features f(t)", 0, 1, TARGET, 1.6), Box("token t+1 embedding", 0, 0, PLAIN, 1.6),
             Box("1 draft layer", 2.2, 0.5, DRAFT, 1.3), Box("feature f(t+1)", 4.2, 0.5, DRAFT, 1.3),
             Box("target's LM head → t+2", 6.3, 0.5, EXTRA, 1.8)]
    return flow_figure(boxes, [(0, 2), (1, 2), (2, 3), (3, 4)],
                       "EAGLE: draft at the feature level, reusing the target's own output head")


def early_exit_figure(layers: int = 6, exit_after: int = 2) -> go.Figure:
    """The target's first layers and its output head make the draft; all layers verify."""
    boxes = [Box(f"layer {i + 1}", i, 1, DRAFT if i < exit_after else TARGET, 0.85) for i in range(layers)]
    boxes.append(Box("LM head: guess", exit_after - 0.5, 0, DRAFT, 1.5))
    return flow_figure(boxes, [(i, i + 1) for i in range(layers - 1)] + [(exit_after - 1, layers)],
                       "Early exit: stop after the first layers and guess from there; no second model")
