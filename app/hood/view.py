"""The sections of the Under-the-hood page, each drawn from the run and the iteration the learner picked."""

from __future__ import annotations

import math

import streamlit as st

from app import classtask, loaders, recording, state
from app.charts import chart
from app.hood import figures as figs
from app.hood import tree_pass
from app.layout import script_path
from app.live.tokens import md_plain
from specsim.core.defaults import BATCH_CONTEXT, DEFAULT_DRAFTER, GPU_RIDGE
from specsim.core.published import MAGICDEC_SPEEDUP
from specsim.core.trace import Trace
from specsim.lesson import hood, hood_tree, kpolicy_runs, recorded, roofline
from specsim.lesson.replay import after_prefill, is_greedy, visible
from specsim.measure import analytics


def pick_run() -> tuple[Trace | None, Trace | None]:
    """The run to dissect, the learner's own live run of this session or a shipped recording, and its plain
    baseline (None where there is none)."""
    options: dict[str, tuple[Trace, Trace | None, str]] = {}
    live = state.get(state.LIVE_TRACE)
    if live is not None:
        options[state.HOOD_LIVE] = (live, state.get(state.LIVE_PLAIN), "Your run on the live page")
    for name, run in recording.shipped_runs().items():
        options[name] = (run.spec, run.plain, recording.choice_label(name, run))
    if not options:
        st.info("No run to look inside yet: press Run on the live page, then come back.")
        return None, None
    if state.get(state.HOOD_RUN) not in options:  # the learner's own run, else the prose recording (it refuses)
        opening = state.HOOD_LIVE if state.HOOD_LIVE in options else hood.OPENING_RECORDING
        state.put(state.HOOD_RUN, opening if opening in options else next(iter(options)))
    name = st.radio("Run", list(options), format_func=lambda n: options[n][2], key=state.bound(state.HOOD_RUN),
                    on_change=_new_run)
    if len(options) > 1 or state.HOOD_LIVE not in options:
        st.caption("Beside each recording: its speedup over plain decoding, timed when it was recorded.")
    return options[name][:2]


def _new_run() -> None:
    state.keep([state.HOOD_RUN])
    state.forget(state.widget_key(state.HOOD_STEP))
    state.put(state.HOOD_STEP, None)  # the next run opens on its own teaching iteration


def no_loop_note(trace: Trace) -> None:
    """A run whose prefill wrote every token (one new token, or end-of-text at once) has no loop to dissect."""
    why = {"eos": "the end-of-text token came first", "max_new_tokens": "the token budget was one token",
           "cancelled": "the run was cancelled before its first loop"}.get(trace.stop_reason, "the run ended there")
    first = f" ({md_plain(visible(trace.first.text))})" if trace.first is not None else ""
    st.info(f"This run has no iterations to take apart: the prompt's prefill chose its only token{first} and "
            f"{why}, so no draft was checked. Pick a recording above, or run with more new tokens on the live page.")


def pick_step(trace: Trace) -> int:
    """The iteration to dissect (0-based); the slider counts from 1, as the live page does."""
    n = len(trace.iterations)
    step = state.get(state.HOOD_STEP)
    if step is None or not 1 <= step <= n:  # a new run: open on an iteration that shows the mechanics
        state.show(state.HOOD_STEP, hood.teaching_step(trace) + 1)
    if n == 1:
        return 0
    step = st.slider("Iteration", 1, n, key=state.bound(state.HOOD_STEP), on_change=state.keep,
                     args=([state.HOOD_STEP],))
    return step - 1


def verification_section(trace: Trace, step: int) -> None:
    it = trace.iterations[step]
    if it.tree is not None:
        return tree_pass.verification_section(trace, step)
    rows = hood.verification_rows(trace, step)
    st.subheader("One pass, K + 1 answers")
    if it.k == 0:
        st.info("In this iteration the drafter proposed nothing (prompt lookup found no earlier match), so the pass "
                "is a plain one-token pass. Pick another iteration to see guesses checked.")
    st.markdown(
        f"The target checks all {it.k} guesses of this iteration in **one** forward pass. Its input is the last token "
        f"already kept followed by the {it.k} guesses, {it.k + 1} positions in all. A causal language model returns a "
        "next-token distribution at every input position, so the pass returns K + 1 distributions at once: row i "
        "answers *what comes after input i*. Row 0 judges guess 1, row 1 judges guess 2, and so on; the row after "
        "the last kept guess supplies the target's own +1 token. Rows after a rejection are computed and thrown "
        "away.")
    table = [{"row": r.index, "position": r.position, "input": visible(r.input_text),
              "judges": f"guess {r.judges}" if r.judges else "(the +1 token if all are kept)",
              "target's top token (p)": (f"{visible(r.target_top[0].text)} ({r.target_top[0].prob:.2f})"
                                         if r.target_top else "—"),
              "guess (q, p)": (f"{visible(r.proposed.text)} (q {r.proposed.prob:.2f}, p {r.p_of_proposed:.2f})"
                               if r.proposed is not None else "—"),
              "what it decided": r.outcome} for r in rows]
    st.dataframe(table, hide_index=True, width="stretch")
    decisive = rows[hood.decisive_row(it)]
    st.markdown(  # only the token's text is escaped: the sentence's own bold must stay bold
        f"Row {decisive.index} decided the +1 token **{md_plain(visible(it.extra.text))}** ({it.extra_kind}): "
        + decisive_words(it))
    labels, grid, hidden = hood.causal_mask(it)
    chart(figs.mask_figure(labels, grid, hidden, rows), key=state.HOOD_MASK_CHART)
    st.caption("The mask is what makes one pass equal K + 1 separate passes: row i reads the cached context and "
               "the new inputs up to its own, never a later guess. So the distribution at row i is, in exact "
               "arithmetic, what plain decoding would compute after those tokens; in floating point the sums can "
               "round differently (see *Why the output is unchanged*, \"In floating point\").")
    chart(figs.rows_figure(rows), key=state.HOOD_ROWS_CHART)


def decisive_words(it) -> str:
    """Why the decisive row chose the +1 token: nothing to check, every guess kept, or a refusal there."""
    if it.k == 0:
        return "there was no guess to check, so the pass's only row gives the target's own next token."
    if it.n_accepted == it.k:
        return "every guess was kept, so the last row's distribution gives a bonus token."
    return f"guess {it.n_accepted + 1} was refused there, so the target's own choice at that row replaces it."


def cache_section(trace: Trace, step: int) -> None:
    it = trace.iterations[step]
    if it.tree is not None:
        return tree_pass.cache_section(trace, step)
    story = hood.cache_story(it)
    st.subheader("The KV caches in one iteration")
    st.markdown(
        "A **KV cache** keeps each layer's attention keys and values for every position already processed, so a "
        "pass over new tokens does not recompute the context. Speculation writes entries for guesses that may be "
        "refused, so both caches are **cropped** back after each verdict.")
    chart(figs.cache_figure(story), key=state.HOOD_CACHE_CHART)
    for sentence in story.sentences(it.k, it.n_accepted):
        st.markdown("- " + sentence)
    if not story.recorded:
        st.caption("This run was recorded before the engine wrote cache lengths into its trace; the target's are "
                   "derived from the iteration's counts by the same rule, and the draft's are not shown.")


def overlap_section(trace: Trace) -> None:
    st.subheader("Where α comes from: the overlap of two distributions")
    overlaps = hood.slot_overlaps(trace)
    st.markdown(
        "When the draft samples a guess x from q and the target keeps it with probability min(1, p(x)/q(x)), the "
        "chance of keeping whatever it guessed is Σₓ q(x)·min(1, p(x)/q(x)) = **Σₓ min(p(x), q(x)) = 1 − TV(p, q)**, "
        "one minus the total variation distance between the two distributions. That is α for one slot: the more "
        "the draft's distribution overlaps the target's, the more it keeps. Temperature moves it, because it "
        "reshapes both p and q.")
    if not overlaps:
        st.info("No guess of this run was checked.")
        return
    if trace.settings.tree is not None:
        st.markdown(hood_tree.overlap_note(trace))
        st.page_link(script_path("unchanged.py"), label="Set p and q yourself: Why the output is unchanged",
                     icon=":material/balance:")
        return
    mean = hood.mean_chance(trace)
    if is_greedy(trace):
        st.markdown(
            "This run is **greedy** (temperature 0): p and q are both one-hot on their top token, so the overlap is "
            "1 when the draft's top token is the target's and 0 otherwise, and the rule keeps a guess exactly "
            f"then. Mean chance {mean:.2f}, measured α {trace.acceptance_rate:.2f}: in greedy mode they are equal "
            "by construction.")
    else:
        exact = sum(o.exact for o in overlaps)
        st.markdown(
            f"Mean Σ min(p, q) over the {len(overlaps)} checked slots: **{mean:.3f}**; the share actually kept "
            f"(measured α): **{trace.acceptance_rate:.3f}**. The first is what the rule promises on average, the "
            f"second what the random draws gave ({exact} of the slots carry the full-distribution sum).")
    chart(figs.overlap_figure(overlaps, trace.acceptance_rate), key=state.HOOD_OVERLAP_CHART)
    st.page_link(script_path("unchanged.py"), label="Set p and q yourself: Why the output is unchanged",
                 icon=":material/balance:")


def position_section(trace: Trace) -> None:
    st.subheader("Is α the same at every position?")
    model = hood.position_model(trace)
    k = model.k
    tree = trace.settings.tree is not None
    st.markdown(hood_tree.POSITION_INTRO if tree else hood.POSITION_INTRO)
    measured = hood.rates_sentence(model)
    if measured and tree:
        met = hood_tree.candidates_by_depth(trace)
        measured += (" The walk met " + ", ".join(f"{x:.1f}" for x in met) + " candidates on average at depths "
                     + ", ".join(str(j) for j in range(1, len(met) + 1)) + ": the tree thins with depth, so a deeper "
                     "rᵢ judges fewer candidates and comes closer to a chain's single guess.") if met else ""
    if measured:
        st.markdown(measured)
    chart(figs.position_figure(model, chain=not tree), key=state.HOOD_POSITION_CHART)
    if model.tokens_per_loop and not math.isnan(model.error) and not tree:
        direction = "over" if model.error > 0 else "under"
        st.markdown(
            f"With this run's α = {model.alpha:.2f} and K = {k}, the geometric model predicts "
            f"**{model.geometric_tokens_per_loop:.2f}** tokens per loop; the run made **{model.tokens_per_loop:.2f}** "
            "(its τ; papers and vLLM call it the mean acceptance length, and count the +1 in it). "
            f"The model {direction}states it by **{abs(model.error):.0%}**."
            + (f" Not every loop drafted K: {model.short_loops} of the run's {len(trace.iterations)} loops "
               f"drafted fewer than {k} guesses (nothing to copy, the token budget, or a confidence stop). At the K "
               f"each loop drafted, the same α predicts **{model.geometric_at_drafted_k:.2f}**."
               if model.short_loops else ""))


def long_context_sentence(k: int, tree: bool = False) -> str:
    """The KV-cache regime of the batching model at the app's R and default context (:mod:`specsim.lesson.roofline`)."""
    model, context = roofline.LLAMA_31_8B, BATCH_CONTEXT
    batches = (64, 256)
    vs = [roofline.kv_verify_cost(b, k, GPU_RIDGE, context) for b in batches]
    return (f"Each sequence also reads its own KV cache every step, and those reads do not amortise over the batch: "
            f"for {model.name} at {context:,} tokens of context they add a memory-bound attention step beside the "
            "GEMMs (the layers' matrix multiplications, whose weights the batch shares), which dilutes the GEMMs' "
            "extra arithmetic without hiding it. With "
            f"{f'a tree of {k} guesses' if tree else f'K = {k}'} the same model gives v = {vs[0]:.2f} at "
            f"B = {batches[0]} and {vs[1]:.2f} at B = {batches[1]} "
            f"(weights alone: {roofline.batched_verify_cost(batches[0], k, GPU_RIDGE):.2f} and "
            f"{roofline.batched_verify_cost(batches[1], k, GPU_RIDGE):.2f}), so a long context keeps speculation "
            f"paying at batch sizes the weights-only picture rules out (MagicDec: {MAGICDEC_SPEEDUP.source}), "
            "provided a loop's tokens still exceed that v plus the drafting, and the draft's own cache stays small "
            "(MagicDec gives its draft a compressed one). "
            + _memory_clause(model, context, batches)
            + "*Serving many requests* shows both regimes with a context slider.")


def _memory_clause(model: roofline.Transformer, context: int, batches: tuple[int, ...]) -> str:
    """Which of ``batches`` fit one 80 GB GPU with their cache: a batch that does not is spread over several."""
    from specsim.lesson.roofline import GPU_MEMORY_GB

    weights = model.weight_bytes / 1e9
    over = [b for b in batches if roofline.kv_cache_gb(b, context, model) + weights > GPU_MEMORY_GB]
    if not over:
        return ""
    b = over[0]
    return (f"(At B = {b} the cache alone is {roofline.kv_cache_gb(b, context, model):,.0f} GB beside "
            f"{weights:.0f} GB of weights: more than one {GPU_MEMORY_GB} GB GPU holds, so such a batch is spread over "
            "several.) ")


def cost_section(trace: Trace, plain: Trace | None) -> None:
    st.subheader("What it costs, and what it does not change")
    c = hood.compute_per_token(trace)
    a, b, d = st.columns(3)
    a.metric("Target positions computed per token written", f"{c.target_tokens_per_emitted:.2f}",
             help="positions per verification pass (the guesses checked, plus one) ÷ tokens per loop, both averaged "
                  "over the run's loops; plain decoding computes 1.00")
    b.metric("Draft passes per token written", f"{c.draft_passes_per_emitted:.2f}",
             help="draft-model passes ÷ the loops' tokens; copied guesses (prompt lookup) cost no draft pass")
    d.metric("Prefill (time to the first token)", f"{1000 * c.prefill_s:.0f} ms",
             help="the prompt's pass: the same with or without a draft")
    batch_limit = math.floor(roofline.memory_bound_batches(c.k, GPU_RIDGE))
    tree = trace.settings.tree is not None
    fed = ("the whole tree it drafted, its guesses and the root" if tree else
           "the guesses it drafted plus one position")
    width = f"a tree of up to {c.k} guesses and its root" if tree else "K + 1 tokens"
    st.markdown(
        f"- **Compute rises.** Each loop runs the target over {fed}: "
        f"{c.positions_per_pass:.2f} positions per pass on average over this run's loops (the longest "
        f"carried {c.longest_pass}), to write {c.tokens_per_loop:.2f} tokens on average. So the target does "
        f"{c.positions:,} positions ÷ {c.tokens:,} tokens = {c.target_tokens_per_emitted:.2f}× the "
        "arithmetic of plain decoding per token, plus the draft's work. Speculation trades spare arithmetic for "
        "fewer sequential passes.\n"
        f"- **Latency per token falls** when a pass over {width} costs about as much as a pass over one, which "
        "holds while the accelerator waits on memory, and only while a loop's tokens outweigh its cost: τ above "
        "v plus the drafting."
        + (" A tree's mask is not the causal one that stock fused attention kernels assume, so its wide pass can "
           "cost more than a chain's of the same width." if tree else "") + "\n"
        "- **Time to first token is nearly unchanged**: the prompt's prefill is one pass either way, and the draft "
        "also reads the prompt, a small extra.\n"
        f"- **Batching erodes it.** A server batching B requests runs B·{c.k + 1} positions per pass. With this app's "
        f"ridge point R = {GPU_RIDGE} tokens per pass for a GPU, the pass stays memory-bound only while "
        f"B·{c.k + 1} ≤ {GPU_RIDGE}, that is B ≤ {batch_limit}; beyond it each extra guess costs real time, and "
        "throughput can fall below plain decoding. That counts only the weights. "
        f"{long_context_sentence(c.k, tree)}")
    if plain is not None and plain.n_generated:
        st.caption(f"The plain baseline of this run computed {plain.target_passes} one-token passes for "
                   f"{plain.n_decoded} tokens{after_prefill(plain)}.")


def adaptive_section(trace: Trace) -> None:
    st.subheader("Adaptive K")
    st.markdown(
        "K need not be fixed. specsim's engine runs three policies, and records the K each "
        "iteration planned:\n"
        "- **fixed**: the same K every loop (this app's default, and the calculator's model);\n"
        "- **transformers' heuristic schedule** (its `num_assistant_tokens_schedule=\"heuristic\"`, not its "
        "default): K grows by 2 after a loop that kept every guess and shrinks by 1 after one "
        "that did not, never below 1;\n"
        "- **a confidence stop**: the draft stops guessing early when its probability q for the next guess falls "
        "below a threshold, so it spends passes only where it is sure.\n\n"
        "Greedy output stays token for token the target's own under every policy: a policy only changes how many "
        "guesses are checked, never the rule that checks them.")
    planned = [it.k_planned for it in trace.iterations if it.k_planned is not None]
    if trace.settings.tree is not None:
        nodes, depth, _ = trace.settings.tree
        st.caption(f"This run drafted a token tree each iteration (up to {nodes} guesses, {depth} levels deep): its "
                   "size is the tree's settings, and no K policy applies to it.")
    elif planned:
        st.caption(f"This run: {trace.settings.k_schedule} schedule, K per iteration "
                   f"{', '.join(str(k) for k in planned[:30])}{'…' if len(planned) > 30 else ''}.")
    policies_comparison()


def policies_comparison() -> None:
    """The three policies run for real on the prose recording's prompt, greedy, beside plain decoding."""
    recipe = next(r for r in recorded.RECIPES if r.drafter == DEFAULT_DRAFTER)
    if st.button("Run the three policies (the bundled target and its default draft, greedy, on the prose "
                 "recording's prompt)", key=state.HOOD_POLICIES_BUTTON):
        if classtask.active():  # a class: a worker runs them, and this replica loads no model
            result = classtask.run_task("policies", {"prompt": recipe.prompt, "draft": recipe.draft,
                                                     "max_new": recipe.max_new_tokens})
        else:
            from specsim.core.models import format_prompt

            bar = st.progress(0.0, text="Loading the bundled target…")
            target = loaders.bundled_target()
            ids = format_prompt(target.tokenizer, recipe.prompt)
            steps = 1 + len(kpolicy_runs.POLICIES)
            result = kpolicy_runs.compare_policies(
                target, lambda: loaders.draft_model(recipe.draft, target), ids, recipe.max_new_tokens,
                on_run=lambda i, name: bar.progress(i / steps, text=f"Run {i + 1} of {steps}: {name}"))
            bar.empty()
        if result is not None:
            state.put(state.HOOD_POLICIES, result)
    result = state.get(state.HOOD_POLICIES)
    if result is None:
        return
    plain, runs = result
    chart(figs.policies_figure(runs), key=state.HOOD_POLICIES_CHART)
    st.dataframe([{"policy": run.name, "target passes": run.trace.target_passes,
                   "guesses drafted": run.trace.n_proposed, "kept": run.trace.n_accepted,
                   "tokens per target pass": round(run.trace.tokens_per_pass, 2),
                   "same tokens as plain decoding": "✓" if run.identical else "✗"} for run in runs],
                 hide_index=True)
    fewest = min(runs, key=lambda run: run.trace.target_passes)
    wasted = {run.name: run.trace.n_proposed - run.trace.n_accepted for run in runs}
    st.markdown(
        f"Plain decoding took {plain.target_passes} target passes for these {plain.n_decoded} tokens"
        f"{after_prefill(plain)}. "
        f"**{fewest.name}** needed the fewest target passes ({fewest.trace.target_passes}); the guesses drafted "
        "and refused, each a draft pass spent for nothing, were "
        + ", ".join(f"{n} under {name}" for name, n in wasted.items())
        + ". Which policy is quickest depends on what a draft pass costs against a target pass on the machine: "
        "counts, unlike times, are the same on every machine. "
        + ("Every policy wrote exactly the tokens of plain decoding." if all(r.identical for r in runs) else
           "A policy wrote different tokens from plain decoding: on this decode path, passes over different "
           "numbers of tokens are not bitwise equal (see the live page's note on invariance)."))


def closed_form_note(trace: Trace) -> None:
    """One line tying the run to the calculator's formula."""
    k, alpha = trace.k_max, trace.acceptance_rate  # the K and α the live page's cost model names
    if trace.settings.tree is not None:
        idle = sum(1 for it in trace.iterations if it.k == 0)
        st.caption(f"This run's trees wrote {trace.n_decoded} tokens in {len(trace.iterations)} loops, "
                   f"{trace.tokens_per_pass:.2f} per loop"
                   + (f" ({idle} loop{'s' if idle != 1 else ''} checked no guess: the token budget left room for the "
                      "+1 token alone)" if idle else "") + ". The calculator's "
                   "1 + α + … + α^K is a chain's: a tree offers several candidates per position, and *What a tree "
                   "buys* below models its tokens per loop from this run's acceptance by rank.")
        return
    st.caption(f"With α = {alpha:.2f} and K = {k}, the calculator's tokens per loop is "
               f"{float(analytics.tokens_per_loop(alpha, k)):.2f}.")
