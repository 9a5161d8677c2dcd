"""Interview questions: the topics the issue asks for, computed figures, links to real pages, and the page itself."""

from __future__ import annotations

import json
import re

import pytest

from app.layout import all_pages
from specsim.core.paths import INTERVIEW_QUESTIONS
from specsim.lesson import interview, roofline
from specsim.measure import analytics
from tests.conftest import open_page

REQUIRED = ("why verification is parallel", "when verification is not free (batching)", "why the output is unchanged",
            "choosing K", "draft/target vocabulary mismatch", "tree attention",
            "serving it (vLLM, TensorRT-LLM, llama.cpp)")


def test_twelve_to_twenty_four_questions_cover_every_required_topic():
    """Issue 55 added production's methods (MTP, EAGLE-2 and EAGLE-3) to the required topics' 12."""
    questions = interview.load()
    assert 12 <= len(questions) <= 24
    assert len({q.id for q in questions}) == len(questions)
    topics = {q.topic for q in questions}
    assert set(REQUIRED) <= topics, set(REQUIRED) - topics


def test_every_answer_links_to_a_page_of_the_app_and_types_no_figure_it_could_compute():
    paths = {p.url_path for p in all_pages()}
    for q in interview.load():
        assert q.page in paths, q.id
        assert "{" not in q.answer and "}" not in q.answer  # every named figure was filled in
        assert len(q.answer.split()) >= 50, q.id  # a worked answer, not a one-liner


def test_the_k_answer_quotes_the_closed_form():
    answer = next(q for q in interview.load() if q.id == "choose_k").answer
    best = analytics.optimal_k(0.7, 0.13)
    assert f"K = {best} with {float(analytics.speedup(0.7, best, 0.13)):.2f}×" in answer
    raw = INTERVIEW_QUESTIONS.read_text(encoding="utf-8")
    assert not re.search(r"\d\.\d\d×", raw)  # no typed speedups in the data file


def test_the_page_shows_every_question_and_each_answer_and_its_key_points_only_once_asked_for():
    """The key points outline an answer, so they stay hidden, with the model answers, until the learner presses the
    question's button (the old page showed the tick list under every question from the start)."""
    from app import state
    from app.quiz.interview import point_key

    at = open_page("interview.py")
    assert not at.exception
    questions = interview.load()
    text = "\n".join(m.value for m in at.main.markdown)
    for i, q in enumerate(questions, start=1):
        assert f"**{i}. {q.question}**" in text
        assert q.short not in text and q.answer not in text
        assert not any(q.points[0] == c.label for c in at.main.checkbox)
    assert not at.main.expander
    first, second = questions[0], questions[1]
    at.button(key=f"{state.IV_SHOW_BUTTON}{first.id}").click().run()
    assert not at.exception
    text = [m.value for m in at.main.markdown]
    assert f"**Model answer.** {first.short}" in text and first.answer in text
    assert [e.label for e in at.main.expander] == ["The long answer"]
    assert [c.label for c in at.main.checkbox] == list(first.points)
    assert at.checkbox(key=point_key(first.id, 0)) is not None
    assert second.short not in "\n".join(text)  # one question opened, not all


# ---- issue 61, item 6: a short model answer and key points to grade one's own answer by ------------------------


def test_every_question_has_a_short_model_answer_and_three_to_six_key_points():
    for q in interview.load():
        words = len(q.short.split())
        assert 20 <= words <= interview.SHORT_WORDS, (q.id, words)
        assert words < len(q.answer.split()) or len(q.answer.split()) <= interview.SHORT_WORDS, q.id
        low, high = interview.POINTS
        assert low <= len(q.points) <= high, (q.id, len(q.points))
        assert len(set(q.points)) == len(q.points)
        assert "{" not in q.short + "".join(q.points)


def test_the_short_answers_type_no_figure_they_could_compute():
    import json

    for raw in json.loads(INTERVIEW_QUESTIONS.read_text(encoding="utf-8"))["questions"]:
        assert not re.search(r"\d\.\d\d", raw["short"]), raw["id"]


def test_ticked_points_are_counted_and_survive_a_page_switch():
    from app import state
    from app.quiz.interview import point_key
    from tests.conftest import ROOT

    at = open_page("interview.py")
    q = interview.load()[2]
    at.button(key=f"{state.IV_SHOW_BUTTON}{q.id}").click().run()
    at.checkbox(key=point_key(q.id, 0)).check().run()
    at.checkbox(key=point_key(q.id, 2)).check().run()
    assert at.session_state[state.IV_TICKED][q.id] == frozenset({0, 2})
    assert f"Your answer made 2 of the {len(q.points)} key points." in [m.value for m in at.main.markdown]
    at.checkbox(key=point_key(q.id, 2)).uncheck().run()
    at.switch_page(str(ROOT / "pages" / "home.py")).run()
    at = at.switch_page(str(ROOT / "pages" / "interview.py")).run()
    assert not at.exception
    assert at.checkbox(key=point_key(q.id, 0)).value and not at.checkbox(key=point_key(q.id, 2)).value
    assert f"Your answer made 1 of the {len(q.points)} key points." in [m.value for m in at.main.markdown]
    assert any("Graded so far: 1 of" in c.value for c in at.main.caption)


def test_the_two_eagle_answers_name_the_same_tree_rule():
    """Issue 60: the distinct top-k rule is what EAGLE's reference implementation does; the EAGLE papers describe
    multi-round speculative sampling. Q17 and Q21 say so alike."""
    from specsim.lesson import interview

    questions = {q.id: q for q in interview.load()}
    for qid in ("lossy_lossless", "eagle3"):
        answer = questions[qid].answer
        assert "EAGLE's reference implementation" in answer and "distinct top-k" in answer, qid
        assert "the EAGLE papers describe multi-round speculative sampling" in answer, qid


def test_the_draft_choice_answer_gives_depth_over_parameters_its_condition():
    """Issue 60: a draft's time follows its depth more than its parameter count only where per-layer fixed costs
    dominate (launches for a small model, collectives for a sharded one, as in Chen et al.'s setup); a large enough
    model decoding memory-bound at batch 1 pays for the bytes it reads."""
    answer = {q.id: q for q in interview.load()}["draft_choice"].answer
    assert "Where per-layer fixed costs dominate (kernel launches for a small model, communication" in answer
    assert "Chen et al.'s distributed setup" in answer
    assert "memory-bound on one chip, pays instead for the bytes of weights it reads" in answer
    assert "It is not proportional to the parameter count" not in answer


def test_the_mtp_answer_prices_c_by_bytes_and_v_for_a_mixture_of_experts_and_confirms_nothing():
    """Issue 60: as on the Variants page, c by weights read (shared output head included), v from the MoE roofline at
    batch 1 with K = 1, the module's two inputs, and DeepSeek's 1.8× with no stated batch, read backwards."""
    from specsim.core import published as pub
    from specsim.lesson import moe, roofline

    answer = {q.id: q for q in interview.load()}["mtp"].answer
    low, high = pub.DEEPSEEK_MTP_ACCEPTANCE
    c = pub.DEEPSEEK_MTP_COST_BY_BYTES
    v = moe.DEEPSEEK_V3.verify_cost(1, 1, roofline.GPU_RIDGE)
    assert 0.03 < c < 0.05 and v > 1.2
    assert f"c ≈ ({pub.DEEPSEEK_MTP_ACTIVE_PARAMS_B:g} − {pub.DEEPSEEK_V3_EMBEDDING_PARAMS_B:g}) / " \
           f"{pub.DEEPSEEK_V3_ACTIVE_PARAMS_B:g} = {c:.3f}, not 1/{pub.DEEPSEEK_V3_LAYERS}" in answer
    assert "shared output head" in answer and "the embedding of the next token" in answer
    assert "mixture of experts" in answer and "v = 1 does not hold at small batch" in answer
    assert f"puts v at {v:.2f} for a single request" in answer
    assert (f"gives only {analytics.speedup(low, 1, c, v):.2f}–{analytics.speedup(high, 1, c, v):.2f}×"
            in answer)
    assert f"gives no batch size for its {pub.DEEPSEEK_MTP_SPEEDUP.figure}" in answer
    assert "large-batch serving system" not in answer and "DeepSeek measured" not in answer
    loop = f"{(1 + low) / pub.DEEPSEEK_MTP_SPEEDUP.high:.2f}–{(1 + high) / pub.DEEPSEEK_MTP_SPEEDUP.high:.2f}"
    assert f"a loop cost {loop} plain steps" in answer


def test_the_alpha_answer_says_its_temperatures_were_measured_on_greedy_answers():
    """Issue 60: α against temperature was measured on the positions of the target's greedy answers."""
    from specsim.lesson.unchanged import measured_overlap

    answer = {q.id: q for q in interview.load()}["alpha_tv"].answer
    m = measured_overlap()
    assert f"at the {m.positions:,} positions of the target's greedy answers to {m.prompts} held-out prompts" in answer
    assert "the same greedy text read at every T" in answer


def test_the_choose_k_answer_states_the_marginal_rule_that_finds_the_peak():
    """A review found the answer's rule ("another guess pays while α^i outweighs another draft pass") stops at K = 5
    where the peak is K = 4 (α = 0.7, c = 0.13). Guess K + 1 pays while α^(K+1) / c exceeds the current speedup."""
    from specsim.measure import analytics

    q = {q.id: q for q in interview.load()}["choose_k"]
    assert "α^(K+1) / c" in q.answer and "outweighs another draft pass" not in q.answer
    for alpha in (0.5, 0.7, 0.9):
        for c in (0.05, 0.13, 0.3):
            k = 1
            while k < analytics.K_MAX and alpha ** (k + 1) / c > analytics.speedup(alpha, k, c, 1.0):
                k += 1
            assert k == analytics.optimal_k(alpha, c, 1.0)


def test_every_key_point_is_made_by_the_short_answer():
    """A learner grades their answer against the key points and checks it against the short model answer, so the
    short answer makes every point: at least 70 % of each point's content words (stemmed) appear in it."""
    from tests.test_quiz_cues import stems

    missing = []
    for q in interview.load():
        said = set(stems(q.short))
        for point in q.points:
            words = set(stems(point))
            if len(words & said) < 0.7 * len(words):
                missing.append((q.id, point, sorted(words - said)))
    assert not missing, missing


def test_the_key_point_check_can_fail():
    from tests.test_quiz_cues import stems

    point, short = "Wider trees cost more compute, which hurts at large batch", "A tree is checked in one pass."
    assert len(set(stems(point)) & set(stems(short))) < 0.7 * len(set(stems(point)))


# ---- what each answer says, every figure computed ------------------------------------------------------------------

INTERVIEW = {q.id: q for q in interview.load()}
RAW_INTERVIEW = json.loads(INTERVIEW_QUESTIONS.read_text(encoding="utf-8"))
RAW = {q["id"]: q for q in RAW_INTERVIEW["questions"]}  # as typed: templates not filled
A, K, C = interview.LESSON["alpha"], interview.LESSON["k"], interview.LESSON["c"]


def test_interview_links_point_to_the_page_that_teaches_the_answer():
    assert RAW["alpha_tv"]["page"] == "unchanged"  # α = 1 − TV is worked on Why the output is unchanged
    assert RAW["tree"]["page"] == "hood"  # the two tree rules are taught under the hood


def test_the_parallel_answer_says_what_prefill_is():
    assert "prefill (the target's single pass over the whole prompt before decoding" in INTERVIEW["parallel"].answer


def test_batching_answer_works_the_roofline_at_the_apps_ridge():
    q = INTERVIEW["batching"]
    text = q.answer
    assert "roughly in proportion" not in text
    r = roofline.GPU_RIDGE
    b, big = interview.BATCHING["batch"], interview.BATCHING["batch_big"]
    assert f"batches {b} requests" in q.question
    assert f"R = {r}" in text
    assert f"{roofline.A100.ridge_tokens:.0f} tokens on an A100" in text
    assert f"{roofline.H100.ridge_tokens:.0f} on an H100" in text
    assert f"v = {roofline.batched_verify_cost(b, K, r):.2f}" in text
    assert f"{float(analytics.speedup(A, K, C)):.2f}× at B = 1" in text
    assert f"{roofline.batched_speedup(A, K, C, b, r):.2f}× at B = {b}" in text
    assert f"v = {roofline.batched_verify_cost(big, K, r):.2f}" in text
    assert f"{roofline.batched_speedup(A, K, C, big, r):.2f}× plain speed" in text
    assert roofline.batched_speedup(A, K, C, big, r) < 1 < roofline.batched_speedup(A, K, C, b, r) < analytics.speedup(
        A, K, C)


def test_serving_answer_does_not_claim_every_engine_ships_every_drafter():
    text = INTERVIEW["serving"].answer
    assert "all ship it" not in text
    assert "Between them" in text and "--model-draft" in text


def test_the_interview_says_medusa_decodes_greedily_by_default():
    """Typical acceptance is Medusa's sampling mode, not its default rule."""
    raw = INTERVIEW_QUESTIONS.read_text(encoding="utf-8")
    assert "default acceptance rule, typical acceptance" not in raw
    assert "Medusa's default rule, typical acceptance" not in raw
    assert "Medusa decodes greedily by default" in raw


def test_tree_answer_keeps_the_longest_accepted_path_and_credits_specinfer():
    text = INTERVIEW["tree"].answer
    assert "root-to-leaf" not in text
    for fact in ("longest accepted path from the root", "before it reaches a leaf", "SpecInfer (Miao et al., 2023)",
                 "multi-candidate rejection sampling", "EAGLE-2", "typical acceptance", "lossy"):
        assert fact in text, fact


@pytest.mark.parametrize("qid", ["tree", "lossy_lossless"])
def test_interview_tree_answers_give_each_rule_its_candidates(qid):
    answer = RAW[qid]["answer"]
    assert "as in SpecInfer and in EAGLE-2" not in answer and "as SpecInfer and EAGLE-2 do" not in answer
    assert "SpecInfer" in answer and "EAGLE-2" in answer
    assert "distinct top-k" in answer and "p(x)" in answer and "min(1, p/q)" in answer


def test_draft_choice_answer_works_both_drafts_and_says_c_must_be_measured():
    text = INTERVIEW["draft_choice"].answer
    assert "get high α at a very small c" not in text
    for d in interview.DRAFTS.values():
        k = analytics.optimal_k(d["alpha"], d["c"])
        best = f"K = {k} with {float(analytics.speedup(d['alpha'], k, d['c'])):.2f}×"
        assert f"c = {d['c']:.2f} for the {d['params']}" in text
        assert f"{d['params']} draft peaks at {best}" in text or f"{d['params']} draft at {best}" in text
    assert "need not follow the parameter count" in text and "Medusa" in text and "tree" in text


def test_useless_draft_answer_works_the_lessons_example():
    text = INTERVIEW["useless_draft"].answer
    lk, lc = interview.LESSON["k"], interview.LESSON["c"]
    lesson_speed, lesson_loss = analytics.speedup(0.0, lk, lc, 1.0), analytics.useless_draft_loss(lk, lc)
    for figure in (f"{float(lesson_speed):.2f}×", f"{float(lesson_loss):.2f}"):
        assert figure in text
    for point in ("1 / (K·c + v)", "K·c + (v − 1)", "KV cache", "memory", "switch speculation off"):
        assert point in text, point


def test_interview_q15_says_real_pairs_keep_more_greedy_with_measured_figures():
    from specsim.lesson import unchanged

    raw = RAW["alpha_tv"]["answer"]
    assert "{ov_real_greedy} greedy, {ov_real_t1} at T = 1" in raw  # named, never typed
    answer = INTERVIEW["alpha_tv"].answer
    m = unchanged.measured_overlap()
    assert f"α = {m.greedy:.2f} greedy, {m.at(1.0):.2f} at T = 1 and {m.at(2.0):.2f} at T = 2" in answer
    assert "usually higher greedy than at T = 1" in answer


def test_interview_tau_runs_a_reported_tau_back_to_alpha():
    q = INTERVIEW["tau"]
    assert q.page == "calculator"
    t = interview.TAU
    alpha = float(q.answer.split("means α = ")[1].split()[0])
    assert float(analytics.tokens_per_loop(alpha, t["k"])) == pytest.approx(t["tau"], abs=0.02)
    exact = interview.figures()["tau_alpha"]
    assert f"τ = {t['tau']:g} at K = {t['k']} means α = {exact}" in q.answer
    other = float(analytics.tokens_per_loop(float(exact), t["k_other"]))
    assert abs(float(interview.figures()["tau_other"]) - other) < 0.02
    assert "only comparable at the K" in q.answer and "E[j] + 1" in q.answer


def test_the_interview_file_types_no_figure_the_new_answers_compute():
    for q in RAW_INTERVIEW["questions"]:
        if q["id"] in ("batching", "draft_choice", "useless_draft"):
            assert not re.search(r"\d\.\d\d|\b(64|256|153|295)\b", q["answer"]), q["id"]
