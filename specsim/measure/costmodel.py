"""The one cost model: what a speculative loop costs and yields, read off the trace of real runs.

Every figure about a run's speed (the live page, "why this speed", the bench, the CLI, fair timing,
the variants comparison) comes from :func:`cost_model`, with one name and one estimator each:

    α   accepted ÷ checked proposals, pooled over the runs
    t   tokens per loop: new tokens per target pass (a speculative loop is one target pass)
    c   draft cost: the median over loops of drafting time per proposal ÷ the median plain pass
    v   verification cost: the median verification pass of each size ÷ the median plain pass,
        averaged over the loops as they ran, never below 1
    o   bookkeeping: time per loop outside both passes ÷ the median plain pass

    speedup = t ÷ (K·c + v + o)        (the lesson's t ÷ (K·c + v) when o = 0)

Medians, because these machines are shared: one slow pass moves a median little and a mean a lot.
A plain baseline whose passes split into a fast and a slow group, or spread too widely, is flagged as
noise (:func:`baseline_noise`), and a page shows it as noise with the reason, never as a result.

The factorisation used by "why this speed" (Leviathan et al., 2023, section 3.3, in passes):

    speedup = (K + 1) / [ (K + 1)/t  ×  v  ×  (K·c + v)/v  ×  (K·c + v + o)/(K·c + v) ]
                          acceptance   verify   drafting      bookkeeping
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from specsim.core.trace import Trace, pooled_acceptance_rate, pooled_tokens_per_pass
from specsim.measure import analytics

WARMUP_PASSES = 1  # a run's first plain pass pays for lazy initialisation; it is left out of the medians
SPREAD_LIMIT = 0.25  # interquartile range ÷ median of the plain passes above this: too spread to time
OUTLIER_SHARE = 0.2  # more than this share of plain passes 25 % away from the median: two groups
OUTLIER_BAND = 0.25

Factor = Literal["acceptance", "verification", "drafting", "bookkeeping"]


def plain_pass_times(plain: Sequence[Trace]) -> list[float]:
    """The one-token passes of plain runs, each run's first pass left out when it has others."""
    return [time for t in plain for time in (t.pass_times[WARMUP_PASSES:] if t.target_passes > WARMUP_PASSES
                                             else t.pass_times)]


def baseline_noise(times: Sequence[float]) -> str | None:
    """Why these plain pass times cannot serve as a baseline, or None when they can.

    Two tests: a wide spread (interquartile range over median), and a split into two groups (a large
    share of passes far from the median, as when a neighbour's job comes and goes). Fewer than four
    passes are too few to judge and pass.
    """
    if len(times) < 4:
        return None
    med = statistics.median(times)
    q1, _, q3 = statistics.quantiles(times, n=4, method="inclusive")
    far = sum(abs(x / med - 1.0) > OUTLIER_BAND for x in times) / len(times)
    if far > OUTLIER_SHARE:
        return (f"{far:.0%} of the plain passes were more than {OUTLIER_BAND:.0%} away from their median "
                f"({1000 * med:.1f} ms): the passes split into a fast and a slow group, so the machine was busy")
    if (q3 - q1) / med > SPREAD_LIMIT:
        return (f"the plain passes spread too widely (interquartile range {(q3 - q1) / med:.0%} of the median "
                f"{1000 * med:.1f} ms, above {SPREAD_LIMIT:.0%}), so the machine was busy")
    return None


@dataclass(frozen=True)
class CostModel:
    """One average loop of speculative runs, in plain one-token target passes (see the module's table)."""

    k_max: int  # the K setting (Trace.k_max: more where an adaptive K policy raised it)
    k: float  # proposals per loop, on average (fewer than K when a drafter finds nothing)
    draft_passes: float  # draft-model passes per loop, on average: k less the guesses copied from the text
    alpha: float
    tokens_per_loop: float  # t
    plain_pass_s: float  # the median plain pass, in seconds: the unit of c, v and o
    draft_cost: float  # c
    verify_cost: float  # v, at least 1
    verify_cost_raw: float  # v before the floor at 1 (a reading under 1 is noise)
    other_cost: float  # o
    plain_tokens_per_s: float
    spec_tokens_per_s: float
    noise: str | None = None  # why the plain baseline cannot be trusted, or None
    widest_pass: int = 0  # the most tokens one verification pass read (K + 1 in a chain; a tree and its root)
    tree: bool = False  # a token tree each loop (specsim.core.trees): k counts its draft passes, one per level

    @property
    def drafting(self) -> float:
        """K·c."""
        return self.k * self.draft_cost

    @property
    def copies(self) -> bool:
        """The guesses were copied from the text (prompt lookup): K·c is a search, not draft passes."""
        return self.k > 0 and self.draft_passes == 0

    def drafting_words(self) -> str:
        """What the loop's K·c paid for, in words: draft passes, or copied guesses (no draft pass)."""
        if self.tree:
            return f"{self.draft_passes:.1f} draft passes on average, one per level of the tree"
        if self.copies:
            return f"{self.k:.1f} copied guesses on average (no draft pass; K·c is the search)"
        copied = self.k - self.draft_passes
        if round(copied, 1) > 0:  # a hybrid drafter: a copied guess is proposed without a draft pass
            return (f"{self.k:.1f} guesses on average: {self.draft_passes:.1f} from draft passes, {copied:.1f} "
                    "copied from the text, which needs no draft pass (K·c)")
        return f"{self.draft_passes:.1f} draft passes on average (K·c)"

    @property
    def loop_cost(self) -> float:
        """K·c + v + o."""
        return self.drafting + self.verify_cost + self.other_cost

    @property
    def speedup(self) -> float:
        """The cost model's speedup: t ÷ (K·c + v + o). Never above t, since the loop costs at least 1."""
        return self.tokens_per_loop / self.loop_cost if self.loop_cost > 0 else 0.0

    @property
    def projected_speedup(self) -> float:
        """The same t, K, c and o with v = 1 (a memory-bound accelerator): a projection, not a measurement."""
        return self.tokens_per_loop / (self.drafting + 1.0 + self.other_cost)

    @property
    def wall_clock_speedup(self) -> float:
        """Speculative over plain tokens per second, prefill excluded."""
        return self.spec_tokens_per_s / self.plain_tokens_per_s if self.plain_tokens_per_s else 0.0

    @property
    def closed_form_tokens_per_loop(self) -> float:
        """E[j] + 1 at this α and K if every guess were kept independently with chance α: the calculator's t."""
        return float(analytics.tokens_per_loop(self.alpha, self.k_max))

    def losses(self) -> dict[Factor, float]:
        """The factors between the ideal K + 1 and :attr:`speedup`; their product is (K + 1) ÷ speedup."""
        core = self.drafting + self.verify_cost
        return {
            "acceptance": (self.k + 1) / self.tokens_per_loop if self.tokens_per_loop else math.inf,
            "verification": self.verify_cost,
            "drafting": core / self.verify_cost if self.verify_cost else math.inf,
            "bookkeeping": self.loop_cost / core if core else 1.0,
        }

    def decider(self) -> Factor:
        """The largest loss (acceptance wins a tie: it is the one the draft controls)."""
        losses = self.losses()
        return max(losses, key=lambda name: (losses[name], name == "acceptance"))


def drafts(it) -> int:
    """What K counts in an iteration: its guesses in a chain (one draft pass each, or a copy); the draft passes
    that grew its tree (one per level) in a tree run (:mod:`specsim.core.trees`)."""
    return it.k if it.tree is None else it.draft_passes


def guesses_read(it) -> int:
    """Guesses the iteration's verification pass read beside the context's last token: K in a chain, the whole tree's
    guesses in a tree run (v is the cost of that pass)."""
    return it.k if it.tree is None else it.tree.width_read - 1


def cost_model(spec: Sequence[Trace], plain: Sequence[Trace]) -> CostModel:
    """The cost model of speculative runs against plain runs of the same target (one pair per prompt)."""
    iterations = [it for t in spec for it in t.iterations]
    if not iterations:
        raise ValueError("the speculative runs recorded no loops")
    times = plain_pass_times(plain)
    if not times:
        raise ValueError("the plain runs recorded no passes")
    base = statistics.median(times)
    drafting = [it.draft_time_s / drafts(it) for it in iterations if drafts(it) > 0]
    c = statistics.median(drafting) / base if drafting else 0.0
    # A pass over k + 1 tokens costs more than one over fewer: the median per pass size, averaged over
    # the loops as they ran (a drafter that sometimes finds nothing mixes sizes).
    by_size: dict[int, list[float]] = {}
    for it in iterations:
        by_size.setdefault(guesses_read(it), []).append(it.verify_time_s)
    v_of = {k: statistics.median(ts) / base for k, ts in by_size.items()}
    v_raw = sum(v_of[guesses_read(it)] for it in iterations) / len(iterations)
    v = sum(max(1.0, v_of[guesses_read(it)]) for it in iterations) / len(iterations)
    # Work between the timed passes (recording the trace, an n-gram pool) is part of what a loop costs.
    # It comes from totals, so noise can only raise it and lower the model, never flatter it.
    timed = sum(it.draft_time_s + it.verify_time_s for it in iterations)
    other = max(0.0, sum(t.decode_time_s for t in spec) - timed) / len(iterations) / base
    spec_time, plain_time = sum(t.decode_time_s for t in spec), sum(t.decode_time_s for t in plain)
    return CostModel(
        k_max=max(t.k_max for t in spec), k=sum(drafts(it) for it in iterations) / len(iterations),
        draft_passes=sum(t.draft_passes for t in spec) / len(iterations),
        alpha=pooled_acceptance_rate(spec), tokens_per_loop=pooled_tokens_per_pass(spec), plain_pass_s=base,
        draft_cost=c, verify_cost=v, verify_cost_raw=v_raw, other_cost=other,
        plain_tokens_per_s=sum(t.n_decoded for t in plain) / plain_time if plain_time > 0 else 0.0,
        spec_tokens_per_s=sum(t.n_decoded for t in spec) / spec_time if spec_time > 0 else 0.0,
        noise=baseline_noise(times), widest_pass=max(guesses_read(it) for it in iterations) + 1,
        tree=any(it.tree is not None for it in iterations),
    )
