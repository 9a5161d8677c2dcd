"""Token texts reach the page as typed (issue 12, defect 8), and counts read as English ("all 1 tokens").

The live page passes its sentences through Streamlit's Markdown. Each check renders what the page
sent with a CommonMark renderer and compares the visible text with the sentence meant.
"""

from __future__ import annotations

import html
import re
from dataclasses import replace

import pytest
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

from specsim.lesson import replay
from tests.live_traces import hand_trace

NASTY = ["```", "**", "*x*", "_a_", "$x$", ":red[no]", "<b>", "\\", "# h", "[a](b)", "`", "~~s~~"]


def visible(markdown: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", MarkdownIt("commonmark").render(markdown))).strip()


def trace_with(text: str):
    trace = hand_trace()
    it = trace.iterations[0]
    slots = list(it.slots)
    slots[2] = replace(slots[2], text=text)  # the rejected proposal
    it = replace(it, slots=tuple(slots), extra=replace(it.extra, text=text + "!"))  # the target's own choice
    return replace(trace, iterations=(it, *trace.iterations[1:]))


def _iteration_page(text: str) -> AppTest:
    def script(text):
        from app.live.view import iteration_view
        from tests.test_live_markdown import trace_with

        iteration_view(trace_with(text), 0)

    return AppTest.from_function(script, args=(text,)).run()


@pytest.mark.parametrize("text", NASTY)
def test_the_narration_shows_every_token_character(text):
    at = _iteration_page(text)
    assert not at.exception
    meant = replay.narrate(trace_with(text), 0)
    assert repr(text) in meant
    assert visible(at.info[0].value) == meant


def _identity_script(n):
    from dataclasses import replace

    from app.live.view import identity_panel
    from tests.live_traces import hand_plain, hand_trace

    spec = hand_trace()
    ids = spec.generated_ids[:n]
    identity_panel(replace(spec, generated_ids=ids), hand_plain(ids))


@pytest.mark.parametrize("n,words", [(1, "the one token matches"), (4, "all 4 tokens match")])
def test_identity_counts_read_as_english(n, words):
    at = AppTest.from_function(_identity_script, args=(n,)).run()
    assert not at.exception
    assert visible(at.success[0].value) == f"Identical: {words} plain greedy decoding (float32)."


# DOMPurify 3.x (`_sanitizeAttributes`), which Streamlit's st.html runs: an attribute value matching this is dropped.
DOMPURIFY_DROPS = re.compile(r"((--!?|])>)|<\/(style|title)", re.IGNORECASE)


@pytest.mark.parametrize("prompt", ["<b>bold</b>", "a </title> b", "x <!-- note --> y", "<![CDATA[x]]>",
                                    "</STYLE>", "a --!> b", "plain"])
def test_a_prompt_that_looks_like_html_keeps_its_hover_text(prompt):
    """Issue 51: the chip of a prompt holding "</title>" or "-->" lost its tooltip (DOMPurify dropped the attribute);
    the tooltip reads as typed, with invisible joiners where DOMPurify's rule would match."""
    from app.live.tokens import WORD_JOINER, chips_html
    from specsim.lesson.replay import Chip

    shown = chips_html([Chip(prompt, "prompt")])
    title = html.unescape(re.search(r' title="([^"]*)"', shown).group(1))
    assert not DOMPURIFY_DROPS.search(title)
    assert title.replace(WORD_JOINER, "") == prompt
    assert "<" not in re.sub(r' title="[^"]*"', "", shown).split(">", 2)[-1].split("</span>")[0]  # body escaped
