"""AppTest for the variants page: it opens, a failed run shows a message, and a real run fills every section; before
a run it says which variants run, in which dtype, and what the papers report for each."""

from __future__ import annotations

import pytest

from app import loaders, state
from specsim import methods
from specsim.core import published
from specsim.measure import compare_variants as cmp
from tests.conftest import open_page
from tests.page_text import page_text


@pytest.fixture(scope="module")
def variants_page():
    """The page as it opens, before any run, shared by the tests that only read it."""
    at = open_page("variants.py")
    assert not at.exception
    return at


def test_page_opens_with_a_prompt_picker_and_no_run_yet():
    at = open_page("variants.py")
    assert not at.exception
    assert at.selectbox[0].options == list(cmp.DEMO_PROMPTS)
    assert any("Press the button" in i.value for i in at.info)
    assert not at.error


def test_a_failing_model_load_shows_an_error_not_a_traceback(monkeypatch):
    import specsim.core.models

    def broken(*args, **kwargs):
        raise RuntimeError("no weights here")

    monkeypatch.setattr(specsim.core.models, "load_bundled_target", broken)
    loaders.shelf.clear()
    try:
        at = open_page("variants.py")
        at.button(key=state.VAR_RUN_BUTTON).click().run()
        assert not at.exception
        assert any("no weights here" in e.value for e in at.error)
    finally:
        loaders.shelf.clear()


def test_running_every_variant_fills_the_page(monkeypatch):
    """In the default run (about 40 s): the page's result sections are most of app/variants/compare.py, and
    the bundled target's default dtype can change under them (bfloat16 broke the Medusa rows, issue 12).
    One timed round instead of the page's three keeps it short; the rounds are tested in test_variants_bundled."""
    monkeypatch.setattr(cmp, "ROUNDS", 1)
    at = open_page("variants.py", timeout=1200)
    at.slider[0].set_value(8).run()
    at.button(key=state.VAR_RUN_BUTTON).click().run()
    assert not at.exception and not at.error
    headers = [h.value for h in at.subheader]
    assert "Side by side" in headers and any(h.startswith("Early exit, untrained") for h in headers)
    table = next(d.value for d in at.dataframe if "identical to plain" in d.value.columns)
    assert list(table["identical to plain"]) == [True] * len(table)
    assert len(table) == 1 + len(methods.VARIANTS)
    # the EAGLE head beside the standalone draft, from the same runs' cost models
    assert "EAGLE beside the standalone draft" in headers
    eagle = next(d.value for d in at.dataframe if "c (one guess, in target passes)" in d.value.columns)
    assert list(eagle["draft"]) == [methods.LABELS["draft_model"], methods.LABELS["eagle"]]
    page = " ".join(m.value for m in at.markdown)
    assert f"kept **{eagle['α (guesses kept)'][1]}** of its guesses against **{eagle['α (guesses kept)'][0]}**" in page
    quicker = "Here the standalone draft is quicker" in page or "On this prompt the EAGLE head is quicker" in page
    assert quicker


def test_before_any_run_the_page_explains_every_variant_and_shows_the_variants_table():
    from app.variants.guide import entries

    at = open_page("variants.py")
    assert not at.exception
    headings = [e.label for e in at.expander]
    assert headings[: len(entries())] == [g[0] for g in entries()]
    for word in ("EAGLE", "Prompt lookup", "Jacobi", "Medusa", "Early exit"):
        assert any(word in h for h in headings)
    table = at.table[0].value  # a table, not a dataframe: its long cells wrap instead of being clipped
    assert list(table["variant"]) == [m.lesson.name for m in methods.lesson_methods()]
    assert list(table["extra cost"]) == [m.lesson.cost for m in methods.lesson_methods()]
    assert "Common descriptions this table corrects" in headings
    assert at.button(key=state.VAR_RUN_BUTTON)  # running stays one button away


def test_leaving_mid_run_and_coming_back_says_the_run_was_cancelled(monkeypatch):
    """Issue 23 (6): a click elsewhere (or a page switch) stops the script at its next UI call; the page then
    came back to the pre-run box without a word. Like the live page, it now says the run was cancelled."""
    from streamlit.runtime.scriptrunner_utils.exceptions import StopException

    from tests.conftest import ROOT

    calls = []

    def interrupted(*args, progress, **kwargs):
        calls.append(1)
        progress(0.1, "Plain decoding")
        raise StopException()  # what Streamlit raises in the script thread when the user leaves mid-run

    monkeypatch.setattr(cmp, "compare", interrupted)
    monkeypatch.setattr(loaders, "bundled_target", lambda: None)
    at = open_page("variants.py")
    at.button(key=state.VAR_RUN_BUTTON).click().run()
    assert calls
    at.switch_page(str(ROOT / "pages" / "calculator.py")).run()
    at.switch_page(str(ROOT / "pages" / "variants.py")).run()
    assert not at.exception
    warnings = [w.value for w in at.warning]
    assert any(w.startswith("Cancelled: the run on the prompt") for w in warnings), warnings
    assert any("Press the button" in i.value for i in at.info)
    at.run()  # as on the live page, the notice stays until the next run
    assert any(w.value.startswith("Cancelled") for w in at.warning)


# ---- what the page says before a run --------------------------------------------------------------------------


def test_variants_intro_says_eagle_runs_too(variants_page):
    text = " ".join(m.value for m in variants_page.markdown)
    assert "the lesson's four and early exit run" not in text
    assert "all six run" in text and "(EAGLE)" in text
    assert methods.method("eagle") is not None  # and it does run in the comparison


def test_the_variants_page_title_does_not_count_four(variants_page):
    from app.layout import all_pages

    assert all("Four variants" not in p.title for p in all_pages())
    assert "Four" not in variants_page.title[0].value


def test_early_exit_is_not_called_a_cautionary_case_and_names_trained_self_speculation(variants_page):
    from app.variants.guide import entries

    text = next(t for h, t, _ in entries() if h.startswith("Early exit"))
    assert "cautionary" not in text
    assert all(name in text for name in ("LayerSkip", "Draft & Verify", "Kangaroo"))
    assert "cautionary" not in page_text(variants_page)


def test_variants_table_states_the_papers_speedups(variants_page):
    table = variants_page.table[0].value
    claims = dict(zip(table["variant"], table["reported speedup (papers)"], strict=True))
    row = {key: methods.method(key).lesson.name for key in published.SPEEDUPS}
    for key, speedups in published.SPEEDUPS.items():
        for s in speedups:
            assert s.claim in claims[row[key]]
    assert published.LEVIATHAN_SPEEDUP.figure in claims[row["draft_model"]]
    assert published.CHEN_SPEEDUP.figure in claims[row["draft_model"]]


@pytest.mark.parametrize("forced", [None, "float16"])
def test_variants_page_states_the_dtype_it_loads(monkeypatch, forced):
    import torch

    import specsim.core.models

    if forced is not None:  # a dtype the page never spells: it can only come from the loader's default
        monkeypatch.setattr(specsim.core.models, "default_dtype", lambda device: getattr(torch, forced))
    expected = str(specsim.core.models.parse_dtype(None, specsim.core.models.default_device())).removeprefix("torch.")
    at = open_page("variants.py")
    intro = next(m.value for m in at.markdown if "SmolLM2-135M-Instruct" in m.value)
    assert f"SmolLM2-135M-Instruct, {expected}, greedy" in intro
    for other in {"float32", "bfloat16", "float16"} - {expected}:
        assert f", {other}," not in intro
