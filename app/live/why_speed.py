"""The live page's "Why this speed" panel: one average loop's cost, what decided it, a v = 1 projection,
and, when the run was slower than plain decoding, one click to an example where the technique wins."""

from __future__ import annotations

import streamlit as st

from app import state
from app.charts import chart
from app.live.why_figures import loop_cost_figure
from specsim.core.prompt_sets import EXAMPLES
from specsim.core.trace import Trace
from specsim.lesson import explain
from specsim.measure import fairtime
from specsim.measure.costmodel import CostModel, cost_model

WIN_EXAMPLE = "Repeats its input"  # prompt lookup copies the prompt: the technique's easiest win
WIN_DRAFTER = "prompt_lookup"


def budget(spec: Trace, plain: Trace) -> tuple[CostModel, fairtime.FairSpeedup]:
    """The run's cost model (median pass costs) and its fair speedup."""
    return cost_model([spec], [plain]), fairtime.fair_speedup([(spec, plain)])


def _use_win_example() -> None:
    for key, value in ((state.LIVE_PROMPT, EXAMPLES[WIN_EXAMPLE]), (state.LIVE_DRAFTER, WIN_DRAFTER)):
        state.show(key, value)
    state.put(state.LIVE_AUTORUN, True)


def take_autorun() -> bool:
    """True once after the win-example button was clicked: the page then runs without a second click."""
    if state.get(state.LIVE_AUTORUN):
        state.put(state.LIVE_AUTORUN, False)
        return True
    return False


def panel(spec: Trace, plain: Trace | None) -> None:
    """Draw the panel (nothing without a plain baseline to compare with)."""
    st.subheader("Why this speed")
    if plain is None or not plain.iterations or not spec.iterations:
        st.caption("Without a finished plain baseline there is nothing to compare the loop's cost with.")
        return
    b, fair = budget(spec, plain)
    st.markdown(f"**{explain.decider_sentence(b)}**")
    chart(loop_cost_figure(b), key=state.WHY_LOOP_COST_CHART)
    st.markdown(explain.budget_sentence(b))
    (st.success if fair.agrees else st.warning)(fair.sentence())
    st.caption(
        f"Projection, not a measurement: for a target large enough that its pass waits on memory (a GPU serving "
        f"one request; this 135M model on a GPU is set by kernel launches instead, *Is verification free here?*), "
        f"scoring {b.widest_pass or b.k_max + 1} tokens in one pass costs about what scoring one does, so v ≈ 1. With "
        f"this run's acceptance, and the draft cost measured on this CPU (c = {b.draft_cost:.3f}, kept as it is: on a "
        f"GPU the draft's price next to the target's would be measured afresh), that would give "
        f"{b.projected_speedup:.2f}×. On this CPU a pass over several tokens costs {b.verify_cost:.2f} one-token "
        "passes, because a CPU runs short of arithmetic sooner.")
    why_slow = explain.slowdown_sentence(b)
    if why_slow is not None and fair.headline < 1:
        st.info(why_slow)
        already = spec.settings.drafter == WIN_DRAFTER and spec.prompt.find(EXAMPLES[WIN_EXAMPLE][:30]) >= 0
        if not already:
            st.button("Run an example where it wins: prompt lookup on a prompt that repeats its input",
                      key=state.LIVE_WIN_BUTTON, on_click=_use_win_example, type="secondary")
