"""The whole-block check on *Why the output is unchanged*: the real engine, run many times on two tiny models."""

from __future__ import annotations

import streamlit as st

from app import classtask, state
from specsim.core import published as pub
from specsim.lesson import blockcheck

RUNS = 600  # seeded runs per check: a few seconds on two cores


def block_verification_text() -> str:
    """Block verification (Sun et al.): a second lossless rule, never worse than token-wise in expected tokens."""
    tokens, speed = pub.BLOCK_VERIFICATION_TOKENS, pub.BLOCK_VERIFICATION_SPEEDUP
    return (
        "**Not the only lossless rule.** The rule above judges the guesses one at a time and stops at the first "
        f"refusal (token-wise verification). Block verification ({pub.BLOCK_VERIFICATION_CITATION}) judges a "
        "block's guesses together and draws the replacement from a residual adjusted to match: its output follows "
        "the target just as exactly, and the expected number of tokens a loop writes is proved never lower than "
        f"token-wise verification's ({tokens.figure} more tokens per loop and {speed.figure} faster in their "
        f"experiments, {speed.setting}). This app's engine, and the check below, use the token-wise rule.")


def section() -> None:
    """A button that runs the check, and its result (kept for the session, so it survives other pages)."""
    st.markdown(
        f"**Check it by running the engine.** Two small random models over {blockcheck.VOCAB} tokens, a target and a "
        f"draft unlike it; {RUNS} runs of the engine's own loop at K = {blockcheck.K} and temperature 1, each with its "
        "own seed. The prefill draws the first token x₁ from the target alone; the first two tokens the loop writes "
        "after it are counted against the target's exact joint distribution P(x₂, x₃), that is p(x₁)·p(x₂ | x₁)·"
        "p(x₃ | x₁, x₂) summed over x₁, computed from its logits. The two tokens come from one block (kept, then "
        "kept or replaced) or from two (a replacement, then the next block), so the check covers a kept guess, a "
        f"refusal and its residual draw; the +1 after a fully kept block is a block's token {blockcheck.K + 1}, "
        "which this count never reaches.")
    label = f"Run the whole-block check ({RUNS} runs{', on a class worker' if classtask.active() else ''})"
    if st.button(label, key=state.PQ_BLOCK_BUTTON):
        if classtask.active():  # a class: the engine runs on a worker, and this replica never loads torch
            result = classtask.run_task("blockcheck", {"runs": RUNS})
        else:
            bar = st.progress(0.0, text="Building the two tiny models…")
            result = blockcheck.run(RUNS, on_run=lambda done: bar.progress(
                done / RUNS, text=f"Run {done} of {RUNS}"))
            bar.empty()
        if result is not None:
            state.put(state.PQ_BLOCK_CHECK, result)
    result = state.get(state.PQ_BLOCK_CHECK)
    if result is None:
        return
    test = result.test
    k = blockcheck.K
    ends = (f"{result.block_ends.get(0, 0)} runs kept 0 of its {k} guesses, "
            + ", ".join(f"{result.block_ends.get(kept, 0)} kept {kept}" for kept in range(1, k))
            + f", {result.block_ends.get(k, 0)} kept all {k}")
    verdict = ("consistent with the target's own joint distribution" if test.p_value >= 0.01 else
               "unusually far from it (about 1 check in 100 by chance)")
    st.markdown(
        f"{result.runs} runs: χ² = {test.statistic:.2f} on {test.dof} degrees of freedom (pairs expected fewer than "
        f"{blockcheck.MIN_EXPECTED:g} times pooled), p-value {test.p_value:.3f}, so the loop's first two tokens are "
        f"{verdict}. How the first block ended: {ends}.")
    st.dataframe([{"the loop's first two tokens": f"t{a} t{b}", "written": written, "expected": round(expected, 1)}
                  for (a, b), written, expected in result.top_pairs()], hide_index=True)
