"""Fair speedups on a shared, noisy machine.

A wall-clock speedup (plain decode time / speculative decode time) is one number from two runs; a
neighbour's job starting during one of them can halve or double it. So every speedup shown is
checked against a second figure that noise hardly moves, the **cost model**:

    speedup = tokens per loop / (K·c + v)

where c (one draft pass) and v (one verification pass over K + 1 tokens) are the *medians* of the
per-pass times a run recorded, in units of the median plain one-token pass. A single slow pass moves
a median very little, while it moves a total a lot. Time a loop spends between its passes
(bookkeeping, o) is added as measured, so an engine's own overheads are not mistaken for noise.

When the two figures agree within :data:`TOLERANCE`, the wall clock is reported. When they do not,
the machine was too busy to time fairly and the cost model leads. Neither figure may exceed the
run's tokens per target pass: a loop costs at least one target pass, and a verification pass is never
cheaper than a one-token pass, so a drafter whose guesses are never kept (one token per pass) can
never show more than 1×.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from specsim.trace import Trace

TOLERANCE = 0.25  # |wall clock / cost model - 1| above this: the timing was disturbed
WARMUP_PASSES = 1  # a run's first plain pass pays for lazy initialisation; it is left out of the median


@dataclass(frozen=True)
class LoopCosts:
    """Median per-pass costs of a speculative run, in plain one-token passes."""

    plain_pass_s: float  # median plain one-token pass (seconds)
    draft_cost: float  # c: median draft pass / plain pass
    verify_cost: float  # v: median verification pass / plain pass, at least 1
    verify_cost_raw: float  # the same before clamping (a reading under 1 is noise)
    k: float  # mean proposals per loop (K, or fewer for drafters that may find nothing)
    tokens_per_loop: float
    tokens_per_target_pass: float  # the ceiling no speedup can pass
    other_cost: float = 0.0  # o: time per loop outside the draft and verification passes (bookkeeping)

    @property
    def loop_cost(self) -> float:
        """K·c + v + o: one average loop in plain passes."""
        return self.k * self.draft_cost + self.verify_cost + self.other_cost

    @property
    def model_speedup(self) -> float:
        """tokens per loop ÷ (K·c + v + o); with no bookkeeping, the lesson's t ÷ (K·c + v)."""
        return self.tokens_per_loop / self.loop_cost if self.loop_cost > 0 else 0.0


def median_plain_pass(plain: Sequence[Trace]) -> float:
    """Median one-token pass of plain runs, each run's first pass left out when it has others."""
    times = [p.time_s for t in plain for p in (t.passes[WARMUP_PASSES:] if len(t.passes) > WARMUP_PASSES
                                               else t.passes)]
    if not times:
        raise ValueError("the plain runs recorded no passes")
    return statistics.median(times)


def loop_costs(spec: Sequence[Trace], plain: Sequence[Trace]) -> LoopCosts:
    """Per-pass costs of speculative runs against plain runs of the same target, from medians.

    c is the median over loops of the loop's drafting time per proposal (for lookahead and Medusa
    trees, the time spent building the candidates); v the median verification pass of each size
    (k + 1 tokens), averaged over the loops as they ran.
    """
    iterations = [it for t in spec for it in t.iterations]
    if not iterations:
        raise ValueError("the speculative runs recorded no loops")
    base = median_plain_pass(plain)
    drafting = [it.draft_time_s / it.k for it in iterations if it.k > 0]
    c = statistics.median(drafting) / base if drafting else 0.0
    # A pass over k + 1 tokens costs more than one over fewer: take the median per pass size, then
    # average over the loops as they ran (a drafter that sometimes finds nothing mixes sizes).
    by_size: dict[int, list[float]] = {}
    for it in iterations:
        by_size.setdefault(it.k, []).append(it.verify_time_s)
    median_by_size = {k: statistics.median(times) / base for k, times in by_size.items()}
    v_raw = sum(median_by_size[it.k] for it in iterations) / len(iterations)
    v = sum(max(1.0, median_by_size[it.k]) for it in iterations) / len(iterations)
    generated = sum(t.n_generated for t in spec)
    # Work between the timed passes (recording the trace, updating an n-gram pool) is part of what a
    # loop costs. It is taken from totals, so noise can only raise it and lower the model, never
    # flatter it. The same gaps in plain decoding are left out for that reason: counting them would
    # let a disturbed plain run inflate the model just as it inflates the wall clock.
    timed = sum(it.draft_time_s + it.verify_time_s for it in iterations)
    other = max(0.0, sum(t.decode_time_s for t in spec) - timed) / len(iterations) / base
    return LoopCosts(
        plain_pass_s=base, draft_cost=c, verify_cost=v, verify_cost_raw=v_raw,
        k=sum(it.k for it in iterations) / len(iterations), tokens_per_loop=generated / len(iterations),
        tokens_per_target_pass=generated / len(iterations), other_cost=other,
    )


def wall_clock_speedup(spec: Trace, plain: Trace) -> float:
    """Speculative over plain tokens per second, prefill excluded (0 when either did not decode)."""
    if spec.decode_time_s <= 0 or plain.decode_time_s <= 0 or not plain.n_generated:
        return 0.0
    return (spec.n_generated / spec.decode_time_s) / (plain.n_generated / plain.decode_time_s)


@dataclass(frozen=True)
class FairSpeedup:
    """A wall-clock speedup (median over repeated runs) checked against the cost model."""

    wall_clock: tuple[float, ...]  # one ratio per (plain, speculative) pair of runs
    model: float
    ceiling: float  # tokens per target pass
    tolerance: float = TOLERANCE

    @property
    def measured(self) -> float:
        """Median of the wall-clock ratios."""
        return statistics.median(self.wall_clock) if self.wall_clock else 0.0

    @property
    def agrees(self) -> bool:
        """Whether wall clock and cost model agree within the tolerance."""
        if not self.wall_clock or self.model <= 0:
            return False
        return abs(self.measured / self.model - 1.0) <= self.tolerance

    @property
    def headline(self) -> float:
        """The figure to show: the wall clock when it agrees with the cost model, else the cost model;
        never above tokens per target pass."""
        figure = self.measured if self.agrees else self.model
        return min(figure, self.ceiling)

    @property
    def source(self) -> str:
        return "wall clock" if self.agrees else "cost model"

    def sentence(self) -> str:
        """What a page or a table note says about this figure."""
        runs = len(self.wall_clock)
        timed = f"the median of {runs} timed runs" if runs > 1 else "one timed run"
        if self.agrees:
            return (f"Timed fairly: {self.measured:.2f}× on the wall clock ({timed}, after a warm-up), and "
                    f"{self.model:.2f}× from the cost model (tokens per loop ÷ (K·c + v + o) with median pass "
                    f"times); they agree within ±{self.tolerance:.0%}.")
        return (f"The machine was too busy to time fairly. The cost model, built from median pass times, gives "
                f"{min(self.model, self.ceiling):.2f}×; the wall clock said {self.measured:.2f}× ({timed}), more "
                f"than ±{self.tolerance:.0%} away, so it is shown as noise, not as a result.")


def fair_speedup(pairs: Sequence[tuple[Trace, Trace]], tolerance: float = TOLERANCE) -> FairSpeedup:
    """Judge (speculative, plain) pairs of runs of the same prompt: wall clock against cost model."""
    if not pairs:
        raise ValueError("no runs to judge")
    spec = [s for s, _ in pairs]
    plain = [p for _, p in pairs]
    costs = loop_costs(spec, plain)
    return FairSpeedup(
        wall_clock=tuple(wall_clock_speedup(s, p) for s, p in pairs), model=costs.model_speedup,
        ceiling=costs.tokens_per_target_pass, tolerance=tolerance)
