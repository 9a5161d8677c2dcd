"""The variants page's "What production uses now": EAGLE-2's dynamic trees, EAGLE-3, MTP modules and suffix
decoding, what each drafts from, how it is checked, and what its paper reported; every figure from
:mod:`specsim.core.published` or :mod:`specsim.measure.analytics`."""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

from app.calculator import params as calc_params
from app.settings import CalcSettings
from specsim.core import published as pub
from specsim.core.defaults import GPU_RIDGE
from specsim.lesson import moe
from specsim.measure import analytics


def rows() -> list[dict[str, str]]:
    """One row per method: what it drafts from, how the target checks it, what its paper reported."""
    low, high = pub.DEEPSEEK_MTP_ACCEPTANCE
    return [
        {"method": "EAGLE-2 (dynamic draft tree)",
         "drafts from": "the target's top-layer features, one small head, grown into a tree whose shape follows "
                        "the head's own confidence",
         "checked as": "a token tree in one pass; at a node, distinct top-k candidates are tried in turn",
         "reported": pub.EAGLE2_SPEEDUP.claim},
        {"method": "EAGLE-3",
         "drafts from": "low, middle and high-layer features of the target, fused; the head predicts tokens, and is "
                        "trained on its own earlier outputs (training-time test)",
         "checked as": "the same token tree as EAGLE-2",
         "reported": pub.EAGLE3_SPEEDUP.claim},
        {"method": "MTP module (DeepSeek-V3)",
         "drafts from": "a module trained with the model to predict the token after next, reused as the draft",
         "checked as": "a chain, K = 1: the usual one-pass check",
         "reported": f"{pub.DEEPSEEK_MTP_SPEEDUP.claim}; the drafted token was kept {low:.0%}–{high:.0%} of "
                     "the time"},
        {"method": "Suffix decoding",
         "drafts from": "no model: suffix trees over the prompt, this request's output and earlier requests' "
                        "outputs",
         "checked as": "a small speculation tree, longer where the match is long",
         "reported": pub.SUFFIX_SPEEDUP.claim},
    ]


def mtp_text() -> str:
    """What MTP's acceptance means in this app's formulas, and why the calculator cannot confirm DeepSeek's figure:
    an MoE target (v = 1 fails at small batch), c by bytes read, and a figure with no stated batch, which the MoE model
    comes nearest only at large batch."""
    low, high = pub.DEEPSEEK_MTP_ACCEPTANCE
    tau_low, tau_high = analytics.tokens_per_loop(low, 1), analytics.tokens_per_loop(high, 1)
    by_layers = 1 / pub.DEEPSEEK_V3_LAYERS
    by_bytes = pub.DEEPSEEK_MTP_COST_BY_BYTES
    s_low, s_high = analytics.speedup(low, 1, by_bytes, 1.0), analytics.speedup(high, 1, by_bytes, 1.0)
    calculator = "/calculator?" + urlencode(calc_params.to_query(
        CalcSettings(k=1, alpha_pct=round(low * 100), draft_cost=round(by_bytes, 3), verify_cost=1.0), every=True))
    big = 256
    v_big, v_one = moe.DEEPSEEK_V3.verify_cost(big, 1, GPU_RIDGE), moe.DEEPSEEK_V3.verify_cost(1, 1, GPU_RIDGE)
    return (f"**MTP in this app's terms.** DeepSeek-V3 drafts one token (K = 1), kept {low:.0%}–{high:.0%} of the "
            f"time, so a pass writes τ = 1 + α = {tau_low:.2f}–{tau_high:.2f} tokens. Its MTP module predicts from "
            "the model's last hidden state *and* the embedding of the next token, through one more transformer "
            f"block, and then runs the shared output head: by weights read per token it costs about "
            f"({pub.DEEPSEEK_MTP_ACTIVE_PARAMS_B:g} − {pub.DEEPSEEK_V3_EMBEDDING_PARAMS_B:g}) / "
            f"{pub.DEEPSEEK_V3_ACTIVE_PARAMS_B:g} = {by_bytes:.3f} of the model's {pub.DEEPSEEK_V3_ACTIVE_PARAMS_B:g}B "
            f"active parameters, not 1/{pub.DEEPSEEK_V3_LAYERS} = {by_layers:.3f}. With v = 1 the calculator would "
            f"give {s_low:.2f}–{s_high:.2f}× ([open it at α = {low:.0%}]({calculator})), "
            "but v = 1 does not hold here: DeepSeek-V3 is a mixture of experts, and "
            "at small batch the K + 1 tokens of a verification pass can route to more experts than one token does, "
            f"so the pass reads more weights. The report gives no batch size for its {pub.DEEPSEEK_MTP_SPEEDUP.figure} "
            f"(tokens per second). Read backwards, {pub.DEEPSEEK_MTP_SPEEDUP.figure} at τ = {tau_low:.2f}–"
            f"{tau_high:.2f} means a loop cost {tau_low / pub.DEEPSEEK_MTP_SPEEDUP.high:.2f}–"
            f"{tau_high / pub.DEEPSEEK_MTP_SPEEDUP.high:.2f} plain steps, draft included. " + _mtp_batch_clause(
                tau_low, tau_high, by_bytes, v_big, v_one, big))


def _mtp_batch_clause(tau_low: float, tau_high: float, c: float, v_big: float, v_one: float, big: int) -> str:
    """Where the mixture-of-experts model's loop cost, c + v at K = 1, comes nearest what DeepSeek's figure implies."""
    implied_high = tau_high / pub.DEEPSEEK_MTP_SPEEDUP.high
    loop_big, loop_one = c + v_big, c + v_one
    nearest = (f"the mixture-of-experts model on *Serving many requests* comes nearest at large batch, where every "
               f"expert is read each step anyway: c + v = {c:.3f} + {v_big:.2f} = {loop_big:.2f} at B = {big}, "
               f"against {c:.3f} + {v_one:.2f} = {loop_one:.2f} at B = 1")
    if loop_big <= implied_high:
        return f"That fits {nearest}; it does not fit a small batch."
    return (f"No batch in this app's model fits that: {nearest}, which gives {tau_low / loop_big:.2f}–"
            f"{tau_high / loop_big:.2f}×. So the figure implies a draft cheaper than its bytes, or a batch and "
            "hardware where the check is nearly free, and it does not fit a small batch at all.")


def sglang_text() -> str:
    rates = pub.SGLANG_EAGLE_THROUGHPUT
    plain = rates["plain"]
    return (f"SGLang's documentation measures the step from EAGLE-2 to EAGLE-3 on one H100 serving "
            f"LLaMA-3.1-8B-Instruct on MT-Bench: {plain:.2f} tokens/s without speculation, {rates['EAGLE-2']:.2f} "
            f"with EAGLE-2 ({rates['EAGLE-2'] / plain:.2f}×) and {rates['EAGLE-3']:.2f} with EAGLE-3 "
            f"({rates['EAGLE-3'] / plain:.2f}×).")


def section() -> None:
    st.markdown(
        "The methods this page runs are the classic forms. Serving stacks now ship their descendants: trees whose "
        "shape follows the draft's confidence, drafts that read several of the target's layers, draft modules "
        "trained together with the model, and drafting from text seen before with no model at all. All of them "
        "are lossless by construction, keeping the target's output up to numerics (a near-tie computed in floating "
        "point can flip): what changes is what the guesses come from and how many a pass checks.")
    st.table(rows(), hide_index=True)
    st.markdown(
        "**Which acceptance rule applies.** A chain (MTP at K = 1) is checked with min(1, p/q) and the residual, as "
        "everywhere in this app. A tree of *distinct* top-k candidates, as EAGLE-2 and EAGLE-3 draw them, is not "
        "i.i.d. from q, so at each node the target tries them in turn: candidate x is kept with probability p(x), "
        "and after a refusal p(x) is set to 0 and the rest renormalised before the next candidate (*Under the "
        "hood*, in \"Trees, and which variants stay lossless\", derives both rules).")
    st.markdown(mtp_text())
    st.markdown(sglang_text())
    st.caption("Snippets that switch EAGLE-3 (vLLM and SGLang) and MTP (vLLM) on, each checked against a named release "
               "of the tool's documentation, are on *In practice* (*Turn it on*), beside the other methods'.")
