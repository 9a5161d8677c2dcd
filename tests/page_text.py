"""Everything a page writes that AppTest can read, as one string (plotly charts and custom components are opaque)."""

from __future__ import annotations


def page_text(at) -> str:
    """The texts of a page run: title, headings, markdown, captions, callouts, expander labels, code and tables."""
    parts: list[str] = []
    for kind in ("title", "header", "subheader", "markdown", "caption", "info", "success", "warning", "error",
                 "code", "latex"):
        parts += [str(e.value) for e in getattr(at, kind)]
    parts += [e.label for e in at.expander]
    for kind in ("table", "dataframe"):
        parts += [e.value.to_string() for e in getattr(at, kind)]
    return "\n".join(parts)
