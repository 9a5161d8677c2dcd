"""Errors a review of the app against the lesson found, one test per fix, each checked where the text or figure
is produced (pure builders, assets, and the pages through AppTest)."""

from __future__ import annotations

import pytest

from app.calculator import text as calc_text
from app.settings import CalcSettings
from specsim.measure import analytics
from tests.conftest import ROOT, open_page

# ---- a useless draft costs K·c + (v − 1), the drafting time alone only at v = 1 ----------------------


@pytest.mark.parametrize(("k", "c", "v"), [(4, 0.13, 1.0), (2, 0.05, 1.0), (4, 0.13, 1.4), (8, 0.3, 2.0)])
def test_useless_draft_sentence_computes_which_case_applies(k, c, v):
    s = CalcSettings(k=k, draft_cost=c, verify_cost=v)
    text = calc_text.useless_draft_sentence(s)
    loss = analytics.useless_draft_loss(k, c, v)
    assert loss == pytest.approx(k * c + (v - 1))
    assert f"{loss:.2f} target passes per loop" in text
    assert f"{analytics.speedup(0.0, k, c, v):.2f}×" in text
    if v == 1.0:
        assert "only the drafting time" in text
    else:
        assert "K·c + (v − 1)" in text and f"v − 1 = {v - 1:.2f}" in text
        assert "nothing else" not in text and "only the drafting time" not in text


# ---- the loop figure: only the first rejection is red, the slots after it grey (as on the live page) -------


@pytest.mark.parametrize(("k", "prefix"), [(4, 2.0), (6, 0.0), (3, 3.0), (5, 1.2)])
def test_loop_figure_draws_never_checked_slots_grey(k, prefix):
    from app import palette
    from app.calculator.figures import expected_kept_slots, iteration_figure

    fig = iteration_figure(k, prefix)
    kept = expected_kept_slots(prefix, k)
    colour_of = {}
    for t in fig.data:
        if t.y is not None and len(t.y) and all(y == 1 for y in t.y):  # the verdict row
            for x in t.x:
                colour_of[x] = t.marker.color
    assert [colour_of[x] for x in range(1, k + 1)] == (
        [palette.KEPT] * kept + [palette.REJECTED] * min(1, k - kept) + [palette.MUTED] * max(0, k - kept - 1))


# ---- the verification pass scores K + 1 positions ------------------------------------------------------


def test_home_verify_step_scores_k_plus_one_positions():
    at = open_page()
    steps = next(m.value for m in at.markdown if "**Verify.**" in m.value)
    verify = steps.split("**Verify.**")[1].split("\n")[0]
    assert "K + 1 positions" in verify and "all K proposed positions" not in verify


# ---- live alternatives: on an exact probability tie the token the target chose comes first ------------------


def _tied_iteration(kept_first_in_record: bool):
    """Slot t+1 kept ' the' (id 10) at p = 0.214, tied exactly with ' a' (id 14), as bfloat16 ties happen."""
    from dataclasses import replace

    from tests.live_traces import hand_trace, tp

    it = hand_trace().iterations[0]
    tie = (tp(10, 0.214), tp(14, 0.214)) if kept_first_in_record else (tp(14, 0.214), tp(10, 0.214))
    slots = list(it.slots)
    slots[0] = replace(slots[0], p=0.214, target_top=(*tie, tp(19, 0.1)),
                       draft_top=(tp(22, 0.4), tp(10, 0.4)))  # the draft's proposal ties too, recorded second
    return replace(it, slots=tuple(slots))


@pytest.mark.parametrize("kept_first_in_record", [True, False])
def test_alternatives_put_the_kept_token_first_on_a_tie(kept_first_in_record):
    from app import palette
    from app.live import figures as live

    it = _tied_iteration(kept_first_in_record)
    f = live.alternatives_figure(it, 1)
    target, draft = f.data
    assert f.layout.yaxis.ticktext[:2] == ("␣the", "␣a")
    assert target.marker.color[0] == palette.KEPT
    assert f.layout.yaxis2.ticktext[0] == "␣the"  # the draft's own proposal first among its tied tokens
    assert list(target.x) == sorted(target.x, reverse=True)


# ---- the variants page names the dtype the bundled target really loads in --------------------------------


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


# ---- the variants guide names the form the live page really runs by default ------------------------------


def test_variant_guide_names_the_live_default_once_and_rightly():
    import json
    from pathlib import Path

    from app.variants import guide as variant_guide
    from specsim.core import defaults

    kind = json.loads((Path(defaults.DEFAULT_DRAFT) / "draft.json").read_text(encoding="utf-8"))["kind"]
    by_form = {"eagle": "EAGLE", "standalone": "Draft model"}
    expected = by_form[kind] if defaults.DEFAULT_DRAFTER == "draft_model" else None
    claims = [(heading, text) for heading, text, _ in variant_guide.entries()
              if "live page's default" in heading or "live page runs this form" in text]
    assert len(claims) == 1 and expected is not None and claims[0][0].startswith(expected)
    draft_model_text = next(text for heading, text, _ in variant_guide.entries() if heading.startswith("Draft model"))
    assert ("live page runs this form" in draft_model_text) == (kind == "standalone")


@pytest.mark.parametrize("form", ["standalone", "eagle", "prompt_lookup", "early_exit"])
def test_variant_guide_moves_the_claim_with_the_default(form):
    from app.variants import guide as variant_guide

    entries = variant_guide.guide_entries(form)
    marked = [heading for heading, _, _ in entries if heading.endswith(variant_guide.LIVE_DEFAULT)]
    assert len(marked) == 1
    said = [heading for heading, text, _ in entries if "live page runs this form" in text]
    assert said == (marked if form == "standalone" else [])


# ---- verify page, batch chart: the B label sits at B on the log axis, and the lines are in the legend -------


@pytest.mark.parametrize("current", [1, 4, 64, 256])
def test_batch_chart_labels_the_current_batch_where_it_is_and_in_the_legend(current):
    import math

    from app.serving.figures import batch_figure
    from specsim.lesson import roofline

    batches = (1, 2, 4, 8, 16, 32, 64, 128, 256)
    fig = batch_figure(batches, {"R = 256": [roofline.batched_speedup(0.7, 4, 0.13, b, 256) for b in batches]},
                       current)
    assert fig.layout.xaxis.type == "log"
    label = next(a for a in fig.layout.annotations if a.text == f"B = {current}")
    assert label.x == pytest.approx(math.log10(current))  # plotly places log-axis annotations at log10(x)
    named = {t.name: t for t in fig.data if t.showlegend is not False}
    line = next(t for name, t in named.items() if name.endswith(f"B = {current}"))
    assert set(line.x) == {current}
    assert "plain decoding (1×)" in named


# ---- the papers' own speedups, where the app cites the papers --------------------------------------------

PAPER_FIGURES = {  # what the papers report, checked against specsim.core.published
    "LEVIATHAN_SPEEDUP": ("2–3×", "T5-XXL"), "CHEN_SPEEDUP": ("2–2.5×", "Chinchilla 70B"),
    "FU_SPEEDUP": ("up to 1.8×", "Fu et al., 2024"), "MEDUSA_1_SPEEDUP": ("over 2.2×", "Medusa-1"),
}


def test_published_speedups_are_the_papers_figures():
    from specsim.core import published

    for name, (figure, where) in PAPER_FIGURES.items():
        speedup = getattr(published, name)
        assert speedup.figure == figure and where in speedup.claim


def test_home_states_the_papers_speedups():
    from specsim.core import published

    text = " ".join(m.value for m in open_page().markdown)
    assert f"{published.LEVIATHAN_SPEEDUP.figure} on **T5-XXL**" in text
    assert f"{published.CHEN_SPEEDUP.figure} faster" in text and "Chinchilla 70B" in text
    assert published.FU_SPEEDUP.claim in text and published.MEDUSA_1_SPEEDUP.claim in text
    assert "a similar gain" not in text


def test_variants_table_states_the_papers_speedups():
    from specsim.core import published

    at = open_page("variants.py")
    table = at.table[0].value
    claims = dict(zip(table["variant"], table["reported speedup (papers)"], strict=True))
    from specsim import methods

    row = {key: methods.method(key).lesson.name for key in published.SPEEDUPS}
    for key, speedups in published.SPEEDUPS.items():
        for s in speedups:
            assert s.claim in claims[row[key]]
    assert published.LEVIATHAN_SPEEDUP.figure in claims[row["draft_model"]]
    assert published.CHEN_SPEEDUP.figure in claims[row["draft_model"]]


# ---- the knowledge quiz -------------------------------------------------------------------------------


def _quiz():
    from specsim.lesson import quiz

    return {q.id: q for q in quiz.load_knowledge()}


def _text(q) -> str:
    return " ".join([q.prompt, q.explanation, *q.options])


def test_identity_question_does_not_credit_float32():
    """The app's own check (README, tests/test_invariant.py): stock float32 logits differ between a one-token and
    an n-token pass at every position; the position-invariant bfloat16 path differs at none. The quiz puts a
    greedy mismatch on the kernels, never on a dtype."""
    import torch

    from specsim.core import models

    q = _quiz()["greedy-numerics"]
    assert "best checked in float32" not in _text(q)
    assert "position- or batch-invariant" in q.explanation and "not a property of the method or the dtype" in (
        q.explanation)
    assert not any("float32" in o for o in q.options)
    assert "not guaranteed" in models.dtype_reason("cpu", torch.float32, invariant=False)
    assert "is guaranteed" in models.dtype_reason("cpu", torch.bfloat16, invariant=True)


def test_break_even_question_gives_the_general_cost():
    q = _quiz()["break-even"]
    assert "K·c + v" in q.explanation and "v = " in q.prompt
    assert "drafting time and nothing else" not in q.explanation


def test_lookahead_question_describes_jacobi_over_the_whole_window():
    q = _quiz()["lookahead"]
    assert "only the tokens that failed" not in q.correct_option and "only the failed" not in q.explanation
    assert "n-gram" in q.correct_option and "n-gram" in q.explanation
    assert "all of them in parallel" in q.explanation
    assert not any("only the" in o.lower() and ("refused" in o or "failed" in o) for o in q.options)


def test_the_quiz_does_not_claim_code_is_accepted_most():
    """The app's own domain measurement does not rank code first, so the quiz must not either."""
    for other in _quiz().values():
        assert "highest acceptance rate" not in other.prompt
        assert "where acceptance tends to be highest" not in _text(other)
        assert "code" not in other.correct_option.lower()


def test_leviathan_et_al_is_dated_icml_2023_and_arxiv_2022_everywhere():
    import re

    from specsim.core import published
    from tests.conftest import ROOT

    assert published.LEVIATHAN_2023.year == 2023 and "2023" in published.LEVIATHAN_2023.citation
    texts = {q.id: _text(q) for q in _quiz().values()}
    for folder in ("pages", "app", "specsim"):
        for path in (ROOT / folder).rglob("*.py"):
            texts[str(path)] = path.read_text(encoding="utf-8")
    wrong = [where for where, text in texts.items() if re.search(r"Leviathan[^()\n]{0,40}\(?(?<!arXiv )2022", text)]
    assert not wrong


# ---- readability of the figures ---------------------------------------------------------------------------


def test_timeline_legend_sits_above_the_plot_clear_of_the_x_ticks():
    from app.live.figures import timeline_figure
    from tests.live_traces import hand_plain, hand_trace

    f = timeline_figure(hand_trace(), hand_plain())
    legend = f.layout.legend
    assert legend.orientation == "h" and legend.yanchor == "bottom" and legend.y >= 1.0
    assert f.layout.margin.t >= 90  # room for the title and the legend above the bars


def test_bar_labels_stay_level_and_small_bars_carry_none():
    from app.live import figures as live
    from app.live import why_figures as why
    from specsim.measure.costmodel import CostModel
    from tests.live_traces import hand_trace

    def loop(c: float) -> CostModel:
        return CostModel(k_max=4, k=4, draft_passes=4,
                         alpha=0.7, tokens_per_loop=float(analytics.tokens_per_loop(0.7, 4)),
                         plain_pass_s=0.01, draft_cost=c, verify_cost=1.2, verify_cost_raw=1.2, other_cost=0.0,
                         plain_tokens_per_s=1.0, spec_tokens_per_s=1.0)

    tiny = loop(0.005)
    fig = why.loop_cost_figure(tiny)
    draft = next(t for t in fig.data if t.name.endswith("(K·c)"))
    assert list(draft.text) == ["", "", ""]  # 0.02 passes: too short a bar for "draft 0.02"
    assert fig.layout.uniformtext.mode == "hide"
    for t in fig.data:
        if t.text is not None:
            assert t.textangle == 0
    wide = why.loop_cost_figure(loop(0.3))
    assert next(t for t in wide.data if t.name.endswith("(K·c)")).text[1] == "draft 1.20"
    alternatives = live.alternatives_figure(hand_trace().iterations[0], 3)
    assert all(t.textangle == 0 for t in alternatives.data)


def test_bar_label_fits_or_is_left_out():
    from app.live.why_figures import bar_label

    assert bar_label("draft 0.52", 0.52, 3.0) == "draft 0.52"
    assert bar_label("draft 0.02", 0.02, 3.0) == ""
    assert bar_label("x", 0.0, 0.0) == ""


def test_round_two_errors_medusa_default_llama_cpp_flags_and_the_lookup_rules():
    """Issue 55, errors 5, 9 and 10: Medusa's default is greedy (typical acceptance is its sampling mode);
    llama.cpp's --draft-min is the shortest draft worth verifying and --draft-p-min its confidence stop;
    transformers' prompt lookup searches prompt and output and takes the earliest match, specsim's the latest."""
    import json

    from specsim.lesson import serving

    knowledge = (ROOT / "assets" / "quiz" / "knowledge.json").read_text(encoding="utf-8")
    interview = (ROOT / "assets" / "interview" / "questions.json").read_text(encoding="utf-8")
    for text in (knowledge, interview):
        json.loads(text)
        assert "default acceptance rule, typical acceptance" not in text
        assert "Medusa's default rule, typical acceptance" not in text
    assert "Medusa decodes greedily by default" in interview
    llama = next(s for s in serving.SNIPPETS if s.tool == "llama.cpp")
    assert "--draft-p-min" in llama.code and "bound K per loop" not in llama.note
    assert "shortest draft worth verifying" in llama.note and "confidence stop" in llama.note
    lookup = next(s for s in serving.SNIPPETS if s.tool == "transformers" and s.method == "prompt lookup")
    assert "earliest" in lookup.note and "latest" in lookup.note and "what was generated" in lookup.note


def test_backsolve_does_not_say_papers_rarely_report_acceptance():
    """Issue 55, error 4: Leviathan et al. tabulate α, and EAGLE, Medusa and vLLM report mean acceptance length."""
    from tests.conftest import open_tab

    at = open_tab(open_page("calculator.py"), "Backwards from a paper")
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "rarely acceptance rates" not in text
    assert "Leviathan et al. tabulate α" in text and "mean acceptance length τ" in text


def test_acceptance_by_position_can_rise_or_fall_and_the_hood_shows_the_measured_rates():
    """Issue 55, errors 2 and 6: "Real drafts are kept more often deeper into the draft" (the prose recording's rates
    fall: 0.58 / 0.54 / 0.29 / 0.00), and "Part of that is not about α" where the short loops explain none of it."""
    import math

    from app import state
    from specsim.lesson import hood, recorded
    from tests.conftest import open_tab

    prose = recorded.load(next(r.path for r in recorded.RECIPES if r.name == "prose_run")).spec
    rates = hood.position_model(prose).by_position
    assert any(b < a for a, b in zip(rates, rates[1:], strict=False) if not (math.isnan(a) or math.isnan(b)))
    at = open_page("hood.py")
    at.radio(key=state.widget_key(state.HOOD_RUN)).set_value("prose_run").run()
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "kept more often deeper" not in text and "Part of that is not about α" not in text
    assert "can rise" in text and "noisier" in text and "On this run they fall rather than rise" in text
    subscript = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
    for j, r in enumerate(rates, start=1):
        if not math.isnan(r):
            assert f"r{str(j).translate(subscript)} = {r:.2f} (" in text
    calc = open_tab(open_page("calculator.py"), "Choosing K")
    calc_text = " ".join(m.value for m in calc.markdown)
    assert "kept more often deeper" not in calc_text and "can rise along the draft" in calc_text
