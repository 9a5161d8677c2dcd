"""The K policies of :mod:`specsim.core.kpolicy` run side by side on one prompt, beside plain decoding (greedy).

Counts only, no clock: target passes, guesses drafted and kept do not depend on the machine, and every policy
must write plain decoding's tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

from specsim.core.kpolicy import CONFIDENCE_STOP, KPolicy
from specsim.core.trace import Trace

POLICIES: dict[str, KPolicy] = {  # what the Under-the-hood page runs
    "fixed K = 4": KPolicy(4),
    "transformers' heuristic schedule, from K = 4": KPolicy(4, "heuristic"),
    f"confidence stop at q < {CONFIDENCE_STOP}, K up to 8": KPolicy(8, stop_below=CONFIDENCE_STOP),
}


@dataclass(frozen=True)
class PolicyRun:
    """One policy's run beside plain decoding: how many guesses it drafted per iteration, and what it kept."""

    name: str
    policy: KPolicy
    trace: Trace
    identical: bool  # the same tokens as plain decoding

    @property
    def drafted(self) -> list[int]:
        """Guesses drafted in each iteration."""
        return [it.k for it in self.trace.iterations]


def compare_policies(target, new_drafter, prompt_ids: list[int], max_new_tokens: int,
                     policies: dict[str, KPolicy] = POLICIES, on_run=None) -> tuple[Trace, list[PolicyRun]]:
    """Greedy plain decoding, then each policy with a fresh drafter from ``new_drafter()``; ``on_run(i, name)``
    before each run (i counts from 0, plain first). Counts only, no clock: passes and guesses do not depend on
    the machine."""
    from specsim.core.engine import plain_generate, speculative_generate
    if on_run is not None:
        on_run(0, "plain decoding")
    plain = plain_generate(target, prompt_ids, max_new_tokens)
    runs = []
    for i, (name, policy) in enumerate(policies.items(), start=1):
        if on_run is not None:
            on_run(i, name)
        trace = speculative_generate(target, new_drafter(), prompt_ids,
                                     policy,
                                     max_new_tokens)
        runs.append(PolicyRun(name, policy, trace, trace.generated_ids == plain.generated_ids))
    return plain, runs
