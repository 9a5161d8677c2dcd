"""Streamlit sections of the variants page; every number comes from a run, every chart from app.variants.figures."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import streamlit as st

from app import classtask, loaders, state
from app.charts import chart
from app.palette import EXTRA, KEPT, NAMES
from app.variants import figures as figs
from specsim import methods
from specsim.core.models import format_prompt
from specsim.core.paths import HELDOUT_RESULTS
from specsim.lesson import replay
from specsim.measure import compare_variants as cmp
from specsim.measure import costmodel, fairtime


@dataclass
class PageData:
    """Everything one prompt's run produced (kept in session state, keyed by prompt and length)."""

    comparison: cmp.Comparison
    jacobi: list[list[int]] = field(default_factory=list)
    jacobi_texts: list[list[str]] = field(default_factory=list)


def _progress_callback(bar):
    return lambda fraction, message: bar.progress(min(max(fraction, 0.0), 1.0), text=message)


def _heads_or_none():
    try:
        return loaders.medusa_heads()
    except FileNotFoundError:
        return None  # the Medusa rows then report the missing file


def note_cancelled_run() -> None:
    """Turn the mark a stopped run left behind into the page's notice.

    A click anywhere (or a page switch) stops the script at its next UI call, here the progress bar; the
    stopped run cannot touch session state any more, so it only ever leaves its ``VAR_RUNNING`` mark.
    """
    running = state.get(state.VAR_RUNNING)
    if running is None:
        return
    state.put(state.VAR_RUNNING, None)
    label, max_new = running
    state.put(state.VAR_NOTICE, f"Cancelled: the run on the prompt “{label}” ({max_new} new tokens per variant) "
                                "stopped before it finished, because the page was left or another control was "
                                "used while it ran. A stopped run keeps no results; press the button to run it "
                                "again.")


def run_prompt(label: str, max_new: int, variants: tuple[str, ...] = methods.VARIANTS) -> PageData | None:
    """Run plain decoding and the variants on one demo prompt with a progress bar; errors become st.error."""
    state.put(state.VAR_NOTICE, None)
    state.put(state.VAR_RUNNING, (label, max_new))  # still there next time if the run is stopped
    if classtask.active():  # a class: a worker runs the comparison, and this server stays free
        got = classtask.run_task("variants", {"label": label, "max_new": max_new, "variants": list(variants)})
        state.put(state.VAR_RUNNING, None)
        return None if got is None else PageData(got["comparison"], got["jacobi"], got["jacobi_texts"])
    bar = st.progress(0.0, text=f"Loading the bundled target (SmolLM2-135M-Instruct, {loaders.bundled_dtype_name()})")
    try:
        target = loaders.bundled_target()
        comparison = cmp.compare(target, cmp.DEMO_PROMPTS[label], max_new, variants, _heads_or_none(),
                                 progress=_progress_callback(bar), rounds=cmp.ROUNDS)
        data = PageData(comparison)
        if "lookahead" in variants:
            bar.progress(0.98, text="Jacobi iterations for one window")
            from specsim.variants.lookahead import jacobi_demo  # here: a class replica never loads torch

            ids = format_prompt(target.tokenizer, cmp.DEMO_PROMPTS[label])
            data.jacobi = jacobi_demo(target, ids)
            data.jacobi_texts = [[target.tokenizer.decode([t]) for t in row] for row in data.jacobi]
    except Exception as error:  # noqa: BLE001 - the learner sees a message, never a traceback
        state.put(state.VAR_RUNNING, None)
        bar.empty()
        st.error(f"The variants could not run: {type(error).__name__}: {error}")
        return None
    state.put(state.VAR_RUNNING, None)
    bar.empty()
    return data


def results_table(comparison: cmp.Comparison) -> None:
    rows = cmp.summarise([comparison])
    st.dataframe([{
        "variant": r["variant"], "τ (tokens per target pass)": round(r["tokens per target pass"], 2),
        "acceptance": "n/a" if r["acceptance"] is None else f"{r['acceptance']:.0%}",
        "speedup vs plain": f"{r['speedup']:.2f}x",
        "speedup from": "" if r.get("fair") is None else r["fair"].source,
        "extra parameters": f"{r['extra parameters']:,}",
        "training": r["training"], "identical to plain": r["identical to plain"],
    } for r in rows], hide_index=True, width="stretch")
    for key, message in comparison.errors.items():
        st.warning(f"{methods.LABELS.get(key, key)} did not run: {message}")
    busy = [r for r in rows if r.get("fair") is not None and not r["fair"].agrees]
    st.caption(f"Every variant was warmed up, then timed in {cmp.ROUNDS} rounds interleaved with plain decoding; "
               "the speedup is the median of those rounds when it agrees with the cost model (tokens per loop ÷ "
               f"(K·c + v) from median pass times) within ±{fairtime.TOLERANCE:.0%}, and the cost model otherwise. "
               "No speedup can exceed tokens per target pass, τ: the mean acceptance length papers and vLLM "
               "report (for a chain, the kept guesses plus the target's own token per loop).")
    for r in busy:
        st.warning(f"{r['variant']}: {r['fair'].sentence()}")
    if not all(r["identical to plain"] for r in rows):
        st.error("A variant changed the greedy output: that is a bug, please report it.")
    variants = [r for r in rows if r["key"] != "plain"]
    chart(figs.comparison_chart([r["variant"] for r in variants],
                                [r["tokens per target pass"] for r in variants],
                                [r["speedup"] for r in variants]))


def saved_heldout() -> dict | None:
    """The comparison recorded over held-out prompts (``python -m specsim.measure.compare_variants --heldout N
    --save``), or None when it is missing or unreadable."""
    try:
        saved = json.loads(HELDOUT_RESULTS.read_text(encoding="utf-8"))
        return saved if isinstance(saved.get("rows"), list) and saved["rows"] else None
    except (OSError, ValueError, AttributeError):
        return None


def recorded_rows(saved: dict) -> list[dict]:
    """The recorded comparison, one row per decoding method, as the page's table shows it."""
    return [{"variant": r["variant"], "τ (tokens per target pass)": round(r["tokens per target pass"], 2),
             "acceptance": "n/a" if r.get("acceptance") is None else f"{r['acceptance']:.0%}",
             "speedup vs plain": f"{r['speedup']:.2f}x", "identical to plain": r["identical to plain"]}
            for r in saved["rows"]]


def recorded_section(saved: dict) -> None:
    """Before the learner runs anything: the comparison as recorded once, with where and how."""
    st.markdown(f"**Until you run the prompt above: every variant over {saved['prompts']} other prompts** (held-out "
                f"prompts, {saved['max_new_tokens']} new tokens each, greedy), recorded on "
                f"{saved.get('machine', 'a machine not named')} ({saved.get('when', 'date not named')}). Your prompt "
                "will give other numbers: prompt lookup, for one, wins only where the answer repeats the prompt. The "
                "papers' speedups in the table above come from targets of billions of parameters on GPUs, mostly "
                "serving one request at a time; here a 135M-parameter target runs on a CPU, where a pass over several "
                "tokens already costs more than one (*Is verification free here?*), so the gains are smaller. "
                "The draft model's row is not the live page's recording either: that is one prompt, on which the "
                "draft keeps more of its guesses; *In practice* sets this draft's measured α side by side and says "
                "what each counts.")
    st.dataframe(recorded_rows(saved), hide_index=True, width="stretch")
    with st.expander("How this was measured"):
        st.markdown(f"`python -m specsim.measure.compare_variants --heldout {saved['prompts']} --max-new-tokens "
                    f"{saved['max_new_tokens']} --save` on the bundled target ({saved.get('dtype', 'its dtype')}, "
                    f"{saved.get('threads', '?')} thread(s)): each variant warmed up, then timed in {cmp.ROUNDS} "
                    "rounds interleaved with plain decoding; the speedup is the median wall clock when it agrees "
                    f"with the cost model within ±{fairtime.TOLERANCE:.0%}, the cost model otherwise.")


def lesson_table(comparison: cmp.Comparison) -> None:
    st.table(cmp.lesson_rows(cmp.summarise([comparison])), hide_index=True)  # wraps the long notes and claims
    saved = saved_heldout()
    if saved is not None:
        st.caption(f"On the held-out prompt set ({saved['prompts']} prompts, {saved['max_new_tokens']} tokens "
                   f"each, measured by `python -m specsim.measure.compare_variants --heldout {saved['prompts']}`):")
        st.table(cmp.lesson_rows(saved["rows"]), hide_index=True)


def jacobi_section(data: PageData) -> None:
    result = data.comparison.by_key("lookahead")
    if not data.jacobi or result is None:
        st.info("Lookahead did not run for this prompt.")
        return
    fixed = data.jacobi[-1]
    chart(figs.jacobi_grid(data.jacobi_texts, [[t == f for t, f in zip(row, fixed, strict=True)]
                                               for row in data.jacobi]))
    st.caption(f"{len(data.jacobi) - 1} Jacobi iterations (one target pass each) for {len(fixed)} tokens; the last "
               "row is the fixed point, and it equals plain greedy decoding. Green: already final.")
    run = result.details
    wins = sum(1 for s in run.steps if s.n_accepted > 0)
    st.markdown(f"In the full run, lookahead made **{len(run.steps)} passes** for {result.trace.n_decoded} tokens"
                f"{replay.after_prefill(result.trace)}; "
                f"**{wins}** passes kept at least one guess (from the window or the n-gram pool, which ended with "
                f"{run.steps[-1].pool_size if run.steps else 0} n-grams). Each pass read up to "
                f"{max((s.pass_tokens for s in run.steps), default=0)} tokens at once.")
    st.dataframe([{
        "pass": s.index + 1, "window before": " | ".join(repr(t)[1:-1] for t in _texts(data, s.window_before)),
        "window after": " | ".join(repr(t)[1:-1] for t in _texts(data, s.window_after)),
        "n-gram candidates": len(s.candidates), "kept from": s.winner, "tokens kept": len(s.emitted),
    } for s in run.steps], hide_index=True, width="stretch")


def _texts(data: PageData, ids) -> list[str]:
    return [data.comparison.text(t) for t in ids]  # decoded where the run was: a class replica loads no model


def medusa_section(data: PageData) -> None:
    tree = data.comparison.by_key("medusa_tree")
    chain = data.comparison.by_key("medusa")
    if tree is None or chain is None:
        st.info("Medusa did not run for this prompt (see the warning above).")
        return
    run = tree.details
    steps = [s for s in run.steps if len(s.tokens) > 1]
    if not steps:
        st.info("The run ended before Medusa drafted anything.")
        return
    if state.get(state.VAR_STEP) > len(steps):
        state.put(state.VAR_STEP, len(steps))
    step_no = st.slider("Medusa pass to inspect", 1, len(steps), key=state.VAR_STEP) if len(steps) > 1 else 1
    step = steps[step_no - 1]
    texts = [data.comparison.text(t) for t in step.tokens]  # decoded where the run was (a worker in a class)
    chart(figs.token_tree(texts, step.parents, step.labels, step.accepted_nodes,
                          data.comparison.text(step.extra)))
    st.caption(tree_caption(step_no, len(step.tokens) - 1, run.trace.settings.k, len(step.accepted_nodes)))
    st.markdown(f"Tree: **{tree.tokens_per_pass:.2f}** tokens per target pass; single chain (each head's top "
                f"token, checked by the engine's usual verify step): **{chain.tokens_per_pass:.2f}**.")


def tree_caption(step_no: int, candidates: int, heads: int, kept: int) -> str:
    """What one pass of the Medusa tree shows, naming the colours :func:`app.variants.figures.token_tree` draws."""
    return (f"Pass {step_no}: {candidates} candidate tokens from {heads} heads, read in one target pass with tree "
            f"attention; {kept} kept ({NAMES[KEPT]}), the longest accepted path from the root, then the target's own "
            f"token ({NAMES[EXTRA]}). The check is greedy: a node is kept only if it is the target's own top token "
            "after its parent, so the text is plain greedy decoding's.")


def lookup_section(results: dict, max_new: int) -> None:
    rows = []
    for label in cmp.DEMO_PROMPTS:
        data = results.get((label, max_new))
        result = data.comparison.by_key("prompt_lookup") if data else None
        if result is not None:
            rows.append({"prompt": label, "tokens per target pass": round(result.tokens_per_pass, 2),
                         "acceptance": f"{result.acceptance or 0:.0%}", "speedup vs plain": f"{result.speedup:.2f}x",
                         "identical to plain": result.identical})
    if rows:
        st.dataframe(rows, hide_index=True, width="stretch")
    missing = [label for label in cmp.DEMO_PROMPTS if (label, max_new) not in results]
    if missing and st.button(f"Run prompt lookup on the other {len(missing)} prompt(s)", key=state.VAR_LOOKUP_BUTTON):
        for label in missing:
            data = run_prompt(label, max_new, ("prompt_lookup",))
            if data is None:
                return
            results[(label, max_new)] = data
        st.rerun()


def early_exit_section(data: PageData) -> None:
    result = data.comparison.by_key("early_exit")
    if result is None:
        st.info("Early exit did not run for this prompt.")
        return
    its = result.trace.iterations
    draft = sum(it.draft_time_s for it in its)
    total = draft + sum(it.verify_time_s for it in its)
    chart(figs.per_pass_chart([it.n_accepted for it in its], [it.draft_time_s for it in its],
                              [it.verify_time_s for it in its], methods.LABELS["early_exit"]))
    st.markdown(
        f"The shallow draft's guesses were kept **{result.acceptance or 0:.0%}** of the time; drafting took "
        f"**{draft / total if total else 0:.0%}** of the loop time, and the speedup is **{result.speedup:.2f}x**. "
        f"Yet no iteration produced fewer than **{min(len(it.emitted) for it in its)}** token: when every guess "
        "is wrong, the target's own pass still supplies the next token.")


def eagle_section(data: PageData) -> None:
    """The EAGLE head beside the standalone draft on this prompt: α, c and the speedup, from their cost models."""
    pair = [data.comparison.by_key(key) for key in ("draft_model", "eagle")]
    if any(r is None or not r.pairs for r in pair):
        st.info("The EAGLE head and the standalone draft did not both run on this prompt.")
        return
    rows, models = [], {}
    for r in pair:
        model = costmodel.cost_model([spec for spec, _ in r.pairs], [plain for _, plain in r.pairs])
        models[r.key] = model
        rows.append({"draft": r.label, "extra parameters": f"{r.extra_parameters:,}",
                     "α (guesses kept)": f"{model.alpha:.0%}",
                     "c (one guess, in target passes)": f"{model.draft_cost:.3f}",
                     "τ (tokens per loop)": round(model.tokens_per_loop, 2), "speedup vs plain": f"{r.speedup:.2f}x"})
    st.dataframe(rows, hide_index=True, width="stretch")
    standalone, eagle = models["draft_model"], models["eagle"]
    cheaper = eagle.draft_cost < standalone.draft_cost
    st.markdown(
        f"On this prompt the one-layer EAGLE head kept **{eagle.alpha:.0%}** of its guesses against "
        f"**{standalone.alpha:.0%}** for the two-layer standalone draft, at c = {eagle.draft_cost:.3f} against "
        f"{standalone.draft_cost:.3f} target passes per guess"
        + (" (cheaper per guess, as one layer should be)" if cheaper else "")
        + ". EAGLE's bet is that the target's features are more regular than its tokens, so one layer on top of "
        "them drafts as well as a whole small model. That holds on the paper's targets of 7B parameters and "
        "more, whose features are rich and whose passes are expensive. A 135M target's features carry far less, "
        "and its pass costs little more than a small draft's, so a cheaper guess saves little and a refused one "
        "wastes the rest of the loop. "
        + (f"Here the standalone draft is quicker: {pair[0].speedup:.2f}x against {pair[1].speedup:.2f}x."
           if pair[0].speedup >= pair[1].speedup else
           f"On this prompt the EAGLE head is quicker, {pair[1].speedup:.2f}x against {pair[0].speedup:.2f}x; the "
           "guide above gives both drafts' acceptance over the whole held-out set."))
