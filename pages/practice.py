"""In practice: acceptance depends on the domain, the shared tokenizer, the ecosystem, and the references."""

from pathlib import Path

import streamlit as st

from app import classtask, frame, loaders, recording, state
from app.charts import chart
from app.practice import algorithm, drafts, loop_size, references, turn_on, when
from app.practice.figures import domain_figure
from specsim.core import defaults
from specsim.core.paths import DOMAINS_RECORDED
from specsim.lesson import domains

MAX_NEW = domains.TOKENS_PER_PROMPT

st.title("In practice")
frame.opening("practice.py")

st.subheader("When to use it, and when not")
st.markdown("Every page so far found a condition under which speculation pays, and one under which it does not. "
            "Here they are together.")
st.markdown(when.table_markdown())
st.markdown(when.CLOSING)

st.subheader("Acceptance depends on the domain")
st.markdown(
    "How often the target agrees with the draft is not a property of the two models alone: it depends on the "
    "text. Code and other structured text are full of tokens that follow almost by force (a closing bracket, a "
    "keyword, a repeated variable name), so even a weak draft should guess them more often. Free prose leaves more "
    "room for choice, and text that copies its input should be the easiest of all, at least for a drafter that "
    "copies. Those are expectations; one click tests them on the bundled pair, "
    f"greedy, K = {defaults.DEFAULT_K}, {MAX_NEW} tokens per prompt. The default drafter is a hybrid: a small draft "
    "model that also copies text which repeats earlier text, so the result says how many kept guesses were "
    "copies rather than the model's own.")
if st.button("Measure acceptance on code, prose and echo prompts", key=state.DOMAIN_BUTTON, type="primary"):
    if classtask.active():  # a class: a worker measures, and this replica loads no model
        results = classtask.run_task("domains", {"k": defaults.DEFAULT_K, "max_new": MAX_NEW})
        if results is not None:
            state.put(state.DOMAIN_RESULTS, results)
    else:
        bar = st.progress(0.0, text="Loading the bundled target and the default draft")
        try:
            target = loaders.bundled_target()
            drafter = loaders.draft_model(defaults.DEFAULT_DRAFT, target)
            results = domains.measure_domains(target, drafter, defaults.DEFAULT_K, MAX_NEW, domains.domain_prompts(),
                                              progress=lambda f, text: bar.progress(min(1.0, f), text=text))
            state.put(state.DOMAIN_RESULTS, results)
        except Exception as error:  # noqa: BLE001 - the learner sees a message, never a traceback
            st.error(f"The measurement could not run: {type(error).__name__}: {error}")
        bar.empty()
results = state.get(state.DOMAIN_RESULTS)
recorded = None if results is not None else domains.load_recorded(DOMAINS_RECORDED)
if recorded is not None:  # before the learner measures: the same measurement, made once on a named machine
    results = recorded.results
    st.info(f"Below: the measurement as recorded on {recorded.machine} ({recorded.when}). Press the button to "
            "run it here; your result replaces it.", icon=":material/history:")
if results is None:
    st.info("Press the button: two prompts per domain, six short runs of the bundled pair.")
else:
    chart(domain_figure(results), key=state.DOMAIN_CHART)
    st.markdown(" ".join(filter(None, (domains.ranking_sentence(results, MAX_NEW), domains.tau_sentence(results),
                                       domains.copied_sentence(results))))
                + " The best K and the speedup move with α, so measure on your own traffic.")
    with st.expander("How this was measured"):
        st.markdown(f"Greedy, K = {defaults.DEFAULT_K}, the bundled target and the default draft (which copies "
                    "repeated text); acceptance α is kept ÷ checked guesses, pooled over a domain's prompts: "
                    + domains.counts_sentence(results))

st.subheader("Draft and target share a tokenizer")
st.markdown(
    "The target judges a guess by the probability it gives that *token id* at that position. So the draft must "
    "cut text into the same tokens with the same ids; ideally the two share one tokenizer and vocabulary. Two "
    "models with different tokenizers can still be paired, losslessly: transformers' universal assisted generation "
    "(`generate(..., assistant_model=draft, tokenizer=..., assistant_tokenizer=...)`, after Timor et al., ICML "
    "2025) decodes the draft's guesses to text and re-tokenises them for the target, and the target's kept text "
    "back for the draft, when decoding greedily. When sampling (transformers 4.50 on) it keeps the draft to the "
    "tokens both vocabularies share and maps its guesses and its q onto the target's ids, so the usual rule, min(1, "
    "p/q) and the residual, checks them. The price is the translations every loop and guesses that no longer map "
    "one token to one position, which lowers acceptance and speed against a pair that shares a tokenizer.")
shipped = recording.shipped_runs().get("prose_run")  # the default draft's recording
coverage = domains.vocab_coverage(Path(defaults.DEFAULT_DRAFT), shipped.spec.generated_ids if shipped else ())
if coverage is not None:
    text = (f"The bundled default draft shares the target's tokenizer but only proposes from "
            f"{coverage.draft_vocab:,} of its {coverage.target_vocab:,} token ids (the most frequent ones), which "
            "keeps its output layer small. A token outside that set has q = 0 in the draft model, which can never "
            "propose it. It still reaches the text in two ways: as the target's own +1 token, or as a guess copied "
            "from earlier in the text, since the default drafter copies repeated text from the whole context.")
    if coverage.covered_in_text is not None:
        text += (f" In the recorded prose run of the default draft, {coverage.covered_in_text:.0%} of the tokens "
                 "the target wrote lie inside the draft's set.")
    st.markdown(text)

drafts.section()

st.subheader("Where it runs today")
st.markdown(
    "**vLLM**, **SGLang**, **NVIDIA TensorRT-LLM** and **llama.cpp** are serving stacks that already ship "
    "speculative decoding; between them they offer a separate draft model, n-gram (prompt lookup) drafting, and "
    "Medusa or EAGLE heads. The core loop is small: written for speed alone, as in pytorch-labs/gpt-fast, it takes "
    "about 50 lines of PyTorch. "
    + loop_size.sentence())
with st.expander("How this was measured"):
    st.markdown(loop_size.parts_sentence())
algorithm.section()

turn_on.section()
st.subheader("References")  # last: a list to look things up in, not a step of the lesson
st.markdown(references.markdown())
frame.closing("practice.py")
