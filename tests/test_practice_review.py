"""In practice after a learner's and a lecturer's review: every method the pages cite is in the references with its
link; the default draft's several acceptance figures are reconciled; the domain result says only what it measured;
provenance sits in "How this was measured"."""

from __future__ import annotations

import pytest

from app.practice import references
from tests.conftest import open_page
from tests.page_text import page_text

CITED = {  # the methods the pages name, and where each was published (ids checked against the abstract pages)
    "2406.16858": "EAGLE-2", "2503.01840": "EAGLE-3", "2404.16710": "LayerSkip", "2404.18911": "Kangaroo",
    "2309.08168": "Draft & Verify", "2305.09781": "SpecInfer", "2408.11049": "MagicDec",
    "2412.19437": "DeepSeek-V3 Technical Report",
}


@pytest.fixture(scope="module")
def page():
    at = open_page("in_practice.py")
    assert not at.exception and not at.error
    return at


def test_the_references_hold_every_cited_method_with_its_arxiv_link(page):
    text = page_text(page)
    for arxiv_id, name in CITED.items():
        line = next((ln for ln in text.splitlines() if f"(https://arxiv.org/abs/{arxiv_id})" in ln), None)
        assert line is not None and f"[arXiv:{arxiv_id}]" in line and name in line, arxiv_id
    assert "Prompt Lookup Decoding" in text and "(https://github.com/apoorvumang/prompt-lookup-decoding)" in text
    assert len({r.url for r in references.REFERENCES}) == len(references.REFERENCES)  # none twice
