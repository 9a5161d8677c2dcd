"""The glossary: every term the lesson uses, in a sentence, with the page that teaches it. The sidebar shows it on
every page; the live page also opens it beside its first screen."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import streamlit as st

from app.layout import all_pages, script_path
from specsim.core import defaults, draft_loader

"""What the live page drafts with by default: "standalone" or "eagle" (its draft.json says which)."""


@dataclass(frozen=True)
class Term:
    term: str
    meaning: str
    page: str  # url path of the page that teaches it


@functools.cache
def terms() -> tuple[Term, ...]:
    """The glossary (built on first use: the EAGLE entry reads the default draft's form from its folder)."""
    default_form = draft_loader.draft_form(defaults.DEFAULT_DRAFTER, defaults.DEFAULT_DRAFT)
    return (
        Term("draft, target", "The small, fast model that guesses tokens, and the large model whose output you want; "
             "the target checks the draft's guesses.", "home"),
        Term("K", "How many tokens the draft proposes per loop.", "calculator"),
        Term("acceptance α", "The share of checked guesses the target keeps.", "calculator"),
        Term("tokens per loop, τ", "What one loop writes: the kept guesses plus the target's own token. Papers and "
             "serving stacks (EAGLE, Medusa, vLLM) report it as the mean acceptance length τ; it depends on K, so a τ "
             "compares only at the K it was measured with.", "calculator"),
        Term("+1 token", "The token the target adds itself after every check: a correction, or a bonus after a "
             "fully kept draft. It is why a loop never yields zero tokens.", "home"),
        Term("prefill", "The first target pass over the whole prompt, before the loop starts; it fills the KV cache "
             "and its last position chooses the first new token. Both decoders share it, so speedups here leave it "
             "and that token out.", "home"),
        Term("KV cache", "The keys and values every layer keeps for each token already seen, so a pass computes only "
             "the new tokens'; a verification pass appends K + 1 entries, and those past the kept tokens are cropped.",
             "home"),
        Term("held-out acceptance", "α measured on prompts the draft never saw in training "
             "(assets/prompts/heldout.json), "
             "by the draft's own evaluation; a run on your prompt can measure more or less.", "live"),
        Term("c, v, o", "The cost model's prices in one-token target passes: c for one draft guess, v for one "
             "verification pass over K + 1 tokens, and for a real run o, the bookkeeping between passes (the "
             "calculator takes it as 0).", "calculator"),
        Term("cost model", "speedup = tokens per loop ÷ (K·c + v) on the calculator; a real run on the live page "
             "adds its measured o, ÷ (K·c + v + o). There c, v and o are medians of timed passes (a median barely "
             "moves when the machine is busy), and the result is checked against the wall clock.", "calculator"),
        Term("closed form", "The formula for the expected tokens per loop, (1 − α^(K+1)) / (1 − α), if every guess is "
             "kept independently with chance α.", "calculator"),
        Term("memory-bound", "A pass whose time goes into reading memory (the weights, and each request's KV cache), "
             "not into arithmetic; then scoring K + 1 tokens costs about what scoring one does (v ≈ 1).", "home"),
        Term("batch", "The requests a server decodes together in one pass; they share the weights' reading and the "
             "idle arithmetic that makes checking guesses cheap.", "home"),
        Term("kernel", "One operation run on the accelerator. A pass launches many kernels one after another.",
             "verify"),
        Term("GEMM", "A matrix multiplication (general matrix multiply), the bulk of a layer's work: the batch's "
             "tokens times the layer's weights, so one reading of the weights serves every token in the pass.",
             "hood"),
        Term("launch-bound", "A pass whose time goes into starting its kernels, not into reading memory or "
             "arithmetic: a tiny model on a GPU. Its v looks flat, but a draft pays a launch per kernel too, so its c "
             "follows its share of the layers.", "verify"),
        Term("residual", "After a refused guess (sampling), the target draws from norm(max(0, p − q)): the part of its "
             "distribution p the draft's q left uncovered. It keeps the output exactly the target's.", "unchanged"),
        Term("K policy", "How many guesses each loop drafts: the same K every time, a K adapted from how the last "
             "loops fared, or a draft that stops early at an unsure guess. It changes only what is checked, never "
             "the rule that checks it.", "hood"),
        Term("early exit", "A drafter made of the target's own first layers and its output head: no second model to "
             "load. Here it is untrained, so its guesses are poor; trained early exits (an adapter, or a model "
             "trained to exit early) guess far better.", "variants"),
        Term("top-k, top-p", "Cuts applied before sampling: keep the k most likely tokens, or the fewest most likely "
             "tokens whose probabilities add up to p; min-p keeps the tokens whose probability is at least min-p "
             "times the top token's. Speculative decoding must apply the cut to the target's p; cutting the draft's "
             "q too, as this app does, is optional.", "unchanged"),
        Term("token tree", "Several candidates per position, checked in one pass with a mask that lets each node see "
             "only its ancestors; it raises tokens per loop when the draft's runner-up is often right.", "hood"),
        Term("Medusa, MTP", "Extra heads (Medusa) or a module trained with the model (MTP, multi-token prediction) "
             "that guess tokens further ahead from the target's own hidden state.", "variants"),
        Term("mixture of experts (MoE)", "A model whose feed-forward layers hold many experts, of which each token "
             "uses a few; K + 1 tokens can read more experts than one, so checking costs more at small batch.",
             "serving"),
        Term("tensor parallelism, expert parallelism", "Two ways to spread one model over several GPUs: tensor "
             "parallelism splits every layer's matrices among them, so each GPU reads a share of every weight; "
             "expert parallelism gives each GPU its own experts of a mixture of experts, so a token's experts are "
             "read on different GPUs at once.", "serving"),
        Term("roofline, ridge", "A pass is limited by memory or by arithmetic, whichever runs out first: v(n) ≈ "
             "max(1, n / R), where the ridge point R is how many tokens a pass carries before arithmetic sets its "
             "time.", "verify"),
        Term("position-invariant", "Kernels whose result for a position does not depend on how many positions share "
             "the pass, so greedy speculative output is bit-for-bit plain decoding's.", "unchanged"),
        Term("EAGLE", "A draft head that reads the target's own hidden states instead of being a separate model. "
             + ("The live page's default draft is one." if default_form == "eagle" else
                "The live page's default draft is not one: it is a separate small model, which also copies repeated "
                "text."), "variants"),
        Term("prompt lookup", "A drafter with no model at all: it copies the tokens that followed the latest n-gram "
             "the "
             "last time it appeared in the prompt or output.", "variants"),
    )


def expander(label: str = "Terms used on this page", in_sidebar: bool = False) -> None:
    """The glossary, folded. On a page each term links to where it is taught; in the sidebar it names the page."""
    pages = {p.url_path: p for p in all_pages()}
    with st.expander(label):
        for t in terms():
            page = pages[t.page]
            if in_sidebar:
                st.markdown(f"**{t.term}**: {t.meaning} *({page.title})*")
            else:
                st.markdown(f"**{t.term}**: {t.meaning}")
                st.page_link(script_path(page.script), label=f"taught in {page.title}", icon=page.icon)
