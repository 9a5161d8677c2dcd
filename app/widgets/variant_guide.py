"""The variants page before any run: how each variant makes its guess, a diagram each, the lesson's table."""

from __future__ import annotations

import streamlit as st

from app.figures import variant_guide as figs
from specsim.variants import compare as cmp

GUIDE = (  # (heading, explanation, figure builder)
    ("Draft model (the classic form)",
     "A second, much smaller model with the same tokenizer writes K tokens one after another; the target checks "
     "them in one pass. It costs a second model to train or find, host and run. The live page runs this form.",
     None),
    ("EAGLE: drafting features, not tokens (the live page's default)",
     "Instead of a separate small language model, a single transformer layer reads the target's last hidden "
     "features together with the next token's embedding and predicts the *next feature*; the target's own output "
     "head turns that feature into a token. Features are easier to predict than tokens, so one layer goes far "
     "(Li et al., 2024). The bundled default draft is built this way.",
     figs.eagle_figure),
    ("Prompt lookup (inference with reference)",
     "No model at all: take the last few tokens, find the same n-gram earlier in the prompt or the output, and "
     "propose whatever followed it there. Free to run, and strong when the answer reuses the input (editing code, "
     "summarising, quoting), useless when it does not (Yang et al., 2023).",
     figs.prompt_lookup_figure),
    ("Lookahead decoding (Jacobi iteration)",
     "One model guesses ahead of itself. Start a window of W guessed tokens, then in every pass recompute all W "
     "in parallel from the current guesses; after pass i the first i tokens are exactly greedy decoding, and "
     "often more settle early. Lookahead keeps the n-grams this process produces as a pool of guesses and "
     "verifies them in the same pass, so it needs no second model (Fu et al., 2024).",
     figs.jacobi_figure),
    ("Medusa heads and tree attention",
     "Bolt K small heads onto the target: head k reads the last hidden state and guesses the token k + 1 "
     "positions ahead. Their top choices combine into a tree of candidate continuations, and one pass with a "
     "tree-shaped attention mask checks every branch at once; the longest accepted branch wins. The heads must be "
     "trained (Cai et al., 2024).",
     figs.medusa_figure),
    ("Early exit (self-speculation)",
     "Run only the target's first layers, apply its output head, and use that as the guess; the full model "
     "verifies. No extra weights, but shallow layers often disagree with the full model, so acceptance can be "
     "very low: this page shows it as the cautionary case.",
     figs.early_exit_figure),
)


def guide() -> None:
    """Draw the guide (no model runs)."""
    st.subheader("How each variant makes its guess")
    for i, (heading, text, figure) in enumerate(GUIDE):
        with st.expander(heading, expanded=i < 2):
            st.markdown(text)
            if figure is not None:
                st.plotly_chart(figure(), key=f"variant_guide_{i}")
    st.subheader("The lesson's table")
    st.dataframe([{"variant": cmp.LABELS[key], "extra cost": cost, "note": note,
                   "claimed speedup": claim or "none given"}
                  for key, (cost, note, claim) in cmp.LESSON_TABLE.items()], hide_index=True, width="stretch")
    st.caption("These are the lesson's and the papers' claims. Press the button below to measure every variant "
               "here, next to plain decoding, on the same prompt.")
