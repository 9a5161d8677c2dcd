"""What the live page shows about a recorded run: the current iteration, and the whole run.

Everything here only reads traces; nothing runs a model.
"""

from __future__ import annotations

import streamlit as st

from app import state
from app.charts import chart
from app.live import figures as figs
from app.live.params import calculator_link, number_text
from app.live.tokens import md_plain, render_chips
from app.live.tree_figure import tree_figure
from specsim.core.trace import Iteration, Trace
from specsim.lesson import replay
from specsim.liverun import SPECULATIVE, LiveRun
from specsim.measure import fairtime


def fmt_pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def fmt_x(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}×"


def fmt_ms(seconds: float | None) -> str:
    return "—" if seconds is None else f"{1000 * seconds:.1f} ms"


def describe(spec: Trace) -> str:
    """One line saying what was run."""
    s = spec.settings
    size = "" if s.tree is not None else f", K = {s.k}"  # a tree run's draft names its tree
    return (f"Recorded run: {s.target} with {s.draft or s.drafter}{size}, temperature "
            f"{number_text(s.temperature)}, seed {s.seed}, {s.dtype} on {s.device}"
            + (" with the position-invariant decode path (bit-exact verification)." if s.invariant else "."))


def prefill_sentence(spec: Trace) -> str:
    """Where the first new token came from ("" for a trace recorded before the prefill chose it)."""
    if spec.first is None:
        return ""
    return (f"Before the first loop, the target's prefill pass read the whole prompt and its last position chose the "
            f"first new token, {spec.first.text!r} (p = {spec.first.prob:.2f}), as plain decoding's "
            "prefill does. The loops below write every token after it.")


def prefill_note(spec: Trace) -> None:
    sentence = prefill_sentence(spec)
    if sentence:
        st.caption(md_plain(sentence))  # the token's text may hold Markdown characters


def policy_sentence(spec: Trace) -> str:
    """What an adaptive K policy did, iteration by iteration ("" for a fixed K); a tree run's trees."""
    s = spec.settings
    if s.tree is not None:
        trees = [it.tree for it in spec.iterations if it.tree is not None]
        width = sum(t.width_read for t in trees) / len(trees) if trees else 0.0
        return (f"Token tree: at each of up to {s.tree[1]} levels the draft read its {s.tree[2]} best scored newest "
                f"guesses in one pass and gave each its {s.tree[2]} likeliest next tokens (a guess's score: the "
                f"product of the draft's probabilities along its path); then the {s.tree[0]} best scored guesses "
                f"were kept. Each verification pass read {width:.1f} tokens on average (the tree and the context's "
                f"last token), and a loop kept {spec.n_accepted / max(1, len(spec.iterations)):.2f} guesses. For a "
                "tree, α is a rate per step down the tree (steps that found the target's token ÷ steps where the tree "
                "offered guesses), so τ is the figure to compare with a chain.")
    if s.k_schedule == "fixed" and not s.stop_below:
        return ""
    rule = ("transformers' heuristic schedule (K + 2 after a fully kept draft, − 1 otherwise)"
            if s.k_schedule == "heuristic"
            else f"a confidence stop (a draft ends after a guess with q below {number_text(s.stop_below)})")
    drafted = [it.k for it in spec.iterations]
    shown = ", ".join(str(k) for k in drafted[:40]) + ("…" if len(drafted) > 40 else "")
    return (f"K policy: {rule}, starting from K = {s.k}. Guesses drafted per iteration: {shown} "
            f"({sum(drafted)} in all, {spec.n_accepted} kept).")


# ---- the current iteration -----------------------------------------------------------------------
def iteration_header(spec: Trace, step: int) -> str:
    """The line above iteration ``step`` (the player draws it with the step it reports back)."""
    it = spec.iterations[step]
    size = (f"a tree of {len(it.tree.nodes) - 1} guesses, one pass of {it.tree.width_read} tokens"
            if it.tree is not None else f"K = {it.k}")
    return f"**Iteration {step + 1} of {len(spec.iterations)}** · context {it.context_len} tokens · {size}"


def iteration_view(spec: Trace, step: int) -> None:
    """Chips, narration and the per-slot charts of iteration ``step`` (below :func:`iteration_header`)."""
    it = spec.iterations[step]
    render_chips(replay.chips_at(spec, step))
    st.info(md_plain(replay.narrate(spec, step)))  # token texts may hold Markdown characters
    if it.tree is not None:
        chart(tree_figure(it), key=f"{state.LIVE_TREE_CHART}{step}")
        st.caption("Each column is one position past the context, and each branch has rows of its own, the draft's "
                   "favourite path on top. The target walked down from the root, keeping at each step the guess that "
                   "equals its own token: green ✓ kept; red ✗ refused where the walk stopped; pale – passed over "
                   "(the target kept a sibling); grey · never reached. The purple diamond is the target's own +1 "
                   "token, not a guess. The chips above show the walked path: the kept guesses, then the draft's best "
                   "scored guess where the walk stopped.")
    positions = list(range(1, it.k + 1)) + ([it.k + 1] if it.n_accepted == it.k and it.extra_target_top else [])
    if not positions:
        return
    if state.get(state.LIVE_SLOT) not in positions:
        state.put(state.LIVE_SLOT, min(it.n_accepted + 1, positions[-1]))
    # The options' texts stay the same from one iteration to the next and the verdicts go in the captions: Streamlit
    # keeps a radio's choice as the text of the option chosen, so a text that changed with the iteration (t+2 ✓, then
    # t+2 ✗) matched no option on the next step; the page then showed no option chosen, and the next request reset the
    # slot to that iteration's refused one.
    chosen = st.radio("Look closer at slot (t+1 is the first position this loop writes, t+2 the next, …)",
                      positions, format_func=_slot_label, horizontal=True,
                      captions=[_slot_caption(it, pos) for pos in positions], key=state.LIVE_SLOT)
    cut = replay.is_cut(spec)
    chart(figs.alternatives_figure(it, chosen, cut=cut), key=f"{state.LIVE_ALTERNATIVES_CHART}{step}_{chosen}")
    if it.residual is not None:
        chart(figs.residual_figure(it, cut=cut), key=f"{state.LIVE_RESIDUAL_CHART}{step}")
    elif not replay.is_greedy(spec) and it.n_accepted < it.k:
        st.caption("No residual summary was recorded for this rejection.")


def _slot_label(pos: int) -> str:
    """A slot's option in the radio: the same text at every iteration (see :func:`iteration_view`)."""
    return f"t+{pos}"


def _slot_caption(it: Iteration, pos: int) -> str:
    """What happened at slot ``pos`` of iteration ``it``: the chips' marks, in words."""
    if pos > it.k:
        return "the target's own +1"
    slot = it.slots[pos - 1]
    verdict = {"accepted": "✓ kept", "rejected": "✗ rejected", "unchecked": "· never checked"}[slot.status]
    return verdict + (", copied" if slot.copied else "")


# ---- the whole run ------------------------------------------------------------------------------
def run_view(spec: Trace, plain: Trace | None) -> None:
    """Acceptance, speedup against plain decoding, the timeline, the calculator, identity, export."""
    stats = replay.run_stats(spec, plain)
    cols = st.columns(4)
    tree = spec.settings.tree is not None
    cols[0].metric("measured acceptance α", fmt_pct(stats.alpha),
                   help="for a tree, a rate per step down the tree: steps that found the target's token ÷ steps "
                        "where the tree offered guesses (not comparable with a chain's α)" if tree else
                        "kept proposals ÷ proposals the target checked (slots after a rejection are not checked)")
    cols[1].metric("tokens per loop, τ", f"{stats.tokens_per_pass:.2f}",
                   help=f"{spec.n_decoded} tokens in {stats.iterations} iterations"
                        + (", after the token the prompt's prefill chose" if spec.n_prefilled else "")
                        + ": the mean acceptance length τ that papers and vLLM report (kept guesses + the +1 token)")
    costs = stats.costs
    fair = fairtime.fair_speedup([(spec, plain)]) if costs is not None else None
    cols[2].metric("speedup vs plain decoding", fmt_x(None if fair is None else fair.headline),
                   help="the wall clock (speculative ÷ plain tokens per second, prefill excluded) when it agrees "
                        "with the cost model and the plain baseline was steady; otherwise the cost model")
    cols[3].metric("cost model", fmt_x(None if costs is None else costs.speedup),
                   help=f"tokens per loop ÷ ({'draft passes · c' if tree else 'K·c'} + v + o), with c, v and o from "
                        "median pass times (see below)")
    policy = policy_sentence(spec)
    if policy:
        st.caption(policy)
    left, right = st.columns(2)
    if tree:  # a walk down a tree has no geometric law to draw beside it
        chart(figs.kept_histogram_figure(stats.kept_counts, None), key=state.LIVE_KEPT_HISTOGRAM_CHART, where=left)
        right.caption("Guesses kept per loop: how far each walk went down its tree. A chain's run also shows each "
                      "slot's survival against α^i; a walk down a tree follows no such law, so it is left out here.")
    else:
        chart(figs.kept_share_figure(stats.kept_share, stats.alpha), key=state.LIVE_KEPT_SHARE_CHART, where=left)
        chart(figs.kept_histogram_figure(stats.kept_counts, stats.alpha), key=state.LIVE_KEPT_HISTOGRAM_CHART,
              where=right)
    if plain is None:
        st.warning("The plain baseline did not run to the end, so there is no speedup, timeline or identity check.")
        return
    chart(figs.timeline_figure(spec, plain), key=state.LIVE_TIMELINE_CHART)
    _costs(stats, spec, plain)
    identity_panel(spec, plain)


def _costs(stats: replay.RunStats, spec: Trace, plain: Trace) -> None:
    m = stats.costs
    if m is None:
        return
    if spec.settings.tree is not None:
        _tree_costs(m)
        return
    st.markdown("#### The cost model of this run")
    if m.noise:
        st.warning(f"Noisy baseline: {m.noise}. The wall clock of this run is noise, not a result; the medians "
                   "below are what the cost model uses.")
    st.table(_cost_table(m, "drafting, per guess proposed (copies included, at almost no cost)",
                         f"one verification pass (up to {m.k_max + 1} tokens)"))
    st.markdown(
        f"One average loop proposed {m.k:.2f} guesses (at most K = {m.k_max}; fewer where the token budget ran out "
        f"or the drafter stopped early) and yielded τ = {m.tokens_per_loop:.2f}, for drafting + v + o = "
        f"{m.drafting:.3f} + {m.verify_cost:.3f} + {m.other_cost:.3f} = {m.loop_cost:.3f} target passes: the cost "
        f"model predicts {m.tokens_per_loop:.2f} ÷ {m.loop_cost:.3f} = {fmt_x(m.speedup)}, and the wall clock "
        f"measured {fmt_x(m.wall_clock_speedup)}. Times are medians over the recorded passes.")
    if m.verify_cost_raw < 1:
        st.caption(f"The median verification pass came out at {m.verify_cost_raw:.3f} plain passes; a pass over more "
                   "tokens never costs less than a one-token pass, so the model counts it as 1.")
    link = calculator_link(stats.alpha, m.k_max, m.draft_cost, m.verify_cost)  # the K the sentence names
    st.markdown(
        f"The calculator takes each guess to be kept independently with chance α = {stats.alpha:.3f}, which at "
        f"K = {m.k_max} gives E[j] + 1 = {m.closed_form_tokens_per_loop:.2f} tokens per loop against the "
        f"{m.tokens_per_loop:.2f} measured here, and it has no bookkeeping term. "
        + (f"Part of the gap: an average loop proposed only {m.k:.2f} of its K = {m.k_max} guesses (the drafter "
           "had fewer to offer, or a loop none), and a guess never proposed is never kept. "
           if m.k < m.k_max - 0.05 and m.tokens_per_loop < m.closed_form_tokens_per_loop else "")
        + f"[Open the calculator at this run's α, K, c and v]({link.url}).")
    for note in link.notes:
        st.caption(f"Note: {note}.")
    if spec.n_generated != plain.n_generated:
        st.caption(f"The runs wrote different numbers of tokens ({spec.n_generated} and {plain.n_generated}); "
                   "the speedup compares tokens per second, so it stays fair.")


def _cost_table(m, drafting: str, verifying: str) -> dict[str, list[str]]:
    """The cost model's terms as a table: median times, and the same in plain passes."""
    base = m.plain_pass_s
    return {
        "": [drafting, verifying, "one plain pass (1 token)", "between the passes, per loop", "tokens per second"],
        "median time": [fmt_ms(m.draft_cost * base), fmt_ms(m.verify_cost_raw * base), fmt_ms(base),
                        fmt_ms(m.other_cost * base),
                        f"{m.spec_tokens_per_s:.1f} speculative · {m.plain_tokens_per_s:.1f} plain"],
        "in plain passes": [f"c = {m.draft_cost:.3f}", f"v = {m.verify_cost:.3f}", "1", f"o = {m.other_cost:.3f}",
                            ""],
    }


def _tree_costs(m) -> None:
    """A tree run's cost model: the draft's passes (one per level), one wide verification pass, bookkeeping."""
    st.markdown("#### The cost model of this run")
    if m.noise:
        st.warning(f"Noisy baseline: {m.noise}. The wall clock of this run is noise, not a result; the medians "
                   "below are what the cost model uses.")
    st.table(_cost_table(m, "drafting, per draft pass (one per level of the tree)",
                         "one verification pass (the whole tree)"))
    st.markdown(
        f"One average loop made {m.k:.2f} draft passes (one per level) and one verification pass over the whole "
        "tree, and yielded "
        f"τ = {m.tokens_per_loop:.2f} tokens, for drafting + v + o = {m.drafting:.3f} + {m.verify_cost:.3f} + "
        f"{m.other_cost:.3f} = {m.loop_cost:.3f} target passes: the cost model predicts {m.tokens_per_loop:.2f} ÷ "
        f"{m.loop_cost:.3f} = {fmt_x(m.speedup)}, and the wall clock measured {fmt_x(m.wall_clock_speedup)}. A tree "
        "can keep more per loop than a chain of its depth, where the draft's second or third choice is the target's "
        "token. It drafts with as many passes as that chain (each reading up to 3 guesses), but its verification "
        "pass reads every guess and the root instead of depth + 1 tokens: v grows with the tokens a pass reads "
        "(*Is verification free here?* measures by how much).")


def identity_panel(spec: Trace, plain: Trace) -> None:
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
    st.caption(replay.identity_guarantee(spec.settings, spec.longest_pass))
    left, right = st.columns(2)
    # No widget keys: a keyed box keeps the text it first showed, even after a new run (issue 12).
    left.text_area("speculative output", spec.text, disabled=True)
    right.text_area("plain output", plain.text, disabled=True)


def identical_sentence(compared: int, dtype: str) -> str:
    what = "the one token matches" if compared == 1 else f"all {compared} tokens match"
    return f"Identical: {what} plain greedy decoding ({dtype})."


def export_button(spec: Trace, plain: Trace | None) -> None:
    """Download the speculative trace (and the plain one) as JSON, written when the button is pressed (a long
    run's JSON is large, and the page is drawn far more often than a trace is downloaded)."""
    left, right = st.columns(2)
    left.download_button("Download the trace (JSON)", spec.to_json, file_name="specsim-trace.json",
                         mime="application/json", key=state.LIVE_EXPORT_BUTTON, on_click="ignore")
    if plain is not None:
        right.download_button("Download the plain run (JSON)", plain.to_json, file_name="specsim-plain.json",
                              mime="application/json", key=state.LIVE_EXPORT_PLAIN_BUTTON, on_click="ignore")


def cancel_notice(run: LiveRun) -> tuple[str, str]:
    """What the page says about a run that was cancelled, in this process or on a class worker."""
    if run.spec is None or run.spec.n_generated == 0:
        return "warning", "Cancelled before the speculative run recorded anything; your settings are kept."
    if run.stopped_in == SPECULATIVE and not run.spec.iterations:
        return "warning", ("Cancelled before the first loop: only the prompt's prefill ran (it chose the first token), "
                           "so there is no iteration to replay. Your settings are kept; press Run to try again.")
    if run.stopped_in == SPECULATIVE:
        n, tokens = len(run.spec.iterations), run.spec.n_generated
        return "warning", (f"Cancelled: the speculative run stopped after {n} iteration{'s' if n != 1 else ''} "
                           f"({tokens} token{'s' if tokens != 1 else ''}); they are kept below, without the plain "
                           "baseline.")
    return "warning", "Cancelled during the plain baseline: the speculative run is kept, without a speedup."
