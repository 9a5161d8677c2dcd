"""Issue 55, round 2: the review's remaining errors and misleading passages, one test per fix, each failing on the
old text. (Errors 1, 2, 4–7, 9–11 are pinned in tests/test_lesson_errors.py.)"""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import ROOT, open_page


def _knowledge() -> dict:
    from specsim.lesson import quiz

    return {q.id: q for q in quiz.load_knowledge()}


def _interview() -> dict:
    raw = json.loads((ROOT / "assets" / "interview" / "questions.json").read_text(encoding="utf-8"))
    return {q["id"]: q for q in raw["questions"]}


@pytest.fixture(scope="module")
def hood_page():
    at = open_page("hood.py")
    assert not at.exception
    return at


def _markdown(at) -> str:
    return " ".join(m.value for m in at.markdown)


# ---- error 3: trees, two multi-candidate rules, and which applies when ---------------------------------------


def _pairs(n: int = 40, vocab: int = 5):
    rng = np.random.default_rng(55)
    return [(rng.dirichlet(np.ones(vocab)), rng.dirichlet(np.ones(vocab))) for _ in range(n)]


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_eagle2_rule_on_distinct_top_k_keeps_the_target_distribution_exactly(k):
    from specsim.variants import tree_rules

    for p, q in _pairs():
        assert np.allclose(tree_rules.eagle2(p, q, k), p, atol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_specinfer_rule_on_iid_draws_from_q_keeps_the_target_distribution_exactly(n):
    from specsim.variants import tree_rules

    for p, q in _pairs(12, 4):
        assert np.allclose(tree_rules.specinfer(p, q, n), p, atol=1e-12)


def test_specinfer_rule_on_distinct_top_k_candidates_does_not_keep_the_target_distribution():
    """The mistake the hood used to teach for EAGLE-2: min(1, p/q) plus the residual on the draft's top-k tokens."""
    from specsim.variants import tree_rules

    biased = [np.abs(tree_rules.specinfer_rule_on_top_k(p, q, 2) - p).max() for p, q in _pairs()]
    assert max(biased) > 0.05 and sum(b > 1e-6 for b in biased) > len(biased) // 2
    ex = tree_rules.specinfer_rule_on_top_k(tree_rules.EXAMPLE_P, tree_rules.EXAMPLE_Q, tree_rules.EXAMPLE_CANDIDATES)
    assert not tree_rules.is_target(ex, tree_rules.EXAMPLE_P)
    # k = 1 is the one-slot rule on a token that was chosen, not drawn: biased too
    assert max(np.abs(tree_rules.specinfer_rule_on_top_k(p, q, 1) - p).max() for p, q in _pairs()) > 0.05


def test_a_wrong_rule_injected_fails_the_exact_check():
    """The check can fail: EAGLE-2's rule without the renormalisation after a refusal is not p."""
    from specsim.variants import tree_rules

    p, q = tree_rules.EXAMPLE_P, tree_rules.EXAMPLE_Q
    cands = tree_rules.top_k(q, 2)
    out, reach = np.zeros(len(p)), 1.0
    for x in cands:
        out[x] += reach * p[x]
        reach *= 1 - p[x]
    out += reach * np.asarray(p)  # sampling the untouched p at the end
    assert not tree_rules.is_target(out, p)


def test_the_hood_teaches_both_tree_rules_with_a_computed_example(hood_page):
    from specsim.variants import tree_rules

    text = _markdown(hood_page)
    assert "(SpecInfer; EAGLE-2): try the candidates at a node one after another, each accepted with min(1" not in text
    for fact in ("Candidates drawn independently from the draft's q", "SpecInfer, Miao et al., 2024",
                 "The draft's distinct top-k tokens", "EAGLE-2, Li et al., 2024",
                 "with probability p(x); after a refusal set p(x) = 0 and renormalise", "Mixing them up"):
        assert fact in text, fact
    p, q, k = tree_rules.EXAMPLE_P, tree_rules.EXAMPLE_Q, tree_rules.EXAMPLE_CANDIDATES
    wrong = tree_rules.specinfer_rule_on_top_k(p, q, k)
    assert ", ".join(f"{n} {x:.2f}" for n, x in zip("ABCD", wrong, strict=True)) + "), not p" in text


def test_knowledge_tree_rule_asks_which_rule_fits_distinct_top_k_candidates():
    q = _knowledge()["tree-rule"]
    key = q.correct_option
    assert "chance p(x)" in key and "zero p(x)" in key and "min(1" not in key
    specinfer = next(o for o in q.options if "norm(max(0, p − q))" in o)
    assert q.options.index(specinfer) != q.answer
    assert "drawn independently from q" in q.explanation and "EAGLE's reference implementation" in q.explanation
    assert "as SpecInfer and EAGLE-2 do" not in q.explanation


@pytest.mark.parametrize("qid", ["tree", "lossy_lossless"])
def test_interview_tree_answers_give_each_rule_its_candidates(qid):
    answer = _interview()[qid]["answer"]
    assert "as in SpecInfer and in EAGLE-2" not in answer and "as SpecInfer and EAGLE-2 do" not in answer
    assert "SpecInfer" in answer and "EAGLE-2" in answer
    assert "distinct top-k" in answer and "p(x)" in answer and "min(1, p/q)" in answer


# ---- error 8: every "Turn it on" snippet names the release it was checked against -------------------------------


def test_every_snippet_names_the_release_it_was_checked_against():
    import re

    from specsim.lesson import serving

    text = _markdown(open_page("practice.py"))  # "Turn it on" moved from Under the hood to In practice
    assert "Each snippet was checked against the tool's documentation;" not in text
    for s in serving.SNIPPETS:
        assert s.release.startswith(s.tool), (s.tool, s.release)
        assert f"**{s.tool}: {s.method}**, checked against {s.release}" in text
        if s.tool == "vLLM":
            assert s.release in (serving.VLLM_RELEASE, serving.VLLM_MTP_RELEASE, serving.VLLM_EAGLE3_RELEASE)
            assert re.fullmatch(r"vLLM v\d+\.\d+\.\d+", s.release)
            assert f"/en/{s.release.removeprefix('vLLM ')}/" in s.source  # the versioned page, not "latest"
        if s.tool in ("transformers", "SGLang"):
            assert re.search(r"\d+\.\d+\.\d+$", s.release), s.release


def test_the_transformers_release_is_the_one_the_app_pins():
    from specsim.lesson import serving

    pins = dict(line.split("#")[0].strip().split("==") for line in
                (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines() if "==" in line)
    assert serving.TRANSFORMERS_RELEASE == f"transformers {pins['transformers']}"


def test_vllm_draft_model_snippet_uses_the_current_method_form():
    from specsim.lesson import serving

    snippet = next(s for s in serving.SNIPPETS if s.tool == "vLLM" and s.method == "draft model")
    code = snippet.code.replace("\n", " ")
    assert '"method": "draft_model"' in code and '"model": "Qwen/Qwen3-0.6B"' in code
    assert '"num_speculative_tokens": 5' in code and "facebook/opt" not in code
    assert "speculative_model=" not in code


# ---- misleading passages -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def home_page():
    at = open_page()
    assert not at.exception
    return at


def test_home_says_greedy_keeps_the_tokens_and_sampling_the_distribution(home_page):
    text = _markdown(home_page)
    assert "without changing a single token" not in text
    assert "The book comes out word for word as the author would have dictated it alone" not in text
    assert "the same tokens under greedy decoding (in exact arithmetic" in text
    assert "text drawn from the same distribution when sampling" in text


def test_home_caption_calls_the_grey_slots_never_checked_as_the_chart_does(home_page):
    from app.calculator.figures import iteration_figure

    caption = " ".join(c.value for c in home_page.caption)
    assert "discarded (grey)" not in caption and "never checked (grey)" in caption
    assert any(t.name == "never checked" for t in iteration_figure(4, 2).data)


def test_home_says_chens_draft_was_shallow_because_latency_follows_depth(home_page):
    from specsim.core.published import CHEN_2023

    text = _markdown(home_page)
    assert CHEN_2023.draft_layers == 8 and CHEN_2023.target_layers == 80
    assert f"{CHEN_2023.draft_layers} layers against the target's {CHEN_2023.target_layers}" in text
    assert "the layers run one after another more than the parameter count" in text


def test_the_hood_mask_caption_says_in_exact_arithmetic(hood_page):
    caption = " ".join(c.value for c in hood_page.caption)
    assert "So the distribution at row i is exactly what plain decoding would compute" not in caption
    assert "in exact arithmetic" in caption


def test_variants_intro_says_eagle_runs_too():
    import ast

    source = (ROOT / "pages" / "variants.py").read_text(encoding="utf-8")
    strings = " ".join(n.value for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Constant)
                       and isinstance(n.value, str))
    assert "the lesson's four and early exit run" not in strings
    assert "all six run" in strings and "(EAGLE)" in strings
    from specsim import methods

    assert methods.method("eagle") is not None  # and it does run in the comparison


def test_medusa_heads_are_not_counted_with_k():
    from app.variants import guide as variant_guide
    from app.variants import guide_figures

    medusa = next(text for heading, text, _ in variant_guide.entries() if heading.startswith("Medusa"))
    assert "Bolt K small heads" not in medusa and "not the K of a chain" in medusa
    assert "K small heads" not in (guide_figures.medusa_figure.__doc__ or "")


def test_the_roofline_is_defined_where_its_r_is_first_offered():
    from app import state
    from app.calculator import v_curve
    from tests.conftest import open_tab

    at = open_tab(open_page("calculator.py"), state.CALC_TABS[2])
    assert not at.exception
    text = _markdown(at)
    assert "v(n) = max(1, n / R)" in text and "ridge point R" in text
    assert any("roofline, R =" in name for name in v_curve.MODELS)


def test_quiz_questions_state_the_check_cost_they_assume():
    quiz = _knowledge()
    for qid in ("speedup-measured-v", "break-even", "k-choice"):
        assert "v = " in quiz[qid].prompt, qid
    assert "max(1, T / R)" in quiz["batch-speedup"].prompt


def test_interview_links_point_to_the_page_that_teaches_the_answer():
    interview = _interview()
    assert interview["alpha_tv"]["page"] == "unchanged"  # α = 1 − TV is worked on Why the output is unchanged
    assert interview["tree"]["page"] == "hood"  # the two tree rules are taught under the hood


def test_under_the_hood_opens_on_the_prose_recording():
    """It opened on the echo recording, where nothing is refused, no cache is cropped and no residual drawn."""
    from app import state
    from specsim.lesson import hood

    at = open_page("hood.py")
    assert not at.exception
    assert hood.OPENING_RECORDING == "prose_run"
    assert at.radio(key=state.widget_key(state.HOOD_RUN)).value == "prose_run"


def test_the_calculators_position_box_opens_on_the_prose_recording_at_its_own_c():
    """It opened on the echo recording (r = 1.00 everywhere) priced at the slider's c = 0.13: "best K is 16"."""
    from app import recording
    from app.calculator import by_position
    from specsim.measure import analytics, costmodel
    from tests.conftest import open_tab

    at = open_tab(open_page("calculator.py"), "Choosing K")
    assert not at.exception
    run = recording.shipped_runs()["prose_run"]
    model = costmodel.cost_model([run.spec], [run.plain])
    line = next(m.value for m in at.markdown if m.value.startswith("Measured on"))
    assert line.startswith(f"Measured on {by_position.recording_label('prose_run', run)}")
    assert f"this run's own measured c = {model.draft_cost:.2f} and v = {model.verify_cost:.2f}" in line
    rates, _, own = by_position.sources()[by_position.recording_label("prose_run", run)]
    speeds = {k: analytics.speedup_by_position(rates, k, *own) for k in range(analytics.K_MIN, analytics.K_MAX + 1)}
    best = analytics.best_k(speeds)
    assert f"the best K is **{best}** ({speeds[best]:.2f}×) by position" in line
    assert best < analytics.K_MAX


# ---- misleading: "High T flattens both, and the overlap rises" (Why unchanged, interview Q15) ---------------------


def test_the_measured_pair_keeps_fewer_guesses_at_t1_than_greedy():
    """The committed measurement (scripts/measure_overlap.py): a real pair, its α highest at low T, not at high T."""
    import importlib.util

    from specsim.lesson import unchanged

    m = unchanged.measured_overlap()
    assert m.positions > 1000 and m.prompts >= 40
    assert all(0.0 <= x <= 1.0 for x in m.accepted_mass)
    assert m.greedy > m.at(1.0) > m.at(2.0)  # the toy's rise does not carry over
    assert m.highest[0] < 1.0
    assert all(len(curve) == len(m.temperatures) for curve in m.domains.values()) and len(m.domains) >= 5
    spec = importlib.util.spec_from_file_location("measure_overlap", ROOT / "scripts" / "measure_overlap.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert m.temperatures == script.TEMPERATURES  # the file is the script's output, not typed


def test_why_unchanged_shows_the_measured_curve_beside_the_toy_and_corrects_the_sentence():
    from app import state
    from specsim.lesson import unchanged

    at = open_page("unchanged.py")
    assert not at.exception
    text = _markdown(at)
    assert "High T flattens both, and the overlap rises" not in text
    m = unchanged.measured_overlap()
    assert "Real pairs usually go the other way" in text
    assert (f"α = {m.greedy:.3f} greedy, {m.at(1.0):.3f} at T = 1 and {m.at(2.0):.3f} at T = 2" in text)
    assert f"{m.positions:,} positions of the target's greedy answers to {m.prompts} held-out prompts" in text
    assert "T = 1 keeps fewer guesses than greedy here" in text
    chart = next(c for c in at.get("plotly_chart") if c.proto.id.endswith(state.PQ_MEASURED_CHART))
    names = [trace["name"] for trace in json.loads(chart.proto.spec)["data"]]
    assert f"greedy (T = 0): {m.greedy:.3f}" in names and f"T = 1: {m.at(1.0):.3f}" in names
    assert any(c.proto.id.endswith(state.PQ_TEMPERATURE_CHART) for c in at.get("plotly_chart"))  # the toy stays


def test_interview_q15_says_real_pairs_keep_more_greedy_with_measured_figures():
    from specsim.lesson import interview, unchanged

    raw = _interview()["alpha_tv"]["answer"]
    assert "{ov_real_greedy} greedy, {ov_real_t1} at T = 1" in raw  # named, never typed
    answer = {q.id: q for q in interview.load()}["alpha_tv"].answer
    m = unchanged.measured_overlap()
    assert f"α = {m.greedy:.2f} greedy, {m.at(1.0):.2f} at T = 1 and {m.at(2.0):.2f} at T = 2" in answer
    assert "usually higher greedy than at T = 1" in answer


# ---- what production uses now, item 2: the mean acceptance length τ named beside α and tokens per loop ------------


def test_the_calculators_formulas_name_tau_beside_alpha():
    from app import state
    from specsim.measure import analytics
    from tests.conftest import open_tab

    at = open_tab(open_page("calculator.py"), "The formulas")
    assert not at.exception
    text = _markdown(at)
    a, k = at.session_state[state.CALC_ALPHA_PCT] / 100, at.session_state[state.CALC_K]
    assert "**3. Tokens per loop, τ.**" in text
    assert f"here α = {a:.2f} and τ = {float(analytics.tokens_per_loop(a, k)):.2f} tokens per loop" in text
    assert "mean acceptance length τ" in text and "some papers count only the kept guesses, E[j]" in text
    assert any(r"\tau = E[j] + 1" in x.value for x in at.get("latex"))


def test_the_hood_calls_the_runs_tokens_per_loop_its_tau(hood_page):
    assert "(its mean acceptance length τ, as papers and vLLM report it)" in _markdown(hood_page)


def test_interview_tau_runs_a_reported_tau_back_to_alpha():
    from specsim.lesson import interview
    from specsim.measure import analytics

    q = {x.id: x for x in interview.load()}["tau"]
    assert q.page == "calculator"
    t = interview.TAU
    alpha = float(q.answer.split("means α = ")[1].split()[0])
    assert float(analytics.tokens_per_loop(alpha, t["k"])) == pytest.approx(t["tau"], abs=0.02)
    exact = interview.figures()["tau_alpha"]
    assert f"τ = {t['tau']:g} at K = {t['k']} means α = {exact}" in q.answer
    other = float(analytics.tokens_per_loop(float(exact), t["k_other"]))
    assert abs(float(interview.figures()["tau_other"]) - other) < 0.02
    assert "only comparable at the K" in q.answer and "E[j] + 1" in q.answer
