"""Quiz content: order one round of speculative decoding, and a knowledge check.

The questions live in ``assets/quiz/*.json``; this module loads them into frozen dataclasses, checking the
files' shape with pydantic and what it cannot know (templates that fill, distinct options) itself, and refuses
malformed data with a :class:`QuizDataError` that names the problem. An attempt at either quiz, and its grading,
are in :mod:`specsim.lesson.quiz_attempts`.

Numeric questions never type their figures. They store the inputs (``{"alpha": 0.7, "k": 4}``)
and the quantity asked for (``"tokens_per_loop"``); every figure in the prompt, the options and
the explanation is a ``str.format`` template filled from :mod:`specsim.measure.analytics` at load time.
Every question may also quote the papers' figures from :mod:`specsim.core.published` by name
(``{chen.draft_ms_per_token}``, ``{leviathan.year}``, ``{fu_speedup.figure}``; see :data:`PUBLISHED`).

Transfer questions name a model of :mod:`specsim.lesson.transfer` (``"transfer": "k_choice"``): each attempt draws
its own numbers from the attempt's seed (:func:`questions_for`), and the model computes the key's figure and each
distractor's. A question may hold a pool of misconceptions (``"show": 4`` with a ``"why"`` sentence per option):
each attempt shows the key and three of them, the key's rank among the numbers drawn evenly
(:func:`specsim.lesson.transfer.shown_options`), and its explanation takes the sentences of the distractors shown.
An attempt's answers are graded against its own draw (the page draws the questions and the option order from the
attempt's seed). Each question names where to revisit it (``"revisit": {"page": "calculator", "section": "…"}``),
a page's url path from :mod:`app.layout` and a heading on that page.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, Field, StringConstraints, ValidationError, field_validator, model_validator

from specsim.core import published
from specsim.core.paths import QUIZ
from specsim.lesson import transfer
from specsim.measure import analytics

SEQUENCE_FILE = QUIZ / "sequence.json"
KNOWLEDGE_FILE = QUIZ / "knowledge.json"
KNOWLEDGE_QUESTION_COUNT = 20
CHECKED_DRAWS = range(24)  # the seeds each transfer question is filled at on loading, to refuse a template that fails

#: The closed forms a numeric question may ask for, by name.
QUANTITIES = {
    name: getattr(analytics, name)
    for name in (
        "tokens_per_loop",
        "expected_accepted_prefix",
        "cost_per_loop",
        "speedup",
        "wasted_draft_tokens",
        "optimal_k",
        "useless_draft_loss",
    )
}


#: The papers' figures every question may quote, by name.
PUBLISHED = {
    "chen": published.CHEN_2023, "leviathan": published.LEVIATHAN_2023,
    "chen_speedup": published.CHEN_SPEEDUP, "leviathan_speedup": published.LEVIATHAN_SPEEDUP,
    "yang_speedup": published.YANG_SPEEDUP, "fu_speedup": published.FU_SPEEDUP,
    "saxena_speedup": published.SAXENA_SPEEDUP, "medusa_1_speedup": published.MEDUSA_1_SPEEDUP,
    "medusa_2_speedup": published.MEDUSA_2_SPEEDUP, "nvidia_medusa_speedup": published.NVIDIA_MEDUSA_SPEEDUP,
    "nvidia_medusa_70b_speedup": published.NVIDIA_MEDUSA_70B_SPEEDUP,
}


class QuizDataError(ValueError):
    """The quiz data file is malformed; the message says where and why."""


# ---- data ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Piece:
    """One step of a round, as a card to place."""

    id: str
    text: str
    explanation: str


@dataclass(frozen=True)
class Scenario:
    """One case of a round: what happens (the setting), its steps in order, and the cards that do not belong to it,
    each a step of another case, with why it is not one here (empty: the card's own explanation says it)."""

    id: str
    setting: str
    order: tuple[str, ...]
    left_out: Mapping[str, str] = field(hash=False)
    either: tuple[tuple[str, str], ...] = ()  # neighbouring steps that may come in either order

    @property
    def orders(self) -> tuple[tuple[str, ...], ...]:
        """Every order that counts as right: :attr:`order`, and it with each pair of :attr:`either` swapped."""
        out = [self.order]
        for a, b in self.either:
            i, j = self.order.index(a), self.order.index(b)
            swapped = list(self.order)
            swapped[i], swapped[j] = b, a
            out.append(tuple(swapped))
        return tuple(out)


@dataclass(frozen=True)
class SequenceQuiz:
    """The cards of every case of a round (``pieces``), and the cases (``scenarios``)."""

    prompt: str
    pieces: tuple[Piece, ...]
    scenarios: tuple[Scenario, ...] = ()

    @property
    def correct_order(self) -> Mapping[str, tuple[str, ...]]:
        """Each scenario's order, by scenario id: the one the answer shows."""
        return {sc.id: sc.order for sc in self.scenarios}

    @property
    def accepted_orders(self) -> Mapping[str, tuple[tuple[str, ...], ...]]:
        """Each scenario's orders that count as right (:attr:`Scenario.orders`): what
        :meth:`~specsim.lesson.quiz_attempts.SequenceAttempt.marks` and
        :meth:`~specsim.lesson.quiz_attempts.SequenceAttempt.solved` grade an attempt against."""
        return {sc.id: sc.orders for sc in self.scenarios}

    def piece(self, piece_id: str) -> Piece:
        return next(p for p in self.pieces if p.id == piece_id)

    def scenario(self, scenario_id: str) -> Scenario:
        return next(sc for sc in self.scenarios if sc.id == scenario_id)

    def why_left_out(self, scenario_id: str, piece_id: str) -> str:
        return self.scenario(scenario_id).left_out.get(piece_id) or self.piece(piece_id).explanation


@dataclass(frozen=True)
class NumericAnswer:
    """What a numeric question computes: ``QUANTITIES[quantity](**inputs)`` shown to ``decimals``."""

    quantity: str
    inputs: Mapping[str, float] = field(hash=False)
    decimals: int
    value: float


@dataclass(frozen=True)
class Revisit:
    """Where the lesson teaches what a question asks: a page's url path and a section heading on it."""

    page: str
    section: str


@dataclass(frozen=True)
class Question:
    """One multiple-choice question; ``options[answer]`` is the only correct option."""

    id: str
    topic: str
    prompt: str
    options: tuple[str, ...]
    answer: int
    explanation: str
    numeric: NumericAnswer | None = None
    revisit: Revisit | None = None
    transfer: str | None = None  # the model of specsim.lesson.transfer that draws this question's numbers
    source: Mapping[str, Any] | None = field(default=None, hash=False, compare=False, repr=False)

    @property
    def correct_option(self) -> str:
        return self.options[self.answer]


def _require(cond: bool, where: str, message: str) -> None:
    if not cond:
        raise QuizDataError(f"{where}: {message}")


# ---- the files' shape, checked by pydantic; what it cannot know (templates, sums) is checked below --------------
_Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class _RawNumeric(BaseModel):
    quantity: str
    inputs: dict[str, int | float] = Field(min_length=1)  # an int stays an int: "K = 5", not "K = 5.0"
    decimals: int = Field(2, ge=0)

    @field_validator("quantity")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in QUANTITIES:
            raise ValueError(f"unknown quantity {value!r}; known: {sorted(QUANTITIES)}")
        return value


class _RawRevisit(BaseModel):
    page: _Text
    section: _Text


class _RawQuestion(BaseModel):
    id: _Text
    topic: str = ""
    prompt: _Text
    options: list[_Text] = Field(min_length=2)
    answer: int
    explanation: _Text
    numeric: _RawNumeric | None = None
    transfer: str | None = None
    revisit: _RawRevisit | None = None
    # A pool of misconceptions: ``show`` options per attempt, the key and distractors drawn from the rest, each
    # distractor with its sentence of ``why`` (added to the explanation when it is shown). A misconception on each
    # side of the key, drawn anew, keeps the key's rank among numbers from giving it away.
    show: int | None = Field(None, ge=2)
    why: list[str] | None = None

    @field_validator("transfer")
    @classmethod
    def _known_model(cls, value: str | None) -> str | None:
        if value is not None and value not in transfer.MODELS:
            raise ValueError(f"unknown transfer model {value!r}; known: {sorted(transfer.MODELS)}")
        return value

    @model_validator(mode="after")
    def _answer_is_an_option(self):
        if not 0 <= self.answer < len(self.options):
            raise ValueError("'answer' must index one of the options")
        if self.show is not None and (self.show > len(self.options) or self.why is None):
            raise ValueError("'show' needs at least that many options and a 'why' for each")
        if self.why is not None and len(self.why) != len(self.options):
            raise ValueError("'why' needs one sentence per option (the key's may be empty)")
        return self


class _RawKnowledge(BaseModel):
    questions: list[dict[str, Any]]  # each one read by parse_question, which names it in its message


class _RawPiece(BaseModel):
    id: _Text
    text: _Text
    explanation: _Text


class _RawScenario(BaseModel):
    id: _Text
    setting: _Text
    order: list[str] = Field(min_length=2)
    left_out: dict[str, str] = Field(min_length=1)
    either: list[tuple[str, str]] = []


class _RawSequence(BaseModel):
    prompt: _Text
    pieces: list[_RawPiece] = Field(min_length=2)
    scenarios: list[_RawScenario] = Field(min_length=1)


def _read(model: type[BaseModel], raw: Any, where: str) -> Any:
    """``raw`` checked against ``model``; QuizDataError naming the place and the field otherwise."""
    try:
        return model.model_validate(raw)
    except ValidationError as error:
        first = error.errors()[0]
        fields = [f"'{part}'" if isinstance(part, str) else f"#{part + 1}" for part in first["loc"]]
        message = str(first["ctx"]["error"]) if first["type"] == "value_error" else first["msg"]
        raise QuizDataError(f"{where}: {' '.join(fields)} {message}".replace("  ", " ")) from None


def numeric_namespace(inputs: Mapping[str, float]) -> dict[str, float]:
    """The inputs plus every quantity in :data:`QUANTITIES` that they determine (for templates)."""
    names: dict[str, float] = dict(inputs)
    for name, func in QUANTITIES.items():
        params = inspect.signature(func).parameters.values()
        required = [p.name for p in params if p.default is inspect.Parameter.empty]
        if all(r in inputs for r in required):
            names[name] = func(**{p.name: inputs[p.name] for p in params if p.name in inputs})
    if "alpha" in inputs and "k" in inputs:
        names["alpha_times_k"] = inputs["alpha"] * inputs["k"]  # the tempting wrong answer: no prefix rule
    if "k" in inputs and "draft_cost" in inputs:  # tempting wrong answers for a draft that is never right:
        names["plain_less_drafting"] = 1.0 - inputs["k"] * inputs["draft_cost"]  # drafting subtracted, not divided
        names["one_draft_pass_speed"] = float(analytics.speedup(0.0, 1, inputs["draft_cost"]))  # "drafting stops early"
    names["k_min"], names["k_max"] = analytics.K_MIN, analytics.K_MAX  # the range optimal_k searches
    return names


def _fill(template: str, names: Mapping[str, Any], where: str) -> str:
    try:
        return template.format(**names)
    except (KeyError, ValueError, IndexError, AttributeError) as exc:
        raise QuizDataError(f"{where}: template {template!r} cannot be filled ({exc!r})") from exc


def parse_question(raw: Mapping[str, Any], where: str = "question", seed: int | str = 0) -> Question:
    """Validate one question dict from the JSON file and build a :class:`Question` (a transfer question drawn at
    ``seed``)."""
    if isinstance(raw, Mapping) and isinstance(raw.get("id"), str) and raw["id"].strip():
        where = f"question {raw['id'].strip()!r}"
    q = _read(_RawQuestion, raw, where)
    numeric = None
    names: dict[str, Any] = dict(PUBLISHED)
    if q.transfer is not None:
        names.update(transfer.draw(q.transfer, f"{seed}:{q.id}"))
    if q.numeric is not None:
        computed = numeric_namespace(q.numeric.inputs)
        _require(q.numeric.quantity in computed, where,
                 f"the inputs {sorted(q.numeric.inputs)} do not determine {q.numeric.quantity!r}")
        names.update(computed, answer=computed[q.numeric.quantity])
        numeric = NumericAnswer(q.numeric.quantity, dict(q.numeric.inputs), q.numeric.decimals,
                                float(computed[q.numeric.quantity]))
    prompt, explanation = _fill(q.prompt, names, where), _fill(q.explanation, names, where)
    options = tuple(_fill(o, names, where).strip() for o in q.options)
    _require(len(set(options)) == len(options), where, "options must be distinct")
    answer = q.answer
    if q.why is not None:
        shown = transfer.shown_options(options, q.answer, q.show or len(options), f"{seed}:{q.id}")
        explanation = " ".join([explanation] + [_fill(q.why[i], names, where) for i in shown if i != q.answer])
        options, answer = tuple(options[i] for i in shown), shown.index(q.answer)
    revisit = None if q.revisit is None else Revisit(q.revisit.page, q.revisit.section)
    return Question(q.id, q.topic, prompt, options, answer, explanation, numeric, revisit, q.transfer, dict(raw))


def questions_for(questions: Sequence[Question], seed: int) -> tuple[Question, ...]:
    """The questions as the attempt with ``seed`` shows them: each transfer question drawn for this attempt."""
    return tuple(parse_question(q.source, seed=seed) if q.transfer is not None and q.source is not None else q
                 for q in questions)


def parse_knowledge(raw: Mapping[str, Any], count: int = KNOWLEDGE_QUESTION_COUNT) -> tuple[Question, ...]:
    """Validate the knowledge-check document: exactly ``count`` questions with distinct ids."""
    items = _read(_RawKnowledge, raw, "knowledge quiz").questions
    _require(len(items) == count, "knowledge quiz", f"must hold exactly {count} questions, found {len(items)}")
    questions = tuple(parse_question(item, f"question #{n + 1}") for n, item in enumerate(items))
    for n, (item, q) in enumerate(zip(items, questions, strict=True)):
        if q.transfer is not None:  # every draw must fill, with distinct options
            for seed in CHECKED_DRAWS:
                parse_question(item, f"question #{n + 1}", seed)
    ids = [q.id for q in questions]
    _require(len(set(ids)) == len(ids), "knowledge quiz", "question ids must be distinct")
    return questions


def parse_sequence(raw: Mapping[str, Any]) -> SequenceQuiz:
    """Validate the sequencing document: distinct cards, and scenarios whose steps and left-out cards are cards."""
    doc = _read(_RawSequence, raw, "sequence quiz")
    pieces = tuple(Piece(p.id, p.text, p.explanation) for p in doc.pieces)
    for attr in ("id", "text"):
        values = [getattr(p, attr) for p in pieces]
        _require(len(set(values)) == len(values), "sequence quiz", f"piece {attr}s must be distinct")
    ids = {p.id for p in pieces}
    scenarios = []
    for sc in doc.scenarios:
        where = f"sequence quiz, scenario {sc.id!r}"
        _require(len(set(sc.order)) == len(sc.order) and set(sc.order) <= ids, where, "steps must be distinct cards")
        _require(set(sc.left_out) <= ids - set(sc.order), where, "a left-out card must be a card not in its order")
        for a, b in sc.either:
            if a not in sc.order or b not in sc.order or abs(sc.order.index(a) - sc.order.index(b)) != 1:
                raise QuizDataError(f"scenario {sc.id!r}: 'either' pairs neighbouring steps of its order, not "
                                    f"{a!r} and {b!r}")
        scenarios.append(Scenario(sc.id, sc.setting, tuple(sc.order), dict(sc.left_out),
                                  tuple(tuple(pair) for pair in sc.either)))
    _require(len({sc.id for sc in scenarios}) == len(scenarios), "sequence quiz", "scenario ids must be distinct")
    for sc in scenarios:  # a card no real round contains would stand out: every stranger is another case's step
        elsewhere = {p for other in scenarios if other.id != sc.id for p in other.order}
        strays = sorted(set(sc.left_out) - elsewhere)
        _require(not strays, f"sequence quiz, scenario {sc.id!r}",
                 f"a left-out card must be a step of another case, and {strays} is not")
    return SequenceQuiz(doc.prompt, pieces, tuple(scenarios))


def load_knowledge(path: Path | str | None = None) -> tuple[Question, ...]:
    """Read and validate the knowledge-check questions (from :data:`KNOWLEDGE_FILE` by default)."""
    return parse_knowledge(json.loads(Path(path or KNOWLEDGE_FILE).read_text(encoding="utf-8")))


def load_sequence(path: Path | str | None = None) -> SequenceQuiz:
    """Read and validate the sequencing quiz (from :data:`SEQUENCE_FILE` by default)."""
    return parse_sequence(json.loads(Path(path or SEQUENCE_FILE).read_text(encoding="utf-8")))
