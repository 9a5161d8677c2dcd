"""What the live page shows about a recorded run: the current iteration, and the whole run.

Everything here only reads traces; nothing runs a model.
"""

from __future__ import annotations

import streamlit as st

from app import state
from app.figures import live as figs
from app.live_params import calculator_link, number_text
from app.widgets.tokens import md_plain, render_chips
from specsim import analytics, fairtime, replay
from specsim.trace import Trace


def fmt_pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def fmt_x(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}×"


def fmt_ms(seconds: float | None) -> str:
    return "—" if seconds is None else f"{1000 * seconds:.1f} ms"


def describe(spec: Trace) -> str:
    """One line saying what was run."""
    s = spec.settings
    return (f"Recorded run: {s.target} with {s.draft or s.drafter}, K = {s.k}, temperature "
            f"{number_text(s.temperature)}, seed {s.seed}, {s.dtype} on {s.device}"
            + (" with the position-invariant decode path (bit-exact verification)." if s.invariant else "."))


# ---- the current iteration -----------------------------------------------------------------------
def iteration_view(spec: Trace, step: int) -> None:
    """Chips, narration and the per-slot charts of iteration ``step``."""
    it = spec.iterations[step]
    st.markdown(f"**Iteration {step + 1} of {len(spec.iterations)}** · context {it.context_len} tokens · "
                f"K = {it.k}")
    render_chips(replay.chips_at(spec, step))
    st.info(md_plain(replay.narrate(spec, step)))  # token texts may hold Markdown characters
    positions = list(range(1, it.k + 1)) + ([it.k + 1] if it.n_accepted == it.k and it.extra_target_top else [])
    if not positions:
        return
    if state.get(state.LIVE_SLOT) not in positions:
        state.put(state.LIVE_SLOT, min(it.n_accepted + 1, positions[-1]))
    labels = {pos: _slot_label(spec, step, pos) for pos in positions}
    chosen = st.radio("Look closer at slot", positions, format_func=labels.get, horizontal=True,
                      key=state.LIVE_SLOT)
    st.plotly_chart(figs.alternatives_figure(it, chosen), key=f"live_alt_{step}_{chosen}")
    if it.residual is not None:
        st.plotly_chart(figs.residual_figure(it), key=f"live_residual_{step}")
    elif not replay.is_greedy(spec) and it.n_accepted < it.k:
        st.caption("No residual summary was recorded for this rejection.")


def _slot_label(spec: Trace, step: int, pos: int) -> str:
    it = spec.iterations[step]
    if pos > it.k:
        return f"t+{pos} (bonus)"
    mark = {"accepted": "✓", "rejected": "✗", "unchecked": "·"}[it.slots[pos - 1].status]
    return f"t+{pos} {mark}"


# ---- the whole run ------------------------------------------------------------------------------
def run_view(spec: Trace, plain: Trace | None) -> None:
    """Acceptance, speedup against plain decoding, the timeline, the calculator, identity, export."""
    stats = replay.run_stats(spec, plain)
    cols = st.columns(4)
    cols[0].metric("measured acceptance α", fmt_pct(stats.alpha),
                   help="kept proposals ÷ proposals the target checked (slots after a rejection are not checked)")
    cols[1].metric("tokens per loop", f"{stats.tokens_per_loop:.2f}",
                   help=f"{stats.generated} tokens in {stats.iterations} iterations")
    fair = fairtime.fair_speedup([(spec, plain)]) if stats.measured is not None else None
    cols[2].metric("speedup vs plain decoding", fmt_x(None if fair is None else fair.headline),
                   help="the wall clock (speculative ÷ plain tokens per second, prefill excluded) when it agrees "
                        "with the cost model from median pass times; otherwise the cost model (see Why this speed)")
    cols[3].metric("calculator's prediction", fmt_x(stats.predicted_speedup),
                   help="speedup(α, K, c, v) from the measured α, draft cost c and verification cost v")
    left, right = st.columns(2)
    left.plotly_chart(figs.acceptance_by_position_figure(stats.by_position, stats.alpha), key="live_by_pos")
    right.plotly_chart(figs.kept_histogram_figure(stats.kept_counts, stats.alpha), key="live_kept_hist")
    if plain is None:
        st.warning("The plain baseline did not run to the end, so there is no speedup, timeline or identity check.")
        return
    st.plotly_chart(figs.timeline_figure(spec, plain), key="live_timeline")
    _costs(stats, spec, plain)
    _identity(spec, plain)


def _costs(stats: replay.RunStats, spec: Trace, plain: Trace) -> None:
    st.markdown("#### Measured against the calculator")
    table = {
        "": ["one draft pass", "one verification pass (K + 1 tokens)", "one plain pass (1 token)",
             "tokens per second"],
        "time": [fmt_ms(stats.mean_draft_pass_s), fmt_ms(stats.mean_verify_pass_s), fmt_ms(stats.mean_plain_pass_s),
                 f"{stats.spec_tokens_per_s:.1f} speculative · {stats.plain_tokens_per_s or 0:.1f} plain"],
        "in plain passes": [f"c = {stats.draft_cost:.3f}", f"v = {stats.verify_cost:.3f}", "1", ""],
    }
    st.table(table)
    link = calculator_link(stats.alpha, stats.k, stats.draft_cost, stats.verify_cost)
    predicted, measured = stats.predicted_speedup, stats.measured_speedup
    sentence = (f"With α = {stats.alpha:.3f}, K = {stats.k}, c = {stats.draft_cost:.3f} and v = "
                f"{stats.verify_cost:.3f}, the closed form predicts {fmt_x(predicted)}; this run measured "
                f"{fmt_x(measured)}")
    if stats.efficiency is not None:
        sentence += f" ({stats.efficiency:.0%} of the prediction)"
    st.markdown(sentence + f". [Open the calculator at these settings]({link.url}).")
    at_link = float(analytics.speedup(link.alpha_pct / 100, link.k, link.draft_cost, link.verify_cost))
    if fmt_x(at_link) != fmt_x(predicted):
        st.caption(f"The calculator's sliders round α to {link.alpha_pct} % and c, v to two decimals "
                   f"({link.draft_cost:.2f}, {link.verify_cost:.2f}); there it shows {fmt_x(at_link)}.")
    for note in link.notes:
        st.caption(f"Note: {note}.")
    as_run = stats.predicted_as_run
    if as_run is not None and predicted and abs(as_run - predicted) > 0.005 * predicted:
        st.caption(f"Some loops proposed fewer than K = {stats.k} tokens (nothing to copy, or the token budget ran "
                   f"out). Summed over the loops as they actually ran, the closed form predicts {fmt_x(as_run)}.")
    if spec.n_generated != plain.n_generated:
        st.caption(f"The runs wrote different numbers of tokens ({spec.n_generated} and {plain.n_generated}); "
                   "the speedup compares tokens per second, so it stays fair.")


def _identity(spec: Trace, plain: Trace) -> None:
    st.markdown("#### Same text as plain decoding?")
    result = replay.identity(spec, plain)
    if not replay.is_greedy(spec):
        st.caption(f"Sampling mode (temperature {number_text(spec.settings.temperature)}): both runs draw from the "
                   "target's distribution, but with different random numbers, so their texts need not match. Set the "
                   "temperature to 0 to check token-for-token identity.")
        return
    if result.identical:
        st.success(identical_sentence(result.compared, result.dtype))
    else:
        st.error(md_plain(f"The runs differ at generated token {result.index + 1}: speculative wrote "
                          f"{result.spec_token!r}, plain wrote {result.plain_token!r} ({result.dtype})."))
    st.caption(replay.identity_guarantee(spec.settings))
    left, right = st.columns(2)
    # No widget keys: a keyed box keeps the text it first showed, even after a new run (issue 12).
    left.text_area("speculative output", spec.text, disabled=True)
    right.text_area("plain output", plain.text, disabled=True)


def identical_sentence(compared: int, dtype: str) -> str:
    what = "the one token matches" if compared == 1 else f"all {compared} tokens match"
    return f"Identical: {what} plain greedy decoding ({dtype})."


def export_button(spec: Trace, plain: Trace | None) -> None:
    """Download the speculative trace (and the plain one) as JSON."""
    left, right = st.columns(2)
    left.download_button("Download the trace (JSON)", spec.to_json(), file_name="specsim-trace.json",
                         mime="application/json", key="live_export")
    if plain is not None:
        right.download_button("Download the plain run (JSON)", plain.to_json(), file_name="specsim-plain.json",
                              mime="application/json", key="live_export_plain")
