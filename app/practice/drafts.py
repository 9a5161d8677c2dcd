"""In practice: choosing a draft. Its depth sets its speed, distillation its acceptance; every figure from
:mod:`specsim.core.published` or the shipped draft's own ``draft.json``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from specsim.core import defaults
from specsim.core.published import CHEN_2023, DISTILLSPEC


def depth_text() -> str:
    """Chen et al.'s draft: its share of the target's time per token against its shares of depth and parameters."""
    c = CHEN_2023
    time_share = c.draft_ms_per_token / c.target_ms_per_token
    depth_share = c.draft_layers / c.target_layers
    param_share = c.draft_params_b / c.target_params_b
    return (
        "At batch size 1 a token's pass runs the layers one after another. Where each layer's fixed costs dominate "
        "(kernel launches for a tiny model, communication between chips for one split across many), a draft's "
        "time per token follows its **depth** more than its parameter count; a model large enough, decoding "
        "memory-bound on one chip, pays instead for the bytes of weights it reads. Chen et al., in a distributed "
        "setup, built their draft for depth: "
        f"{c.draft_params_b:g}B parameters in {c.draft_layers} wide layers, for a target ({c.target}) of "
        f"{c.target_params_b:g}B in {c.target_layers}. It holds {param_share:.1%} of the target's parameters and "
        f"{depth_share:.0%} of its layers, and took {time_share:.1%} of its time per token "
        f"({c.draft_ms_per_token} against {c.target_ms_per_token} ms): close to its share of the depth, about "
        f"{time_share / param_share:.1f}× its share of the parameters. A draft with the same parameters spread over "
        "more, narrower layers may guess as well or better, but where per-layer costs dominate it costs more per "
        "guess, which raises c in every formula on these pages.")


def training_signal(draft_json: dict) -> str:
    """What the draft learned from at each position, from how it was trained (``source`` in its draft.json)."""
    if draft_json.get("source", "records") == "records":  # records hold the target's top-k scores per position
        return "with the target's top-k log-probabilities as soft targets beside the tokens it wrote"
    return ("from the token ids alone: at each position the label is the token the target wrote, with no pass of "
            "the target to score it (a cheap way to use a large corpus)")


def distill_text(draft_json: dict) -> str:
    """DistillSpec's two findings, and how the shipped draft was trained, from its ``draft.json``."""
    d = DISTILLSPEC
    return (
        "A cheap draft pays only if the target keeps its guesses, and a small model trained on ordinary text "
        "guesses ordinary text, not what *this* target would write. **Distillation** trains the draft on the "
        f"target's own distributions instead. DistillSpec ({d.source}) reports {d.figure} faster decoding than "
        f"{d.over}, on {d.setting}, from two choices: train on **on-policy** data, sequences the draft itself "
        "generates and the target then scores, so the draft learns where its own guesses go wrong; and pick the "
        "**divergence** for the task and the decoding. In theory α = 1 − TV(p, q) under sampling, so the total "
        "variation distance is the loss acceptance follows, while greedy decoding only needs the two argmaxes to "
        "agree; in their experiments the best divergence changed with the task and the decoding, and TVD was not "
        "always it.\n\n"
        f"specsim's default draft is distilled, off-policy: trained on about "
        f"{draft_json['answer_tokens'] / 1e6:.0f} million tokens of the target's own answers, "
        f"{training_signal(draft_json)} ({draft_json['layers']} layers and a vocabulary of "
        f"{draft_json['vocab']:,} tokens; it agrees with the target's top token {draft_json['val_top1']:.0%} of the "
        "time on its validation set).")


def distill_provenance(draft_json: dict) -> str:
    """The training run's exact size and where its recipe is written down (for "How this was measured")."""
    return (f"The draft's `draft.json` records {draft_json['answer_tokens']:,} training tokens and the validation "
            f"agreement ({draft_json['val_top1']:.1%}). The recipe and its ablations are in the repository's "
            "docs/distill.md.")


def shipped_draft_json() -> dict | None:
    try:
        return json.loads((Path(defaults.DEFAULT_DRAFT) / "draft.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def section() -> None:
    st.subheader("Choosing a draft: depth sets its cost, distillation its acceptance")
    st.markdown(depth_text())
    draft_json = shipped_draft_json()
    if draft_json is not None:
        st.markdown(distill_text(draft_json))
        with st.expander("How this was measured"):
            st.markdown(distill_provenance(draft_json))
    alpha_section()


@dataclass(frozen=True)
class AlphaFigure:
    """One acceptance figure of the default draft that a page shows, and what it counts."""

    alpha: float
    page: str  # where the learner meets it
    counts: str  # what is counted, and how
    copying: bool  # whether guesses copied from the text count
    text: str  # what text it was measured on, and how much of it
    label: str  # the figure in a sentence: "the recorded live run"
    shown: str  # the figure as its page prints it
    checked: int | None = None  # guesses checked, where the figure is kept ÷ checked over a known count


def alpha_figures() -> list[AlphaFigure]:
    """The default draft's α as each page reads it, from the same files and functions those pages use."""
    from app import recording
    from app.variants import compare
    from specsim.core.paths import DOMAINS_RECORDED
    from specsim.lesson import domains, unchanged
    from specsim.measure import machine

    rows: list[AlphaFigure] = []
    draft_json = shipped_draft_json()
    if draft_json is not None:
        rows.append(AlphaFigure(
            draft_json["val_top1"], "*In practice* (the paragraph above)",
            "agreement: at every position of a fixed text, is the draft's top token the target's?", False,
            "its validation set: held back from its training text, so from the same kind of prompts",
            "the validation set", f"{draft_json['val_top1']:.0%}"))
    overlap = unchanged.measured_overlap()
    greedy = overlap.accepted_mass[overlap.temperatures.index(0.0)]
    rows.append(AlphaFigure(
        greedy, "*Why the output is unchanged*", "the same agreement, read as Σ min(p, q) at every position "
        "(greedy)", False, f"the target's greedy answers to {overlap.prompts} held-out prompts",
        "the held-out answers", f"{greedy:.3f}"))
    heldout = json.loads((Path(defaults.DEFAULT_DRAFT) / "heldout_eval.json").read_text(encoding="utf-8"))
    chains = machine.heldout_alpha(defaults.DEFAULT_DRAFT, copy=False)
    rows.append(AlphaFigure(
        chains, "*Variants* (the EAGLE panel)", f"chains of K = {heldout['k']} guesses started at every position: "
        "kept ÷ checked, a guess after a refusal never checked", False, "the same held-out answers",
        "the chains", f"{chains:.0%}"))
    saved = compare.saved_heldout()
    row = None if saved is None else next((r for r in saved["rows"] if r["key"] == "draft_model"), None)
    if row is not None and row.get("acceptance") is not None:
        rows.append(AlphaFigure(
            row["acceptance"], "*Variants* (the recorded comparison)", "real runs, greedy: kept ÷ checked", True,
            f"{saved['prompts']} held-out prompts, {saved['max_new_tokens']} new tokens each",
            "the recorded comparison", f"{row['acceptance']:.0%}"))
    run = recording.shipped_runs().get("prose_run")
    if run is not None:
        rows.append(AlphaFigure(
            run.spec.acceptance_rate, "*Live decoding* (the recorded run)", "a real run, greedy: kept ÷ checked",
            True, f"1 prompt, {run.spec.n_generated} new tokens", "the recorded live run",
            f"{run.spec.acceptance_rate:.0%}", checked=run.spec.n_checked))
    recorded = domains.load_recorded(DOMAINS_RECORDED)
    for r in [] if recorded is None else recorded.results:
        rows.append(AlphaFigure(
            r.alpha, f"*In practice* (acceptance by domain, above: {r.domain})", "real runs, greedy: kept ÷ checked",
            True, f"{r.prompts} {r.domain} prompts, up to {domains.TOKENS_PER_PROMPT} new tokens each",
            f"the {r.domain} prompts", f"{r.alpha:.0%}", checked=r.checked))
    return rows


def alpha_table(rows: list[AlphaFigure]) -> str:
    lines = ["| α | shown on | what it counts | copies count | measured on |", "|---|---|---|---|---|"]
    lines += [f"| **{r.shown}** | {r.page} | {r.counts} | {'yes' if r.copying else 'no'} | {r.text} |"
              for r in rows]
    return "\n".join(lines)


def alpha_reading(rows: list[AlphaFigure]) -> str:
    """Why the figures differ, each reason with the two figures that show it, and the lesson for a learner."""
    from specsim.measure import machine

    by_label = {r.label: r for r in rows}
    overlap, chains = by_label["the held-out answers"], by_label["the chains"]
    with_copy = machine.heldout_alpha(defaults.DEFAULT_DRAFT, copy=True)
    runs = [r for r in rows if r.checked]
    few = min(runs, key=lambda r: r.checked) if runs else None
    text = (
        "They do not contradict each other: they count different things on different text. Agreement scores "
        "every position of a fixed text once. A greedy run on the same text, without copying, would check almost "
        "the same positions (all but the target's +1 after a loop that kept every guess), so its α would sit near "
        "the agreement, a little below: the positions it skips follow a run of agreements, which tend to continue. "
        "Chains started at every position count a position once for each chain "
        "that reaches it, and more chains reach the positions after an easy stretch, so their kept ÷ checked comes "
        f"out higher on the same answers ({chains.alpha:.0%} against {overlap.alpha:.0%}). Copying adds guesses "
        f"that are right more often: the same chains with copying keep {with_copy:.0%}.")
    if "the validation set" in by_label:
        text += (f" The validation set is the kind of text the draft was trained on, and new prompts are harder "
                 f"({by_label['the validation set'].alpha:.0%} against {overlap.alpha:.0%}).")
    if few is not None:
        text += (f" And a short run checks few guesses ({few.checked} for {few.label}), so one or two prompts more "
                 "or less move its α by many points (the intervals are under *How this was measured*).")
    return text + (" So α is not one number for a pair of models: it depends on the text and on how it is counted. "
                   "Measure it on your own traffic, counted as your server runs.")


def alpha_section() -> None:
    st.markdown("**The default draft's α, page by page.** The pages quote several acceptance rates for the same "
                "draft and target. Each is read here from where its page reads it:")
    rows = alpha_figures()
    st.markdown(alpha_table(rows))
    st.markdown(alpha_reading(rows))
    with st.expander("How this was measured"):
        from specsim.measure.proportion import wilson_interval

        st.markdown("\n".join(
            f"- {r.label.capitalize()}: {r.shown} of {r.checked} checked guesses kept, 95 % interval "
            f"{wilson_interval(round(r.alpha * r.checked), r.checked)[0]:.0%}–"
            f"{wilson_interval(round(r.alpha * r.checked), r.checked)[1]:.0%} (guesses treated as independent, so "
            "if anything too narrow)." for r in rows if r.checked))
