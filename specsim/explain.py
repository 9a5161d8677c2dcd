"""Why a run was as fast (or as slow) as it was, from its measured α, K, c and v.

One average loop costs K·c (drafting) + v (verifying) target passes and yields t tokens, which plain
decoding would have paid t passes for. So speedup = t / (K·c + v), and it factors exactly into the
ideal K + 1 divided by three losses (each at least 1):

    speedup = (K + 1) / [ (K + 1)/t  ×  v  ×  (K·c + v)/v ]
                          acceptance   verify   drafting

The largest of the three is what decided the result. The projection for a memory-bound accelerator
keeps α, K and c and sets v = 1: there, checking K + 1 tokens costs what generating one does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

Factor = Literal["acceptance", "verification", "drafting"]


@dataclass(frozen=True)
class LoopBudget:
    """One average loop of a run, in plain one-token target passes."""

    k: float  # proposals per loop
    alpha: float  # measured acceptance of checked proposals
    draft_cost: float  # c
    verify_cost: float  # v
    tokens_per_loop: float  # t = E[j] + 1 as measured

    @property
    def drafting(self) -> float:
        return self.k * self.draft_cost

    @property
    def cost(self) -> float:
        """K·c + v."""
        return self.drafting + self.verify_cost

    @property
    def speedup(self) -> float:
        return self.tokens_per_loop / self.cost if self.cost > 0 else 0.0

    @property
    def projected_speedup(self) -> float:
        """The same α, K and c with v = 1 (a memory-bound accelerator): a projection, not a measurement."""
        return self.tokens_per_loop / (self.drafting + 1.0)

    def losses(self) -> dict[Factor, float]:
        """The three factors between the ideal K + 1 and this speedup; their product is (K + 1) / speedup."""
        return {
            "acceptance": (self.k + 1) / self.tokens_per_loop if self.tokens_per_loop else float("inf"),
            "verification": self.verify_cost,
            "drafting": self.cost / self.verify_cost if self.verify_cost else float("inf"),
        }

    def decider(self) -> Factor:
        """The largest loss (acceptance wins a tie: it is the one the draft controls)."""
        losses = self.losses()
        return max(losses, key=lambda name: (losses[name], name == "acceptance"))


def most_proposals(k: float) -> int:
    """The K of a run from its mean proposals per loop (the last loop, or a lookup that found
    nothing, may propose fewer)."""
    return math.ceil(k - 1e-9)


def decider_sentence(b: LoopBudget) -> str:
    """One sentence naming what decided the result."""
    name = b.decider()
    if name == "verification":
        return (f"What decided it: checking up to {most_proposals(b.k) + 1} tokens in one target pass cost "
                f"{b.verify_cost:.2f} one-token passes here, not about 1 as on a memory-bound GPU.")
    if name == "drafting":
        return (f"What decided it: the {b.k:.1f} draft passes of an average loop cost {b.drafting:.2f} target passes, "
                f"{b.draft_cost:.2f} each.")
    return (f"What decided it: the draft's guesses were kept {b.alpha:.0%} of the time, so a loop yielded "
            f"{b.tokens_per_loop:.2f} tokens out of at most {most_proposals(b.k) + 1}.")


def budget_sentence(b: LoopBudget) -> str:
    """The arithmetic of one loop, in words."""
    verdict = "faster" if b.speedup >= 1 else "slower"
    return (f"An average loop spent {b.drafting:.2f} target passes drafting and {b.verify_cost:.2f} verifying, "
            f"{b.cost:.2f} in all, and yielded {b.tokens_per_loop:.2f} tokens, which plain decoding would have "
            f"paid {b.tokens_per_loop:.2f} passes for: {b.tokens_per_loop:.2f} ÷ {b.cost:.2f} = {b.speedup:.2f}×, "
            f"{verdict} than plain decoding.")


def slowdown_sentence(b: LoopBudget) -> str | None:
    """Why the run was slower than plain decoding, or None when it was not."""
    if b.speedup >= 1:
        return None
    gap = []
    if b.verify_cost > 1.05:
        gap.append(f"verification costs {b.verify_cost:.2f} passes on this CPU instead of 1")
    if b.drafting > 0.05:
        gap.append(f"drafting adds {b.drafting:.2f} passes")
    reasons = " and ".join(gap) if gap else "the loop costs at least one pass"
    break_even = b.cost  # tokens per loop needed to pay for the loop
    return (f"Slower than plain decoding, because each loop costs more passes than it saves: {reasons}, so a loop "
            f"must yield more than {break_even:.2f} tokens to break even, and this one yielded "
            f"{b.tokens_per_loop:.2f}. Speculative decoding wins when guesses are easy (text that repeats its input, "
            "code) and when checking several tokens is nearly as cheap as generating one.")
