"""The live page's glossary covers the terms its first screen uses, each linked to a real page."""

from __future__ import annotations

from app.glossary import terms
from app.layout import all_pages
from tests.conftest import open_page

FIRST_SCREEN_TERMS = ("EAGLE", "position-invariant", "cost model", "o", "prefill", "memory-bound", "closed form")


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
