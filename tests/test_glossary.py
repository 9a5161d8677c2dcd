"""The live page's glossary covers the terms its first screen uses, each linked to a real page that teaches it, and
says what the default draft is."""

from __future__ import annotations

import pytest

from app.glossary import terms
from app.layout import all_pages
from tests.conftest import open_page
from tests.page_text import page_text

FIRST_SCREEN_TERMS = ("EAGLE", "position-invariant", "cost model", "o", "prefill", "memory-bound", "closed form",
                      "K policy", "early exit", "top-k", "token tree")  # the live form's choices too


def test_every_term_of_the_first_screen_is_explained_and_linked():
    named = " ".join(t.term for t in terms())
    for term in FIRST_SCREEN_TERMS:
        assert any(term == part.strip() for t in terms() for part in t.term.split(",")), term
    paths = {p.url_path for p in all_pages()}
    assert all(t.page in paths for t in terms()) and named


def test_the_live_page_opens_with_the_glossary_folded():
    at = open_page("live.py")
    assert not at.exception
    assert at.expander[0].label == "Terms used on this page"


def test_glossary_says_what_the_default_draft_really_is():
    from specsim.core import defaults, draft_loader

    eagle = next(t for t in terms() if t.term == "EAGLE")
    form = draft_loader.draft_form(defaults.DEFAULT_DRAFTER, defaults.DEFAULT_DRAFT)
    assert ("default draft is one." in eagle.meaning) == (form == "eagle")
    assert form != "eagle" or "is not one" not in eagle.meaning


@pytest.mark.parametrize("term", ["prefill", "KV cache", "roofline, ridge", "GEMM", "kernel",
                                  "tensor parallelism, expert parallelism", "early exit", "top-k, top-p"])
def test_glossary_terms_link_to_a_page_that_teaches_them(term):
    entry = next(t for t in terms() if t.term == term)
    page = next(p for p in all_pages() if p.url_path == entry.page)
    shown = page_text(open_page(page.script)).lower()
    for word in term.split(", "):
        assert word.lower() in shown, (term, page.script)
