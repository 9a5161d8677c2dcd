"""Under the hood: the mechanics of one speculative iteration, read off a recorded run.

Everything here reads a :class:`~specsim.core.trace.Trace`; nothing runs a model. The *Under the hood* page draws it.

- :func:`verification_rows`: the one target pass of an iteration. Its input is the last kept token followed by
  the K proposals, at positions context − 1 … context + K − 1. Row i's output is the target's distribution for
  the token after input i, so row i − 1 judges proposal i, and the row after the last kept proposal gives the
  +1 token. One pass, K + 1 rows, K + 1 distributions.
- :func:`causal_mask`: what each row may attend to (every cached position, and the new inputs up to its own).
- :func:`cache_story`: the target's and the draft's KV-cache lengths through the iteration, as the engine
  recorded them (:class:`~specsim.core.trace.CacheLengths`), or derived from the iteration's counts for a trace
  recorded before they were.
- :func:`slot_overlaps`: each checked slot's chance of being kept, Σ min(p, q) = 1 − TV(p, q), beside what
  happened; in greedy mode the chance is 1 or 0 (kept exactly when the guess is the target's argmax).
- :func:`position_model`: acceptance by draft position against the calculator's constant α, and how far the
  geometric model's tokens per loop is off.
- :func:`compute_per_token`: what the run spent in target work per emitted token, and what it did not change.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from specsim.core.trace import CacheLengths, Iteration, TokenProb, Trace, acceptance_given_reached, checks_by_position
from specsim.lesson.hood_tree import mean_width
from specsim.measure import analytics
from specsim.measure.proportion import wilson_interval

OPENING_RECORDING = "prose_run"  # the page opens on it: a real draft, refused at times, its cache cropped


# ---- the verification pass ----------------------------------------------------------------------
@dataclass(frozen=True)
class VerifyRow:
    """Row ``index`` (0..K) of one verification pass."""

    index: int
    position: int  # the input's position in the sequence (0-based)
    input_text: str  # the token fed at this row
    judges: int | None  # the draft position (1..K) this row's output judges; None for the row after the last
    target_top: tuple[TokenProb, ...]  # the target's most likely next tokens at this row (p)
    proposed: TokenProb | None  # the draft's guess this row judges, with q (None: nothing to judge)
    p_of_proposed: float | None  # the target's probability of that guess
    outcome: str  # "kept", "rejected", "not checked", "+1 token" or "not used"


def _last_kept_text(trace: Trace, step: int) -> str:
    """The text of the token that opens iteration ``step``'s pass: the previous iteration's last emitted token."""
    if step == 0:
        return trace.first.text if trace.first is not None else "(last prompt token)"
    prev = trace.iterations[step - 1]
    return prev.extra.text if prev.emitted and prev.emitted[-1] == prev.extra.token_id else "(last kept token)"


def verification_rows(trace: Trace, step: int) -> list[VerifyRow]:
    """The K + 1 rows of iteration ``step``'s verification pass (see the module docstring)."""
    it = trace.iterations[step]
    start = it.context_len - 1  # the last kept token's position
    rows = [VerifyRow(0, start, _last_kept_text(trace, step), 1 if it.k else None,
                      it.slots[0].target_top if it.k else it.extra_target_top,
                      _proposal(it, 1), it.slots[0].p if it.k else None, _outcome(it, 0))]
    for i, slot in enumerate(it.slots, start=1):
        nxt = it.slots[i] if i < it.k else None
        # The last row's scores are recorded only when it gave the +1 token (every guess kept): after a refusal the
        # trace's extra_target_top is the refused row's, and the last row's were thrown away unrecorded.
        last = it.extra_target_top if it.n_accepted == it.k else ()
        rows.append(VerifyRow(i, start + i, slot.text, i + 1 if nxt else None,
                              nxt.target_top if nxt else last, _proposal(it, i + 1),
                              nxt.p if nxt else None, _outcome(it, i)))
    return rows


def _proposal(it: Iteration, position: int) -> TokenProb | None:
    if position > it.k:
        return None
    slot = it.slots[position - 1]
    return TokenProb(slot.token_id, slot.text, slot.q)


def _outcome(it: Iteration, row: int) -> str:
    """What row ``row``'s output decided: the fate of proposal row + 1, or the +1 token."""
    if row == it.n_accepted:
        return "+1 token" if row == it.k else f"rejected; +1 token ({it.extra_kind})"
    if row > it.n_accepted:
        return "not used"
    return "kept"


def teaching_step(trace: Trace) -> int:
    """The iteration a page opens on: the first that drafted two or more guesses and refused one (every part of
    the mechanism at work), else the first that drafted two or more, else the first that drafted any, else 0."""
    its = trace.iterations
    for good in (lambda it: it.k >= 2 and it.n_accepted < it.k, lambda it: it.k >= 2, lambda it: it.k >= 1):
        found = next((i for i, it in enumerate(its) if good(it)), None)
        if found is not None:
            return found
    return 0


def decisive_row(it: Iteration) -> int:
    """The row whose output chose the +1 token: the first rejected proposal's row, or the row after the last."""
    return it.n_accepted


def causal_mask(it: Iteration, context_shown: int = 4) -> tuple[list[str], list[list[bool]], int]:
    """The verification pass's attention mask: (column labels, rows of True where row may attend, hidden columns).

    Columns are the ``context_shown`` cached positions before the last kept token (earlier ones are all visible to
    every row and are summarised by the hidden count), then the K + 1 new inputs. Row i sees every cached position
    and new inputs 0..i: a proposal cannot look at the guesses after it.
    """
    cached = it.context_len - 1  # positions already in the target's cache
    shown = min(context_shown, cached)
    hidden = cached - shown
    labels = [f"{p}" for p in range(hidden, cached)] + [f"{cached + j} (new)" for j in range(it.k + 1)]
    grid = [[True] * shown + [j <= i for j in range(it.k + 1)] for i in range(it.k + 1)]
    return labels, grid, hidden


# ---- the KV caches ------------------------------------------------------------------------------
@dataclass(frozen=True)
class CacheStory:
    """The caches through one iteration, and whether the engine recorded them or they were derived."""

    lengths: CacheLengths
    recorded: bool
    copied: int  # proposals copied from the text (no draft pass)

    def sentences(self, k: int, kept: int) -> list[str]:
        c = self.lengths
        out = [f"Target: {c.target_before} positions cached before the pass; the pass writes {k + 1} more "
               f"(the last kept token and the {k} guesses), {c.target_written} in all; the crop keeps "
               f"{c.target_kept}, dropping {c.target_written - c.target_kept} entries of rejected or unread guesses. "
               "The +1 token is not cached yet: it is the first input of the next pass."]
        if c.draft_before is not None:
            out.append(f"Draft: {c.draft_before} cached before drafting, {c.draft_drafted} after its passes, "
                       f"{c.draft_kept} after the crop to what the target kept. Before its next guess it reads "
                       f"{c.draft_catch_up} token{'s' if c.draft_catch_up != 1 else ''} it has not seen: the +1 token"
                       + (", and its own last guess, kept but never fed back" if kept == k and k else "")
                       + (f", and {self.copied} copied guess{'es' if self.copied != 1 else ''}"
                          if self.copied else "") + ".")
        else:
            out.append("This drafter keeps no KV cache of its own (prompt lookup searches the text).")
        return out


def cache_story(it: Iteration) -> CacheStory:
    """The recorded cache lengths, or for an older trace the same convention derived from the counts."""
    copied = sum(s.copied for s in it.slots)
    if it.caches is not None:
        return CacheStory(it.caches, True, copied)
    before = it.context_len - 1
    return CacheStory(CacheLengths(target_before=before, target_written=before + 1 + it.k,
                                   target_kept=before + 1 + it.n_accepted), False, copied)


# ---- alpha as 1 - TV ---------------------------------------------------------------------------
@dataclass(frozen=True)
class SlotOverlap:
    step: int
    position: int
    text: str
    chance: float  # Σ min(p, q): the chance a guess drawn from q is kept here (greedy: 1 or 0)
    kept: bool
    exact: bool  # True: the full-distribution sum recorded by the engine; False: greedy's 0/1 rule


def slot_overlaps(trace: Trace) -> list[SlotOverlap]:
    """Every checked slot of the run: its chance of being kept, and whether it was."""
    out = []
    for it in trace.iterations:
        for s in it.slots:
            if s.status == "unchecked":
                continue
            exact = s.accepted_mass is not None
            out.append(SlotOverlap(it.index, s.position, s.text, s.accepted_mass if exact else s.accept_prob,
                                   s.status == "accepted", exact))
    return out


def mean_chance(trace: Trace) -> float:
    """The run's mean Σ min(p, q) over checked slots: the α the sampling rule promises (NaN if none checked)."""
    overlaps = slot_overlaps(trace)
    return sum(o.chance for o in overlaps) / len(overlaps) if overlaps else math.nan


# ---- is alpha constant? --------------------------------------------------------------------------
@dataclass(frozen=True)
class PositionModel:
    alpha: float  # the run's measured α (kept over checked)
    by_position: list[float]  # P(position j kept | the target checked it), j = 1..K (NaN where never checked)
    geometric_share: list[float]  # α^j: the calculator's P(slot j kept)
    measured_share: list[float | None]  # the run's share of iterations that kept slot j
    tokens_per_loop: float  # measured
    geometric_tokens_per_loop: float  # 1 + α + … + α^K with the measured α
    geometric_at_drafted_k: float  # the same at the K each loop actually drafted (a loop may draft fewer than K)
    short_loops: int  # loops that drafted fewer than K guesses (nothing to copy, the budget, a confidence stop)
    k: int  # the K of the geometric model: Trace.k_max, the K setting or more where an adaptive policy raised it
    kept: tuple[int, ...] = ()  # loops that kept guess j, j = 1..K: the numerators of by_position
    reached: tuple[int, ...] = ()  # loops whose check reached guess j: the denominators of by_position

    @property
    def error(self) -> float:
        """How far the geometric model's tokens per loop is from the run's, as a share of the run's."""
        return self.geometric_tokens_per_loop / self.tokens_per_loop - 1.0 if self.tokens_per_loop else math.nan


def position_model(trace: Trace) -> PositionModel:
    k = trace.k_max  # the K the cost model and the live page's calculator sentence use
    alpha = trace.acceptance_rate
    kept, reached = checks_by_position([trace], k)
    return PositionModel(alpha=alpha, by_position=acceptance_given_reached([trace], k),
                         geometric_share=[alpha**j for j in range(1, k + 1)],
                         measured_share=trace.kept_share_by_position(), tokens_per_loop=trace.tokens_per_pass,
                         geometric_tokens_per_loop=float(analytics.tokens_per_loop(alpha, k)),
                         geometric_at_drafted_k=(sum(float(analytics.tokens_per_loop(alpha, it.k))
                                                     for it in trace.iterations) / len(trace.iterations)
                                                 if trace.iterations else math.nan),
                         short_loops=sum(it.k < k for it in trace.iterations), k=k,
                         kept=tuple(kept), reached=tuple(reached))


POSITION_INTRO = (
    "The calculator assumes one α for every guess, independent of the others, so slot i survives with probability "
    "αⁱ and a loop yields 1 + α + … + α^K tokens. Two measured quantities sit behind that picture, and they are not "
    "the same: the **conditional acceptance rᵢ**, the chance that guess i is kept given that every guess before it "
    "was (this page), and the **slot survival**, the share of the loops drafting slot i that kept it, r₁⋯rᵢ (the "
    "live page's chart, the calculator's αⁱ). Real drafts need not keep one rᵢ. For a separate draft model, like "
    "this app's, rᵢ is measured only on loops that kept guesses 1 … i − 1, so the draft guessed i from the target's "
    "own text and nothing of its earlier mistakes carries over: rᵢ can rise (only the easier stretches reach the "
    "later slots) or fall, and it gets noisier as fewer loops reach the later slots. Errors compound for drafters "
    "whose later guesses rest on their own outputs rather than the target's: heads that feed back their own "
    "features (EAGLE) or guess several tokens ahead blind (Medusa). For them rᵢ falls along the draft.")

RATE_MIN_LOOPS = 20  # an rᵢ from fewer loops is shown with its interval: a handful of loops says little
_SUB = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def rates_sentence(model: PositionModel) -> str:
    """The measured rᵢ, each beside the loops it rests on (kept of reached), and the 95 % Wilson interval of the
    one that rests on the fewest loops when that is under :data:`RATE_MIN_LOOPS`."""
    parts = []
    for j, (kept, reached) in enumerate(zip(model.kept, model.reached, strict=True), start=1):
        name = f"r{str(j).translate(_SUB)}"
        parts.append(f"{name} = {kept / reached:.2f} ({kept} of {reached} loops)" if reached else
                     f"{name}: no loop reached it")
    if not parts:
        return ""
    text = ("Measured on this run, each rᵢ with the loops it rests on (those that kept guess i, of those whose check "
            "reached it): " + "; ".join(parts) + ".")
    rates = [kept / reached for kept, reached in zip(model.kept, model.reached, strict=True) if reached]
    if len(rates) > 1 and rates[-1] < rates[0]:
        falling = all(b <= a for a, b in zip(rates, rates[1:], strict=False))
        text += (" On this run they fall rather than rise" if falling else
                 " On this run they do not rise steadily: the last is below the first")
        text += ": the later rates rest on fewer loops, and a few refusals there move them a long way."
    thin = [(reached, j) for j, reached in enumerate(model.reached, start=1) if 0 < reached < RATE_MIN_LOOPS]
    if thin:
        reached, j = min(thin, key=lambda pair: (pair[0], -pair[1]))  # the fewest loops, the later slot on a tie
        kept = model.kept[j - 1]
        low, high = wilson_interval(kept, reached)
        text += (f" A rate from a handful of loops is mostly noise: r{str(j).translate(_SUB)} = {kept / reached:.2f} "
                 f"rests on {reached} loop{'s' if reached != 1 else ''}, and its 95 % interval runs from {low:.2f} "
                 f"to {high:.2f}.")
    return text


# ---- what it costs ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Compute:
    k: int  # the K setting (the most guesses a loop drafts, unless an adaptive policy raised it); a tree's guesses
    tokens_per_loop: float  # t: the loops' tokens over the loops (Trace.tokens_per_pass)
    positions_per_pass: float  # the average verification pass's positions: the guesses it checked, plus one
    longest_pass: int  # the most positions one pass carried (Trace.longest_pass)
    target_tokens_per_emitted: float  # positions_per_pass / t: target token-passes of arithmetic per token written
    draft_passes_per_emitted: float  # draft passes per token written (copied guesses cost none)
    prefill_s: float  # time to the first token: the prompt's prefill, which chooses it, with or without a draft
    positions: int = 0  # every verification pass's positions, summed over the loops
    tokens: int = 0  # every loop's tokens, summed: positions ÷ tokens is target_tokens_per_emitted, unrounded


def compute_per_token(trace: Trace) -> Compute:
    """Work per emitted token: each loop runs the target over its guesses plus one position, to write t tokens on
    average. Both averages are over the same loops, so positions_per_pass ÷ t is the arithmetic per token."""
    t = trace.tokens_per_pass
    fed = mean_width(trace)  # positions per pass: the guesses plus one, or a tree's nodes and its root
    emitted = trace.n_decoded  # the loops' tokens (the prefill chose the first without a draft)
    k = trace.k_max if trace.settings.tree is None else trace.settings.tree[0]
    loops = len(trace.iterations)
    return Compute(k=k, tokens_per_loop=t, positions_per_pass=fed, longest_pass=trace.longest_pass,
                   target_tokens_per_emitted=fed / t if t else math.nan,
                   draft_passes_per_emitted=trace.draft_passes / emitted if emitted else math.nan,
                   prefill_s=trace.prefill_time_s, positions=round(fed * loops) if loops else 0, tokens=emitted)
