"""In practice, "Turn it on": how to switch speculative decoding on in transformers, vLLM, llama.cpp and SGLang, one
snippet per tool and method (:mod:`specsim.lesson.serving`), and the transformers prompt-lookup snippet run for real on
the bundled target beside specsim's own runs."""

from __future__ import annotations

import streamlit as st

from app import classtask, loaders, state
from specsim.lesson import gpu_identity, recorded, serving


def section() -> None:
    st.subheader("Turn it on")
    st.markdown("Each snippet names the release whose documentation it was checked against: flags and argument "
                "names change between releases, so check them against the release you run. Replace a separate draft "
                "model with any that shares the target's tokenizer; an EAGLE, Medusa or MTP head only with one "
                "trained for exactly that target, since it reads the target's own features.")
    for snippet in serving.SNIPPETS:
        st.markdown(f"**{snippet.tool}: {snippet.method}**, checked against {snippet.release} "
                    f"([docs]({snippet.source}))")
        st.code(snippet.code, language=snippet.language)
        if snippet.note:
            st.caption(snippet.note)
        if snippet.tool == "transformers" and "prompt_lookup_num_tokens" in snippet.code:
            snippet_run()


def gpu_identity_note() -> None:
    """The first GPU run's identity results (specsim.lesson.gpu_identity): the same lesson as the snippet's, on a
    GPU."""
    data = gpu_identity.load()
    if data is not None:
        st.markdown(gpu_identity.sentence(data))


SNIPPET_K, SNIPPET_TOKENS = 4, 48  # the snippet's prompt_lookup_num_tokens, and a budget of a few seconds


def snippet_prompts() -> list[tuple[str, str, str]]:
    """(label, name, prompt) to run the snippet on: the two recordings' prompts, then the bench's held-out prompts.
    The name says which prompt it was, never how a recording drafted it: the snippet runs transformers' lookup."""
    from specsim.core.prompt_sets import heldout_prompts

    shown = [(f"{r.title} (a recording's prompt)", f"the prompt of the recording “{r.title.split(',')[0]}”", r.prompt)
             for r in recorded.RECIPES]
    return shown + [(f"held-out, {item['domain']}: {item['prompt'][:60]}…", f"a held-out {item['domain']} prompt",
                     item["prompt"]) for item in heldout_prompts(8)]


def snippet_run() -> None:
    """The transformers prompt-lookup snippet run for real on the bundled target, beside specsim's own runs."""
    prompts = snippet_prompts()
    index = st.selectbox("Prompt to run the snippet on", range(len(prompts)), format_func=lambda i: prompts[i][0],
                         key=state.bound(state.HOOD_SNIPPET_PROMPT), on_change=state.keep,
                         args=([state.HOOD_SNIPPET_PROMPT],))
    if st.button(f"Run it on the bundled target (K = {SNIPPET_K}, {SNIPPET_TOKENS} tokens, greedy), with "
                 "transformers' plain generate and specsim's two runs beside it", key=state.HOOD_SNIPPET_BUTTON):
        if classtask.active():  # a class: a worker runs it, and this replica loads no model
            check = classtask.run_task("snippet", {"prompt": prompts[index][2], "k": SNIPPET_K,
                                                   "max_new": SNIPPET_TOKENS})
            if check is not None:
                state.put(state.HOOD_SNIPPET, (index, check))
        else:
            from specsim.core.models import format_prompt
            from specsim.measure.hf_assisted import snippet_check

            with st.spinner("Loading the bundled target and running transformers and specsim…"):
                target = loaders.bundled_target()
                ids = format_prompt(target.tokenizer, prompts[index][2])
                state.put(state.HOOD_SNIPPET, (index, snippet_check(target, ids, SNIPPET_K, SNIPPET_TOKENS)))
    done = state.get(state.HOOD_SNIPPET)
    if done is None:
        return
    ran_on, check = done
    from specsim.measure import hf_assisted as hf

    st.dataframe([{"run": name, "tokens written": len(ids),
                   "same tokens as specsim's plain decoding": "✓" if check.first_difference(name, hf.OURS_PLAIN)
                   is None else f"✗ from token {check.first_difference(name, hf.OURS_PLAIN) + 1}"}
                  for name, ids in check.tokens.items()], hide_index=True)
    split = check.first_difference(hf.HF_LOOKUP, hf.OURS_PLAIN)
    own = check.first_difference(hf.HF_LOOKUP, hf.HF_PLAIN)
    plains = check.first_difference(hf.HF_PLAIN, hf.OURS_PLAIN)
    where = f"on {prompts[ran_on][1]}, {check.dtype}"
    if split is None:
        st.markdown(f"The snippet wrote exactly specsim's tokens ({where}), and so did transformers' plain loop: "
                    "prompt lookup changed nothing, in either library.")
    elif own is None:
        st.markdown(
            f"The snippet wrote other tokens than specsim from token {split + 1} ({where}), but exactly what "
            f"transformers' own plain loop writes, which parts from specsim's plain decoding at token {plains + 1} "
            "too. "
            "So speculation changed nothing in either library: the two **plain** loops differ. They make the same "
            "passes (one prefill over the whole prompt, which chooses the first token, then one token per pass "
            "through the same model), so they should agree bit for bit: this is unexpected, please report it.")
    else:
        also = ("" if plains is None else f" (and transformers' plain loop parts from specsim's at token {plains + 1})")
        st.markdown(
            f"The snippet parted from **transformers' own plain loop** at token {own + 1} ({where}){also}. Its "
            "speculation is lossless in exact arithmetic, but its first pass reads the prompt and the first K "
            "guesses together, with the stock kernels, whose rounding depends on how many tokens a pass holds: the "
            "last prompt position's logits are not bit for bit those of a prefill over the prompt alone, which is "
            "where its plain loop chose the first token. Where the two likeliest tokens are almost tied, "
            "the greedy pick flips, and the text goes its own way from there. Bit-for-bit identity needs kernels "
            "that compute a position the same way in a pass of any size; specsim's decode path has them, so its "
            "prompt lookup writes its plain decoding's tokens"
            + (" (✓ above)." if check.first_difference(hf.OURS_LOOKUP, hf.OURS_PLAIN) is None else
               ", except here: a bug, please report it."))
