"""The variants of speculative decoding, each run for real on the bundled target, side by side."""

import streamlit as st

from app import frame, loaders, state
from app.variants import compare as ui
from app.variants import guide as variant_guide
from app.variants import production
from specsim.measure import compare_variants as cmp

state.init()
st.title("Variants: where the guesses come from")
frame.opening("variants.py")
st.markdown(
    "Speculative decoding needs *some* cheap guess of the next few tokens. Where the guess comes from is what "
    "separates the variants. Four are classic: a second small model (a *draft model*), text copied from the input "
    "(*prompt lookup*), the target guessing ahead of itself (*lookahead decoding*), and extra heads bolted onto the "
    "target (*Medusa*). Two more are described here: a draft head that reads the target's own features (EAGLE), "
    "and the target's first layers alone (early exit). "
    "Below, all six run on the bundled target (SmolLM2-135M-Instruct, "  # Medusa twice: as a chain and as a tree
    f"{loaders.bundled_dtype_name()}, greedy) on the same prompt, each timed against plain "
    "decoding: warmed up first, then in interleaved rounds, and cross-checked against the cost model (Medusa's "
    "heads run twice, as a chain and as a tree, so the table has seven variant rows below plain decoding's).")

variant_guide.guide()

st.subheader("What production uses now")
production.section()

st.subheader("Run them")
ui.note_cancelled_run()
labels = list(cmp.DEMO_PROMPTS)
if state.get(state.VAR_PROMPT) not in labels:
    state.put(state.VAR_PROMPT, labels[0])
label = st.selectbox("Prompt", labels, index=labels.index(state.get(state.VAR_PROMPT)))
state.put(state.VAR_PROMPT, label)
st.code(cmp.DEMO_PROMPTS[label], language=None, wrap_lines=True)
max_new = st.slider("New tokens per variant", 8, 48, state.get(state.VAR_MAX_NEW), step=8)
state.put(state.VAR_MAX_NEW, max_new)
results = state.get(state.VAR_RESULTS)

if st.button("Run every variant on this prompt", key=state.VAR_RUN_BUTTON, type="primary"):
    data = ui.run_prompt(label, max_new)
    if data is not None:
        results[(label, max_new)] = data
notice = state.get(state.VAR_NOTICE)
if notice:
    st.warning(notice)
data = results.get((label, max_new))
if data is None or data.comparison.by_key("lookahead") is None:
    st.info("Press the button to run plain decoding and every variant on this prompt (a few minutes on a "
            "laptop CPU: a warm-up and three timed rounds; each prompt runs once per session).")
    saved = ui.saved_heldout()
    if saved is not None:
        ui.recorded_section(saved)
    frame.closing("variants.py")
    st.stop()

st.subheader("Side by side")
ui.results_table(data.comparison)
st.subheader("The variants table, with our measurements")
ui.lesson_table(data.comparison)
st.subheader("EAGLE beside the standalone draft")
ui.eagle_section(data)
st.subheader("Lookahead: the Jacobi iterations converge")
ui.jacobi_section(data)
st.subheader("Medusa: the candidate tree and the accepted branch")
ui.medusa_section(data)
st.subheader("Prompt lookup needs overlap")
ui.lookup_section(results, max_new)
st.subheader("Early exit, untrained: why shallow layers need training to draft")
ui.early_exit_section(data)
frame.closing("variants.py")
