"""Token chips: the text so far, the draft's proposals and the target's verdicts, as coloured HTML."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

import streamlit as st

from app.palette import DRAFT, EXTRA, KEPT, MUTED, MUTED_TEXT, REJECTED
from specsim.lesson.replay import Chip

_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+\-.!|~<>$:&=])")


def md_plain(text: str) -> str:
    """``text`` for st.markdown / st.info that shows every character as typed.

    Token texts are arbitrary (```, **, $x$, :red[...]); unescaped, Markdown would eat them, and a
    sentence about a token would name an empty string (issue 12). CommonMark lets a backslash
    escape any ASCII punctuation; Streamlit's own extras (LaTeX $, :emoji:, :color[]) start with
    punctuation too, so the same escape turns them off.
    """
    return _MARKDOWN.sub(r"\\\1", text)


PROMPT_TAIL = 240  # characters of a long prompt shown before the output (all of it on hover)
MARK = {"accepted": "✓", "rejected": "✗", "unchecked": "·", "extra": "+1"}

STYLE = f"""
<style>
.sx-chips {{ line-height: 2.1; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.95rem; }}
.sx-chip {{ border-radius: 4px; padding: 1px 3px; margin: 0 1px; white-space: pre-wrap; }}
.sx-prompt {{ color: #555; background: #f1f1f1; }}
.sx-output {{ color: inherit; }}
.sx-accepted {{ border: 2px solid {DRAFT}; background: {KEPT}22; }}
.sx-rejected {{ border: 2px solid {DRAFT}; background: {REJECTED}22; text-decoration: line-through; }}
.sx-unchecked {{ border: 2px dashed {MUTED}; color: {MUTED_TEXT}; }}
.sx-extra {{ border: 2px solid {EXTRA}; background: {EXTRA}33; }}
.sx-mark {{ font-size: 0.7rem; vertical-align: super; margin-left: 2px; }}
.sx-ws {{ color: {MUTED}; }}
.sx-legend span {{ margin-right: 0.8rem; }}
</style>
"""


def _visible_html(text: str) -> str:
    """Escaped text with spaces, tabs and newlines shown as faint symbols (a newline still breaks the line)."""
    if text == "":
        return '<span class="sx-ws">∅</span>'
    out = []
    for ch in text:
        if ch == " ":
            out.append('<span class="sx-ws">␣</span>')
        elif ch == "\n":
            out.append('<span class="sx-ws">↵</span><br>')
        elif ch == "\t":
            out.append('<span class="sx-ws">→</span>')
        else:
            out.append(html.escape(ch))
    return "".join(out)


def chip_title(chip: Chip) -> str:
    """The hover text of a chip: the probabilities behind its verdict."""
    p, q = ("p′", "q′") if chip.cut else ("p", "q")  # after a top-k or top-p cut, the cut distributions
    lines = []
    if chip.note == "prefill":
        lines.append("chosen by the prefill: the target's pass over the whole prompt")
    if chip.position is not None:
        lines.append(f"slot t+{chip.position}")
    if chip.role == "extra":
        how = {"correction": "the target's own choice (greedy)", "resample": f"drawn from norm(max(0, {p} − {q}))",
               "bonus": "bonus: every proposal was kept"}.get(chip.note, chip.note)
        lines.append(how)
    if chip.p is not None:
        lines.append(f"{p}(x) = {chip.p:.4f} (target{', after the top-k/top-p cut' if chip.cut else ''})")
    if chip.q is not None and chip.note == "copied":
        lines.append(f"copied from earlier in the text, not drafted: {q}(x) = 1")
    elif chip.q is not None:
        lines.append(f"{q}(x) = {chip.q:.4f} (draft{', after the cut' if chip.cut else ''})")
    if chip.accept_prob is not None and chip.role != "extra" and chip.greedy:
        if chip.role == "unchecked":
            lines.append("never checked: an earlier slot was rejected")
        else:
            verdict = "kept" if chip.role == "accepted" else "rejected"
            lines.append(f"greedy: kept only if it is the target's top choice → {verdict}")
    elif chip.accept_prob is not None and chip.role != "extra":
        lines.append(f"min(1, {p}/{q}) = {min(1.0, chip.p / chip.q) if chip.q else 1.0:.4f}")
        if chip.draw is not None:
            verdict = "kept" if chip.draw < chip.accept_prob else "rejected"
            lines.append(f"random draw u = {chip.draw:.4f} → {verdict} (kept when u < min(1, {p}/{q}))")
        if chip.role == "unchecked":
            lines.append("never checked: an earlier slot was rejected")
    return "\n".join(lines)


# Streamlit's st.html cleans its HTML with DOMPurify, which drops an attribute whose value would close a comment or a
# CDATA section, or holds a closing tag of a raw-text element (DOMPurify 3.4.17 in streamlit 1.67, with SAFE_FOR_XML:
# /((--!?|])>)|<\/(style|script|title|xmp|textarea|noscript|iframe|noembed|noframes)/i; 3.1 named only style and
# title). A prompt holding one of those lost its hover text. A word joiner (U+2060, invisible, zero width) after
# "--", "]" and every "<" of a closing tag keeps the tooltip as typed and the attribute out of any such list.
WORD_JOINER = "\u2060"


def attribute_text(text: str) -> str:
    """``text`` for a title attribute that DOMPurify keeps: it reads the same, joiners break the dropped patterns."""
    text = re.sub(r"(--!?|\])>", lambda m: m.group(1) + WORD_JOINER + ">", text)
    return re.sub(r"<(?=/)", "<" + WORD_JOINER, text)


def chips_html(chips: Sequence[Chip], prompt_text: bool = True) -> str:
    """One HTML block for a row of chips (pure: the page renders it, tests read it)."""
    parts = []
    for chip in chips:
        if chip.role == "prompt" and not prompt_text:
            continue
        if chip.role == "prompt":
            shown = chip.text if len(chip.text) <= PROMPT_TAIL else "…" + chip.text[-PROMPT_TAIL:]
            body = html.escape(shown).replace("\n", "<br>")
        else:
            body = _visible_html(chip.text)
        mark = f'<span class="sx-mark">{MARK[chip.role]}</span>' if chip.role in MARK else ""
        title = html.escape(attribute_text(chip.text if chip.role == "prompt" else chip_title(chip)), quote=True)
        title_attr = f' title="{title}"' if title else ""
        parts.append(f'<span class="sx-chip sx-{chip.role}"{title_attr}>{body}{mark}</span>')
    return f'<div class="sx-chips">{"".join(parts)}</div>'


LEGEND = (
    '<div class="sx-chips sx-legend">'
    '<span class="sx-chip sx-prompt">prompt</span><span class="sx-chip sx-output">earlier output</span>'
    '<span class="sx-chip sx-accepted">kept<span class="sx-mark">✓</span></span>'
    '<span class="sx-chip sx-rejected">rejected<span class="sx-mark">✗</span></span>'
    '<span class="sx-chip sx-unchecked">never checked<span class="sx-mark">·</span></span>'
    '<span class="sx-chip sx-extra">target\'s own<span class="sx-mark">+1</span></span></div>'
)


def render_chips(chips: Sequence[Chip], legend: bool = True) -> None:
    """Draw the chips (and a legend of the colours) on the page."""
    st.html(STYLE + (LEGEND if legend else "") + chips_html(chips))
