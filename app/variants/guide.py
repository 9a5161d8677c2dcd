"""The variants page before any run: how each variant makes its guess, a diagram each, the variants table."""

from __future__ import annotations

import functools

import streamlit as st

from app import state
from app.charts import chart
from app.variants import guide_figures as figs
from specsim import methods
from specsim.core import defaults, draft_loader
from specsim.core.published import MEDUSA_1_SPEEDUP, MEDUSA_2_SPEEDUP, SAXENA_SPEEDUP, YANG_SPEEDUP
from specsim.measure import machine

EAGLE_DRAFT = defaults.EAGLE_DRAFT

LIVE_DEFAULT = " (the live page's default)"


def guide_entries(live_form: str) -> tuple[tuple[str, str, object], ...]:
    """(heading, explanation, figure builder) per variant; the one the live page runs by default (``live_form``,
    from :func:`specsim.core.draft_loader.draft_form`) says so in its heading and text, and no other does."""
    standalone = ("A second, much smaller model with the same tokenizer writes K tokens one after another; the target "
                  "checks them in one pass. It costs a second model to train or find, host and run.")
    if live_form == "standalone":
        standalone += " The live page runs this form by default, with the bundled draft model."
    elif live_form == "eagle":
        standalone += (" The variants page runs one below; the live page's default draft is the EAGLE-style head "
                       "described next.")
    eagle_alpha, standalone_alpha = (machine.heldout_alpha(d, copy=False)
                                     for d in (EAGLE_DRAFT, defaults.CLASSIC_DRAFT))
    chain_k = machine.heldout_chain_k(defaults.CLASSIC_DRAFT)
    eagle = ("Instead of a separate small language model, a single transformer layer drafts on top of the target. "
             "For every position the target's last layer computes a vector, its *hidden features*; the *output "
             "head*, the target's final linear layer, turns that vector into a score for every token of the "
             "vocabulary. The EAGLE layer reads the latest features together with the next token's embedding, "
             "predicts the *next* position's features, and lets the target's own output head turn them into a "
             "guess (Li et al., 2024). The bet is that features are more regular than tokens, so one layer goes "
             "far; the paper measures it on targets of 7B parameters and more. On this app's 135M target the "
             f"features do not guess better: the shipped one-layer head keeps {eagle_alpha:.0%} of its guesses on "
             f"held-out prompts, against {standalone_alpha:.0%} for the two-layer standalone draft (each without "
             f"copying text, counted over chains of K = {chain_k} guesses started at every position of the target's "
             "answers; *In practice* sets this α beside the other ways the pages count it). In speed the two come "
             "out close in the runs at the foot of this page, which use other prompts, and where the draft model "
             "also copies text that repeats.")
    if live_form == "eagle":
        eagle += " The live page's default draft is built this way."
    entries = (  # (form, heading, explanation, figure builder)
        ("standalone", "Draft model (the classic form)", standalone, None),
        ("eagle", "EAGLE: drafting features, not tokens", eagle, figs.eagle_figure),
        ("prompt_lookup", "Prompt lookup and inference with reference",
         "No model at all: take the last few tokens, find the same n-gram earlier in the prompt or the output, and "
         "propose whatever followed it there. Free to run, and strong when the answer reuses the input (editing "
         "code, summarising, quoting), useless when it does not. This is prompt lookup decoding (Saxena, 2023: "
         f"{SAXENA_SPEEDUP.figure} on {SAXENA_SPEEDUP.setting}), the form this app runs. *Inference with reference* "
         "proper is LLMA (Yang et al., 2023), which copies spans of reference documents that come with "
         f"the request, such as retrieved passages: {YANG_SPEEDUP.figure} where the output overlaps them.",
         figs.prompt_lookup_figure),
        ("lookahead", "Lookahead decoding (Jacobi iteration)",
         "One model guesses ahead of itself. Start a window of W guessed tokens, then in every pass recompute all W "
         "in parallel from the current guesses; after pass i the first i tokens are exactly greedy decoding, and "
         "often more settle early. Lookahead keeps the n-grams this process produces as a pool of guesses and "
         "verifies them in the same pass, so it needs no second model (Fu et al., 2024).",
         figs.jacobi_figure),
        ("medusa", "Medusa heads and tree attention",
         "Bolt a few small heads onto the target (say H of them; not the K of a chain, since a tree built from "
         "their guesses checks several candidates per position): head k reads the last hidden state and guesses "
         "the token k + 1 positions ahead. Their top choices combine into a tree of candidate continuations, and "
         "one pass with a tree-shaped attention mask checks every branch at once; what is kept is the longest "
         "accepted path from the root, which usually stops before a leaf. The heads must be trained (Cai et al., "
         "2024): Medusa-1 "
         f"trains only the heads on a frozen target ({MEDUSA_1_SPEEDUP.figure}), Medusa-2 fine-tunes the target "
         f"together with them ({MEDUSA_2_SPEEDUP.figure}). With greedy decoding the check is exact. For sampling, "
         "Medusa proposes *typical acceptance*: keep a guess whose target probability clears a threshold set by "
         "the distribution's entropy. It keeps more guesses, but the text no longer follows the target's "
         "distribution exactly, unlike the rejection rule of the other variants.",
         figs.medusa_figure),
        ("early_exit", "Early exit (self-speculation)",
         "Run only the target's first layers, apply its output head, and use that as the guess; the full model "
         "verifies. This form adds no weights. Untrained, as in this app, it guesses poorly: the first layers were "
         "never taught to predict the final output, and the run below shows how rarely they agree. Trained for it, "
         "self-speculation works: LayerSkip (Elhoushi et al., 2024) trains with layer dropout and an early-exit "
         "loss, Draft & Verify (Zhang et al., 2024) skips layers chosen by a search, and Kangaroo (Liu et al., "
         "2024) adds a small adapter after a shallow part of the target.",
         figs.early_exit_figure),
    )
    return tuple((heading + (LIVE_DEFAULT if form == live_form else ""), text, figure)
                 for form, heading, text, figure in entries)


@functools.cache
def entries() -> tuple:
    """The guide's entries, built on first use: the live page's default form (the bundled pair with
    :data:`specsim.core.defaults.DEFAULT_DRAFTER`) is read from the draft's folder."""
    return guide_entries(draft_loader.draft_form(defaults.DEFAULT_DRAFTER, defaults.DEFAULT_DRAFT))


def guide() -> None:
    """Draw the guide (no model runs)."""
    st.subheader("How each variant makes its guess")
    for i, (heading, text, figure) in enumerate(entries()):
        with st.expander(heading, expanded=i < 2):
            st.markdown(text)
            if figure is not None:
                chart(figure(), key=f"{state.VARIANT_GUIDE_CHART}{i}")
    st.subheader("The variants side by side")
    st.table(methods.variant_rows(), hide_index=True)  # a table, not a dataframe: its long cells wrap
    with st.expander("Common descriptions this table corrects"):
        st.markdown(methods.departures())
    st.caption("Press the button below to measure every variant here, next to plain decoding, on the same prompt.")
