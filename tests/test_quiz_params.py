"""The quiz progress codec: every reachable attempt round-trips, nothing else decodes (issue 12)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.quiz import params as quiz_params
from specsim.lesson import quiz, quiz_attempts

SEQ = quiz.load_sequence()
QUESTIONS = quiz.load_knowledge()


@given(seed=st.integers(0, 2**31 - 1), picks=st.lists(st.integers(0, 9), max_size=len(QUESTIONS)),
       advance_last=st.booleans())
def test_every_reachable_knowledge_attempt_round_trips(seed, picks, advance_last):
    attempt = quiz_attempts.KnowledgeAttempt.start(len(QUESTIONS), seed)
    for i, pick in enumerate(picks):
        attempt = quiz_attempts.answer_current(attempt, pick % len(QUESTIONS[attempt.current].options))
        if i < len(picks) - 1 or advance_last:
            attempt = quiz_attempts.advance(attempt)
    assert quiz_params.decode_knowledge(quiz_params.encode_knowledge(attempt), QUESTIONS) == attempt


@given(seed=st.integers(0, 2**31 - 1), moves=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), max_size=12),
       check=st.booleans(), show=st.booleans())
def test_every_reachable_sequence_attempt_round_trips(seed, moves, check, show):
    attempt = quiz_attempts.new_round(SEQ, seed)
    for piece, slot in moves:
        attempt = attempt.place(attempt.tray_order[piece % len(attempt.tray_order)], slot % len(attempt.slots))
    if check:
        attempt = attempt.check()
    if show:
        attempt = attempt.show()
    encoded = quiz_params.encode_sequence(attempt, SEQ)
    assert quiz_params.decode_sequence(encoded, SEQ) == attempt


def test_a_sequence_link_does_not_spell_the_steps_of_its_case():
    for seed in range(20):
        attempt = quiz_attempts.new_round(SEQ, seed)
        solved = attempt.arrange(list(SEQ.correct_order[attempt.scenario]))
        slots = quiz_params.encode_sequence(solved, SEQ).split(".")[2].rstrip("-")
        assert slots not in ("01234", "12345")


def test_a_link_with_a_card_missing_from_the_tray_or_one_slot_too_few_decodes_to_nothing():
    """A round holds every card left out of its case, and a slot per card (so a link cannot hide a step count)."""
    text = quiz_params.encode_sequence(quiz_attempts.new_round(SEQ, 1), SEQ).split(".")
    assert quiz_params.decode_sequence(".".join(text), SEQ) is not None
    fewer = [text[0], text[1][:-1], text[2][:-1], text[3]]
    assert quiz_params.decode_sequence(".".join(fewer), SEQ) is None
    short = [text[0], text[1], text[2][:-1], text[3]]
    assert quiz_params.decode_sequence(".".join(short), SEQ) is None


def test_a_link_that_asks_for_marks_with_nothing_placed_decodes_to_nothing():
    text = quiz_params.encode_sequence(quiz_attempts.new_round(SEQ, 1), SEQ).split(".")
    assert quiz_params.decode_sequence(".".join([*text[:3], "2"]), SEQ) is not None  # the answer seen, nothing placed
    assert quiz_params.decode_sequence(".".join([*text[:3], "1"]), SEQ) is None


@given(text=st.text(max_size=40))
def test_arbitrary_text_decodes_to_nothing_or_to_a_valid_attempt(text):
    k = quiz_params.decode_knowledge(text, QUESTIONS)
    assert k is None or quiz_params.encode_knowledge(k) == text
    s = quiz_params.decode_sequence(text, SEQ)
    assert s is None or quiz_params.encode_sequence(s, SEQ) == text
