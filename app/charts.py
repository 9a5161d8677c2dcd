"""Every chart with a text alternative (WCAG 1.1.1, issue 51): a short description as the chart's accessible name,
and the numbers behind it in a folded "Chart data" table under it.

Both are read off the figure itself (pure functions, figure in, text out), so they cannot drift from what is drawn.
Every ``st.plotly_chart`` in the app goes through :func:`chart`.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from app.live.tokens import md_plain

MAX_ROWS = 200  # rows of a series table; a longer one keeps every k-th row and says so
MAX_GRID_ROWS = 21  # rows of a grid (heatmap) table: 0, 5, ..., 100 % for the calculator's 101 α rows
MAX_MARKS = 6  # annotations quoted in the summary
_TAG = re.compile(r"<[^>]*>")
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)


@dataclass(frozen=True)
class Table:
    """One table of a chart's data: ``columns`` maps each header to its cells (all the same length)."""

    columns: dict[str, list[str]]
    note: str = ""  # what was left out, if anything

    @property
    def rows(self) -> int:
        return len(next(iter(self.columns.values()), []))


def plain_text(text: Any) -> str:
    """Plotly's text (``<b>``, ``<br>``, ``<sup>``, entities) as plain text on one line."""
    if text is None:
        return ""
    text = _BREAK.sub(" · ", str(text))
    return " ".join(html.unescape(_TAG.sub("", text)).split()).strip(" ·")


def value_text(value: Any) -> str:
    """A number or label as a cell shows it: whole numbers whole, others to four significant figures."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Integral):
        return str(int(value))
    if isinstance(value, Real):
        x = float(value)
        if math.isnan(x):
            return ""
        if x.is_integer() and abs(x) < 1e15:
            return str(int(x))
        return f"{x:,.0f}" if abs(x) >= 1e4 else f"{x:.4g}"
    return plain_text(value)


def _axis_title(fig: go.Figure, axis: str) -> str:
    layout_axis = getattr(fig.layout, axis, None)
    return plain_text(layout_axis.title.text) if layout_axis is not None and layout_axis.title else ""


def _title(fig: go.Figure) -> str:
    return plain_text(fig.layout.title.text) if fig.layout.title else ""


def _seq(values: Any) -> list:
    if values is None:
        return []
    if isinstance(values, str):
        return [values]
    return list(values)


def _series_name(trace: Any, i: int) -> str:
    return plain_text(trace.name) or f"series {i + 1}"


def _has_points(trace: Any) -> bool:
    return trace.type in ("scatter", "bar") and (len(_seq(trace.x)) or len(_seq(trace.y)))


def chart_summary(fig: go.Figure) -> str:
    """A short description of ``fig`` for screen readers: its title, its axes, its series and its marks.

    A diagram with no data series (shapes and labels only) is described by its title and its labels."""
    parts = [_title(fig) or "Chart"]
    x, y = _axis_title(fig, "xaxis"), _axis_title(fig, "yaxis")
    if x or y:
        parts.append(f"{y or 'values'} against {x or 'categories'}" if y else f"horizontal axis: {x}")
    series = [_series_name(t, i) for i, t in enumerate(fig.data)]
    if series:
        parts.append("Series: " + "; ".join(series))
    marks = [plain_text(a.text) for a in fig.layout.annotations or () if plain_text(a.text)]
    if marks:
        label = "Marked" if series else "Labels"
        shown = marks[:MAX_MARKS] if series else marks
        parts.append(f"{label}: " + "; ".join(shown) + ("; …" if len(shown) < len(marks) else ""))
    return ". ".join(p.rstrip(".") for p in parts) + "."


def _stride(n: int, most: int) -> list[int]:
    """Indices of at most ``most`` rows out of ``n``, evenly spaced, first and last kept."""
    if n <= most:
        return list(range(n))
    step = math.ceil((n - 1) / (most - 1))
    picked = list(range(0, n, step))
    if picked[-1] != n - 1:
        picked.append(n - 1)
    return picked


def _series_table(fig: go.Figure) -> Table | None:
    traces = [t for t in fig.data if _has_points(t)]
    if not traces:
        return None
    x_head, y_head = _axis_title(fig, "xaxis") or "x", _axis_title(fig, "yaxis") or "y"
    if len({t.yaxis or "y" for t in traces}) > 1:  # series on two y axes share one column
        y_head = "value"
    if x_head == y_head:
        x_head, y_head = f"{x_head} (x)", f"{y_head} (y)"
    rows: list[tuple[str, str, str, str]] = []
    for i, trace in enumerate(fig.data):
        if not _has_points(trace):
            continue
        xs, ys, texts = _seq(trace.x), _seq(trace.y), _seq(trace.text)
        n = max(len(xs), len(ys))
        xs = xs or list(range(n))
        ys = ys or list(range(n))
        name = _series_name(trace, i)
        for j in range(n):
            label = texts[j] if j < len(texts) else (texts[0] if len(texts) == 1 else "")
            rows.append((name, value_text(xs[j] if j < len(xs) else None), value_text(ys[j] if j < len(ys) else None),
                         plain_text(label)))
    keep = _stride(len(rows), MAX_ROWS)
    note = f"one point in {keep[1] - keep[0]} of {len(rows)}" if len(keep) < len(rows) else ""
    rows = [rows[i] for i in keep]
    columns = {"series": [r[0] for r in rows], x_head: [r[1] for r in rows], y_head: [r[2] for r in rows]}
    if any(r[3] for r in rows):
        columns["label"] = [r[3] for r in rows]
    return Table(columns, note)


def _grid_table(fig: go.Figure, trace: Any) -> Table:
    """A heatmap as a grid: one row per y value, one column per x value; each cell its text, else its value."""
    z = [_seq(row) for row in _seq(trace.z)]
    ys = _seq(trace.y) or list(range(len(z)))
    xs = _seq(trace.x) or list(range(max((len(r) for r in z), default=0)))
    texts = [] if trace.text is None or isinstance(trace.text, str) else [_seq(row) for row in _seq(trace.text)]
    y_head = f"{_axis_title(fig, 'yaxis') or 'row'} (rows) by {_axis_title(fig, 'xaxis') or 'column'} (columns)"
    keep = _stride(len(z), MAX_GRID_ROWS)
    columns: dict[str, list[str]] = {y_head: [value_text(ys[r]) if r < len(ys) else "" for r in keep]}
    for c, x in enumerate(xs):
        head = value_text(x) or f"column {c + 1}"
        while head in columns:
            head += " "
        cells = []
        for r in keep:
            text = texts[r][c] if r < len(texts) and c < len(texts[r]) else None
            cells.append(plain_text(text) if text not in (None, "") else value_text(z[r][c] if c < len(z[r]) else None))
        columns[head] = cells
    note = f"one row in {keep[1] - keep[0]} of {len(z)}" if len(keep) < len(z) else ""
    return Table(columns, note)


def chart_tables(fig: go.Figure) -> list[Table]:
    """The numbers behind ``fig``: one table of its points (series, x, y and any point label), and one grid per
    heatmap. Contour lines are drawn from a grid already tabled and add none; a diagram of shapes adds none."""
    tables = [_grid_table(fig, t) for t in fig.data if t.type == "heatmap"]
    series = _series_table(fig)
    return ([series] if series else []) + tables


def chart(fig: go.Figure, *, key: str | None = None, where: Any = None) -> None:
    """Draw ``fig`` in ``where`` (a column or container; the page by default) with its description as the chart's
    accessible name, and its data folded under it."""
    where = where if where is not None else st
    where.plotly_chart(fig, key=key, alt=chart_summary(fig))
    tables = chart_tables(fig)
    if tables:
        box = where.expander("Chart data")
        for table in tables:
            escaped = {md_plain(head): [md_plain(cell) for cell in cells] for head, cells in table.columns.items()}
            box.table(escaped, hide_index=True)
            if table.note:
                box.caption(f"Shown: {table.note}.")
