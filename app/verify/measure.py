"""The verify page's measurement of v(n): in this process, or on a class worker when the app serves a class."""

from __future__ import annotations

import streamlit as st

from app import classtask, loaders, state
from specsim.core.models import format_prompt
from specsim.measure import passcost


def where() -> str:
    """Where the page's measurements run, for its caption."""
    return "on a class worker" if classtask.active() else "here"


def where_label() -> str:
    """Where the button measures, for its label."""
    return "on a class worker" if classtask.active() else "on this machine"


def measure() -> None:
    """Time target passes over n = 1 … 16 new tokens and keep the curve in session state; a problem is a message.
    ``VERIFY_RUNNING`` stays set if a click stops the script midway, so the next run can say it was cancelled."""
    state.put(state.VERIFY_RUNNING, True)
    if classtask.active():  # a class: a worker measures its own machine, and this server stays free
        curve = classtask.run_task("verify_curve", {})
        if curve is not None:
            state.put(state.VERIFY_CURVE, curve)
        state.put(state.VERIFY_RUNNING, False)
        return
    import torch  # here, after the class's branch: a class replica never loads torch

    try:
        with st.spinner("Timing target passes over 1 to 16 tokens, every size once per round, after a warm-up…"):
            target = loaders.bundled_target()
            costs = passcost.measure_pass_costs(target, ns=passcost.DEFAULT_NS, repeats=5, warmup=1)
            # stored before the next UI call: a click that stops the script there no longer loses the result
            state.put(state.VERIFY_CURVE, passcost.VerifyCurve.of(
                costs, len(format_prompt(target.tokenizer, passcost.CONTEXT_TEXT)), str(target.device),
                torch.get_num_threads()))
            state.put(state.VERIFY_RUNNING, False)
    except Exception as error:  # noqa: BLE001 - the learner sees a message, never a traceback
        state.put(state.VERIFY_RUNNING, False)
        st.error(f"The measurement could not run: {type(error).__name__}: {error}")


__all__ = ["measure", "where", "where_label"]
