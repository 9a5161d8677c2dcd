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
from specsim.trace import Trace


@dataclass(frozen=True)
class Measured:
    alpha: float  # accepted / checked proposals
    draft_cost: float  # mean draft pass / mean plain target pass
    verify_cost: float  # mean verification pass / mean plain target pass
    tokens_per_loop: float
    plain_tokens_per_s: float
    spec_tokens_per_s: float
    predicted_speedup: float

    @property
    def speedup(self) -> float:
        return self.spec_tokens_per_s / self.plain_tokens_per_s if self.plain_tokens_per_s else 0.0

    @property
    def efficiency(self) -> float:
        return self.speedup / self.predicted_speedup if self.predicted_speedup else 0.0


def measure(spec: Sequence[Trace], plain: Sequence[Trace]) -> Measured:
    """Pool speculative and plain traces (e.g. one per prompt) into one set of measured figures.

    The prediction averages over the loops as they ran, so a drafter that proposes fewer than K
    tokens in some loops (prompt lookup) is predicted with the K it actually used each time.
    """
    iterations = [it for trace in spec for it in trace.iterations]
    pass_times = [p.time_s for trace in plain for p in trace.passes]
    mean_pass = sum(pass_times) / len(pass_times)
    proposed = sum(it.k for it in iterations)
    checked = sum(1 for it in iterations for s in it.slots if s.status != "unchecked")
    alpha = sum(it.n_accepted for it in iterations) / checked if checked else 0.0
    c = sum(it.draft_time_s for it in iterations) / proposed / mean_pass if proposed else 0.0
    v = sum(it.verify_time_s for it in iterations) / len(iterations) / mean_pass
    expected_tokens = sum(float(analytics.tokens_per_loop(alpha, it.k)) for it in iterations)
    expected_cost = sum(float(analytics.cost_per_loop(it.k, c, v)) for it in iterations)
    n_spec = sum(t.n_generated for t in spec)
    n_plain = sum(t.n_generated for t in plain)
    return Measured(
        alpha=alpha, draft_cost=c, verify_cost=v, tokens_per_loop=n_spec / len(iterations),
        plain_tokens_per_s=n_plain / sum(t.decode_time_s for t in plain),
        spec_tokens_per_s=n_spec / sum(t.decode_time_s for t in spec),
        predicted_speedup=expected_tokens / expected_cost,
    )
