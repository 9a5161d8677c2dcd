"""The live page's "predict, then see": the learner guesses a run's α and τ before its numbers show, with what the
earlier pages measured to reason from; the answer says how far the guess was, and why a run's α and the measured
agreement differ."""

from __future__ import annotations

import functools
from pathlib import Path

import streamlit as st

from app import predict
from app.live.params import number_text
from app.live.view import fmt_pct
from specsim.core.defaults import DRAFT_MODEL
from specsim.core.trace import Trace
from specsim.lesson import replay

RUN_FIELDS = (predict.Field("alpha", "α, in %", 0, 100, 1, whole=True),
              predict.Field("tau", "tokens per loop, τ", 1.0, 17.0, 0.1))


def run_context(spec: Trace) -> tuple:
    """What identifies the run on screen for its prediction: a new run asks again."""
    s = spec.settings
    return (spec.prompt, s.target, s.draft or s.drafter, s.k, s.k_schedule, s.stop_below, s.temperature, s.seed,
            spec.n_generated, s.tree)


BEFORE_STEPPING = "Guess before you step through the loops below: they show every verdict."


def run_question(spec: Trace) -> str:
    """The question before the run's numbers: α and τ, with what earlier pages measured to reason from."""
    return f"{_question(spec)} {BEFORE_STEPPING}"


def _question(spec: Trace) -> str:
    s = spec.settings
    how = "taking the top token (greedy)" if replay.is_greedy(spec) else f"sampling at T = {number_text(s.temperature)}"
    if s.tree is not None:
        return (f"This run drafts a token tree of up to {s.tree[0]} guesses, at most {s.tree[1]} deep, with "
                f"{_draft_name(spec)}, {how}. Each loop the target checks one path down the tree: the guesses it "
                "keeps, then the one it refuses where it stops. What share of those checked guesses will it accept "
                f"(α), and how many tokens will one loop write on average (τ, the kept guesses plus the +1)? "
                f"{run_hint(spec)}")
    return (f"This run drafts with {_draft_name(spec)} at K = {s.k}, {how}. What share of the guesses the target "
            "checks will it accept (α), and how many tokens will one loop write on average (τ, the kept guesses "
            f"plus the +1)? {run_hint(spec)}")


def run_hint(spec: Trace) -> str:
    """What the pages before this one let the learner reason from, for the run on screen."""
    from specsim.lesson.unchanged import measured_overlap

    s = spec.settings
    text = ("If every guess were kept independently with chance α, one loop would write τ = 1 + α + α² + … + α^K "
            "tokens (the *Speedup calculator*).")
    if s.tree is not None:
        text = ("Where the tree holds the draft's second or third choice, the target can keep one of them when the "
                "first is wrong; with greedy decoding a step down the tree is then kept at least as often as a chain's "
                "guess at the same place.")
    if _default_draft(spec):
        text += (f" *Why the output is unchanged* measured this draft's top token matching the target's on "
                 f"{measured_overlap().greedy:.0%} of the positions of held-out answers (its greedy α there, "
                 "without its copying).")
    elif s.drafter == "prompt_lookup":
        text += " Prompt lookup proposes only text that appeared earlier; where there is none, a loop drafts nothing."
    return text


def _draft_name(spec: Trace) -> str:
    """The drafter in words: the bundled draft by what it is, not by its folder's name."""
    s = spec.settings
    return ("the bundled draft model (two layers, trained here; it also copies repeated text)"
            if _default_draft(spec) else s.draft or s.drafter)


@functools.cache
def _measured_draft() -> str:
    """The folder name of the draft whose agreement *Why the output is unchanged* measured (read once)."""
    from specsim.lesson.unchanged import measured_overlap

    return Path(measured_overlap().draft).name


def _default_draft(spec: Trace) -> bool:
    """Whether the run drafts with the draft whose agreement *Why the output is unchanged* measured."""
    s = spec.settings
    return s.drafter == DRAFT_MODEL and bool(s.draft) and _measured_draft() in s.draft


AGREEMENT_GAP = ("Against the agreement of *Why the output is unchanged*: a greedy run without copying on those "
                 "answers would keep about that share of its guesses, a little less, since it never checks the "
                 "position after a loop that kept all K, and such a position follows a run of agreements, which tend "
                 "to continue. This run's α can differ more: its text is one prompt, not those answers, and this "
                 "draft also copies repeated text (*In practice* sets this draft's measures side by side).")
"""Why a run's α and the measured agreement differ: in the answer, not in the question (a learner read the question
three times while only trying to make a guess)."""


def run_truth(spec: Trace) -> dict[str, float]:
    return {"alpha": 100 * spec.acceptance_rate, "tau": spec.tokens_per_pass}


def run_close(spec: Trace, guess: dict[str, float]) -> bool:
    """Close: α within 10 percentage points and τ within 15 %."""
    truth = run_truth(spec)
    return abs(guess["alpha"] - truth["alpha"]) <= 10 and abs(guess["tau"] - truth["tau"]) <= 0.15 * truth["tau"]


def run_verdict(spec: Trace, guess: dict[str, float]) -> str:
    truth = run_truth(spec)
    points = guess["alpha"] - truth["alpha"]
    alpha_part = ("spot on" if abs(points) < 0.5
                  else f"{abs(points):.0f} points {'high' if points > 0 else 'low'}")
    text = (f"You guessed α = {guess['alpha']:.0f} % and τ = {guess['tau']:.2f}. The run measured α = "
            f"{fmt_pct(spec.acceptance_rate)} and τ = {truth['tau']:.2f}: your α was {alpha_part}, your τ "
            f"{predict.gap_words(guess['tau'], truth['tau'])}.")
    return text + (f" {AGREEMENT_GAP}" if _default_draft(spec) else "")


def guessed_run(spec: Trace) -> bool:
    """Ask for α and τ before the run's numbers show; True once guessed (a run without a loop has nothing to
    guess). The loops themselves play either way."""
    if not spec.iterations:
        return True
    return predict.ask("live_run", run_context(spec), run_question(spec), RUN_FIELDS, run_truth(spec),
                       lambda g: run_close(spec, g), lambda made: run_verdict(spec, made.guess))


def waiting_note() -> None:
    """Under the loops, before the guess: what else shows once the learner has guessed."""
    st.caption("The run's α and τ, where its speed comes from, and the whole run show here once you have guessed "
               "above.")
