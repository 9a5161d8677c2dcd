"""Measured costs of real runs, and the calculator's prediction from them.

The closed forms in :mod:`specsim.analytics` need three numbers: the acceptance rate alpha, the
draft cost c (one draft pass, in target passes) and the verification cost v (one target pass over
K+1 tokens, in one-token target passes). Here they are measured from traces, so "engine
efficiency" = measured speedup / predicted speedup says how close the engine gets to the maths.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from specsim import analytics
from specsim.trace import Trace, pooled_acceptance_rate, pooled_tokens_per_pass


@dataclass(frozen=True)
class Measured:
    alpha: float  # accepted / checked proposals (Trace.acceptance_rate, pooled)
    draft_cost: float  # c: mean draft pass / mean plain target pass
    verify_cost: float  # v: mean verification pass / mean plain target pass
    tokens_per_pass: float  # new tokens per target pass (Trace.tokens_per_pass, pooled)
    plain_tokens_per_s: float
    spec_tokens_per_s: float
    predicted_speedup: float  # the closed form summed over the loops as they ran

    @property
    def speedup(self) -> float:
        """Speculative tokens per second over plain tokens per second (prefill excluded)."""
        return self.spec_tokens_per_s / self.plain_tokens_per_s if self.plain_tokens_per_s else 0.0

    @property
    def efficiency(self) -> float:
        """Engine efficiency: measured over predicted speedup (the one definition; bench and pages use it)."""
        return self.speedup / self.predicted_speedup if self.predicted_speedup else 0.0


def measure(spec: Sequence[Trace], plain: Sequence[Trace]) -> Measured:
    """Pool speculative and plain traces (e.g. one per prompt) into one set of measured figures.

    The prediction averages over the loops as they ran, so a drafter that proposes fewer than K
    tokens in some loops (prompt lookup) is predicted with the K it actually used each time.
    """
    iterations = [it for trace in spec for it in trace.iterations]
    pass_times = [p.time_s for trace in plain for p in trace.passes]
    mean_pass = sum(pass_times) / len(pass_times)
    proposed = sum(t.n_proposed for t in spec)
    alpha = pooled_acceptance_rate(spec)
    c = sum(it.draft_time_s for it in iterations) / proposed / mean_pass if proposed else 0.0
    v = sum(it.verify_time_s for it in iterations) / len(iterations) / mean_pass
    expected_tokens = sum(float(analytics.tokens_per_loop(alpha, it.k)) for it in iterations)
    expected_cost = sum(float(analytics.cost_per_loop(it.k, c, v)) for it in iterations)
    return Measured(
        alpha=alpha, draft_cost=c, verify_cost=v, tokens_per_pass=pooled_tokens_per_pass(spec),
        plain_tokens_per_s=sum(t.n_generated for t in plain) / sum(t.decode_time_s for t in plain),
        spec_tokens_per_s=sum(t.n_generated for t in spec) / sum(t.decode_time_s for t in spec),
        predicted_speedup=expected_tokens / expected_cost,
    )
