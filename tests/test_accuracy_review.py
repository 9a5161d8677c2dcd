"""Issue 37: an expert read every page against the lesson and the papers. One test per error or misleading passage,
each checked where the text or figure is produced, and each failing on the text it replaced."""

from __future__ import annotations

import re

import pytest

from app import glossary, palette
from app.calculator import text as calc_text
from app.settings import CalcSettings
from specsim import methods
from specsim.core import defaults, draft_loader, published
from specsim.lesson import roofline
from specsim.measure import analytics, machine
from tests.conftest import ROOT, open_page

# ---- the eight errors ------------------------------------------------------------------------------------------


def test_glossary_says_what_the_default_draft_really_is():
    eagle = next(t for t in glossary.terms() if t.term == "EAGLE")
    form = draft_loader.draft_form(defaults.DEFAULT_DRAFTER, defaults.DEFAULT_DRAFT)
    assert ("default draft is one." in eagle.meaning) == (form == "eagle")
    assert form != "eagle" or "is not one" not in eagle.meaning


@pytest.mark.parametrize("term", ["prefill", "KV cache", "roofline, ridge"])
def test_glossary_terms_link_to_a_page_that_teaches_them(term):
    from app.layout import all_pages

    entry = next(t for t in glossary.terms() if t.term == term)
    page = next(p for p in all_pages() if p.url_path == entry.page)
    source = (ROOT / "pages" / page.script).read_text(encoding="utf-8").lower()
    for word in term.split(", "):
        assert word.lower() in source, (term, page.script)


def test_prompt_lookup_diagram_names_the_colours_it_draws():
    from app.variants.guide_figures import prompt_lookup_figure

    fig = prompt_lookup_figure()
    drawn = {shape.fillcolor for shape in fig.layout.shapes}
    named = set(re.findall(r"\(([a-z ]+)\)", fig.layout.title.text))
    colour_of = {name: colour for colour, name in palette.NAMES.items()}
    assert named and all(name in colour_of for name in named), named
    assert {colour_of[n] for n in named} <= drawn
    assert "green" not in named  # nothing in it is green


def test_medusa_tree_caption_names_the_colours_of_the_tree():
    from app.variants.compare import tree_caption
    from app.variants.figures import token_tree

    caption = tree_caption(1, 6, 3, 2)
    fig = token_tree(["", "a", "b", "c"], [0, 0, 1, 2], ["root", "h1", "h2", "h3"], [1, 3], "d")
    colours = {c for t in fig.data for c in ([t.line.color] if t.line and t.line.color else [])}
    colours |= {c for t in fig.data if t.marker is not None and t.marker.color is not None
                for c in (t.marker.color if isinstance(t.marker.color, tuple) else [t.marker.color])}
    assert palette.EXTRA in colours and f"({palette.NAMES[palette.EXTRA]})" in caption
    assert "(blue)" not in caption and "longest accepted path from the root" in caption


def test_llma_and_prompt_lookup_are_told_apart_with_their_own_figures():
    from app.variants.guide import entries

    assert published.YANG_SPEEDUP.figure == "over 2×"
    text = next(t for h, t, _ in entries() if h.startswith("Prompt lookup"))
    assert "Saxena, 2023" in text and "Yang et al., 2023" in text and "reference documents" in text
    assert published.YANG_SPEEDUP.figure in text and published.SAXENA_SPEEDUP.figure in text
    row = methods.method("prompt_lookup").lesson
    assert "Saxena" in row.name and "LLMA" in row.note


def test_in_practice_says_a_token_outside_the_drafts_vocabulary_can_also_be_copied():
    at = open_page("practice.py")
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "only ever arrives" not in text
    assert "copied from earlier in the text" in text and "hybrid" in text


# ---- a useless draft: the bound computed, memory named, watch α --------------------------------------------------


@pytest.mark.parametrize("v", [1.0, 1.3])
def test_useless_draft_sentence_gives_the_bound_and_says_to_watch_alpha(v):
    s = CalcSettings(k=4, alpha_pct=70, draft_cost=0.13, verify_cost=v)
    text = calc_text.useless_draft_sentence(s)
    assert "safe to switch on" not in text and "small, bounded downside" not in text
    assert f"{calc_text.fmt(analytics.speedup(0.0, 4, 0.13, v))}× the plain speed" in text
    assert "KV cache" in text and "switch speculation off" in text


def test_home_key_insight_computes_what_a_useless_draft_costs_without_undefined_symbols():
    at = open_page()
    insight = next(s.value for s in at.success if "Key insight" in s.value)
    lesson = CalcSettings()
    worst = calc_text.fmt(analytics.speedup(0.0, lesson.k, lesson.draft_cost, lesson.verify_cost))
    assert f"{worst}× plain speed" in insight and worst == "0.66"  # the lesson's own K = 4, c = 0.13
    assert "K·c" not in insight and "(v − 1)" not in insight  # c and v are not defined on the home page
    assert "small and bounded downside" not in insight and "switch it off" in insight


def test_home_caption_says_the_pass_scored_the_grey_slots_and_discarded_them():
    """The grey slots are named as the chart's legend names them, "never checked" (issue 55), and the caption
    still says the pass scored them and threw the scores away."""
    caption = " ".join(c.value for c in open_page().caption)
    assert "scored" in caption and "never checked (grey)" in caption and "scores are discarded" in caption


def test_calculator_loop_caption_says_the_grey_scores_are_discarded():
    at = open_page("calculator.py")
    text = " ".join(c.value for c in at.caption)
    assert "never checked" not in text and "scores are discarded" in text
    intro = " ".join(m.value for m in at.markdown)
    assert "Four numbers decide" in intro and "Three numbers decide" not in intro


# ---- the variants page ------------------------------------------------------------------------------------------


def test_the_variants_table_is_one_corrected_table_and_a_note_names_each_correction():
    """Issue 61: the lesson's quoted columns beside "this app's correction" left the learner unsure which to trust.
    One table now says the right thing, in the app's words, and a note says where the lesson's table differs."""
    lookahead = methods.method("lookahead").lesson
    assert "whole window" in lookahead.note and "regenerate only failed tokens" not in lookahead.note.lower()
    assert "only the failed tokens" in lookahead.departs
    assert "lesson" not in methods.departures()  # the learner never sees the seed's table: no note may point at it
    medusa = methods.method("medusa_tree").lesson
    assert "405B" in medusa.departs and published.NVIDIA_MEDUSA_70B_SPEEDUP.figure in medusa.departs
    assert "typical acceptance" in medusa.note
    assert "405B" in methods.method("medusa_tree").claimed_speedup()  # the reported column gives the setting
    assert methods.method("early_exit").claimed_speedup()  # LayerSkip and Kangaroo report speedups
    rows = methods.variant_rows()
    assert [r["variant"] for r in rows] == [m.lesson.name for m in methods.lesson_methods()]
    assert not any("lesson" in column for r in rows for column in r)  # no column quotes the lesson
    note = methods.departures()
    assert all(m.label in note for m in methods.lesson_methods() if m.lesson.departs)
    assert "Draft model" not in note  # the lesson's row was right: nothing to say


def test_variants_guide_defines_eagle_terms_and_measures_it_against_the_standalone_draft():
    from app.variants.guide import EAGLE_DRAFT, entries

    eagle = next(t for h, t, _ in entries() if h.startswith("EAGLE"))
    assert "*hidden features*" in eagle and "*output head*" in eagle
    assert "Features are easier to predict than tokens, so one layer goes far" not in eagle
    for draft in (EAGLE_DRAFT, defaults.CLASSIC_DRAFT):
        assert f"{machine.heldout_alpha(draft, copy=False):.0%}" in eagle


def test_early_exit_is_not_called_a_cautionary_case_and_names_trained_self_speculation():
    from app.variants.guide import entries

    text = next(t for h, t, _ in entries() if h.startswith("Early exit"))
    assert "cautionary" not in text
    assert all(name in text for name in ("LayerSkip", "Draft & Verify", "Kangaroo"))
    page = (ROOT / "pages" / "variants.py").read_text(encoding="utf-8")
    assert "cautionary" not in page


def test_medusa_entry_names_typical_acceptance_and_medusa_2():
    from app.variants.guide import entries

    text = next(t for h, t, _ in entries() if h.startswith("Medusa"))
    assert "typical acceptance" in text and "not follow" not in text
    assert "no longer follows the target's" in text and published.MEDUSA_2_SPEEDUP.figure in text


def test_the_variants_page_title_does_not_count_four():
    from app.layout import all_pages

    assert all("Four variants" not in p.title for p in all_pages())
    at = open_page("variants.py")
    assert not at.exception and "Four" not in at.title[0].value


# ---- the calculator's numbers and the published figures ---------------------------------------------------------


def test_backsolved_alphas_are_called_lower_bounds_not_the_lessons_source():
    from tests.conftest import open_tab

    at = open_page("calculator.py")
    open_tab(at, "Backwards from a paper")
    text = " ".join(m.value for m in at.markdown)
    assert "come out of these published numbers" not in text
    assert "lower bounds" in text


def test_one_gpu_ridge_point_everywhere():
    from app.calculator import v_curve
    from app.settings import VerifySettings

    assert roofline.A100.ridge_tokens < roofline.GPU_RIDGE < roofline.H100.ridge_tokens
    assert VerifySettings().gpu_ridge == roofline.GPU_RIDGE
    gpu = [r for name, r in v_curve.MODELS.items() if "GPU" in name]
    assert gpu == [float(roofline.GPU_RIDGE)]
    page = (ROOT / "pages" / "verify.py").read_text(encoding="utf-8")
    assert "a few hundred" not in page


def test_verify_page_explains_prefill_the_kv_cache_and_the_ridge_before_measuring():
    at = open_page("verify.py")
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "**KV cache**" in text and "**Prefill**" in text
    assert "*ridge point*" in text and "*Serving many requests*" in text
    serving = " ".join(m.value for m in open_page("serving.py").markdown)  # the datasheets' R, worked out once
    assert f"R = {roofline.GPU_RIDGE}" in serving
    assert f"{roofline.H100.ridge_tokens:.0f}" in serving and f"{roofline.A100.ridge_tokens:.0f}" in serving


def test_leviathan_is_dated_as_venue_and_preprint():
    assert published.LEVIATHAN_2023.when == "ICML 2023; arXiv 2022"
    at = open_page()
    assert any("Leviathan et al. (ICML 2023; arXiv 2022)" in m.value for m in at.markdown)


def test_nvidias_medusa_figure_names_the_405b_model():
    assert "405B" in published.NVIDIA_MEDUSA_SPEEDUP.setting
    assert "70B" in published.NVIDIA_MEDUSA_70B_SPEEDUP.setting
    claims = methods.method("medusa_tree").claimed_speedup()
    assert "405B" in claims and "70B" in claims


def test_live_drafter_choice_says_the_bundled_draft_also_copies():
    assert "copies" in methods.LIVE_DRAFTERS["draft_model"]


def test_gpu_projection_labels_the_cpu_draft_cost():
    source = (ROOT / "app" / "live" / "why_speed.py").read_text(encoding="utf-8")
    assert "measured on this CPU" in source
    at = open_page("live.py")
    assert not at.exception
    projection = [c.value for c in at.caption if c.value.startswith("Projection, not a measurement")]
    assert projection and all("measured on this CPU (c = " in p for p in projection)


def test_domain_results_count_copied_guesses():
    from specsim.lesson import domains

    r = domains.DomainResult("echo", 2, accepted=10, checked=12, tokens=20, loops=8, alpha=10 / 12,
                             tokens_per_loop=2.5, copied_kept=7)
    assert "echo 7 of 10" in domains.copied_sentence([r])
    assert domains.copied_sentence([]) == "No guess was kept, copied or drafted."
