"""A sentence that sends the learner to another page names the page that has what it promises, and no page speaks of
a "lesson" the learner never sees: the app is the lesson (a learner's and a lecturer's review)."""

from __future__ import annotations

import re

import pytest

from app import batching
from app.practice import when
from app.verify import figures as passcost_figures
from tests.conftest import open_page
from tests.page_text import page_text

SERVING = "Serving many requests"


def test_the_batch_context_moe_and_memory_rows_point_at_serving_many_requests():
    shown_on = {c.what: c.page for c in when.CONDITIONS}
    for row in ("Batch size", "Context length", "Model kind", "Memory"):
        assert shown_on[row] == SERVING, row
    assert shown_on["Hardware"] == "Is verification free here?"  # the measured v(n) is there
    # a new learner's reading: the row pointed at In practice, whose own runs "neither confirm nor refute" it; the
    # evidence is the papers' code-against-summaries figures, quoted on The idea
    assert shown_on["Kind of text"] == "The idea"
    from specsim.core.published import CHEN_HUMANEVAL, CHEN_XSUM

    kind = next(c for c in when.CONDITIONS if c.what == "Kind of text")
    assert f"{CHEN_HUMANEVAL.speedup:.2f}× on code against {CHEN_XSUM.speedup:.2f}× on summaries" in kind.use_it
    assert "*Under the hood*" not in when.CLOSING and "*Why the output is unchanged*" in when.CLOSING


def test_the_moe_pointer_names_the_page_it_is_on():
    """Serving carries the datasheet arithmetic with its MoE section further down; Verify's short sentence sends the
    learner to Serving for both, and neither says "(below)" of a section on another page."""
    assert "(below)" not in batching.ridge_sentence() + batching.datasheet_paragraph()
    assert f"*{SERVING}*" in batching.ridge_sentence() and "mixture" in batching.ridge_sentence()
    assert "further down this page" in batching.datasheet_sentence()


def test_the_two_pages_do_not_carry_the_same_datasheet_paragraph():
    """Verify's ridge sentence is short and names Serving; the arithmetic (R = FLOP/s ÷ bytes/s) is on Serving only."""
    assert "R = FLOP/s ÷ bytes/s" in batching.datasheet_paragraph()
    assert "R = FLOP/s ÷ bytes/s" not in batching.roofline_paragraph() + batching.ridge_sentence()
    assert len(batching.ridge_sentence()) < 0.6 * len(batching.datasheet_sentence())


@pytest.fixture(scope="module")
def texts() -> dict[str, str]:
    return {script: page_text(open_page(script)) for script in (
        "home.py", "calculator.py", "verify.py", "unchanged.py", "hood.py", "variants.py",
        "serving.py", "practice.py")}


def test_cross_references_name_the_page_that_has_it(texts):
    hood, practice, variants = texts["hood.py"], texts["practice.py"], texts["variants.py"]
    assert "*Serving many requests* shows both regimes with a context slider" in hood
    assert "Is verification free here?* shows both regimes" not in hood
    assert "as *Why the output is unchanged* shows under *In floating point*" in practice
    assert "as *Under the hood* shows" not in practice
    assert "are on *In practice* (*Turn it on*)" in variants and "are on *Under the hood*" not in variants
    assert "Turn it on" in practice and "In floating point" in texts["unchanged.py"]
    assert "context slider" in texts["serving.py"] and "mixture-of-experts" in texts["serving.py"]
    assert "mixture of experts (below)" not in texts["verify.py"]
    assert "R = FLOP/s ÷ bytes/s" in texts["serving.py"]
    assert "R = FLOP/s ÷ bytes/s" not in texts["verify.py"]


LESSON_VOICE = re.compile(r"the lesson's|the lesson (names|puts|this app follows|uses)|words the lesson",
                          re.IGNORECASE)


def test_no_page_speaks_of_a_lesson_the_learner_never_sees(texts):
    for script, text in texts.items():
        assert not LESSON_VOICE.search(text), (script, LESSON_VOICE.search(text))
    assert "Four words these pages use" in texts["home.py"]
    assert "third fact of *Speculative decoding: the idea*" in texts["verify.py"]


def test_the_free_line_is_the_calculators_assumption():
    fig = passcost_figures.verify_curve_figure([1, 2, 3, 4], [1.0, 1.0, 1.1, 1.2], 2, 3.0)
    names = [t.name for t in fig.data]
    assert "free: v = 1 (the calculator's assumption)" in names and not any("lesson" in n for n in names)
