"""Is verification free here? v(n) measured on this machine, what it means, and the batch-size caveat."""

import math

import streamlit as st

from app import frame, state
from app.charts import chart
from app.live.params import calculator_link
from app.passcost import figures as figs
from app.passcost import gpu, measure, moe, paths, serving
from app.settings import CalcSettings
from specsim.core import defaults, published
from specsim.core.paths import DECODE_PATHS_MEASURED
from specsim.lesson import gpu_identity, roofline
from specsim.measure import analytics, passcost, pathbench

BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def ridge_sentence() -> str:
    """Where a data-centre GPU's ridge point lies, from datasheets, and the one R this app uses for it."""
    a, h = roofline.A100, roofline.H100
    return (f"For a GPU, R follows from its datasheet: per token a pass does 2 FLOPs per weight and reads each "
            f"bfloat16 weight (2 bytes) once, so R = FLOP/s ÷ bytes/s. The {a.name} gives {a.tflops:g} TFLOP/s ÷ "
            f"{a.tb_per_s:g} TB/s ≈ {a.ridge_tokens:.0f} tokens, the {h.name} {h.tflops:g} ÷ {h.tb_per_s:g} ≈ "
            f"{h.ridge_tokens:.0f}. This app uses R = {roofline.GPU_RIDGE} for a GPU serving one request, between "
            "the two: a pass over K + 1 ≤ 17 tokens is deep in the flat part, which is why the papers could treat "
            "verification as free. A datasheet's R is an upper bound: measured knees come earlier for GEMMs with "
            "few rows (they use only part of the tensor cores' width), for weights stored in fewer bytes than they "
            "are multiplied in (8- or 4-bit weights, bfloat16 arithmetic: each byte read carries more arithmetic), "
            "and for a mixture of experts (below).")


def gemm_bound_clause(k: int, ridge: int) -> str:
    """Up to which batch the weight GEMMs of a verification step wait on memory, or that no batch does."""
    limit = roofline.memory_bound_batches(k, ridge)
    if limit < 1:
        return f"no batch size: one sequence's K + 1 = {k + 1} tokens already pass R = {ridge}"
    return f"B ≤ {math.floor(limit)}"


def batching_sentence(calc: CalcSettings, batch: int, gpu_r: int, context: int) -> str:
    """Both regimes at the chosen B, R and context, every figure from :mod:`specsim.lesson.roofline`."""
    free = float(analytics.speedup(calc.alpha, calc.k, calc.draft_cost, 1.0))
    v_w = roofline.batched_verify_cost(batch, calc.k, gpu_r)
    s_w = roofline.batched_speedup(calc.alpha, calc.k, calc.draft_cost, batch, gpu_r)
    text = (f"At the calculator's α = {calc.alpha_pct} %, K = {calc.k} and c = {calc.draft_cost:.2f}, with B = {batch} "
            f"and R = {gpu_r}: **weights only**, v = {v_w:.2f} and a speedup of {s_w:.2f}× (the GEMMs wait on "
            f"memory for {gemm_bound_clause(calc.k, gpu_r)})")
    if context:
        v_kv = roofline.kv_verify_cost(batch, calc.k, gpu_r, context)
        s_kv = roofline.kv_speedup(calc.alpha, calc.k, calc.draft_cost, batch, gpu_r, context)
        plain = roofline.step_kernels(1, batch, gpu_r, context)
        gb = roofline.kv_cache_gb(batch, context)
        text += (f"; **at context {context:,}**, v = {v_kv:.2f} and {s_kv:.2f}× (reading the cache is "
                 f"{plain.attention / plain.total:.0%} of a plain step here, which dilutes the GEMMs' extra "
                 f"arithmetic; the batch's cache is {gb:,.1f} GB beside {roofline.LLAMA_31_8B.weight_bytes / 1e9:.1f} "
                 "GB of weights")
        text += (", more than one 80 GB GPU holds)" if gb + roofline.LLAMA_31_8B.weight_bytes / 1e9 > 80 else ")")
    text += (f"; against {free:.2f}× with free verification. The model keeps c as given, and so flatters both: the "
             "draft's own passes also grow with the batch, and at long context with its own cache, which is why "
             "MagicDec drafts with a small fixed-size cache.")
    return text


def kv_paragraph(model: roofline.Transformer, gpu_r: int) -> str:
    """How the cache enters the step: a kernel of its own, added to the GEMMs, never hiding their arithmetic."""
    attention_tokens = roofline.attention_memory_bound_tokens(gpu_r, model)
    return (
        f"**With the KV cache.** Each sequence also reads its own cache every step: {model.kv_bytes_per_token // 1024} "
        f"KiB per cached token for {model.name} ({model.layers} layers × a key and a value × {model.kv_heads} KV "
        f"heads × {model.head_dim} values × {model.bytes_per_value} bytes), against {model.weight_bytes / 1e9:.1f} GB "
        "of weights. Those reads do not amortise over the batch: B sequences read B caches. A step runs its kernels "
        "one after another, so its time is the **sum** of their rooflines: max(reading the weights, the GEMMs' "
        "arithmetic) + max(reading the caches, attention's arithmetic). The attention kernels stay memory-bound "
        f"while a sequence brings fewer than about {attention_tokens:.0f} new tokens (at R = {gpu_r}), so the K + 1 "
        "tokens of a verification read each cache once, for the price of one. The GEMMs still turn compute-bound "
        "once B·(K + 1) passes R, at any context; what a long context changes is the share of the step they "
        "take. When the cache reads are most of the step, the GEMMs' extra arithmetic is a small part of it and v "
        f"stays near 1. MagicDec ({published.MAGICDEC_SPEEDUP.source}) studies this regime and reports "
        f"{published.MAGICDEC_SPEEDUP.figure} on {published.MAGICDEC_SPEEDUP.setting}.")


st.title("Is verification free here?")
frame.opening("verify_free.py")
st.markdown(
    "The lesson's third reason speculative decoding works: generating a token is limited by memory, not "
    "arithmetic. Each pass streams every weight of the model from memory to produce one token, and the "
    "arithmetic units mostly wait. A pass over a few more tokens reads the same weights once, so on such "
    "hardware checking K guesses plus one costs about what generating one token does: **v ≈ 1**. Whether that "
    "holds on *your* machine can be measured in a few seconds: time target passes over n = 1, 2, … 16 new "
    "tokens on the same cached context.")
with st.expander("Prefill and the KV cache: what \"cached context\" means", expanded=False):
    st.markdown(
        "A transformer layer turns every token it has seen into a *key* and a *value* vector, and each new token "
        "attends to all of them. Recomputing them for the whole text at every step would repeat work, so the "
        "model keeps them: the **KV cache**, one key and one value per token per layer, growing by one entry a "
        "token.\n\n"
        "**Prefill** is the first target pass, over the whole prompt at once: it fills the cache with the prompt's "
        "keys and values and yields the first new token. Prefill is already a many-token pass, which is why "
        "verification can look like it. Plain and speculative decoding start with the same prefill, so the "
        "time to the first token is the same and speedups on these pages leave it out.\n\n"
        "After prefill every pass reads the cache and appends the new tokens' entries. A verification pass "
        "appends K + 1 entries, one per scored position; after the verdict the entries past the kept tokens are "
        "cut off (the cache is *cropped*), because they describe guesses that will not be written. The "
        "measurement below appends n tokens to one cached context of a few dozen tokens, then crops back, so "
        "every pass sees the same context.")

if state.get(state.VERIFY_RUNNING):  # a measurement stopped midway (the page was left, or a control used)
    state.put(state.VERIFY_RUNNING, False)
    st.warning("Cancelled: the last measurement of v(n) stopped before it finished, because the page was left or "
               "another control was used while it ran, so it kept no result. Press the button to measure again.",
               icon="⚠️")
if st.button(f"Measure v(n) {measure.where_label()} (a few seconds)", key=state.VERIFY_BUTTON, type="primary"):
    measure.measure()

curve = state.get(state.VERIFY_CURVE)
calc = CalcSettings(k=state.get(state.CALC_K), alpha_pct=state.get(state.CALC_ALPHA_PCT),
                    draft_cost=state.get(state.CALC_DRAFT_COST), verify_cost=state.get(state.CALC_VERIFY_COST))
if curve is None:
    st.info("Press the button to measure. The bundled target (SmolLM2-135M-Instruct) loads first if it is not "
            "loaded yet.")
    ridge = None
else:
    flat, slope, ridge = curve.flat_until(), curve.slope(), curve.ridge()
    chart(figs.verify_curve_figure(curve.ns, curve.v, flat, ridge), key=state.VERIFY_CURVE_CHART)
    st.caption(f"Measured {measure.where()}: {curve.dtype} on {curve.device}, {curve.threads} thread(s), a context of "
               f"{curve.context} tokens, median of {curve.repeats} interleaved rounds; a one-token pass took "
               f"{1000 * curve.one_token_s:.1f} ms. On a shared machine other jobs can move single points by tens of "
               "percent: measure twice before reading much into one bump.")
    if flat > 1:
        st.markdown(f"**Flat part, n ≤ {flat}:** up to {flat} tokens a pass costs within "
                    f"{passcost.FLAT_TOLERANCE:.0%} of a one-token pass. Here the pass waits on memory, so "
                    f"verifying up to K = {flat - 1} guesses is nearly free.")
    else:
        st.markdown(f"**No flat part:** already two tokens cost {curve.v_at(2):.2f} one-token passes. On this "
                    "machine a pass over several tokens is limited by arithmetic (or switches to slower kernels) "
                    "almost at once, so verification is not free.")
    st.markdown(f"**Slope:** past the flat part each extra token adds about {slope:.3f} of a one-token pass. "
                "A *roofline* models a pass as limited by whichever runs out first, memory or arithmetic: "
                f"v(n) ≈ max(1, n / R). Its *ridge point* R is the number of tokens a pass carries before "
                f"arithmetic, not reading the weights, sets its time. Fitted here, R = {ridge:.1f}. {ridge_sentence()}")
    k = st.slider("K for the calculator", 1, max(curve.ns) - 1, min(calc.k, max(curve.ns) - 1),
                  key=state.VERIFY_K)
    v = curve.v_at(k + 1)
    link = calculator_link(calc.alpha, k, calc.draft_cost, v)
    st.markdown(f"With K = {k}, a verification pass covers {k + 1} tokens: **v = {v:.2f}** measured. "
                f"[Open the calculator with v = {link.verify_cost:.2f}]({link.url}) (α and c stay as you left "
                "them there); its *Calibrate with measured costs* box also offers this value.")

measured_paths = pathbench.load(DECODE_PATHS_MEASURED)
if measured_paths is not None:
    st.subheader("Overhead flatters speculation")
    chart(paths.paths_figure(measured_paths), key=state.VERIFY_PATHS_CHART)
    st.markdown(paths.paths_text(measured_paths))

gpu_run = gpu_identity.load()
if gpu_run is not None and "passes" in gpu_run:
    chart(gpu.gpu_figure(gpu_run, measured_paths), key=state.VERIFY_GPU_CHART)
    st.markdown(gpu.gpu_text(gpu_run))

st.subheader("The batch-size caveat (a model)")
if curve is None:
    st.markdown("A *roofline* models a pass as limited by memory or by arithmetic, whichever runs out first; its "
                "*ridge point* R is how many tokens a pass carries before arithmetic sets its time. "
                + ridge_sentence())
st.markdown(
    "A server decodes many requests at once. A batch of B sequences reads the weights once for all of them, "
    "so the spare arithmetic that made verification free is shared out. **Weights only** (context 0): once "
    "B·(K + 1) tokens exceed R, the verification pass becomes compute-bound and costs more. This is a model, not a "
    "measurement: a pass over T tokens in all costs max(1, T / R) one-token passes, and v at batch B is the pass "
    "over B·(K + 1) tokens divided by a plain pass over B tokens.")
if ridge is None:
    st.caption("Measure v(n) above to add this machine's own R to the chart.")
batch = st.select_slider("Batch size B", options=list(BATCHES), key=state.VERIFY_BATCH)
gpu_r = st.slider(f"R for the accelerator (tokens per pass before it is compute-bound; {roofline.GPU_RIDGE} is the "
                  "app's GPU)", 16, 512,
                  step=16, key=state.VERIFY_GPU_R)
context = st.select_slider("Context length (tokens already in each sequence's KV cache)",
                           options=list(defaults.BATCH_CONTEXTS), key=state.VERIFY_CONTEXT)
model = roofline.LLAMA_31_8B
st.markdown(kv_paragraph(model, gpu_r))
speedups = {f"weights only, R = {gpu_r}": [roofline.batched_speedup(calc.alpha, calc.k, calc.draft_cost, b, gpu_r)
                                          for b in BATCHES]}
if context:
    speedups[f"{model.name}, context {context:,}, R = {gpu_r}"] = [
        roofline.kv_speedup(calc.alpha, calc.k, calc.draft_cost, b, gpu_r, context) for b in BATCHES]
if ridge is not None:
    speedups[f"this machine, weights only (R = {ridge:.1f})"] = [
        roofline.batched_speedup(calc.alpha, calc.k, calc.draft_cost, b, ridge) for b in BATCHES]
chart(figs.batch_figure(BATCHES, speedups, batch), key=state.VERIFY_BATCH_CHART)
st.markdown(batching_sentence(calc, batch, gpu_r, context))

st.subheader("Serving many requests at once")
st.markdown(
    "A server batches continuously: every step, each running request gets its next tokens, and new requests join "
    "as others finish. The model above, at the calculator's α and c and the R and context set here, says how "
    "speculation should change with the load.")
load_rows = serving.load_rows(calc.alpha, calc.draft_cost, gpu_r, context, BATCHES)
chart(serving.load_figure(load_rows), key=state.VERIFY_LOAD_CHART)
st.markdown(serving.load_text(load_rows, calc.alpha, calc.draft_cost, gpu_r, context))
st.markdown(serving.schedule_text(load_rows))
dynamic = serving.schedule_snippet(load_rows, calc.k)
st.code(dynamic.code, language=dynamic.language)
st.caption(f"{dynamic.note} Checked against {dynamic.release}'s documentation: {dynamic.source}")
st.markdown(serving.mixed_text(calc.alpha, calc.k, calc.draft_cost, batch, gpu_r, context))
st.markdown(moe.moe_text(calc.k, gpu_r))
chart(moe.moe_figure(gpu_r), key=state.VERIFY_MOE_CHART)
st.markdown(serving.draft_cache_text(batch, context))
frame.closing("verify_free.py")
