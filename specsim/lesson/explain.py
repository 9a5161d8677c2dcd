"""Why a run was as fast (or as slow) as it was, in words, from its cost model.

The numbers and the factorisation of the speedup into acceptance, verification, drafting and
bookkeeping losses are :class:`specsim.measure.costmodel.CostModel`'s; this module only says them. A run that won
names what won it (α and τ), then its largest loss; a run that lost names its largest loss, what held it back most.
The projection for a memory-bound accelerator keeps α, K and c and sets v = 1: there, checking K + 1 tokens costs
what generating one does.
"""

from __future__ import annotations

from specsim.measure.costmodel import CostModel


def decider_sentence(b: CostModel) -> str:
    """What decided the result: for a win, what won it (α and τ) and what held it back most; for a loss, what held
    it back most."""
    held = _largest_loss(b, won=b.speedup >= 1)
    if b.speedup < 1:
        return f"What held it back most: {held}."
    if b.tree:
        return (f"What won it: of the steps down the tree where the target had guesses to choose from, {b.alpha:.0%} "
                f"found its token (α per step), so a loop yielded τ = {b.tokens_per_loop:.2f} tokens out of at most "
                f"{b.k_max + 1} for the price of {b.loop_cost:.2f} target passes. What held it back most: {held}.")
    return (f"What won it: of the guesses the target judged, {b.alpha:.0%} were kept (α; a refusal ends the loop, "
            "so the guesses after it are never judged), so a loop yielded "
            f"τ = {b.tokens_per_loop:.2f} tokens out of at most {b.k_max + 1} for the price of {b.loop_cost:.2f} "
            f"target passes. What held it back most: {held}.")


def _largest_loss(b: CostModel, won: bool) -> str:
    """The largest of the cost model's losses, as a clause."""
    name = b.decider()
    if name == "verification":
        return (f"checking up to {b.widest_pass or b.k_max + 1} tokens in one target pass cost {b.verify_cost:.2f} "
                "one-token passes "
                "here, not about 1 as on a memory-bound GPU")
    if name == "bookkeeping":
        return (f"work between the passes (recording the run, building candidates) cost {b.other_cost:.2f} target "
                "passes per loop")
    if name == "drafting" and b.copies:
        return f"finding the {b.k:.1f} copied guesses of an average loop cost {b.drafting:.2f} target passes"
    if name == "drafting" and round(b.k - b.draft_passes, 1) > 0:  # a hybrid: copied guesses need no draft pass
        return (f"the {b.k:.1f} guesses of an average loop ({b.draft_passes:.1f} from draft passes, the rest copied "
                f"from the text) cost {b.drafting:.2f} target passes, {b.draft_cost:.2f} per guess")
    if name == "drafting":
        return (f"the {b.draft_passes:.1f} draft passes of an average loop cost {b.drafting:.2f} target passes, "
                f"{b.draft_cost:.2f} per pass")
    if b.tree and won:
        return f"the other {1 - b.alpha:.0%} of the steps down the tree found no guess with the target's token"
    if b.tree:
        return (f"of the steps down the tree where the target had guesses to choose from, only {b.alpha:.0%} found "
                f"its token (α per step), so a loop yielded {b.tokens_per_loop:.2f} tokens out of at most "
                f"{b.k_max + 1}")
    if won:
        return (f"the other {1 - b.alpha:.0%} of the judged guesses were refused, each ending its loop early and "
                "leaving the guesses after it unchecked")
    return (f"of the guesses the target judged, only {b.alpha:.0%} were kept (α), so a loop yielded "
            f"{b.tokens_per_loop:.2f} tokens out of at most {b.k_max + 1}")


def budget_sentence(b: CostModel) -> str:
    """The arithmetic of one loop, in words."""
    verdict = "faster" if b.speedup >= 1 else "slower"
    extra = f", {b.other_cost:.2f} on bookkeeping between passes" if b.other_cost >= 0.005 else ""
    return (f"An average loop spent {b.drafting:.2f} target passes drafting and {b.verify_cost:.2f} verifying"
            f"{extra}, {b.loop_cost:.2f} in all, and yielded {b.tokens_per_loop:.2f} tokens, which plain decoding "
            f"would have paid {b.tokens_per_loop:.2f} passes for: {b.tokens_per_loop:.2f} ÷ {b.loop_cost:.2f} = "
            f"{b.speedup:.2f}×, {verdict} than plain decoding.")


def slowdown_sentence(b: CostModel) -> str | None:
    """Why the run was slower than plain decoding, or None when it was not."""
    if b.speedup >= 1:
        return None
    gap = []
    if b.verify_cost > 1.05:
        gap.append(f"verification costs {b.verify_cost:.2f} passes on this CPU instead of 1")
    if b.drafting > 0.05:
        gap.append(f"drafting adds {b.drafting:.2f} passes")
    if b.other_cost > 0.05:
        gap.append(f"bookkeeping between passes adds {b.other_cost:.2f}")
    reasons = " and ".join(gap) if gap else "the loop costs at least one pass"
    break_even = b.loop_cost  # tokens per loop needed to pay for the loop
    return (f"Slower than plain decoding, because each loop costs more passes than it saves: {reasons}, so a loop "
            f"must yield more than {break_even:.2f} tokens to break even, and this one yielded "
            f"{b.tokens_per_loop:.2f}. Speculative decoding wins when guesses are easy (text that repeats its input, "
            "code) and when checking several tokens is nearly as cheap as generating one.")
