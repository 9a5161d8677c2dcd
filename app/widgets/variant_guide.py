"""The variants page before any run: how each variant makes its guess, a diagram each, the lesson's table."""

from __future__ import annotations

import streamlit as st

from app import state
from app.figures import variant_guide as figs
from specsim import build, defaults, methods

LIVE_DEFAULT = " (the live page's default)"


def guide_entries(live_form: str) -> tuple[tuple[str, str, object], ...]:
    """(heading, explanation, figure builder) per variant; the one the live page runs by default (``live_form``,
    from :func:`specsim.build.draft_form`) says so in its heading and text, and no other does."""
    standalone = ("A second, much smaller model with the same tokenizer writes K tokens one after another; the target "
                  "checks them in one pass. It costs a second model to train or find, host and run.")
    if live_form == "standalone":
        standalone += " The live page runs this form by default, with the bundled draft model."
    elif live_form == "eagle":
        standalone += (" The variants page runs one below; the live page's default draft is the EAGLE-style head "
                       "described next.")
    eagle = ("Instead of a separate small language model, a single transformer layer reads the target's last hidden "
             "features together with the next token's embedding and predicts the *next feature*; the target's own "
             "output head turns that feature into a token. Features are easier to predict than tokens, so one layer "
             "goes far (Li et al., 2024).")
    if live_form == "eagle":
        eagle += " The live page's default draft is built this way."
    entries = (  # (form, heading, explanation, figure builder)
        ("standalone", "Draft model (the classic form)", standalone, None),
        ("eagle", "EAGLE: drafting features, not tokens", eagle, figs.eagle_figure),
        ("prompt_lookup", "Prompt lookup (inference with reference)",
         "No model at all: take the last few tokens, find the same n-gram earlier in the prompt or the output, and "
         "propose whatever followed it there. Free to run, and strong when the answer reuses the input (editing "
         "code, summarising, quoting), useless when it does not (Yang et al., 2023).",
         figs.prompt_lookup_figure),
        ("lookahead", "Lookahead decoding (Jacobi iteration)",
         "One model guesses ahead of itself. Start a window of W guessed tokens, then in every pass recompute all W "
         "in parallel from the current guesses; after pass i the first i tokens are exactly greedy decoding, and "
         "often more settle early. Lookahead keeps the n-grams this process produces as a pool of guesses and "
         "verifies them in the same pass, so it needs no second model (Fu et al., 2024).",
         figs.jacobi_figure),
        ("medusa", "Medusa heads and tree attention",
         "Bolt K small heads onto the target: head k reads the last hidden state and guesses the token k + 1 "
         "positions ahead. Their top choices combine into a tree of candidate continuations, and one pass with a "
         "tree-shaped attention mask checks every branch at once; the longest accepted branch wins. The heads must "
         "be trained (Cai et al., 2024).",
         figs.medusa_figure),
        ("early_exit", "Early exit (self-speculation)",
         "Run only the target's first layers, apply its output head, and use that as the guess; the full model "
         "verifies. No extra weights, but shallow layers often disagree with the full model, so acceptance can be "
         "very low: this page shows it as the cautionary case.",
         figs.early_exit_figure),
    )
    return tuple((heading + (LIVE_DEFAULT if form == live_form else ""), text, figure)
                 for form, heading, text, figure in entries)


LIVE_FORM = build.draft_form(defaults.DEFAULT_DRAFTER, defaults.DEFAULT_DRAFT)
"""What the live page runs by default (the bundled pair with :data:`specsim.defaults.DEFAULT_DRAFTER`)."""
GUIDE = guide_entries(LIVE_FORM)


def guide() -> None:
    """Draw the guide (no model runs)."""
    st.subheader("How each variant makes its guess")
    for i, (heading, text, figure) in enumerate(GUIDE):
        with st.expander(heading, expanded=i < 2):
            st.markdown(text)
            if figure is not None:
                st.plotly_chart(figure(), key=f"{state.VARIANT_GUIDE_CHART}{i}")
    st.subheader("The lesson's table")
    st.table([{"variant": m.label, "extra cost": m.lesson[0], "note": m.lesson[1],  # a table wraps its long cells
               "claimed speedup (papers)": m.claimed_speedup() or "none given"}
              for m in methods.lesson_methods()], hide_index=True)
    st.caption("These are the lesson's and the papers' claims. Press the button below to measure every variant "
               "here, next to plain decoding, on the same prompt.")
