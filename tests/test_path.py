"""The lesson's path (issue 61, item 1): the sidebar's order, and on every lesson page what the learner will be able
to do, the take-away and the next page; the glossary and the learner's progress in the sidebar of every page."""

from __future__ import annotations

import re

import pytest

from app.frame import next_page
from app.layout import PAGES, all_pages
from specsim.lesson.path import frames
from tests.conftest import ROOT, open_page

LESSON = PAGES["Learn"]


def test_every_lesson_page_has_objectives_and_a_take_away_and_nothing_else_does():
    assert set(frames()) == {p.script for p in LESSON}
    for frame in frames().values():
        assert 2 <= len(frame.learn) <= 3
        assert len(re.findall(r"[.!?](\s|$)", frame.take_away)) <= 3  # at most three sentences
        assert not re.search(r"\d+(\.\d+)?\s*[×%]", frame.take_away)  # numbers are computed on the pages, not typed


def test_the_path_measures_v_before_a_real_run_is_explained_by_it():
    """The calculator assumes v; Is verification free here? justifies it; Live decoding then blames results on it."""
    order = [p.script for p in LESSON]
    assert order.index("calculator.py") < order.index("verify.py") < order.index("live.py")
    assert order.index("unchanged.py") < order.index("live.py")  # a sampled run's resample is understood
    assert order[0] == "home.py"


@pytest.mark.parametrize("page", LESSON, ids=lambda p: p.url_path)
def test_each_lesson_page_opens_with_what_you_will_learn_and_ends_with_the_next_page(page):
    at = open_page(page.script)
    assert not at.exception
    texts = [m.value for m in at.markdown]
    opening = next(i for i, t in enumerate(texts) if t.startswith("**What you will learn**"))
    for goal in frames()[page.script].learn:
        assert f"- {goal}" in texts[opening]
    assert any(t == f"**Take away.** {frames()[page.script].take_away}" for t in texts)
    following = next_page(page.script)
    assert at.get("page_link")[-1].proto.label == f"Next: {following.title}"


def test_the_last_lesson_page_leads_to_the_tests():
    assert next_page(LESSON[-1].script) == all_pages()[len(LESSON)]


def test_the_sidebar_holds_the_glossary_and_counts_the_pages_opened():
    from app import state

    at = open_page("home.py")
    assert any(e.label == "Glossary" for e in at.sidebar.get("expander"))
    progress = next(c.value for c in at.sidebar.caption if c.value.startswith("Your path"))
    assert progress.startswith(f"Your path: 1 of {len(LESSON)} lesson pages opened")
    assert "Knowledge check: not started" in progress.replace("knowledge", "Knowledge")
    at.switch_page(str(ROOT / "pages" / "calculator.py")).run()
    assert "calculator" in at.session_state[state.PAGES_SEEN]
    progress = next(c.value for c in at.sidebar.caption if c.value.startswith("Your path"))
    assert progress.startswith(f"Your path: 2 of {len(LESSON)} lesson pages opened")
