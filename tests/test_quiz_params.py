"""The quiz progress codec: every reachable attempt round-trips, nothing else decodes (issue 12)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.quiz import params as quiz_params
from specsim.lesson import quiz

SEQ = quiz.load_sequence()
QUESTIONS = quiz.load_knowledge()


@given(seed=st.integers(0, 2**31 - 1), picks=st.lists(st.integers(0, 9), max_size=len(QUESTIONS)),
       advance_last=st.booleans())
def test_every_reachable_knowledge_attempt_round_trips(seed, picks, advance_last):
    attempt = quiz.KnowledgeAttempt.start(len(QUESTIONS), seed)
    for i, pick in enumerate(picks):
        attempt = quiz.answer_current(attempt, pick % len(QUESTIONS[attempt.current].options))
        if i < len(picks) - 1 or advance_last:
            attempt = quiz.advance(attempt)
    assert quiz_params.decode_knowledge(quiz_params.encode_knowledge(attempt), QUESTIONS) == attempt


@given(seed=st.integers(0, 2**31 - 1), moves=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), max_size=12),
       check=st.booleans())
def test_every_reachable_sequence_attempt_round_trips(seed, moves, check):
    attempt = quiz.new_round(SEQ, seed)
    for piece, slot in moves:
        attempt = attempt.place(attempt.tray_order[piece % len(attempt.tray_order)], slot % len(attempt.slots))
    if check and attempt.complete:
        attempt = attempt.check()
    encoded = quiz_params.encode_sequence(attempt, SEQ)
    assert quiz_params.decode_sequence(encoded, SEQ) == attempt


def test_a_sequence_link_does_not_spell_the_steps_of_its_case():
    for seed in range(20):
        attempt = quiz.new_round(SEQ, seed)
        solved = attempt.arrange(list(SEQ.correct_order[attempt.scenario]))
        slots = quiz_params.encode_sequence(solved, SEQ).split(".")[2]
        assert slots not in ("01234", "12345")


def test_a_link_with_a_card_that_is_not_a_card_decodes_to_nothing():
    attempt = quiz.new_round(SEQ, 1)
    text = quiz_params.encode_sequence(attempt, SEQ).split(".")
    text[1] += "0123456789abcdefghijklmnopqrstuvwxyz"[len(SEQ.pieces)]
    assert quiz_params.decode_sequence(".".join(text), SEQ) is None


@given(text=st.text(max_size=40))
def test_arbitrary_text_decodes_to_nothing_or_to_a_valid_attempt(text):
    k = quiz_params.decode_knowledge(text, QUESTIONS)
    assert k is None or quiz_params.encode_knowledge(k) == text
    s = quiz_params.decode_sequence(text, SEQ)
    assert s is None or quiz_params.encode_sequence(s, SEQ) == text
