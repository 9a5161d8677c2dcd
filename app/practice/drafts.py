"""In practice: choosing a draft. Its depth sets its speed, distillation its acceptance; every figure from
:mod:`specsim.core.published` or the shipped draft's own ``draft.json``."""

from __future__ import annotations

import json
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
        f"specsim's default draft is distilled, off-policy: trained on {draft_json['answer_tokens']:,} tokens of "
        f"the target's own answers, {training_signal(draft_json)} ({draft_json['layers']} layers and a vocabulary "
        f"of {draft_json['vocab']:,} tokens; it agrees with "
        f"the target's top token {draft_json['val_top1']:.0%} of the time on its validation set). The recipe and its "
        "ablations are in the repository's docs/distill.md.")


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
