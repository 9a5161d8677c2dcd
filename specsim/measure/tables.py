"""Plain-text tables for the benchmarks' output (``python -m specsim.bench`` and its ``--trees`` table)."""

from __future__ import annotations


def render(table: list[list[str]]) -> str:
    """Right-aligned columns, a rule under the header row."""
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    lines = ["  ".join(v.rjust(w) for v, w in zip(r, widths, strict=True)) for r in table]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)
