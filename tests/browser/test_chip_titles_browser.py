"""Issue 62 (11): the prompt chip of an HTML-like prompt lost its hover title in chromium.

st.html passes its HTML through the DOMPurify that Streamlit bundles, which drops a title attribute holding a closing
tag of a raw-text element (``</script``, ``</textarea``, …) or the end of a comment. This test runs that very file
(from the installed streamlit) in chromium over the chips the live page draws, with st.html's options."""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit

from app.live.tokens import WORD_JOINER, chips_html
from specsim.lesson.replay import Chip

PROMPTS = [
    "plain words, no markup",
    "<script>alert(1)</script> what does this do?",
    "Close the box: </textarea> and go on",
    "<!-- a comment --> then text",
    "<![CDATA[ x ]]> in XML",
    "<style>b{}</style> and </title>",
    "</iframe></noscript></xmp></noembed></noframes>",
    "a <b>bold</b> claim",
]


def _purify_source() -> str:
    js = Path(streamlit.__file__).parent / "static" / "static" / "js"
    files = sorted(js.glob("purify.es.*.js"))
    if not files:
        pytest.skip("this streamlit bundles no purify.es file")
    source = files[0].read_text()
    head, sep, _ = source.rpartition("export{")
    assert sep, "the bundle's export statement moved"
    name = source[len(head) + len(sep):].split(" as ")[0]
    return head + f"window.DOMPurify={name};"


def test_every_prompt_chip_keeps_its_hover_text_through_streamlits_dompurify(browser):
    context = browser.new_context()
    try:
        page = context.new_page()
        page.set_content("<html><body></body></html>")
        page.add_script_tag(content=_purify_source())
        chips = [Chip(text=prompt, role="prompt") for prompt in PROMPTS]
        titles = page.evaluate(
            """(html) => {
                const box = document.createElement("div");
                box.innerHTML = window.DOMPurify.sanitize(html, {ADD_TAGS: ["script", "style"]});
                return Array.from(box.querySelectorAll(".sx-chip")).map((el) => el.getAttribute("title"));
            }""", chips_html(chips))
    finally:
        context.close()
    assert [t.replace(WORD_JOINER, "") if t is not None else None for t in titles] == PROMPTS
