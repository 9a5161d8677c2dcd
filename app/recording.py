"""The live page's shipped recordings, read once per server process."""

from __future__ import annotations

import streamlit as st

from app import state
from specsim.lesson import recorded
from specsim.measure import fairtime


@st.cache_resource(show_spinner=False)
def shipped_runs() -> dict[str, recorded.RecordedRun]:
    """The recordings in assets/live/ that load, by recipe name, in the order of ``recorded.RECIPES``."""
    runs = {r.name: recorded.load(r.path) for r in recorded.RECIPES}
    return {name: run for name, run in runs.items() if run is not None}


def choice_label(name: str, run: recorded.RecordedRun) -> str:
    """The recipe's title with the run's fair speedup, computed from its trace."""
    title = next(r.title for r in recorded.RECIPES if r.name == name)
    fair = fairtime.fair_speedup([(run.spec, run.plain)])
    return f"{title}: {fair.headline:.2f}×"


def _restart_replay() -> None:
    state.keep([state.LIVE_RECORDING])
    state.put(state.LIVE_STEP, 0)
    state.put(state.LIVE_PLAYING, False)
    show_settings_of(state.get(state.LIVE_RECORDING))


def show_settings_of(name: str) -> None:
    """Set the live page's controls to what recording ``name`` ran with, so the form on screen is the run's; Run
    then runs it again here."""
    recipe = next((r for r in recorded.RECIPES if r.name == name), None)
    run = shipped_runs().get(name)
    if recipe is None or run is None:
        return
    s = run.spec.settings
    state.show(state.LIVE_PAIR, "bundled")
    state.show(state.LIVE_DRAFTER, s.drafter)
    state.show(state.LIVE_POLICY, "fixed" if s.k_schedule == "fixed" and not s.stop_below else state.get(
        state.LIVE_POLICY))
    state.show(state.LIVE_K, str(s.k))
    state.show(state.LIVE_TEMPERATURE, f"{s.temperature:g}")
    state.show(state.LIVE_MAX_NEW, str(s.max_new_tokens))
    state.show(state.LIVE_SEED, str(s.seed))
    state.show(state.LIVE_PROMPT, recipe.prompt)


def pick_shipped() -> recorded.RecordedRun | None:
    """Offer the shipped recordings (the winning one first) and return the one picked, or None if none load."""
    runs = shipped_runs()
    if not runs:
        return None
    if state.get(state.LIVE_RECORDING) not in runs:
        state.put(state.LIVE_RECORDING, next(iter(runs)))
    st.info("Pick a prompt (or an example) and press Run: the bundled models run offline on this machine. Until "
            "then, step through one of two real runs recorded on a machine like this one.")
    name = st.radio("Recorded run", list(runs), format_func=lambda n: choice_label(n, runs[n]),
                    key=state.bound(state.LIVE_RECORDING), on_change=_restart_replay)
    return runs[name]
