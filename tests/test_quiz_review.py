"""Issue 37 (expert review of the quiz and the interview answers): no option cues its own key, and each fix holds.

The cue checkers run over knowledge.json as the learner sees it (templates filled by specsim.lesson.quiz's loader), and
a
deliberately cued question built here shows each checker can fail. Every figure the fixes quote is computed here from
specsim.measure.analytics, specsim.lesson.roofline and specsim.core.published, never typed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import pytest

from specsim.core import published
from specsim.lesson import interview, quiz, roofline
from specsim.measure import analytics

QUESTIONS = quiz.load_knowledge()
BY_ID = {q.id: q for q in QUESTIONS}
SHOWN = [q for seed in range(8) for q in quiz.questions_for(QUESTIONS, seed)]  # transfer questions at 8 draws
RAW_QUIZ = quiz.KNOWLEDGE_FILE.read_text(encoding="utf-8")
SEQ = quiz.load_sequence()
INTERVIEW = {q.id: q for q in interview.load()}
RAW_INTERVIEW = json.loads(interview.INTERVIEW_QUESTIONS.read_text(encoding="utf-8"))

# ---- the cue checkers -----------------------------------------------------------------------------------------

ABSOLUTE = frozenset(("always", "never", "any", "every", "only", "exactly", "all", "none", "nothing", "whatever",
                      "whenever", "everything", "completely", "entirely", "guaranteed", "cannot", "must"))
STOPWORDS = frozenset((
    "about", "above", "after", "again", "against", "also", "among", "because", "been", "before", "being", "below",
    "between", "both", "but", "by", "could", "does", "doing", "down", "during", "each", "either", "else", "even",
    "from", "further", "have", "having", "here", "into", "itself", "just", "like", "many", "more", "most", "much",
    "once", "only", "other", "ought", "over", "same", "should", "since", "some", "such", "than", "that", "their",
    "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "under", "until",
    "upon", "very", "were", "what", "when", "where", "which", "while", "whom", "whose", "will", "with", "within",
    "without", "would", "your", "yours", "every", "always", "never", "none", "whatever", "whenever", "still",
))
NEUTRAL_TOPICS = frozenset(("The loop", "Verification", "Costs", "Choosing K", "Hardware", "Acceptance",
                            "Tokenizers", "Greedy decoding", "Sampling", "Variants", "Serving", "Trees",
                            "Production drafters"))
WORD = re.compile(r"[a-z]+")
DIGIT = re.compile(r"\d")


def _words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def content_words(text: str) -> set[str]:
    """Lowercase words of 4 letters or more, stopwords dropped, a plural 's' cut (guesses ~ guesse, tokens ~ token)."""
    out = set()
    for w in _words(text):
        if len(w) < 4 or w in STOPWORDS:
            continue
        out.add(w[:-1] if len(w) > 4 and w.endswith("s") and not w.endswith("ss") else w)
    return out


def has_absolute(text: str) -> bool:
    return any(w in ABSOLUTE for w in _words(text))


def _distractors(q) -> list[str]:
    return [o for i, o in enumerate(q.options) if i != q.answer]


def key_is_longest(q) -> bool:
    """The key is longer than every distractor (options of one length, bare figures, give nothing away)."""
    return len(q.correct_option) > max(len(o) for o in _distractors(q))


def key_alone_has_a_number(q) -> bool:
    return bool(DIGIT.search(q.correct_option)) and not any(DIGIT.search(o) for o in _distractors(q))


def key_alone_unqualified(q) -> bool:
    """Every distractor says always/never/any/only... and the key alone hedges: the test-wise pick."""
    return not has_absolute(q.correct_option) and all(has_absolute(o) for o in _distractors(q))


def key_alone_echoes_stem(q) -> bool:
    """The key is the only option sharing a content word with the stem."""
    stem = content_words(q.prompt)
    return bool(content_words(q.correct_option) & stem) and not any(content_words(o) & stem for o in _distractors(q))


def topic_cues_key(q) -> bool:
    """The caption shares a content word with the key that no distractor shares."""
    topic = content_words(q.topic)
    cue = topic & content_words(q.correct_option)
    return bool(cue - set().union(*(content_words(o) for o in _distractors(q))))


def too_many_longest(questions: Sequence) -> bool:
    return sum(key_is_longest(q) for q in questions) > 0.3 * len(questions)


PER_QUESTION = (key_alone_has_a_number, key_alone_unqualified, key_alone_echoes_stem, topic_cues_key)


# ---- the checkers can fail -------------------------------------------------------------------------------------


def _cued() -> quiz.Question:
    """A question that commits every cue at once: the checkers must flag each."""
    return quiz.Question(
        id="cued", topic="Reference spans",
        prompt="Where does inference with reference get its drafts from?",
        options=("Spans of the reference documents copied forward, 2 or 3 tokens at a time, at no extra cost",
                 "Always from a second model", "Never from the input", "Only from extra heads"),
        answer=0, explanation="It copies spans of the reference documents.")


@pytest.mark.parametrize("check", PER_QUESTION, ids=lambda f: f.__name__)
def test_each_checker_flags_a_deliberately_cued_question(check):
    assert check(_cued())


def test_the_longest_option_checker_flags_a_quiz_whose_key_is_always_longest():
    assert key_is_longest(_cued())
    assert too_many_longest([_cued()] * 20)
    assert not too_many_longest(QUESTIONS)
    assert len({q.id for q in SHOWN if key_is_longest(q)}) <= 0.3 * len(QUESTIONS)


def test_content_words_drop_short_words_stopwords_and_punctuation():
    assert content_words("Why does the target's pass, over K + 1 tokens, cost so little?") == {
        "target", "pass", "token", "cost", "little"}


# ---- knowledge.json passes them -------------------------------------------------------------------------------


def test_exactly_twenty_questions():
    assert len(QUESTIONS) == quiz.KNOWLEDGE_QUESTION_COUNT == 20


def test_the_key_is_the_longest_option_in_at_most_30_percent_of_questions():
    longest = [q.id for q in QUESTIONS if key_is_longest(q)]
    assert len(longest) <= 0.3 * len(QUESTIONS), longest


@pytest.mark.parametrize("check", PER_QUESTION, ids=lambda f: f.__name__)
def test_no_question_is_cued(check):
    flagged = {q.id for q in SHOWN if check(q)}
    assert not flagged, flagged


def test_topic_captions_come_from_a_small_neutral_set():
    topics = {q.topic for q in QUESTIONS}
    assert topics <= NEUTRAL_TOPICS, topics - NEUTRAL_TOPICS
    assert not {"The +1 token", "Lossless output"} & topics  # the captions that gave Q3, Q12 and Q15 away


# ---- the rebuilt knowledge check (issue 61): what each question teaches ------------------------------------------


def _all_text(q) -> str:
    return " ".join((q.topic, q.prompt, *q.options, q.explanation))


def test_the_ttft_question_puts_the_wait_on_the_loaded_steps_not_on_the_draft():
    q = BY_ID["ttft-load"]
    assert "prefill" in q.correct_option and "steps" in q.correct_option
    assert "ridge point" in q.explanation and "fewer requests fit" in q.explanation
    assert "first token comes from the target's prefill" in q.explanation


def test_the_tree_rule_question_keeps_eagles_rule_and_calls_typical_acceptance_lossy():
    q = BY_ID["tree-rule"]
    assert "chance p(x)" in q.correct_option and "min(1" not in q.correct_option
    assert "EAGLE's reference implementation" in q.explanation  # EAGLE's code, not a claim about a paper
    assert "SpecInfer" in q.explanation and "typical acceptance" in q.explanation
    assert "q is the draft's distribution" in q.prompt and "norm(·) rescales" in q.prompt  # every symbol defined


def test_the_numerics_question_names_the_kernels_not_the_method():
    q = BY_ID["greedy-numerics"]
    assert "pass over many positions" in q.correct_option and "one-token pass" in q.correct_option
    assert "exact arithmetic" in q.explanation and "guarantee for sampling" in q.explanation


def test_the_cache_question_crops_both_caches_and_has_the_draft_catch_up():
    q = BY_ID["cache-rollback"]
    assert "Both drop their entries past the last kept guess" in q.correct_option
    assert "enters neither until it opens the next pass" in q.correct_option
    assert "crop, not a recomputation" in q.explanation


def test_the_break_even_question_says_when_to_switch_off():
    q = BY_ID["break-even"]
    assert "switch speculation off" in q.explanation and "prefix" not in q.correct_option


def _leviathan_dates(text: str) -> list[str]:
    return re.findall(r"Leviathan et al\.,? \(?([^);]*(?:; [^)]*)?)\)?", text)


def test_leviathan_is_dated_as_the_published_module_dates_it_everywhere():
    when = published.LEVIATHAN_2023.when
    texts = [_all_text(q) for q in QUESTIONS] + [q.question + " " + q.answer for q in INTERVIEW.values()]
    cited = [t for t in texts if "Leviathan" in t]
    assert cited  # the quiz cites it
    for t in cited:
        for m in re.finditer(r"Leviathan et al\.", t):
            assert t[m.end():m.end() + len(when) + 3].lstrip(" ,(").startswith(when), t[m.start():m.end() + 40]
    assert "{leviathan.year}" not in RAW_QUIZ


# ---- the order-one-round quiz ---------------------------------------------------------------------------------


def test_the_sequence_does_not_claim_greedy_identity_under_sampling():
    text = SEQ.piece("keep-sampled").explanation + SEQ.piece("residual").explanation
    assert "exactly what the target would have chosen" not in text
    assert "exact sample from p" in text


# ---- the interview answers ------------------------------------------------------------------------------------

A, K, C = interview.LESSON["alpha"], interview.LESSON["k"], interview.LESSON["c"]


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


def test_tree_answer_keeps_the_longest_accepted_path_and_credits_specinfer():
    text = INTERVIEW["tree"].answer
    assert "root-to-leaf" not in text
    for fact in ("longest accepted path from the root", "before it reaches a leaf", "SpecInfer (Miao et al., 2024)",
                 "multi-candidate rejection sampling", "EAGLE-2", "typical acceptance", "lossy"):
        assert fact in text, fact


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


def test_the_parallel_answer_says_what_prefill_is():
    assert "prefill (the target's single pass over the whole prompt before decoding" in INTERVIEW["parallel"].answer


def test_the_interview_file_types_no_figure_the_new_answers_compute():
    for q in RAW_INTERVIEW["questions"]:
        if q["id"] in ("batching", "draft_choice", "useless_draft"):
            assert not re.search(r"\d\.\d\d|\b(64|256|153|295)\b", q["answer"]), q["id"]


# ---- issue 55, quiz cues: elimination and recognition ------------------------------------------------------------

CONTRADICTIONS = (  # claims that contradict what every page states, so a learner can strike the option unread
    "better output quality", "improves the output", "output quality improves", "fixes the big model",
    "generation stalls", "garbled", "a higher acceptance rate, because the target sees more context",
)


def absolutes_in_distractors(q) -> bool:
    """One absolute word ("only", "none", "never", ...) repeated across two or more distractors and absent from the
    key, or two or more absolute distractors beside an unqualified key: strike them and the key is left."""
    key_words = set(_words(q.correct_option)) & ABSOLUTE
    per = [set(_words(o)) & ABSOLUTE for o in _distractors(q)]
    repeated = {w for w in ABSOLUTE if sum(w in p for p in per) >= 2} - key_words
    return bool(repeated) or (not key_words and sum(bool(p) for p in per) >= 2)


def opening_figures() -> set[str]:
    """The figures the app prints as it opens: the calculator's headline at the lesson's settings, and Home's
    useless-draft speed at the same settings."""
    from app.settings import CalcSettings

    s = CalcSettings()
    a, k, c, v = s.alpha, s.k, s.draft_cost, s.verify_cost
    values = (analytics.tokens_per_loop(a, k), analytics.expected_accepted_prefix(a, k), analytics.speedup(a, k, c, v),
              analytics.cost_per_loop(k, c), analytics.speedup(0.0, k, c, v))
    return {f"{float(x):.2f}" for x in values}


def key_figure_printed_elsewhere(q) -> bool:
    """A numeric key whose figure the learner has already read on the opening pages: recognised, not computed."""
    computed = q.numeric is not None or q.transfer is not None
    return computed and any(re.search(rf"(?<![\d.]){re.escape(f)}(?![\d])", q.correct_option)
                            for f in opening_figures())


def option_contradicts_the_app(q) -> bool:
    return any(phrase in o.lower() for o in q.options for phrase in CONTRADICTIONS)


ISSUE_55 = (absolutes_in_distractors, key_figure_printed_elsewhere, option_contradicts_the_app)


def _cued_55() -> quiz.Question:
    """Each issue 55 cue at once: "only" in three distractors, the calculator's 2.77 as the key, a throwaway."""
    numeric = quiz.NumericAnswer("tokens_per_loop", {"alpha": 0.7, "k": 4}, 2,
                                 float(analytics.tokens_per_loop(0.7, 4)))
    return quiz.Question(
        id="cued55", topic="The loop", prompt="How many tokens does a loop yield?",
        options=(f"{float(analytics.tokens_per_loop(0.7, 4)):.2f} tokens, the +1 token included",
                 "Only the accepted guesses", "Only K tokens", "Better output quality, only slower"),
        answer=0, explanation="…", numeric=numeric)


@pytest.mark.parametrize("check", ISSUE_55, ids=lambda f: f.__name__)
def test_each_issue_55_checker_flags_a_deliberately_cued_question(check):
    assert check(_cued_55())


@pytest.mark.parametrize("check", ISSUE_55, ids=lambda f: f.__name__)
def test_no_question_is_answerable_by_elimination_or_recognition(check):
    flagged = {q.id for q in SHOWN if check(q)}
    assert not flagged, flagged


# ---- "Order one round": the cards' wording does not give the order away ----------------------------------------

PRESUPPOSING = ("first rejected", "rejected spot", "next round", "all k guesses", "until the first one", "agreed run")


def test_the_sequence_cards_do_not_presuppose_another_step():
    for text in (p.text.lower() for p in SEQ.pieces):
        assert not any(phrase in text for phrase in PRESUPPOSING), text
