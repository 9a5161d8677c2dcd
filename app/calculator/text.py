"""The calculator's numbers and sentences, computed from :mod:`specsim.measure.analytics`. Pure, no Streamlit."""

from __future__ import annotations

import math
from dataclasses import dataclass

from app.calculator import params
from app.settings import CalcSettings
from specsim.measure import analytics


def fmt(x: float) -> str:
    """Every number the calculator shows: two decimals."""
    return f"{x:.2f}"


def fmt_c(c: float) -> str:
    """The draft's cost c at its slider's step: 0.13, or 0.016 for a draft as cheap as one layer of 61."""
    return params.BY_NAME["c"].number.format(c)


@dataclass(frozen=True)
class CalcNumbers:
    """The four headline numbers for one setting of the sliders."""

    prefix: float  # E[j]
    tokens: float  # E[j] + 1
    cost: float  # K c + v, in target passes
    speedup: float

    @classmethod
    def of(cls, s: CalcSettings) -> CalcNumbers:
        return cls(
            prefix=analytics.expected_accepted_prefix(s.alpha, s.k),
            tokens=analytics.tokens_per_loop(s.alpha, s.k),
            cost=analytics.cost_per_loop(s.k, s.draft_cost, s.verify_cost),
            speedup=analytics.speedup(s.alpha, s.k, s.draft_cost, s.verify_cost),
        )


def formula_line(s: CalcSettings) -> str:
    """The two formulas behind the numbers, with the sliders' values: τ and its ceiling, and the speedup."""
    n = CalcNumbers.of(s)
    ceiling = float(analytics.prefix_limit(s.alpha)) + 1
    limit = f"at most 1/(1 − α) = {fmt(ceiling)} however long the draft" if ceiling < float("inf") else (
        "without limit at α = 100 %")
    return (f"Tokens per loop **τ = 1 + α + α² + … + α^K = {fmt(n.tokens)}** ({limit}); speedup = τ ÷ (K·c + v) = "
            f"{fmt(n.tokens)} ÷ {fmt(n.cost)} = **{fmt(n.speedup)}×**.")


def loop_sentence(s: CalcSettings) -> str:
    """One loop's bill and yield in a sentence, e.g. for K=4, α=70 %, c=0.13: 1.52 passes, 2.77 tokens, 1.82×."""
    n = CalcNumbers.of(s)
    drafts = f"{s.k} draft pass" + ("" if s.k == 1 else "es")
    verify = f"one target pass (taking a pass over {s.k + 1} tokens to cost what a one-token pass does, v = 1)"
    if s.verify_cost != 1.0:
        verify = f"one target pass over {s.k + 1} tokens at {fmt(s.verify_cost)}×"
    if fmt(n.speedup) == fmt(1.0):
        verdict = "so speculative decoding here is no faster (1.00×)"
    elif n.speedup > 1.0:
        verdict = f"so speculative decoding here is {fmt(n.speedup)}× faster"
    else:
        verdict = f"so speculative decoding here runs at only {fmt(n.speedup)}× the speed: slower than not drafting"
    return (
        f"Every loop pays for {drafts} at {fmt_c(s.draft_cost)}× the target's cost plus {verify}, "
        f"{fmt(n.cost)} target passes altogether, and gets back {fmt(n.tokens)} tokens on average. "
        f"Decoding without a draft pays a full target pass per token, {verdict}. The acceptance rule keeps the "
        "output the target's own (*Why the output is unchanged* shows how)."
    )


def best_k_sentence(s: CalcSettings) -> str:
    """Which K maximises the speedup for the current acceptance and costs, compared with the chosen K."""
    best = analytics.optimal_k(s.alpha, s.draft_cost, s.verify_cost)
    best_speed = analytics.speedup(s.alpha, best, s.draft_cost, s.verify_cost)
    text = f"The best K for these settings is **{best}**, at {fmt(best_speed)}×."
    if best != s.k:
        now = analytics.speedup(s.alpha, s.k, s.draft_cost, s.verify_cost)
        text += f" Your K = {s.k} gives {fmt(now)}×."
    else:
        text += " That is the K you have chosen."
    if best_speed < 1.0:
        text += " Even the best K is slower than plain decoding: this draft is not worth running."
    return text


def ceiling_sentence(s: CalcSettings) -> str:
    """How far the expected prefix can grow at this acceptance rate, however large K gets."""
    limit = analytics.prefix_limit(s.alpha)
    if not math.isfinite(limit):
        return "At 100 % acceptance every proposal is kept, so the prefix grows with K without limit."
    return (
        f"At α = {s.alpha_pct} % the expected prefix can never pass α/(1−α) = {fmt(limit)} tokens, "
        f"however large K is; with K = {s.k} it is already {fmt(analytics.expected_accepted_prefix(s.alpha, s.k))}."
    )


def useless_draft_sentence(s: CalcSettings) -> str:
    """What a draft that is never right costs: K·c + (v − 1) per loop, the drafting time alone only at v = 1."""
    worst = analytics.speedup(0.0, s.k, s.draft_cost, s.verify_cost)
    cost = analytics.cost_per_loop(s.k, s.draft_cost, s.verify_cost)
    loss = analytics.useless_draft_loss(s.k, s.draft_cost, s.verify_cost)
    drafting = s.k * s.draft_cost
    head = (f"If the draft were never right (α = 0), each loop would still deliver one correct token from the "
            f"target, for {fmt(cost)} target passes where plain decoding pays 1: {fmt(worst)}× the plain speed. ")
    advice = ("That is the floor: no draft can do worse, and the text stays the target's. But it is a real loss, "
              "in time and in memory (the draft's weights and its own KV cache), so in service watch the measured "
              "acceptance and switch speculation off where it stays low.")
    if fmt(s.verify_cost) == fmt(1.0):
        return head + (f"With v = {fmt(s.verify_cost)} the check itself costs no more than a plain pass, so the "
                       f"loss is only the drafting time, K·c = {s.k} × {fmt_c(s.draft_cost)} = {fmt(loss)} target "
                       f"passes per loop. {advice}")
    return head + (f"Here checking K + 1 = {s.k + 1} tokens costs v = {fmt(s.verify_cost)} plain passes, so the loss "
                   f"is the drafting time K·c = {fmt(drafting)} plus the verification's excess v − 1 = "
                   f"{fmt(s.verify_cost - 1.0)}: K·c + (v − 1) = {fmt(loss)} target passes per loop. Only at v = 1 "
                   f"is the drafting time the whole cost; the dearer verification is, the more a bad draft loses. "
                   f"{advice}")


def heatmap_sentence(s: CalcSettings) -> str:
    """What the heatmap's bottom row (α = 0) shows at these costs: a loop then yields exactly one token."""
    at_zero = analytics.speedup(0.0, 1, s.draft_cost, s.verify_cost)  # K = 1 is the least bad K at α = 0
    head = "The black line follows the best K for each acceptance rate, and it climbs as α rises. "
    if fmt(at_zero) == fmt(1.0):
        return head + (f"With c = {fmt_c(s.draft_cost)} and v = {fmt(s.verify_cost)} a loop costs one target pass "
                       "whatever K is, so even at α = 0 every K breaks even (1×): the bottom row stays white.")
    if at_zero < 1.0:
        return head + (f"At α = 0 a loop yields one token for K·c + v target passes, so every K is slower than "
                       f"plain decoding; the least bad is K = 1 at {fmt(at_zero)}×, and the bottom row is red.")
    return head + (f"With v = {fmt(s.verify_cost)} below 1, even α = 0 comes out at {fmt(at_zero)}× with K = 1: "
                   "a verification pass would have to be cheaper than generating one token, which real hardware "
                   "does not allow.")


# ---- predict, then see: the best K --------------------------------------------------------------------
def best_k_question(s: CalcSettings) -> str:
    return (f"Is the sliders' K = {s.k} the best choice at α = {s.alpha_pct} %, c = {fmt_c(s.draft_cost)} and "
            f"v = {fmt(s.verify_cost)}? Give the K you think gives the largest speedup, and roughly how large that "
            "speedup is.")


def best_k_truth(s: CalcSettings) -> dict[str, float]:
    best = analytics.optimal_k(s.alpha, s.draft_cost, s.verify_cost)
    return {"k": best, "speedup": float(analytics.speedup(s.alpha, best, s.draft_cost, s.verify_cost))}


def best_k_close(s: CalcSettings, guess: dict[str, float]) -> bool:
    """Close: the guessed K gives at least 97 % of the best speedup, and the speedup guess is within 10 %."""
    truth = best_k_truth(s)
    mine = float(analytics.speedup(s.alpha, int(guess["k"]), s.draft_cost, s.verify_cost))
    return mine >= 0.97 * truth["speedup"] and abs(guess["speedup"] - truth["speedup"]) <= 0.10 * truth["speedup"]


def best_k_verdict(s: CalcSettings, guess: dict[str, float]) -> str:
    """How the learner's guess of the best K and its speedup compares with the closed form."""
    truth = best_k_truth(s)
    k, best, best_speed = int(guess["k"]), int(truth["k"]), truth["speedup"]
    mine = float(analytics.speedup(s.alpha, k, s.draft_cost, s.verify_cost))
    if k == best:
        k_part = f"You guessed K = {k}: that is the best K."
    elif mine >= 0.995 * best_speed:
        k_part = (f"You guessed K = {k}; the best is K = {best}, but K = {k} gives {fmt(mine)}×, within 0.5 % of it: "
                  "the top of the curve is flat here, and either is a fine choice.")
    else:
        k_part = (f"You guessed K = {k}; the best is K = {best}. Your K gives {fmt(mine)}×, "
                  f"{100 * mine / best_speed:.0f} % of the best.")
    gap = abs(guess["speedup"] - best_speed) / best_speed
    direction = "above" if guess["speedup"] > best_speed else "below"
    speed_part = (f"Your speedup of {fmt(guess['speedup'])}× is "
                  + ("spot on." if gap < 0.005 else f"{100 * gap:.0f} % {direction} the best, {fmt(best_speed)}×."))
    return f"{k_part} {speed_part}"
