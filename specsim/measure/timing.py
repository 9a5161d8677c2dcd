"""The one timing driver: every measured speedup in specsim is timed here, the same way.

How speed is measured (README, "How speed is measured"): tokens per second of a speculative run over tokens per
second of a plain run of the same prompt, prompt prefill excluded, after an untimed warm-up of every decoder.

A shared machine's load drifts while it measures, so the runs are interleaved. Each round decodes every prompt
plainly and with every contender, in an order that changes from round to round: reversed every other round
(``order="alternate"``) or drawn at random (``order="shuffle"``), so no decoder is always the first, coldest
run. Each contender's run is paired with the plain run of the same prompt in the same round. With
``matched_plain`` (the live page, the recordings) the plain run follows each contender's run and decodes as many
tokens as it wrote, so a run that stopped early is compared over the same length.

What comes back (:class:`Timed`) is what the cost model (:func:`specsim.measure.costmodel.cost_model`) and the fair
speedup (:func:`specsim.measure.fairtime.fair_speedup`) read: every run's trace, each with its plain partner.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from specsim.core.trace import Trace
from specsim.measure.costmodel import CostModel, cost_model
from specsim.measure.fairtime import FairSpeedup, fair_speedup

Decode = Callable[[Sequence[int], int], Trace]
"""One way to decode: (prompt ids, new tokens) -> the run's trace."""

PLAIN = "plain"  # the name plain decoding's runs go by in progress reports
ORDERS = ("alternate", "shuffle")


@dataclass(frozen=True)
class Contender:
    """A decoder to time against plain decoding."""

    name: str
    decode: Decode


@dataclass
class Timed:
    """Every timed run: ``runs[name][i]`` was paired with ``plains[name][i]`` (the same prompt and round)."""

    runs: dict[str, list[Trace]] = field(default_factory=dict)
    plains: dict[str, list[Trace]] = field(default_factory=dict)
    rounds: int = 0  # rounds completed
    complete: bool = True  # False when should_stop ended the timing early

    def pairs(self, name: str) -> list[tuple[Trace, Trace]]:
        """(contender run, its plain run) for every run that has its plain partner."""
        return list(zip(self.runs.get(name, []), self.plains.get(name, []), strict=False))

    def plain_runs(self) -> list[Trace]:
        """Every plain run once, in the order they ran."""
        seen: dict[int, Trace] = {}
        for plains in self.plains.values():
            for trace in plains:
                seen.setdefault(id(trace), trace)
        return list(seen.values())

    def costs(self, name: str) -> CostModel:
        """The cost model of a contender's paired runs."""
        pairs = self.pairs(name)
        return cost_model([s for s, _ in pairs], [p for _, p in pairs])

    def fair(self, name: str) -> FairSpeedup:
        """Wall clock against the cost model for a contender's paired runs."""
        return fair_speedup(self.pairs(name))

    def identical(self, name: str) -> bool:
        """Whether every run of the contender wrote its plain partner's tokens (matched runs: over its length)."""
        return all(s.generated_ids == p.generated_ids for s, p in self.pairs(name))


def warm_up(prompt_ids: Sequence[int], contenders: Sequence[Contender], plain: Decode, tokens: int = 2) -> None:
    """Decode a few tokens with every decoder, untimed, so no timed run pays for first-call set-up."""
    for contender in contenders:
        contender.decode(prompt_ids, tokens)
    plain(prompt_ids, tokens)


def time_decoders(
    prompts: Sequence[Sequence[int]], contenders: Sequence[Contender], plain: Decode, max_new_tokens: int,
    rounds: int = 1, order: str = "alternate", seed: int = 0, warmup_tokens: int = 2, matched_plain: bool = False,
    enough: Callable[[Timed], bool] | None = None, on_run: Callable[[int, int, str, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Timed:
    """Warm up, then time ``contenders`` against ``plain`` decoding on every prompt, interleaved (module docstring).

    ``rounds`` is the most rounds; ``enough(timed)``, asked after each round, ends the timing sooner.
    ``on_run(round, prompt index, name, new tokens)`` is called before each timed run, ``should_stop()`` after
    each; a True ends the timing at once, keeping every run so far (``complete`` is then False).
    """
    if not prompts or not contenders:
        raise ValueError("nothing to time: give at least one prompt and one contender")
    if rounds < 1:
        raise ValueError("rounds must be at least 1")
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}; got {order!r}")
    names = [c.name for c in contenders]
    if len(set(names)) != len(names) or PLAIN in names:
        raise ValueError(f"contender names must be distinct and not {PLAIN!r}: {names}")
    rng = random.Random(seed)
    timed = Timed(runs={n: [] for n in names}, plains={n: [] for n in names})
    if warmup_tokens:
        warm_up(prompts[0], contenders, plain, warmup_tokens)
    stop = should_stop or (lambda: False)

    def run(r: int, i: int, name: str, decode: Decode, ids: Sequence[int], n: int) -> Trace:
        if on_run is not None:
            on_run(r, i, name, n)
        return decode(ids, n)

    for r in range(rounds):
        for i, ids in enumerate(prompts):
            line: list[Contender | None] = [None, *contenders]  # None: the plain run
            if order == "shuffle":
                rng.shuffle(line)
            elif r % 2:
                line.reverse()
            if matched_plain:
                for contender in (c for c in line if c is not None):
                    spec = run(r, i, contender.name, contender.decode, ids, max_new_tokens)
                    timed.runs[contender.name].append(spec)
                    if stop():
                        timed.complete = False
                        return timed
                    if spec.n_generated:
                        timed.plains[contender.name].append(run(r, i, PLAIN, plain, ids, spec.n_generated))
                    if stop():
                        timed.complete = False
                        return timed
                continue
            plain_run: Trace | None = None
            waiting: list[str] = []  # contenders that ran before this round's plain run
            for contender in line:
                if contender is None:
                    plain_run = run(r, i, PLAIN, plain, ids, max_new_tokens)
                    for name in waiting:
                        timed.plains[name].append(plain_run)
                else:
                    timed.runs[contender.name].append(run(r, i, contender.name, contender.decode, ids,
                                                          max_new_tokens))
                    if plain_run is None:
                        waiting.append(contender.name)
                    else:
                        timed.plains[contender.name].append(plain_run)
                if stop():
                    timed.complete = False
                    return timed
        timed.rounds = r + 1
        if enough is not None and enough(timed):
            break
    return timed
