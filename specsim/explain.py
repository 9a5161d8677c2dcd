"""Why a run was as fast (or as slow) as it was, from its measured α, K, c and v.

One average loop costs K·c (drafting) + v (verifying) target passes and yields t tokens, which plain
decoding would have paid t passes for. So speedup = t / (K·c + v), and it factors exactly into the
ideal K + 1 divided by three losses (each at least 1):

    speedup = (K + 1) / [ (K + 1)/t  ×  v  ×  (K·c + v)/v ]
                          acceptance   verify   drafting

A measured run also spends time between the passes (o per loop, and some per plain token); that is
a fourth factor, "bookkeeping", 1 when there is none.

The largest of the three is what decided the result. The projection for a memory-bound accelerator
keeps α, K and c and sets v = 1: there, checking K + 1 tokens costs what generating one does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

Factor = Literal["acceptance", "verification", "drafting", "bookkeeping"]


@dataclass(frozen=True)
class LoopBudget:
    """One average loop of a run, in plain one-token target passes."""

    k: float  # proposals per loop
    alpha: float  # measured acceptance of checked proposals
    draft_cost: float  # c
    verify_cost: float  # v
    tokens_per_loop: float  # t = E[j] + 1 as measured
    other: float = 0.0  # o: bookkeeping per loop outside both passes
    plain_other: float = 0.0  # bookkeeping per plain token outside its pass

    @property
    def drafting(self) -> float:
        return self.k * self.draft_cost

    @property
    def cost(self) -> float:
        """K·c + v + o."""
        return self.drafting + self.verify_cost + self.other

    @property
    def plain_cost(self) -> float:
        """What plain decoding pays for the loop's tokens: t × (1 + its bookkeeping per token)."""
        return self.tokens_per_loop * (1 + self.plain_other)

    @property
    def speedup(self) -> float:
        return self.plain_cost / self.cost if self.cost > 0 else 0.0

    @property
    def projected_speedup(self) -> float:
        """The same α, K and c with v = 1 (a memory-bound accelerator): a projection, not a measurement."""
        return self.plain_cost / (self.drafting + 1.0 + self.other)

    def losses(self) -> dict[Factor, float]:
        """The factors between the ideal K + 1 and this speedup; their product is (K + 1) / speedup.

        Acceptance, verification and drafting are at least 1; bookkeeping is 1 without any and may
        dip below 1 when plain decoding carries more of it than the loop."""
        core = self.drafting + self.verify_cost
        return {
            "acceptance": (self.k + 1) / self.tokens_per_loop if self.tokens_per_loop else float("inf"),
            "verification": self.verify_cost,
            "drafting": core / self.verify_cost if self.verify_cost else float("inf"),
            "bookkeeping": self.cost / core / (1 + self.plain_other) if core else 1.0,
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
    if name == "bookkeeping":
        return (f"What decided it: work between the passes (recording the run, building candidates) cost "
                f"{b.other:.2f} target passes per loop.")
    if name == "drafting":
        return (f"What decided it: the {b.k:.1f} draft passes of an average loop cost {b.drafting:.2f} target passes, "
                f"{b.draft_cost:.2f} each.")
    return (f"What decided it: the draft's guesses were kept {b.alpha:.0%} of the time, so a loop yielded "
            f"{b.tokens_per_loop:.2f} tokens out of at most {most_proposals(b.k) + 1}.")


def budget_sentence(b: LoopBudget) -> str:
    """The arithmetic of one loop, in words."""
    verdict = "faster" if b.speedup >= 1 else "slower"
    extra = f", {b.other:.2f} on bookkeeping between passes" if b.other >= 0.005 else ""
    return (f"An average loop spent {b.drafting:.2f} target passes drafting and {b.verify_cost:.2f} verifying"
            f"{extra}, {b.cost:.2f} in all, and yielded {b.tokens_per_loop:.2f} tokens, which plain decoding would "
            f"have paid {b.plain_cost:.2f} passes for: {b.plain_cost:.2f} ÷ {b.cost:.2f} = {b.speedup:.2f}×, "
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
    if b.other > 0.05:
        gap.append(f"bookkeeping between passes adds {b.other:.2f}")
    break_even = b.cost / (1 + b.plain_other)  # tokens per loop needed to pay for the loop
    return (f"Slower than plain decoding, because each loop costs more passes than it saves: {reasons}, so a loop "
            f"must yield more than {break_even:.2f} tokens to break even, and this one yielded "
            f"{b.tokens_per_loop:.2f}. Speculative decoding wins when guesses are easy (text that repeats its input, "
            "code) and when checking several tokens is nearly as cheap as generating one.")
