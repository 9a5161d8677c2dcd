"""Serving many requests: what batching, the KV cache, the load and a mixture-of-experts target do to verification,
from the roofline model (a model, not a measurement)."""

import streamlit as st

from app import batching, frame, state
from app.charts import chart
from app.serving import figures as figs
from app.serving import moe
from app.serving import view as serving
from app.settings import CalcSettings
from specsim.core import defaults
from specsim.lesson import roofline

BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256)

st.title("Serving many requests")
frame.opening("serving.py")
curve = state.get(state.VERIFY_CURVE)
ridge = None if curve is None or not curve.roofline_fits() else curve.ridge()  # a CPU curve without a corner has none
calc = CalcSettings(k=state.get(state.CALC_K), alpha_pct=state.get(state.CALC_ALPHA_PCT),
                    draft_cost=state.get(state.CALC_DRAFT_COST), verify_cost=state.get(state.CALC_VERIFY_COST))
st.caption(f"The model prices the calculator's settings: K = {calc.k}, α = {calc.alpha_pct} %, c = "
           f"{calc.draft_cost:.2f}. Change them there.")
st.subheader("The batch-size caveat (a model)")
st.markdown(
    "A server decodes many requests at once. A batch of B sequences reads the weights once for all of them, "
    "so the spare arithmetic that made verification free is shared out. **Weights only** (context 0): once "
    "B·(K + 1) tokens exceed R, the verification pass becomes compute-bound and costs more. This is a model, not a "
    "measurement: a pass over T tokens in all costs max(1, T / R) one-token passes, and v at batch B is the pass "
    "over B·(K + 1) tokens divided by a plain pass over B tokens.")
if ridge is None:
    st.caption("Measure v(n) on *Is verification free here?* to add this machine's own R to the chart.")
batch = st.select_slider("Batch size B", options=list(BATCHES), key=state.VERIFY_BATCH)
gpu_r = st.slider(f"R for the accelerator (tokens per pass before it is compute-bound; {roofline.GPU_RIDGE} is the "
                  "app's GPU)", 16, 512,
                  step=16, key=state.VERIFY_GPU_R)
context = st.select_slider("Context length (tokens already in each sequence's KV cache)",
                           options=list(defaults.BATCH_CONTEXTS), key=state.VERIFY_CONTEXT)
model = roofline.LLAMA_31_8B
st.markdown(batching.kv_paragraph(model, gpu_r))
speedups = {f"weights only, R = {gpu_r}": [roofline.batched_speedup(calc.alpha, calc.k, calc.draft_cost, b, gpu_r)
                                          for b in BATCHES]}
if context:
    speedups[f"{model.name}, context {context:,}, R = {gpu_r}"] = [
        roofline.kv_speedup(calc.alpha, calc.k, calc.draft_cost, b, gpu_r, context) for b in BATCHES]
if ridge is not None:
    speedups[f"this machine, weights only (R = {ridge:.1f})"] = [
        roofline.batched_speedup(calc.alpha, calc.k, calc.draft_cost, b, ridge) for b in BATCHES]
chart(figs.batch_figure(BATCHES, speedups, batch, calc.k), key=state.VERIFY_BATCH_CHART)
st.markdown(batching.batching_sentence(calc, batch, gpu_r, context))
st.markdown(batching.datasheet_paragraph())  # where R comes from, after the controls and the first result

st.subheader("Serving many requests at once")
st.markdown(
    "A server batches continuously: every step, each running request gets its next tokens, and new requests join "
    "as others finish. The model above, at the calculator's α and c and the R and context set here, says how "
    "speculation should change with the load.")
load_rows = serving.load_rows(calc.alpha, calc.draft_cost, gpu_r, context, BATCHES)
chart(serving.load_figure(load_rows), key=state.VERIFY_LOAD_CHART)
st.markdown(serving.load_text(load_rows, calc.alpha, calc.draft_cost, gpu_r, context))
st.markdown(serving.schedule_text(load_rows))
dynamic = serving.schedule_snippet(calc.alpha, calc.draft_cost, gpu_r, context, max(BATCHES), calc.k)
st.code(dynamic.code, language=dynamic.language)
st.caption(dynamic.note)  # the link goes in body text: a caption's grey link text is too faint (axe, WCAG AA)
st.markdown(f"Checked against [{dynamic.release}'s documentation]({dynamic.source}).")
st.markdown(serving.mixed_text(calc.alpha, calc.k, calc.draft_cost, batch, gpu_r, context))
st.markdown(moe.moe_text(calc.k, gpu_r))
chart(moe.moe_figure(gpu_r), key=state.VERIFY_MOE_CHART)
st.markdown(serving.draft_cache_text(batch, context))
frame.closing("serving.py")
