"""An attempt at the quizzes of :mod:`specsim.lesson.quiz`, and its grading: the knowledge check's attempt (the
shuffled options, the answers, the score, the review and the sections to revisit) and one round of the sequencing
quiz (cards placed in slots, the marks, whether it is solved).

Everything is a pure function: an attempt is a value, and answering returns a new value.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from specsim.lesson.quiz import Question, Revisit, SequenceQuiz

# ---- knowledge check: one attempt ---------------------------------------------------------------


def option_order(question: Question, seed: int) -> tuple[int, ...]:
    """The order (indices into ``question.options``) in which this attempt shows the options."""
    order = list(range(len(question.options)))
    random.Random(f"{seed}:{question.id}").shuffle(order)
    return tuple(order)


def grade_answer(question: Question, chosen: int) -> bool:
    """True when ``chosen`` (an index into ``question.options``) is the correct option."""
    if not 0 <= chosen < len(question.options):
        raise ValueError(f"option {chosen} does not exist; question {question.id!r} has {len(question.options)}")
    return chosen == question.answer


@dataclass(frozen=True)
class KnowledgeAttempt:
    """One pass through the questions: the seed of its shuffle, the answers so far, where we are."""

    seed: int
    answers: tuple[int | None, ...]  # chosen option index per question, None while unanswered
    current: int = 0

    @classmethod
    def start(cls, n_questions: int, seed: int) -> KnowledgeAttempt:
        return cls(seed, (None,) * n_questions)

    @property
    def finished(self) -> bool:
        return self.current >= len(self.answers)

    @property
    def answered_current(self) -> bool:
        return not self.finished and self.answers[self.current] is not None


def answer_current(attempt: KnowledgeAttempt, chosen: int) -> KnowledgeAttempt:
    """Record ``chosen`` for the current question; a question is answered once and stays answered."""
    if attempt.finished or attempt.answered_current:
        return attempt
    answers = list(attempt.answers)
    answers[attempt.current] = chosen
    return replace(attempt, answers=tuple(answers))


def advance(attempt: KnowledgeAttempt) -> KnowledgeAttempt:
    """Move to the next question once the current one is answered."""
    return replace(attempt, current=attempt.current + 1) if attempt.answered_current else attempt


def score(questions: Sequence[Question], attempt: KnowledgeAttempt) -> int:
    """How many answered questions are right."""
    return sum(a is not None and grade_answer(q, a) for q, a in zip(questions, attempt.answers, strict=True))


@dataclass(frozen=True)
class ReviewItem:
    number: int
    prompt: str
    chosen: str | None
    correct: str
    is_correct: bool
    explanation: str
    revisit: Revisit | None = None


def review(questions: Sequence[Question], attempt: KnowledgeAttempt) -> list[ReviewItem]:
    """One line per question: what was chosen, what is right, why, and where the lesson teaches it."""
    return [
        ReviewItem(n + 1, q.prompt, None if a is None else q.options[a], q.correct_option,
                   a is not None and grade_answer(q, a), q.explanation, q.revisit)
        for n, (q, a) in enumerate(zip(questions, attempt.answers, strict=True))
    ]


def to_revisit(questions: Sequence[Question], attempt: KnowledgeAttempt) -> list[tuple[Revisit, list[int]]]:
    """The sections to read again, in the lesson's order of first need: each with the numbers of the questions
    answered wrong that it teaches."""
    out: dict[Revisit, list[int]] = {}
    for item in review(questions, attempt):
        if not item.is_correct and item.revisit is not None:
            out.setdefault(item.revisit, []).append(item.number)
    return list(out.items())


# ---- sequencing: placing pieces in slots ----------------------------------------------------------

Slots = tuple[str | None, ...]


def shuffled_pieces(correct_order: Sequence[str], seed: int, extra: Sequence[str] = ()) -> tuple[str, ...]:
    """A shuffle of the steps and the ``extra`` cards for the tray, never one that reads the steps in order from the
    top (that would be no puzzle)."""
    rng = random.Random(seed)
    order = list(correct_order) + list(extra)
    if len(set(order)) < 2:
        return tuple(order)
    while tuple(p for p in order if p in set(correct_order)) == tuple(correct_order):
        rng.shuffle(order)
    return tuple(order)


def place(slots: Slots, piece: str, slot: int) -> Slots:
    """Put ``piece`` in ``slot``; it leaves the slot it was in, and a piece already there goes back to the tray."""
    if not 0 <= slot < len(slots):
        raise ValueError(f"slot {slot} does not exist; there are {len(slots)}")
    out = [None if s == piece else s for s in slots]
    out[slot] = piece
    return tuple(out)


def remove(slots: Slots, piece: str) -> Slots:
    """Send ``piece`` back to the tray."""
    return tuple(None if s == piece else s for s in slots)


def in_tray(tray_order: Sequence[str], slots: Slots) -> list[str]:
    """The pieces not yet placed, in the tray's (shuffled) order."""
    placed = set(slots)
    return [p for p in tray_order if p not in placed]


def grade_sequence(placed: Sequence[str], correct_order: Sequence[str]) -> tuple[bool, ...]:
    """Right or wrong for each placed card, read from the top: right when it is the case's step at that place."""
    return tuple(n < len(correct_order) and piece == correct_order[n] for n, piece in enumerate(placed))


@dataclass(frozen=True)
class SequenceAttempt:
    """The case drawn (``scenario``), the tray's shuffled cards (its steps and the cards that do not belong), what sits
    in each slot, whether the learner asked for a check, and whether they asked to see the answer (``shown``).

    There are as many slots as cards, so the board does not tell how many steps the case has: the learner places the
    cards that belong, in order, and leaves the rest in the tray. The answer is the placed cards read from the top
    (:attr:`placed`); an empty slot between two cards counts for nothing.

    Any move clears ``checked``: marks shown for an order that has since changed would mislead. ``shown`` stays until
    the next round: the answer, once seen, has been seen.
    """

    tray_order: tuple[str, ...]
    slots: Slots
    checked: bool = False
    scenario: str = ""
    shown: bool = False

    @classmethod
    def start(cls, correct_order: Sequence[str], seed: int, extra: Sequence[str] = (),
              scenario: str = "") -> SequenceAttempt:
        tray = shuffled_pieces(correct_order, seed, extra)
        return cls(tray, (None,) * len(tray), scenario=scenario)

    @property
    def left(self) -> list[str]:
        return in_tray(self.tray_order, self.slots)

    @property
    def placed(self) -> tuple[str, ...]:
        """The answer: the placed cards from the top, empty slots skipped."""
        return tuple(p for p in self.slots if p is not None)

    @property
    def empty(self) -> int:
        """Slots still empty."""
        return sum(s is None for s in self.slots)

    def place(self, piece: str, slot: int) -> SequenceAttempt:
        if piece not in self.tray_order:
            raise ValueError(f"unknown piece {piece!r}")
        return replace(self, slots=place(self.slots, piece, slot), checked=False)

    def remove(self, piece: str) -> SequenceAttempt:
        return replace(self, slots=remove(self.slots, piece), checked=False)

    def arrange(self, order: Sequence[str]) -> SequenceAttempt:
        """Fill the slots from the top with ``order`` (a drag-and-drop answer list); the rest go to the tray."""
        if len(set(order)) != len(order) or not set(order) <= set(self.tray_order):
            raise ValueError(f"{list(order)} is not a list of distinct pieces of this quiz")
        slots = tuple(order) + (None,) * (len(self.slots) - len(order))
        return replace(self, slots=slots, checked=False)

    def check(self) -> SequenceAttempt:
        """Ask for marks: possible once a card is placed."""
        return replace(self, checked=True) if self.placed else self

    def show(self) -> SequenceAttempt:
        """Ask to see the answer."""
        return replace(self, shown=True)

    def order_for(self, correct_order) -> Sequence[str]:
        """The order to grade against: the one given, this scenario's from a mapping, and of several accepted orders
        (:attr:`SequenceQuiz.accepted_orders`) the one that agrees with most placed cards."""
        order = correct_order[self.scenario] if isinstance(correct_order, Mapping) else correct_order
        if order and not isinstance(order[0], str):  # several accepted orders
            return max(order, key=lambda o: (sum(grade_sequence(self.placed, o)), o == order[0]))
        return order

    def marks(self, correct_order: Sequence[str] | Mapping[str, Sequence[str]]) -> tuple[bool, ...]:
        """Right or wrong per placed card (:attr:`placed`), against ``correct_order``, or against this attempt's
        scenario's order when given every scenario's order (:attr:`SequenceQuiz.correct_order`)."""
        return grade_sequence(self.placed, self.order_for(correct_order))

    def solved(self, correct_order: Sequence[str] | Mapping[str, Sequence[str]]) -> bool:
        """The placed cards are the case's steps, in order, and nothing else."""
        return self.placed == tuple(self.order_for(correct_order))


def fits(quiz: SequenceQuiz, attempt: SequenceAttempt) -> bool:
    """Whether ``attempt`` is a round of this quiz as :func:`new_round` draws it and moves change it: a case of the
    quiz, its steps and every card left out of it in the tray, a slot per card, each placed card once, marks asked
    for only with a card placed."""
    if attempt.scenario not in quiz.correct_order:
        return False
    sc = quiz.scenario(attempt.scenario)
    tray = attempt.tray_order
    placed = attempt.placed
    return (len(set(tray)) == len(tray) and set(tray) == set(sc.order) | set(sc.left_out)
            and len(attempt.slots) == len(tray) and len(set(placed)) == len(placed) and set(placed) <= set(tray)
            and (bool(placed) or not attempt.checked))


def new_round(quiz: SequenceQuiz, seed: int, scenario: str | None = None) -> SequenceAttempt:
    """The attempt a seed draws: a scenario (or the one named), every card left out of it mixed in with its steps,
    and a shuffled tray."""
    rng = random.Random(f"round:{seed}")
    case = rng.choice(quiz.scenarios) if scenario is None else quiz.scenario(scenario)
    return SequenceAttempt.start(case.order, seed, sorted(case.left_out), case.id)
