"""Be the draft: a learner guesses the next K tokens of a recorded greedy run, and the target checks them.

Greedy decoding makes this exact without running a model: the target's choice at every position is
the token the recorded run wrote there (plain and speculative greedy output are the same tokens), and
the trace kept the target's top alternatives at every position it checked. So one loop of the learner
is: guess K tokens from position t, keep the longest prefix that matches the recorded tokens (j), add
the recorded token at t + j (the target's own +1), and start the next loop at t + j + 1: the same
rule as :func:`specsim.core.acceptance.verify` in greedy mode, with the recording standing in for the target.

The picks offered at each position (:func:`choices`) mix the target's favourites with the real draft's, in an
order shuffled per position: listed by probability, the target's own choice would always come first, and a
learner who always took the first pick would never be wrong.

The learner's α, tokens per loop and speedup come out of the same cost model as the real draft's
(:mod:`specsim.measure.costmodel`), at the recording's measured c, v and o.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from dataclasses import dataclass

from specsim.core.trace import TokenProb, Trace
from specsim.measure.costmodel import CostModel


def target_tops(trace: Trace) -> list[tuple[TokenProb, ...]]:
    """The target's top alternatives at each generated position, from the pass that decided it.

    A kept proposal's slot holds the target's distribution at its position; the +1 token's is
    ``extra_target_top``; the prefill's token's is ``first_target_top``. Positions after the text ended get an
    empty tuple.
    """
    tops: list[tuple[TokenProb, ...]] = [trace.first_target_top] if trace.first is not None else []
    for it in trace.iterations:
        decided = [s.target_top for s in it.slots[: it.n_accepted]] + [it.extra_target_top]
        tops += decided[: len(it.emitted)]
    return tops


def draft_tops(trace: Trace) -> list[tuple[TokenProb, ...]]:
    """The draft's top alternatives at each generated position, where the draft proposed one there.

    A kept slot and the first rejected slot hold the draft's guess and distribution at their positions (the +1
    token after a rejection lands on the rejected slot's position); the guess comes first, as a drafter without a
    distribution (prompt lookup) has only the guess. The +1 token after a fully kept draft lands where the draft
    made no guess: an empty tuple, as for the prefill's token and positions after the text ended.
    """
    def guessed(slot) -> tuple[TokenProb, ...]:
        return (TokenProb(slot.token_id, slot.text, slot.q), *slot.draft_top)

    tops: list[tuple[TokenProb, ...]] = [()] if trace.first is not None else []
    for it in trace.iterations:
        decided = [guessed(s) for s in it.slots[: it.n_accepted]]
        decided.append(guessed(it.slots[it.n_accepted]) if it.n_accepted < len(it.slots) else ())
        tops += decided[: len(it.emitted)]
    return tops


CHOICES = 6
"""Picks offered at one position: with one right answer among them, a blind pick is kept 1 time in 6."""


def choices(target_top: Sequence[TokenProb], draft_top: Sequence[TokenProb], seed: int,
            n: int = CHOICES) -> tuple[TokenProb, ...]:
    """The tokens offered for one guess: the target's favourite, then the draft's and the target's other top tokens
    taken in turn (each token once), up to ``n``, in an order shuffled by ``seed``.

    The draft's tokens are the plausible wrong answers a real draft makes; the shuffle keeps the list's order from
    telling which token the target chose.
    """
    picked: dict[int, TokenProb] = {}
    rest_target, rest_draft = list(target_top[1:]), list(draft_top)
    if target_top:
        picked[target_top[0].token_id] = target_top[0]
    while len(picked) < n and (rest_target or rest_draft):
        for source in (rest_draft, rest_target):
            if source and len(picked) < n:
                token = source.pop(0)
                picked.setdefault(token.token_id, token)
    offered = list(picked.values())
    random.Random(seed).shuffle(offered)
    return tuple(offered)


@dataclass(frozen=True)
class GuessLoop:
    """One loop of the learner's drafting, checked against the recording."""

    start: int  # position of the first guess in the generated tokens
    guesses: tuple[int, ...]
    kept: int  # j: the longest prefix of guesses equal to the target's tokens
    extra: int | None  # the target's own +1 token (None when the text ended with the last kept guess)

    @property
    def checked(self) -> int:
        """Guesses the target judged: the kept ones and the first wrong one (later ones are never checked)."""
        return self.kept + (1 if self.kept < len(self.guesses) else 0)

    @property
    def tokens(self) -> int:
        """Tokens this loop wrote: j kept guesses plus the +1 token."""
        return self.kept + (0 if self.extra is None else 1)


def check(target_tokens: Sequence[int], start: int, guesses: Sequence[int]) -> GuessLoop:
    """Judge ``guesses`` for the positions from ``start`` on, as a greedy verification pass would."""
    if not 0 <= start < len(target_tokens):
        raise ValueError(f"position {start} is outside the recorded run (0..{len(target_tokens) - 1})")
    kept = 0
    for offset, token in enumerate(guesses):
        if start + offset >= len(target_tokens) or target_tokens[start + offset] != token:
            break
        kept += 1
    after = start + kept
    extra = target_tokens[after] if after < len(target_tokens) else None
    return GuessLoop(start, tuple(guesses), kept, extra)


@dataclass(frozen=True)
class Score:
    """The learner's drafting so far, in the cost model's terms."""

    loops: int
    kept: int
    checked: int
    tokens: int
    guessed_per_loop: float  # K as the learner drafted it

    @property
    def alpha(self) -> float:
        return self.kept / self.checked if self.checked else 0.0

    @property
    def tokens_per_loop(self) -> float:
        return self.tokens / self.loops if self.loops else 0.0

    def speedup(self, recording: CostModel) -> float:
        """What these guesses would have given at the recording's c, v and o (the drafting priced at c)."""
        return dataclasses.replace(recording, k=self.guessed_per_loop, alpha=self.alpha,
                                   tokens_per_loop=self.tokens_per_loop).speedup


def score(loops: Sequence[GuessLoop]) -> Score:
    """Totals over the learner's loops."""
    n = len(loops)
    return Score(loops=n, kept=sum(g.kept for g in loops), checked=sum(g.checked for g in loops),
                 tokens=sum(g.tokens for g in loops),
                 guessed_per_loop=sum(len(g.guesses) for g in loops) / n if n else 0.0)
