"""Is verification free here? v(n) measured on this machine, what it means, and the batch-size caveat."""


import streamlit as st

from app import batching, frame, state
from app.charts import chart
from app.live.params import calculator_link
from app.settings import CalcSettings
from app.verify import figures as figs
from app.verify import gpu, measure, paths
from specsim.core.paths import DECODE_PATHS_MEASURED, VERIFY_CURVE_RECORDED
from specsim.lesson import gpu_identity
from specsim.lesson import roofline as chips
from specsim.measure import passcost, pathbench

BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256)


st.title("Is verification free here?")
frame.opening("verify.py")
st.markdown(
    "The third fact of *Speculative decoding: the idea*: at small batch, for a model large enough to keep the "
    "memory bus busy, generating a token is limited by memory, not arithmetic. Each pass streams every weight of "
    "the model from memory to produce one token, and the "
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
recorded = None if curve is not None else passcost.load_recorded(VERIFY_CURVE_RECORDED)
if recorded is not None:  # before the learner measures: a curve measured once on a named machine
    curve = recorded.curve
    st.info(f"Below: a curve recorded on {recorded.machine} ({recorded.when}), not yet on this machine. Press the "
            "button to measure here; your curve replaces it.", icon=":material/history:")
calc = CalcSettings(k=state.get(state.CALC_K), alpha_pct=state.get(state.CALC_ALPHA_PCT),
                    draft_cost=state.get(state.CALC_DRAFT_COST), verify_cost=state.get(state.CALC_VERIFY_COST))
if curve is None:
    st.info("Press the button to measure. The bundled target (SmolLM2-135M-Instruct) loads first if it is not "
            "loaded yet.")
    ridge = None
else:
    flat, slope, ridge = curve.flat_until(), curve.slope(), curve.ridge()
    fits = curve.roofline_fits()
    chart(figs.verify_curve_figure(curve.ns, curve.v, flat, ridge if fits else None), key=state.VERIFY_CURVE_CHART)
    where = measure.where() if recorded is None else f"on {recorded.machine}, {recorded.when}"
    with st.expander("How this was measured"):
        st.markdown(f"Measured {where}: {curve.dtype} on {curve.device}, {curve.threads} thread(s), a context of "
                    f"{curve.context} tokens, median of {curve.repeats} interleaved rounds; a one-token pass took "
                    f"{1000 * curve.one_token_s:.1f} ms. On a shared machine other jobs can move single points by "
                    "tens of percent: measure twice before reading much into one bump.")
    if flat > 1 and fits:
        st.markdown(f"**Flat part, n ≤ {flat}:** up to {flat} tokens a pass costs within "
                    f"{passcost.FLAT_TOLERANCE:.0%} of a one-token pass, so verifying up to K = {flat - 1} guesses "
                    "is nearly free.")
    elif flat <= 1:
        st.markdown(f"**No flat part:** already two tokens cost {curve.v_at(2):.2f} one-token passes, so on this "
                    "machine verification is not free.")
    roofline = ("A *roofline* models a pass as limited by whichever runs out first, reading the weights or doing "
                "the arithmetic: v(n) ≈ max(1, n / R), flat up to a *ridge point* of R tokens, then rising. R is "
                "the chip's arithmetic rate over its memory bandwidth, counted in tokens: a token does two "
                "operations per weight and a bfloat16 weight is two bytes, so an A100's "
                f"{chips.A100.tflops:g} TFLOP/s over {chips.A100.tb_per_s:g} TB/s gives "
                f"R ≈ {chips.A100.ridge_tokens:.0f}; an H100's datasheet gives {chips.H100.ridge_tokens:.0f} and an "
                f"H200's {chips.H200.ridge_tokens:.0f}. Where this app needs one figure for a GPU it takes "
                f"R = {chips.GPU_RIDGE}.")
    if fits:
        st.markdown(f"**Slope:** past the flat part each extra token adds about {slope:.3f} of a one-token pass. "
                    f"{roofline} Fitted to this curve, R = {ridge:.1f}: past {ridge:.0f} tokens, arithmetic, not "
                    "reading the weights, sets the time of a pass.")
    else:
        gap = curve.roofline_gap()
        st.markdown(f"**Slope:** each extra token adds about {slope:.3f} of a one-token pass. {roofline} This "
                    f"curve has no such corner (the roofline fitted to it, R = {curve.ridge():.1f}, is off by up to "
                    f"{gap:.2f} of a pass somewhere on it): it "
                    "rises steadily from the first extra token, as if each token's arithmetic added to the time of "
                    f"reading the weights instead of hiding behind it (up to n = {flat} the rise stays within "
                    f"{passcost.FLAT_TOLERANCE:.0%}). So here v(K + 1) ≈ 1 + {slope:.3f}·K, and every guess costs a "
                    "little. The corner belongs to a model large enough to keep a GPU's memory busy: *Serving many "
                    "requests* works out where its R lies. (The GPU curve below is of this small model, which is "
                    "flat for another reason.)")
    k = st.slider("K for the calculator", 1, max(curve.ns) - 1, min(calc.k, max(curve.ns) - 1),
                  key=state.VERIFY_K)
    v = curve.v_at(k + 1)
    link = calculator_link(calc.alpha, k, calc.draft_cost, v)
    source = "measured" if recorded is None else "measured on the recorded curve"
    if not fits and f"{1 + slope * k:.2f}" != f"{v:.2f}":  # the straight line above is a fit; the point is measured
        source += f" (the fitted slope, v ≈ 1 + {slope:.3f}·K, gives {1 + slope * k:.2f})"
    st.markdown(f"With K = {k}, a verification pass covers {k + 1} tokens: **v = {v:.2f}** {source}. "
                f"[Open the calculator with v = {link.verify_cost:.2f}]({link.url}) (α and c stay as you left "
                "them there); its *Calibrate with measured costs* box also offers this value.")

if curve is None:
    st.markdown(batching.roofline_paragraph())
st.subheader("When many requests share a pass")
st.markdown(
    "Everything above is one request at a time. A server decodes many requests in one pass (a *batch*), and they "
    "share the idle arithmetic that made checking free: with enough of them, a pass over B·(K + 1) tokens is no "
    "longer free. *Serving many requests* works that out, with the KV cache, the load and a mixture-of-experts "
    "target; read it after the live run and Under the hood.")
measured_paths = pathbench.load(DECODE_PATHS_MEASURED)
gpu_run = gpu_identity.load()
if gpu_run is not None and "passes" in gpu_run:
    st.subheader("Measured on a GPU")
    chart(gpu.gpu_figure(gpu_run, measured_paths), key=state.VERIFY_GPU_CHART)
    st.markdown(gpu.gpu_text(gpu_run, measured_paths))
if measured_paths is not None:
    with st.expander("How this app's own decode path changes v and c"):
        chart(paths.paths_figure(measured_paths), key=state.VERIFY_PATHS_CHART)
        st.markdown(paths.paths_text(measured_paths))
frame.closing("verify.py")
