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


def _calculator(k: int, alpha: float, c: float, v: float) -> str:
    return "/calculator?" + urlencode(calc_params.to_query(
        CalcSettings(k=k, alpha_pct=round(alpha * 100), draft_cost=round(c, 3), verify_cost=round(v, 2)), every=True))


def mtp_text() -> str:
    """:func:`mtp_parts` as one text."""
    return "\n\n".join(mtp_parts())


def mtp_parts() -> tuple[str, str]:
    """MTP in this app's formulas, in four steps: what it drafts and τ; what a loop costs on one memory system at batch
    size 1 and at a large batch (c by weights read, v of a mixture of experts); what it costs spread over many GPUs
    by expert parallelism, as DeepSeek serves it; and what the reported 1.8× implies under each, with a calculator
    link for each."""
    low, high = pub.DEEPSEEK_MTP_ACCEPTANCE
    tau_low, tau_high = analytics.tokens_per_loop(low, 1), analytics.tokens_per_loop(high, 1)
    one, many, spread = moe.mtp_loops(GPU_RIDGE)
    big, (c_one, v_one), (c_big, v_big), c_layers = many.batch, (one.c, one.v), (many.c, many.v), spread.c
    what = (f"**MTP in this app's terms.** DeepSeek-V3 trains one *multi-token prediction* (MTP) module that predicts "
            "one token further ahead than the model does. The module reads the model's last hidden state *and* the "
            "embedding of the next token, runs one more transformer block, then the model's own output head. The "
            f"report drafts one token per pass with it (K = 1) and says that token is kept {low:.0%}–{high:.0%} of "
            f"the time, so a loop writes τ = 1 + α = {tau_low:.2f}–{tau_high:.2f} tokens. Serving stacks can also run "
            "the module again on its own guess to draft K > 1 tokens (vLLM's `num_speculative_tokens`, SGLang's "
            "`--speculative-num-steps`); it was trained for one step ahead, so the later guesses are kept less often, "
            "and K is a choice to make as for any draft. The report's figures are for K = 1, and so is the rest of "
            "this section.")
    cost = ("**What a loop costs on one memory system.** Where one GPU's (or one node's) memory holds every weight "
            "a step reads, a decoding step's time is set by the weights it reads. DeepSeek-V3 is a mixture of "
            "experts: in each of its routed layers a token uses a few of many experts, so what a step reads depends on "
            "the batch. One "
            f"token reads {pub.DEEPSEEK_MTP_ACTIVE_PARAMS_B - pub.DEEPSEEK_V3_EMBEDDING_PARAMS_B:g}B weights of the "
            f"module (the output head included; the embedding is a one-row lookup) against "
            f"{pub.DEEPSEEK_V3_ACTIVE_PARAMS_B:g}B of the model, so at batch size B = 1 c ≈ {c_one:.3f}. There the "
            "check is not free either: its two tokens can route to more experts than one token does, and this "
            f"app's model of DeepSeek-V3 (*Serving many requests*) puts v at {v_one:.2f}. A batch of B = {big} "
            "sequences routes to nearly every expert in every step, module and model alike, so c is the module's "
            f"weights over the model's: ({pub.DEEPSEEK_MTP_UNIQUE_PARAMS_B:g}B of its own, most of them experts, + "
            f"{pub.DEEPSEEK_V3_EMBEDDING_PARAMS_B:g}B of the shared output head) / "
            f"{pub.DEEPSEEK_V3_TOTAL_PARAMS_B - pub.DEEPSEEK_V3_EMBEDDING_PARAMS_B:g}B (the model less its embedding, "
            "a lookup) "
            f"≈ {c_big:.3f}, and v ≈ {v_big:.2f}: every expert is read anyway and stays below the ridge, and the small "
            f"rise comes from the weights every token reads (attention, the shared expert, the dense layers, the "
            "output head), which now carry "
            f"{2 * big} tokens, past R = {GPU_RIDGE} (*Serving many requests* works it out).")
    spread_text = (
        "**Spread over many GPUs.** DeepSeek serves V3 by *expert parallelism*: its report's decoding unit is "
        f"{pub.DEEPSEEK_V3_DECODE_GPUS} GPUs, each holding its own experts. There the check's second token reaches "
        "its extra experts on other GPUs at the same time, and a step waits on the busiest GPU and on each layer's "
        "exchange of tokens between GPUs, so its time follows the layers it passes more than the bytes: the module "
        f"is one block beside the model's {pub.DEEPSEEK_V3_LAYERS}, c ≈ {c_layers:.3f}, and at best "
        f"v ≈ {spread.v:.2f}.")
    return what, "\n\n".join((cost, spread_text, _mtp_batch_clause(tau_low, tau_high, one, many, spread)))


def _mtp_batch_clause(tau_low: float, tau_high: float, one: moe.MtpLoop, many: moe.MtpLoop,
                      spread: moe.MtpLoop) -> str:
    """The loop's cost c + v at K = 1 and its speedup on one memory system at batch size 1 and at a large batch, and
    spread over many GPUs, each with a calculator link, against what DeepSeek's figure (given to one decimal)
    covers."""
    reported, low = pub.DEEPSEEK_MTP_SPEEDUP.high, tau_low - 1

    def at(loop: moe.MtpLoop) -> str:
        c, v, cost = loop.c, loop.v, loop.cost
        return (f"at B = {loop.batch}, c + v = {c:.3f} + {v:.2f} = {cost:.2f} plain steps, so {tau_low / cost:.2f}–"
                f"{tau_high / cost:.2f}× ([open the calculator there]({_calculator(1, low, c, v)}))")

    text = (f"**What the reported {pub.DEEPSEEK_MTP_SPEEDUP.figure} implies.** The report gives no batch size for "
            f"its {pub.DEEPSEEK_MTP_SPEEDUP.figure} (tokens per second), and a figure given to one decimal covers "
            f"{reported - 0.05:.2f}–{reported + 0.05:.2f}×. On one memory system: " + at(one) + "; " + at(many)
            + ". Spread over many GPUs: " + at(spread) + ". ")
    edge = reported - 0.05

    def fits(loop: moe.MtpLoop) -> bool:
        return tau_high / loop.cost >= edge

    one_system = ("Both batch sizes fit it on one memory system" if fits(one) else
                  "On one memory system it fits a large batch and not a small one" if fits(many) else
                  "On one memory system neither batch size fits it")
    if fits(spread):
        return text + (one_system + "; spread over many GPUs, as DeepSeek deploys the model, it fits a single "
                       "request as well. So the figure alone cannot say which batch it was measured at: that needs "
                       "the deployment's details.")
    return text + one_system + "; spread over many GPUs it does not fit either."


def sglang_text() -> str:
    rates = pub.SGLANG_EAGLE_THROUGHPUT
    plain = rates["plain"]
    return (f"SGLang's documentation measures the step from EAGLE-2 to EAGLE-3 on one H100 serving "
            f"LLaMA-3.1-8B-Instruct on MT-Bench: {plain:.2f} tokens/s without speculation, {rates['EAGLE-2']:.2f} "
            f"with EAGLE-2 ({rates['EAGLE-2'] / plain:.2f}×) and {rates['EAGLE-3']:.2f} with EAGLE-3 "
            f"({rates['EAGLE-3'] / plain:.2f}×). Those are throughputs, and the documentation gives no batch size for "
            "them.")


def section() -> None:
    st.markdown(
        "The methods this page runs are the first published forms. Serving stacks now ship their descendants: trees "
        "whose "
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
    what, cost = mtp_parts()
    st.markdown(what)
    # its price rests on the mixture-of-experts model and batching of the next page: folded, and said so
    with st.expander("What MTP costs a loop, at one request and at many (uses *Serving many requests*, the next "
                     "page)"):
        st.markdown(cost)
    st.markdown(sglang_text())
    st.caption("Snippets that switch EAGLE-3 (vLLM and SGLang) and MTP (vLLM) on, each for a named release "
               "of the tool's documentation, are on *In practice* (*Turn it on*), beside the other methods'.")
