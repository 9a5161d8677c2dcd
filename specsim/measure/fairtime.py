"""Fair speedups on a shared, noisy machine.

A wall-clock speedup (plain decode time / speculative decode time) is one number from two runs; a
neighbour's job starting during one of them can halve or double it. So every speedup shown is
checked against a second figure that noise hardly moves, the cost model of :mod:`specsim.measure.costmodel`
(t ÷ (K·c + v + o) from median pass times).

When the two figures agree within :data:`TOLERANCE`, the wall clock is reported. When they do not, or
when the plain baseline itself was noisy, the machine was too busy to time fairly and the cost model
leads. Neither figure may exceed the
run's tokens per target pass: a loop costs at least one target pass, and a verification pass is never
cheaper than a one-token pass, so a drafter whose guesses are never kept (one token per pass) can
never show more than 1×.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from specsim.core.trace import Trace
from specsim.measure.costmodel import cost_model

TOLERANCE = 0.25  # |wall clock / cost model - 1| above this: the timing was disturbed


def wall_clock_speedup(spec: Trace, plain: Trace) -> float:
    """Speculative over plain tokens per second, prefill excluded (0 when either did not decode)."""
    if spec.decode_time_s <= 0 or plain.decode_time_s <= 0 or not plain.n_decoded:
        return 0.0
    return spec.tokens_per_s / plain.tokens_per_s


@dataclass(frozen=True)
class FairSpeedup:
    """A wall-clock speedup (median over repeated runs) checked against the cost model."""

    wall_clock: tuple[float, ...]  # one ratio per (plain, speculative) pair of runs
    model: float
    ceiling: float  # tokens per target pass
    tolerance: float = TOLERANCE
    noise: str | None = None  # why the plain baseline was noisy (costmodel.baseline_noise), or None
    drafting: str = "K·c"  # how the cost model's drafting term is written: a tree run's is its draft passes · c

    @property
    def measured(self) -> float:
        """Median of the wall-clock ratios."""
        return statistics.median(self.wall_clock) if self.wall_clock else 0.0

    @property
    def agrees(self) -> bool:
        """Whether wall clock and cost model agree within the tolerance."""
        if not self.wall_clock or self.model <= 0 or self.noise:
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
                    f"{self.model:.2f}× from the cost model (tokens per loop ÷ ({self.drafting} + v + o) with median "
                    f"pass times): they agree (the check allows up to ±{self.tolerance:.0%}).")
        if self.noise:
            return (f"The plain baseline was noisy: {self.noise}. The wall clock said {self.measured:.2f}× ({timed}); "
                    "that is noise, not a result. The cost model from median pass times gives "
                    f"{min(self.model, self.ceiling):.2f}×.")
        return (f"The machine was too busy to time fairly. The cost model, built from median pass times, gives "
                f"{min(self.model, self.ceiling):.2f}×; the wall clock said {self.measured:.2f}× ({timed}), more "
                f"than ±{self.tolerance:.0%} away, so it is shown as noise, not as a result.")


def fair_speedup(pairs: Sequence[tuple[Trace, Trace]], tolerance: float = TOLERANCE) -> FairSpeedup:
    """Judge (speculative, plain) pairs of runs of the same prompt: wall clock against cost model."""
    if not pairs:
        raise ValueError("no runs to judge")
    spec = [s for s, _ in pairs]
    plain = [p for _, p in pairs]
    costs = cost_model(spec, plain)
    return FairSpeedup(
        wall_clock=tuple(wall_clock_speedup(s, p) for s, p in pairs), model=costs.speedup,
        ceiling=costs.tokens_per_loop, tolerance=tolerance, noise=costs.noise,
        drafting="draft passes · c" if costs.tree else "K·c")
