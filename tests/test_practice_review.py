"""In practice after a learner's and a lecturer's review: every method the pages cite is in the references with its
link; the default draft's several acceptance figures are reconciled; the domain result says only what it measured;
provenance sits in "How this was measured"."""

from __future__ import annotations

import re

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
    at = open_page("practice.py")
    assert not at.exception and not at.error
    return at


def test_the_references_hold_every_cited_method_with_its_arxiv_link(page):
    text = page_text(page)
    for arxiv_id, name in CITED.items():
        line = next((ln for ln in text.splitlines() if f"(https://arxiv.org/abs/{arxiv_id})" in ln), None)
        assert line is not None and f"[arXiv:{arxiv_id}]" in line and name in line, arxiv_id
    assert "Prompt Lookup Decoding" in text and "(https://github.com/apoorvumang/prompt-lookup-decoding)" in text
    assert len({r.url for r in references.REFERENCES}) == len(references.REFERENCES)  # none twice


def test_the_default_drafts_alpha_figures_are_read_from_where_their_pages_read_them(page):
    """Each acceptance figure the pages quote for the default draft, from the page's own source, in one table with
    what it counts; the reading says why they differ and to measure on one's own traffic."""
    import json
    from pathlib import Path

    from app import recording
    from app.practice import drafts
    from app.variants import compare
    from specsim.core import defaults
    from specsim.core.paths import DOMAINS_RECORDED
    from specsim.lesson import domains, unchanged
    from specsim.measure import machine

    text = page_text(page)
    assert "The default draft's α, page by page" in text
    overlap = unchanged.measured_overlap()
    draft_json = json.loads((Path(defaults.DEFAULT_DRAFT) / "draft.json").read_text(encoding="utf-8"))
    expected = {
        "*Why the output is unchanged*": f"{overlap.accepted_mass[overlap.temperatures.index(0.0)]:.3f}",
        "*Variants* (the EAGLE panel)": f"{machine.heldout_alpha(defaults.CLASSIC_DRAFT, copy=False):.0%}",
        "*Variants* (the recorded comparison)":
            f"{next(r for r in compare.saved_heldout()['rows'] if r['key'] == 'draft_model')['acceptance']:.0%}",
        "*Live decoding* (the recorded run)": f"{recording.shipped_runs()['prose_run'].spec.acceptance_rate:.0%}",
        "*In practice* (the paragraph above)": f"{draft_json['val_top1']:.0%}",
    }
    for r in domains.load_recorded(DOMAINS_RECORDED).results:
        expected[f"*In practice* (acceptance by domain, above: {r.domain})"] = f"{r.alpha:.0%}"
    rows = drafts.alpha_figures()
    assert {r.page: r.shown for r in rows} == expected
    for r in rows:  # one table row per figure, with what it counts and whether copies count
        assert f"| **{r.shown}** | {r.page} | {r.counts} | {'yes' if r.copying else 'no'} |" in text
    assert sum(r.copying for r in rows) >= 3 and sum(not r.copying for r in rows) >= 3
    reading = drafts.alpha_reading(rows)
    assert reading in text and "measure it on your own traffic" in reading.lower()
    assert f"keep {machine.heldout_alpha(defaults.DEFAULT_DRAFT, copy=True):.0%}" in reading  # copying's share


def test_the_domain_text_is_conditional_and_explains_alpha_against_tau(page):
    """Two prompts a domain do not separate the domains: the text says what it expects and that the runs neither
    confirm nor refute it; where a higher α goes with a lower τ, one sentence explains it from the counts."""
    from specsim.core.paths import DOMAINS_RECORDED
    from specsim.lesson import domains

    text = page_text(page)
    assert "text that copies its input is the easiest of all" not in text
    assert "should be the easiest of all" in text and "Those are expectations" in text
    results = domains.load_recorded(DOMAINS_RECORDED).results
    ranking = domains.ranking_sentence(results, domains.TOKENS_PER_PROMPT)
    assert "neither confirm the expectations above nor refute them" in ranking and ranking in text
    tau = domains.tau_sentence(results)
    echo, code = (next(r for r in results if r.domain == d) for d in ("echo", "code"))
    assert echo.alpha > code.alpha and echo.tokens_per_loop < code.tokens_per_loop  # the recorded puzzle
    assert tau in text and f"echo kept {echo.accepted / echo.loops:.2f} guesses a loop" in tau
    lost = echo.accepted + echo.loops - (echo.tokens - echo.prompts)
    assert abs(1 + (echo.accepted - lost) / echo.loops - echo.tokens_per_loop) < 1e-9  # the sentence's arithmetic
    assert f"lost {lost} tokens that way in its {echo.loops} loops" in tau


def test_tau_sentence_is_empty_when_alpha_and_tau_agree():
    from specsim.lesson.domains import DomainResult, tau_sentence

    assert tau_sentence([DomainResult("code", 2, 30, 45, 48, 20, 30 / 45, 2.4),
                         DomainResult("prose", 2, 20, 40, 48, 25, 0.5, 1.9)]) == ""


PROVENANCE = ("5,001,548", "lines from line", "specsim/core/acceptance.py")


def test_provenance_sits_in_how_this_was_measured(page):
    """Counts, intervals, file paths and line numbers are under "How this was measured"; the sentences keep the
    numbers themselves (a lecturer's review: too dense)."""
    measured = [e for e in page.expander if e.label == "How this was measured"]
    inside = " ".join(m.value for e in measured for m in e.markdown)
    outside = " ".join(m.value for m in page.markdown if m.value not in inside)
    for needle in PROVENANCE:
        assert needle not in outside, needle
    assert not re.search(r"95 % interval \d", outside)  # the intervals themselves
    for needle in ("kept 13 of 26", "lines from line", "specsim/core/acceptance.py", "docs/distill.md"):
        assert needle in inside, needle
    assert "about 5 million tokens" in outside and "loop is " in outside
