"""The live page's shipped recordings, read once per server process."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from app import state
from app.keys import DEFAULTS
from app.settings import LiveSettings
from app.urlcodec import number_text
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


def settings_of(name: str) -> LiveSettings | None:
    """The live page's form as recording ``name`` ran it (None when it does not load)."""
    recipe = next((r for r in recorded.RECIPES if r.name == name), None)
    run = shipped_runs().get(name)
    if recipe is None or run is None:
        return None
    s = run.spec.settings
    return replace(LiveSettings(), pair="bundled", drafter=s.drafter, prompt=recipe.prompt, k=s.k,
                   temperature=s.temperature, max_new_tokens=s.max_new_tokens, seed=s.seed,
                   policy="fixed" if s.k_schedule == "fixed" and not s.stop_below else LiveSettings().policy)


def opening_settings() -> LiveSettings | None:
    """What a new session's form opens with: the settings of the recording it opens on."""
    return settings_of(DEFAULTS[state.LIVE_RECORDING])


def show_settings_of(name: str) -> None:
    """Set the live page's controls to what recording ``name`` ran with, so the form on screen is the run's; Run
    then runs it again here."""
    settings = settings_of(name)
    if settings is None:
        return
    state.show(state.LIVE_PAIR, settings.pair)
    state.show(state.LIVE_DRAFTER, settings.drafter)
    state.show(state.LIVE_POLICY, settings.policy)
    state.show(state.LIVE_K, str(settings.k))
    state.show(state.LIVE_TEMPERATURE, number_text(settings.temperature))
    state.show(state.LIVE_MAX_NEW, str(settings.max_new_tokens))
    state.show(state.LIVE_SEED, str(settings.seed))
    state.show(state.LIVE_PROMPT, settings.prompt)


def pick_shipped() -> recorded.RecordedRun | None:
    """Offer the shipped recordings (the typical one first) and return the one picked, or None if none load."""
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
