"""Worked exercises for the knowledge check page: numbers drawn per attempt, answers computed by the library.

Each exercise draws its inputs from a seed (:func:`draw`), so the same seed gives the same numbers, and computes its
answer with the lesson's own functions: :func:`specsim.measure.analytics.expected_accepted_prefix` for E[j],
:func:`specsim.lesson.unchanged.residual` for the distribution drawn after a refusal, and
:func:`specsim.measure.analytics.speedup` for the better of two K from measured τ and v(n). :func:`read_number` turns a
learner's text into a number or a message saying what is wrong with it, and :func:`close` says whether it is right.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from specsim.lesson.unchanged import residual
from specsim.measure import analytics

TOKENS = "ABCD"
ALPHAS = (0.55, 0.6, 0.65, 0.75, 0.8, 0.85, 0.9)  # 0.70 is the calculator's opening α
TOLERANCE = 0.01  # an answer within 0.01 (or 1 %, if larger) of the computed one counts as right


@dataclass(frozen=True)
class PrefixExercise:
    """E[j], the average number of kept guesses a loop, for K guesses each kept with chance α (given every earlier
    one was)."""

    alpha: float
    k: int

    @property
    def answer(self) -> float:
        return float(analytics.expected_accepted_prefix(self.alpha, self.k))

    @property
    def terms(self) -> list[float]:
        """α^i for i = 1..K: the chance that guess i is kept."""
        return [self.alpha ** i for i in range(1, self.k + 1)]


@dataclass(frozen=True)
class ResidualExercise:
    """The distribution the replacement is drawn from after the target refuses a sampled guess: norm(max(0, p − q))."""

    p: tuple[float, ...]
    q: tuple[float, ...]

    @property
    def answer(self) -> tuple[float, ...]:
        return tuple(float(x) for x in residual(self.p, self.q))

    @property
    def excess(self) -> tuple[float, ...]:
        """max(0, p − q) per token, before it is rescaled."""
        return tuple(max(0.0, a - b) for a, b in zip(self.p, self.q, strict=True))


@dataclass(frozen=True)
class KChoiceExercise:
    """Two K with their measured τ and v(K + 1), and the draft's cost c: which K is faster."""

    c: float
    ks: tuple[int, int]
    taus: tuple[float, float]
    vs: tuple[float, float]

    @property
    def speedups(self) -> tuple[float, float]:
        """τ / (K·c + v(K + 1)) for each K."""
        return tuple(float(tau / analytics.cost_per_loop(k, self.c, v))
                     for k, tau, v in zip(self.ks, self.taus, self.vs, strict=True))

    @property
    def answer(self) -> int:
        return analytics.best_k(dict(zip(self.ks, self.speedups, strict=True)))


@dataclass(frozen=True)
class Exercises:
    prefix: PrefixExercise
    residual: ResidualExercise
    k_choice: KChoiceExercise


def _distribution(rng: random.Random) -> tuple[float, ...]:
    """Four probabilities in steps of 0.05, each at least 0.05."""
    cuts = sorted(rng.sample(range(1, 20), 3))
    return tuple(round(b / 20 - a / 20, 2) for a, b in zip([0, *cuts], [*cuts, 20], strict=True))


def _residual(rng: random.Random) -> ResidualExercise:
    while True:
        p, q = _distribution(rng), _distribution(rng)
        if p != q and sum(a > b for a, b in zip(p, q, strict=True)) >= 2:  # a residual with two tokens or more
            return ResidualExercise(p, q)


def _k_choice(rng: random.Random) -> KChoiceExercise:
    """τ measured on a draft whose per-slot acceptance falls along the draft (so τ is not the i.i.d. closed form), and
    a v that grows with the pass; drawn again until the two speedups differ by 0.05 or more and the winner is the K a
    coin chose (left alone, the shorter K would win most draws, and a learner could learn that instead)."""
    longer_wins = rng.random() < 0.5
    while True:
        c, alpha = rng.choice((0.04, 0.05, 0.06, 0.08, 0.1)), rng.choice(ALPHAS)
        ks = (rng.choice((2, 3, 4)), rng.choice((5, 6, 7, 8)))
        decay = rng.choice((0.9, 0.95, 1.0))
        taus = tuple(round(analytics.tokens_per_loop_by_position([alpha * decay ** i for i in range(k)], k), 2)
                     for k in ks)
        vs = (rng.choice((1.0, 1.02, 1.05, 1.1)), rng.choice((1.15, 1.2, 1.3, 1.4, 1.5)))
        ex = KChoiceExercise(c, ks, taus, vs)
        if abs(ex.speedups[0] - ex.speedups[1]) >= 0.05 and (ex.answer == ex.ks[1]) == longer_wins:
            return ex


def draw(seed: int) -> Exercises:
    """The exercises of one attempt: the same seed gives the same numbers."""
    rng = random.Random(f"exercises:{seed}")
    prefix = PrefixExercise(rng.choice(ALPHAS), rng.choice((3, 4, 5, 6)))
    return Exercises(prefix, _residual(rng), _k_choice(rng))


def read_number(text: str) -> tuple[float | None, str | None]:
    """The number a learner typed, or None and a message saying what is wrong. Accepts a decimal comma and a
    trailing %, read as a percentage (40% is 0.4)."""
    cleaned = text.strip().replace(",", ".").replace("−", "-")
    if not cleaned:
        return None, "Type a number first."
    percent = cleaned.endswith("%")
    try:
        value = float(cleaned.rstrip("%").strip())
    except ValueError:
        return None, f"“{text.strip()}” is not a number: type digits, such as 1.25."
    if value != value or value in (float("inf"), float("-inf")):
        return None, f"“{text.strip()}” is not a finite number."
    return (value / 100 if percent else value), None


def close(given: float, expected: float) -> bool:
    """Right within :data:`TOLERANCE` absolute or 1 % relative, whichever is larger."""
    return abs(given - expected) <= max(TOLERANCE, 0.01 * abs(expected)) + 1e-12
