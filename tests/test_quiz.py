"""specsim.lesson.quiz: the quiz data is complete and right, and grading and shuffling behave."""

from __future__ import annotations

import collections
import copy
import itertools
import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from specsim.core.paths import ASSETS
from specsim.lesson import quiz, quiz_attempts, transfer
from specsim.measure import analytics

RAW = json.loads(quiz.KNOWLEDGE_FILE.read_text(encoding="utf-8"))
QUESTIONS = quiz.load_knowledge()
BY_ID = {q.id: q for q in QUESTIONS}
SEQ = quiz.load_sequence()
# ---- the knowledge-check data -------------------------------------------------------------------


DRAWS = range(12)
ATTEMPTS = [quiz.questions_for(QUESTIONS, seed) for seed in DRAWS]
SHOWN = [q for attempt in ATTEMPTS for q in attempt]  # every question as 12 attempts show it
TRANSFER = [q for q in QUESTIONS if q.transfer is not None]


def test_exactly_twenty_questions_with_distinct_ids():
    assert len(RAW["questions"]) == quiz.KNOWLEDGE_QUESTION_COUNT == 20
    assert len(QUESTIONS) == 20
    assert len({q.id for q in QUESTIONS}) == 20


@pytest.mark.parametrize("q", SHOWN, ids=lambda q: q.id)
def test_one_correct_option_among_distinct_options_and_an_explanation(q):
    assert len(q.options) >= 3
    assert len(set(q.options)) == len(q.options)
    assert sum(quiz_attempts.grade_answer(q, i) for i in range(len(q.options))) == 1
    assert len(q.explanation) > 40
    assert q.prompt.strip() and q.topic.strip()
    for text in (q.prompt, q.explanation, *q.options):  # no template left unfilled
        assert "{" not in text and "}" not in text


def test_at_least_eight_transfer_questions_draw_new_numbers_per_attempt():
    assert len(TRANSFER) >= 8
    for q in TRANSFER:
        prompts = {quiz.questions_for(QUESTIONS, seed)[QUESTIONS.index(q)].prompt for seed in DRAWS}
        assert len(prompts) >= 4, q.id  # the attempt's seed decides the numbers
        again = quiz.questions_for(QUESTIONS, 3)[QUESTIONS.index(q)]
        assert again == quiz.questions_for(QUESTIONS, 3)[QUESTIONS.index(q)]  # the same attempt, the same numbers


def test_an_attempts_answers_grade_the_same_against_any_draw():
    """The frame's progress line scores an attempt against the file's questions: the key's index never moves."""
    for attempt in ATTEMPTS:
        assert [q.answer for q in attempt] == [q.answer for q in QUESTIONS]


def test_the_files_type_no_figure_in_a_prompt_or_an_option():
    """Every figure a learner reads in a question is drawn or computed; the file holds words and formulas."""
    for raw in RAW["questions"]:
        for text in (raw["prompt"], *raw["options"]):
            bare = re.sub(r"\{[^}]*\}|[A-Za-z]+-\d", "", text)  # templates and names such as EAGLE-3 left out
            assert not re.search(r"\d\.\d|\b\d{2,}\b|\b[3-9]\b", bare), (raw["id"], text)


NUMBERS = re.compile(r"\d+(?:\.\d+)?%?")


@pytest.mark.parametrize("q", [q for q in SHOWN if q.transfer is not None], ids=lambda q: q.id)
def test_every_figure_a_transfer_option_shows_is_explained(q):
    """Each distractor stands for a misconception, and the explanation works its figure out."""
    for option in q.options:
        for figure in NUMBERS.findall(option):
            assert figure in q.explanation or figure in q.prompt or figure in ("0", "1"), (q.id, option, figure)


SEED = 7


def _at(qid: str):
    q = next(q for q in quiz.questions_for(QUESTIONS, SEED) if q.id == qid)
    return q, transfer.draw(q.transfer, f"{SEED}:{q.id}")


def test_tokens_per_loop_is_the_sum_of_the_kept_chances_plus_one():
    q, n = _at("tokens-per-loop")
    brute = 1 + sum(n["alpha"] ** i for i in range(1, n["k"] + 1))
    assert q.correct_option.startswith(f"{brute:.2f},")
    one_short = 1 + sum(n["alpha"] ** i for i in range(1, n["k"]))  # a misconception: the sum one term short
    pool = [o.format(**n) for o in q.source["options"]]
    assert any(o.startswith(f"{one_short:.2f},") for o in pool if o != q.correct_option)
    assert set(q.options) <= set(pool) and len(q.options) == q.source["show"]
    assert f"α = {n['alpha']:.0%}" in q.prompt and f"K = {n['k']}" in q.prompt


def test_the_share_kept_counts_the_guesses_kept_over_the_guesses_drafted():
    q, n = _at("share-kept")
    assert q.correct_option.startswith(f"{(n['tau'] - 1) / n['k']:.0%},")
    assert abs(float(analytics.tokens_per_loop(n["slot_alpha"], n["k"])) - n["tau"]) < 1e-9


def test_the_speedup_divides_the_tokens_by_the_drafting_and_the_measured_check():
    for seed in DRAWS:
        n = transfer.draw("speedup", f"{seed}:speedup-measured-v")
        tau = sum(n["alpha"] ** i for i in range(n["k"] + 1))
        assert abs(n["answer"] - tau / (n["k"] * n["c"] + n["v"])) < 1e-9


def test_the_break_even_acceptance_gives_a_speedup_of_one():
    for seed in DRAWS:
        n = transfer.draw("break_even", seed)
        assert abs(float(analytics.speedup(n["answer"], n["k"], n["c"], n["v"])) - 1) < 1e-9


def test_the_better_k_is_the_faster_with_each_k_paying_its_own_measured_check():
    for seed in DRAWS:
        n = transfer.draw("k_choice", seed)
        speed = {k: float(analytics.speedup(n["alpha"], k, n["c"], v))
                 for k, v in ((n["k_short"], n["v_short"]), (n["k_long"], n["v_long"]))}
        assert n["best"] == max(speed, key=speed.get) and n["s_best"] == speed[n["best"]]


def test_the_batched_check_follows_the_roofline():
    for seed in DRAWS:
        n = transfer.draw("batched_speedup", seed)
        b, k, r = n["batch"], n["k"], n["ridge"]
        assert b < r < b * (k + 1)  # past the ridge with the guesses, under it without: v is neither 1 nor K + 1
        assert abs(n["v"] - b * (k + 1) / r) < 1e-9
        assert abs(n["answer"] - float(analytics.speedup(n["alpha"], k, n["c"], n["v"]))) < 1e-9


def test_the_mixture_of_experts_check_reads_the_experts_its_tokens_touch():
    for seed in DRAWS:
        n = transfer.draw("moe_v", seed)
        e, a, t = n["experts"], n["active"], n["k"] + 1
        touched = e * (1 - (1 - a / e) ** t)
        assert abs(n["answer"] - (n["shared"] + (1 - n["shared"]) * touched / a)) < 1e-9
        assert 1 < n["answer"] < n["no_overlap"] <= t + 1e-9
        fewer = e * (1 - (1 - a / e) ** (t - 1))  # the distractor that forgets the kept token opening the pass
        assert abs(n["guesses_only"] - (n["shared"] + (1 - n["shared"]) * fewer / a)) < 1e-9
        assert 1 < n["guesses_only"] < n["answer"]


def _parse(shown: str) -> list[float]:
    return [float(x) for x in re.findall(r"\d\.\d\d", shown)]


def test_the_residual_restores_p_with_the_kept_draws():
    for seed in DRAWS:
        n = transfer.draw("residual", seed)
        p, q, res = _parse(n["p"]), _parse(n["q"]), _parse(n["answer"])
        leftover = 1 - sum(min(a, b) for a, b in zip(p, q, strict=True))
        for i in range(4):  # kept with min(p, q), replaced from the residual with what is left: p
            assert abs(min(p[i], q[i]) + leftover * res[i] - p[i]) < 0.02
        x = "ABCD".index(n["token"])
        assert q[x] > p[x]  # the refused token could be refused


def test_the_temperature_question_takes_the_overlap_when_sampling():
    for seed in DRAWS:
        n = transfer.draw("temperature_overlap", seed)
        p, q = _parse(n["p"]), _parse(n["q"])
        assert p.index(max(p)) == q.index(max(q))
        assert abs(n["overlap"] - sum(map(min, p, q))) < 1e-9


def test_no_draw_uses_the_calculators_opening_settings():
    """α = 70 %, K = 4, c = 0.13 print their figures as the calculator opens: a learner would recognise them."""
    assert 0.7 not in transfer.ALPHAS and 0.13 not in transfer.DRAFT_COSTS


def test_the_quiz_covers_the_lesson_and_at_most_two_questions_go_to_the_variants_table():
    text = " ".join(q.prompt + " " + q.explanation + " " + " ".join(q.options) for q in QUESTIONS).lower()
    for topic in ("batch", "mixture-of-experts", "τ", "temperature", "bfloat16", "tree", "eagle-3", "mtp",
                  "suffix decoding", "prefill", "tokenizer", "kv cache", "norm(max(0, p − q))", "σ min"):
        assert topic in text, topic
    table = [q.id for q in QUESTIONS if q.topic == "Variants"]
    assert 1 <= len(table) <= 2, table


def test_every_question_stored_answer_index_matches_the_raw_file():
    for raw, q in zip(RAW["questions"], QUESTIONS, strict=True):
        if "show" in raw:  # a pool: the key and show − 1 of its distractors
            assert len(q.options) == raw["show"] < len(raw["options"])
            assert q.options[q.answer] == quiz.parse_question(raw).correct_option
        else:
            assert raw["answer"] == q.answer and len(raw["options"]) == len(q.options)


# ---- validation -----------------------------------------------------------------------------------


def _broken(change) -> dict:
    raw = copy.deepcopy(RAW)
    change(raw)
    return raw


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r["questions"].pop(), "exactly 20"),
        (lambda r: r["questions"].append(copy.deepcopy(r["questions"][0])), "exactly 20"),
        (lambda r: r["questions"][1].update(id=r["questions"][0]["id"]), "ids must be distinct"),
        (lambda r: r["questions"][0]["options"].append(r["questions"][0]["options"][0]), "distinct"),
        (lambda r: r["questions"][0].update(answer=9), "'answer'"),
        (lambda r: r["questions"][0].update(explanation=""), "'explanation'"),
        (lambda r: r["questions"][0].update(numeric={"quantity": "magic", "inputs": {"k": 3}}), "unknown quantity"),
        (lambda r: r["questions"][0].update(numeric={"quantity": "speedup", "inputs": {"alpha": 0.6}}),
         "do not determine"),
        (lambda r: r["questions"][4].update(prompt="{nonsense:.2f}"), "cannot be filled"),
        (lambda r: r["questions"][1].update(transfer="magic"), "unknown transfer model"),
        (lambda r: r["questions"][1].update(transfer="residual"), "cannot be filled"),
    ],
)
def test_malformed_knowledge_data_is_refused_with_a_clear_message(change, message):
    with pytest.raises(quiz.QuizDataError, match=re.escape(message)):
        quiz.parse_knowledge(_broken(change))


def test_malformed_sequence_data_is_refused():
    raw = json.loads(quiz.SEQUENCE_FILE.read_text(encoding="utf-8"))
    raw["pieces"][1]["text"] = raw["pieces"][0]["text"]
    with pytest.raises(quiz.QuizDataError, match="texts must be distinct"):
        quiz.parse_sequence(raw)
    with pytest.raises(quiz.QuizDataError, match="pieces"):
        quiz.parse_sequence({"prompt": "x", "pieces": []})


# ---- grading and shuffling ------------------------------------------------------------------------


def test_grade_answer_rejects_an_option_that_does_not_exist():
    with pytest.raises(ValueError, match="does not exist"):
        quiz_attempts.grade_answer(QUESTIONS[0], len(QUESTIONS[0].options))


@given(seed=st.integers(0, 2**31))
def test_option_order_is_a_permutation_that_keeps_the_correct_answer(seed):
    for q in QUESTIONS:
        order = quiz_attempts.option_order(q, seed)
        assert sorted(order) == list(range(len(q.options)))
        assert order == quiz_attempts.option_order(q, seed)  # the same attempt shows the same order every run
        shown = [q.options[i] for i in order]
        right = [pos for pos, i in enumerate(order) if quiz_attempts.grade_answer(q, i)]
        assert len(right) == 1 and shown[right[0]] == q.correct_option


def test_different_attempts_shuffle_differently():
    orders = {tuple(quiz_attempts.option_order(q, seed) for q in QUESTIONS) for seed in range(5)}
    assert len(orders) == 5
    positions = {quiz_attempts.option_order(q, 0).index(q.answer) for q in QUESTIONS}
    assert len(positions) > 1  # the right answer is not always in the same place


def test_an_attempt_answers_once_advances_only_when_answered_and_scores():
    attempt = quiz_attempts.KnowledgeAttempt.start(len(QUESTIONS), seed=1)
    assert quiz_attempts.advance(attempt) == attempt  # cannot skip an unanswered question
    wrong = (QUESTIONS[0].answer + 1) % len(QUESTIONS[0].options)
    attempt = quiz_attempts.answer_current(attempt, wrong)
    assert quiz_attempts.answer_current(attempt, QUESTIONS[0].answer).answers[0] == wrong  # no second try
    attempt = quiz_attempts.advance(attempt)
    for q in QUESTIONS[1:]:
        attempt = quiz_attempts.advance(quiz_attempts.answer_current(attempt, q.answer))
    assert attempt.finished
    assert quiz_attempts.score(QUESTIONS, attempt) == 19
    items = quiz_attempts.review(QUESTIONS, attempt)
    assert [i.is_correct for i in items] == [False] + [True] * 19
    assert items[0].chosen == QUESTIONS[0].options[wrong] and items[0].correct == QUESTIONS[0].correct_option


# ---- sequencing -----------------------------------------------------------------------------------

ORDER_WORDS = re.compile(r"\b(first|then|finally|next|afterwards|begins?|starts?|last step|step \d)\b|^\d", re.I)


def test_every_scenario_has_five_steps_and_cards_that_do_not_belong():
    assert len(SEQ.scenarios) >= 4
    for sc in SEQ.scenarios:
        assert len(sc.order) == 5 and len(sc.left_out) >= 3
        assert not set(sc.order) & set(sc.left_out)
    assert all(len(p.explanation) > 40 for p in SEQ.pieces)
    # the residual draw is a step exactly where sampling refuses a guess
    residual = {sc.id for sc in SEQ.scenarios if "residual" in sc.order}
    assert residual == {sc.id for sc in SEQ.scenarios if "Sampling" in sc.setting and "refuses" in sc.setting}


def test_no_card_or_setting_gives_the_order_away():
    for text in [p.text for p in SEQ.pieces] + [sc.setting for sc in SEQ.scenarios]:
        assert not ORDER_WORDS.search(text), text
    ids = [p.id for p in SEQ.pieces]
    for sc in SEQ.scenarios:  # the file does not list a case's cards in its order
        assert [i for i in ids if i in sc.order] != list(sc.order), sc.id


def test_every_card_left_out_of_a_case_is_a_step_of_another_case():
    """The human form audit: cards no real round holds ("the target regenerates the refused proposals", "the average
    of the two distributions", "the prompt prefilled anew") stood out at a glance. A card that does not belong to a
    case is now a real step of another one (the residual draw where every guess was kept, the draw from p after a
    refusal, a sampled test in a greedy case), and every card is a step somewhere."""
    for sc in SEQ.scenarios:
        elsewhere = {p for other in SEQ.scenarios if other.id != sc.id for p in other.order}
        assert set(sc.left_out) <= elsewhere, (sc.id, set(sc.left_out) - elsewhere)
    assert {p.id for p in SEQ.pieces} == {p for sc in SEQ.scenarios for p in sc.order}


def test_a_card_that_is_no_step_of_any_case_is_refused():
    raw = json.loads(quiz.SEQUENCE_FILE.read_text(encoding="utf-8"))
    raw["pieces"].append({"id": "regenerate", "text": "The target regenerates the refused guesses one at a time",
                          "explanation": "Never a step: the target writes one token where the refused guess stood."})
    raw["scenarios"][0]["left_out"]["regenerate"] = ""
    with pytest.raises(quiz.QuizDataError, match="must be a step of another case"):
        quiz.parse_sequence(raw)


# -- the cards' wording does not chain them: a card's words do not point at the step after it --

STOP = frozenset("""a about after all also an and any are as at be been both but by can each for from had has have if in
into is it its itself may no not of on one or so such than that the their them there these they this those to until up
was were what when where which while who will with without""".split())


def content_words(text: str) -> set[str]:
    """A card's content words, cut to their first five letters so that "refused" and "refusal", "proposes" and
    "proposals" count as one word (as a reader sees them)."""
    return {w[:5] for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 3 and w not in STOP}


def telling_words(texts: dict[str, str]) -> dict[str, set[str]]:
    """Each card's content words less those that more than half of the cards use: a word most cards share ("guess",
    "token") points at no card in particular."""
    words = {c: content_words(t) for c, t in texts.items()}
    counts = collections.Counter(w for ws in words.values() for w in ws)
    common = {w for w, n in counts.items() if n > len(texts) / 2}
    return {c: ws - common for c, ws in words.items()}


def chain_share(texts: dict[str, str], rounds: list[tuple[tuple[str, ...], tuple[str, ...]]]) -> float:
    """Over every consecutive pair of steps in every round (its case's order, its tray), the share of pairs in which
    one card's nearest neighbour by shared telling words, among the round's cards, is the other (a tie counts as a
    share of a hit): how often a learner who matched words would chain two steps rightly."""
    words = telling_words(texts)
    hits = pairs = 0.0
    for order, tray in rounds:
        for a, b in itertools.pairwise(order):
            hits += max(_nearest_share(words, tray, a, b), _nearest_share(words, tray, b, a))
            pairs += 1
    return hits / pairs


def _nearest_share(words: dict[str, set[str]], tray: tuple[str, ...], card: str, other: str) -> float:
    """1 when ``other`` is the card of ``tray`` sharing the most words with ``card``, 1/n when n cards tie for the
    most, 0 otherwise (or when no card shares a word)."""
    shared = {c: len(words[card] & words[c]) for c in tray if c != card}
    best = max(shared.values())
    ties = [c for c, n in shared.items() if n == best]
    return 1 / len(ties) if best > 0 and other in ties else 0.0


def mean_overlap(texts: dict[str, str], order: tuple[str, ...], tray: tuple[str, ...]) -> tuple[float, float]:
    """The mean number of telling words a step shares with the step after it, and the mean over the round's other
    pairs of cards."""
    words = telling_words(texts)
    steps = set(itertools.pairwise(order))
    follow, other = [], []
    for a, b in itertools.combinations(tray, 2):
        n = len(words[a] & words[b])
        (follow if (a, b) in steps or (b, a) in steps else other).append(n)
    return sum(follow) / len(follow), sum(other) / len(other)


CHAIN_LIMIT = 0.1  # the old cards scored 0.19 over the rounds they were drawn in, 0.22 over their steps alone
ROUNDS = [quiz_attempts.new_round(SEQ, seed) for seed in range(40)]
TEXTS = {p.id: p.text for p in SEQ.pieces}


def test_no_card_chains_to_the_step_after_it_by_its_words():
    """The human form audit: each card's wording hinted the next ("top token" to "top token", "is written" to "the
    written tokens", "refusal" to "the refused proposal")."""
    rounds = [(SEQ.correct_order[r.scenario], r.tray_order) for r in ROUNDS]
    steps = [(sc.order, sc.order) for sc in SEQ.scenarios]  # a learner who has picked the steps, ordering them
    assert chain_share(TEXTS, rounds) <= CHAIN_LIMIT and chain_share(TEXTS, steps) <= CHAIN_LIMIT
    for order, tray in rounds:
        follow, other = mean_overlap(TEXTS, order, tray)
        assert follow <= other, (order, follow, other)


def test_the_chain_measure_flags_cards_that_chain_by_their_words():
    texts = {"a": "The draft writes guesses", "b": "The guesses are scored in a pass",
             "c": "The pass yields scores that judge", "d": "The judge keeps a token", "e": "A kept token is added",
             "x": "Caches hold entries", "y": "Entries are cropped"}
    order, tray = ("a", "b", "c", "d", "e"), ("c", "x", "a", "e", "y", "b", "d")
    assert chain_share(texts, [(order, tray)]) > 0.5
    follow, other = mean_overlap(texts, order, tray)
    assert follow > other


def test_the_cards_share_a_form_by_kind():
    """Cards of one kind read alike (the three ways a token is written, the two ways guesses are judged, the two ways
    the caches are updated), so a card's form says what it does, not what comes next."""
    heads = {p.id: p.text.split(":")[0] for p in SEQ.pieces}
    assert all(":" in p.text for p in SEQ.pieces)
    assert heads["top-token"] == heads["draw-past"] == heads["residual"] == "A token is written"
    assert heads["compare-greedy"] == heads["keep-sampled"]
    assert heads["grow"] == heads["crop-grow"]


# -- a round: a slot per card, so the board does not tell how many steps the case has --

def test_a_round_draws_its_case_and_mixes_in_the_steps_of_other_cases():
    assert {r.scenario for r in ROUNDS} == {sc.id for sc in SEQ.scenarios}
    for n, r in enumerate(ROUNDS):
        sc = SEQ.scenario(r.scenario)
        assert set(r.tray_order) == set(sc.order) | set(sc.left_out) and r == quiz_attempts.new_round(SEQ, n)
        assert quiz_attempts.fits(SEQ, r)
    assert quiz_attempts.new_round(SEQ, 7, "greedy-refusal").scenario == "greedy-refusal"


def test_the_board_has_a_slot_per_card_whatever_the_case():
    """The human form audit: the board had one slot per step, so it told the learner how many cards to place."""
    for r in ROUNDS:
        assert len(r.slots) == len(r.tray_order) > len(SEQ.correct_order[r.scenario])
    assert len({len(r.slots) for r in ROUNDS}) == 1  # every case shows the same number of slots


@given(seed=st.integers(0, 2**31))
def test_the_tray_is_a_shuffle_and_never_already_solved(seed):
    order = SEQ.scenarios[0].order
    tray = quiz_attempts.shuffled_pieces(order, seed, ["residual"])
    assert sorted(tray) == sorted([*order, "residual"])
    assert [p for p in tray if p in order] != list(order)


def test_placing_moving_and_removing_pieces():
    sc = SEQ.scenarios[0]
    order = sc.order
    a = quiz_attempts.new_round(SEQ, 3, sc.id)
    cards = len(a.tray_order)
    assert len(a.left) == cards == a.empty and not a.placed
    a = a.place(order[0], 0).place(order[1], 1)
    assert a.slots[:2] == order[:2] and len(a.left) == cards - 2 and a.placed == order[:2]
    a = a.place(order[0], 2)  # a placed piece moves; its old slot empties
    assert a.slots[:3] == (None, order[1], order[0])
    stranger = sorted(sc.left_out)[0]
    a = a.place(stranger, 1)  # the occupant goes back to the tray
    assert order[1] in a.left and a.slots[1] == stranger
    a = a.remove(stranger)
    assert a.slots == (None, None, order[0]) + (None,) * (cards - 3) and a.placed == (order[0],)
    with pytest.raises(ValueError):
        a.place("nonsense", 0)


def test_grading_reads_the_placed_cards_from_the_top_and_solves_only_the_exact_order():
    sc = SEQ.scenario("sampling-refusal")
    fresh = quiz_attempts.new_round(SEQ, 5, sc.id)
    a = fresh.arrange(list(sc.order))
    assert a.marks(SEQ.correct_order) == (True,) * 5 == a.marks(sc.order) and a.solved(SEQ.correct_order)
    assert "top-token" in a.left  # the card that does not belong stays in the tray, and the round is solved
    gapped = fresh.place(sc.order[0], 1).place(sc.order[1], 3).place(sc.order[2], 4).place(sc.order[3], 7)
    gapped = gapped.place(sc.order[4], 8)
    assert gapped.placed == sc.order and gapped.solved(sc.order)  # an empty slot counts for nothing
    wrong = ["verify", "draft", "keep-sampled", "crop-grow", "top-token"]
    a = a.arrange(wrong).check()
    assert a.checked and a.marks(SEQ.correct_order) == (False, False, True, False, False)
    assert not a.solved(SEQ.correct_order)
    assert not a.remove("draft").checked  # any move clears the marks
    short = fresh.arrange(list(sc.order[:3])).check()
    assert short.checked and all(short.marks(sc.order)) and not short.solved(sc.order)  # a step still in the tray
    extra = fresh.arrange([*sc.order, "top-token"])
    assert extra.marks(sc.order) == (True,) * 5 + (False,) and not extra.solved(sc.order)  # a card too many
    assert not fresh.check().checked  # nothing placed, nothing to mark
    with pytest.raises(ValueError):
        fresh.arrange(["draft", "draft"])


def test_seeing_the_answer_stays_for_the_round():
    a = quiz_attempts.new_round(SEQ, 2).arrange(["draft"]).check().show()
    assert a.shown and a.remove("draft").shown and not a.remove("draft").checked
    assert not quiz_attempts.new_round(SEQ, 2).shown


# ---- no length or number cue gives the answer away ----------------------------------------------------


def _is_longest(q) -> bool:
    others = [len(o) for i, o in enumerate(q.options) if i != q.answer]
    return len(q.correct_option) > max(others)  # options of one length (bare figures) give nothing away


def test_the_correct_option_is_the_longest_in_at_most_30_percent_of_questions():
    """Computed as the learner sees the questions (templates filled), at every draw."""
    longest = {q.id for q in SHOWN if _is_longest(q)}
    assert len(longest) <= 0.3 * len(QUESTIONS), longest


def test_no_correct_option_is_the_only_one_with_a_number():
    digit = re.compile(r"\d")
    lonely = {q.id for q in SHOWN if digit.search(q.correct_option)
              and not any(digit.search(o) for i, o in enumerate(q.options) if i != q.answer)}
    assert not lonely


def test_the_papers_figures_in_the_quiz_come_from_specsim_published():
    from specsim.core import published

    by_id = {q.id: q for q in QUESTIONS}
    assert published.FU_SPEEDUP.figure in by_id["lookahead"].explanation
    for raw in RAW["questions"]:  # typed in the JSON only as templates
        assert "{fu_speedup.figure}" not in raw["explanation"] or raw["id"] == "lookahead"
        assert published.FU_SPEEDUP.figure not in raw["explanation"]


def test_the_extra_token_after_a_rejection_comes_from_the_residual_under_sampling():
    """Issue 60: not "from the large model's own scores" alone: after a rejection a sampler draws from
    norm(max(0, p − q))."""
    assert "norm(max(0, p − q))" in SEQ.piece("residual").text
    assert "residual" in SEQ.scenario("sampling-refusal").order
    assert "top-token" in SEQ.scenario("sampling-refusal").left_out


def test_writing_the_token_and_updating_the_caches_count_in_either_order():
    """Both reviewers: the +1 token and the caches' update are independent (neither cache holds the new token until
    the next round's pass), yet the board marked the caches before the token wrong."""
    from specsim.lesson import quiz as quizlib
    from specsim.lesson.quiz_attempts import new_round

    seq = quizlib.load_sequence()
    for sc in seq.scenarios:
        assert sc.either, f"{sc.id}: the token and the cache update may come in either order"
        (a, b), = sc.either
        swapped = list(sc.order)
        i, j = swapped.index(a), swapped.index(b)
        swapped[i], swapped[j] = b, a
        attempt = new_round(seq, 0, sc.id).arrange(swapped).check()
        assert attempt.solved(seq.accepted_orders) and all(attempt.marks(seq.accepted_orders))
        assert not attempt.solved(seq.correct_order)  # the one order alone would have marked it wrong
        wrong = list(sc.order)
        wrong[0], wrong[1] = wrong[1], wrong[0]  # drafting after the target's pass is still wrong
        assert not new_round(seq, 0, sc.id).arrange(wrong).solved(seq.accepted_orders)


def _by_id() -> dict:
    return {q["id"]: q for q in json.loads((ASSETS / "quiz" / "knowledge.json").read_text("utf-8"))["questions"]}


def _all_text(q) -> str:
    return " ".join([q["prompt"], q["explanation"], *q["options"]])


def test_quiz_wording():
    q = _by_id()
    assert "batch" not in _all_text(q["one-pass"])
    assert "the last kept token included" in q["one-pass"]["options"][q["one-pass"]["answer"]]
    # the tokenizer question says why the ids must line up, without "ideally"
    assert "ideally" not in _all_text(q["tokenizer"]) and "token id" in q["tokenizer"]["explanation"]


def test_survive_is_not_used_for_two_different_things():
    quiz_text = json.dumps(json.loads((ASSETS / "quiz" / "knowledge.json").read_text("utf-8")), ensure_ascii=False)
    assert not re.search(r"surviv", quiz_text, re.IGNORECASE)


# ---- what each question teaches, and the claims none may make ---------------------------------------------------


def _shown_text(q) -> str:
    return " ".join([q.prompt, q.explanation, *q.options])


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


def test_knowledge_tree_rule_asks_which_rule_fits_distinct_top_k_candidates():
    q = BY_ID["tree-rule"]
    key = q.correct_option
    assert "chance p(x)" in key and "zero p(x)" in key and "min(1" not in key
    specinfer = next(o for o in q.options if "norm(max(0, p − q))" in o)
    assert q.options.index(specinfer) != q.answer
    assert "drawn independently from q" in q.explanation and "EAGLE's reference implementation" in q.explanation
    assert "as SpecInfer and EAGLE-2 do" not in q.explanation


def test_the_numerics_question_names_the_kernels_not_the_method():
    q = BY_ID["greedy-numerics"]
    assert "pass over many positions" in q.correct_option and "one-token pass" in q.correct_option
    assert "exact arithmetic" in q.explanation and "guarantee for sampling" in q.explanation


def test_identity_question_does_not_credit_float32():
    """The app's own check (README, tests/test_invariant.py): stock float32 logits differ between a one-token and
    an n-token pass at every position; the position-invariant bfloat16 path differs at none. The quiz puts a
    greedy mismatch on the kernels, never on a dtype."""
    import torch

    from specsim.core import models

    q = BY_ID["greedy-numerics"]
    assert "best checked in float32" not in _shown_text(q)
    assert "position- or batch-invariant" in q.explanation and "not a property of the method" in q.explanation
    # a learner's reading: the dtype changes how often a near-tie flips (Why the output is unchanged), not whether
    assert "the dtype changes how often a flip happens" in q.explanation and "not whether one can" in q.explanation
    assert not any("float32" in o for o in q.options)
    assert "not guaranteed" in models.dtype_reason("cpu", torch.float32, invariant=False)
    assert "is guaranteed" in models.dtype_reason("cpu", torch.bfloat16, invariant=True)


def test_the_cache_question_crops_both_caches_and_has_the_draft_catch_up():
    q = BY_ID["cache-rollback"]
    assert "Both drop their entries past the last kept guess" in q.correct_option
    assert "enters neither until it opens the next pass" in q.correct_option
    assert "crop, not a recomputation" in q.explanation


def test_the_break_even_question_says_when_to_switch_off():
    q = BY_ID["break-even"]
    assert "switch speculation off" in q.explanation and "prefix" not in q.correct_option


def test_break_even_question_gives_the_general_cost():
    q = BY_ID["break-even"]
    assert "K·c + v" in q.explanation and "v = " in q.prompt
    assert "drafting time and nothing else" not in q.explanation


def test_quiz_questions_state_the_check_cost_they_assume():
    for qid in ("speedup-measured-v", "break-even", "k-choice"):
        assert "v = " in BY_ID[qid].prompt, qid
    assert "max(1, T / R)" in BY_ID["batch-speedup"].prompt


def test_lookahead_question_describes_jacobi_over_the_whole_window():
    q = BY_ID["lookahead"]
    assert "only the tokens that failed" not in q.correct_option and "only the failed" not in q.explanation
    assert "n-gram" in q.correct_option and "n-gram" in q.explanation
    assert "all of them in parallel" in q.explanation
    assert not any("only the" in o.lower() and ("refused" in o or "failed" in o) for o in q.options)


def test_the_quiz_does_not_claim_code_is_accepted_most():
    """The app's own domain measurement does not rank code first, so the quiz must not either."""
    for other in BY_ID.values():
        assert "highest acceptance rate" not in other.prompt
        assert "where acceptance tends to be highest" not in _shown_text(other)
        assert "code" not in other.correct_option.lower()


def test_the_quiz_never_calls_typical_acceptance_medusas_default_rule():
    """Medusa decodes greedily by default; typical acceptance is its sampling mode."""
    knowledge = quiz.KNOWLEDGE_FILE.read_text(encoding="utf-8")
    json.loads(knowledge)
    assert "default acceptance rule, typical acceptance" not in knowledge
    assert "Medusa's default rule, typical acceptance" not in knowledge


# ---- the sequence's cards and explanations -----------------------------------------------------------------------


def test_the_sequence_does_not_claim_greedy_identity_under_sampling():
    text = SEQ.piece("keep-sampled").explanation + SEQ.piece("residual").explanation
    assert "exactly what the target would have chosen" not in text
    assert "exact sample from p" in text


PRESUPPOSING = ("first rejected", "rejected spot", "next round", "all k guesses", "until the first one", "agreed run")


def test_the_sequence_cards_do_not_presuppose_another_step():
    """A card that speaks of "the first rejected" guess or "the next round" gives the order away."""
    for text in (p.text.lower() for p in SEQ.pieces):
        assert not any(phrase in text for phrase in PRESUPPOSING), text


def test_the_lecturers_form_cues_are_gone_from_five_questions():
    """A lecturer's review found five keys readable from form: the tree rule's stem ruled out the one option using q
    and two options shared "chance p(x)"; EAGLE-3's key alone said the head cannot be reused; the MTP key alone had
    the full model check the guess; the numerics stem's "nearly tied" pointed at rounding; the suffix stem's "repeat
    … earlier replies" matched its key while a distractor broke the stem's "no model to train"."""
    tree = BY_ID["tree-rule"]
    for feature in ("chance p(x)", "min(1, p(x)/q(x))", "under the unchanged p"):
        assert sum(feature in o for o in tree.options) == 2, feature
    assert "not sampled" not in tree.prompt
    assert sum("training a new head" in o for o in BY_ID["eagle-3"].options) == 2
    mtp = BY_ID["mtp"]
    assert "checks every guess" in mtp.prompt and not any("check" in o for o in mtp.options)
    assert "tied" not in BY_ID["greedy-numerics"].prompt
    suffix = BY_ID["suffix"]
    assert "earlier replies" not in suffix.prompt and not any(("EAGLE" in o or "Medusa" in o) for o in suffix.options)
