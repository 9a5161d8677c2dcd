"""The recorded default run: it is real, labelled, matches the live page's defaults, and opens the page."""

from __future__ import annotations

from app import state
from app.widgets.tokens import md_plain
from specsim import defaults, recorded, replay
from tests.conftest import open_page


def test_shipped_recording_is_the_default_example():
    run = recorded.load()
    assert run is not None
    s = run.spec.settings
    assert run.spec.prompt.find(state.DEFAULTS[state.LIVE_PROMPT]) >= 0
    assert s.k == state.DEFAULTS[state.LIVE_K] and s.temperature == state.DEFAULTS[state.LIVE_TEMPERATURE]
    assert defaults.DEFAULT_DRAFT.split("/")[-1] in s.draft or s.drafter in defaults.DEFAULT_DRAFT
    assert run.spec.n_generated == run.plain.n_generated
    assert replay.identity(run.spec, run.plain).identical  # greedy, so the recording shows the promise kept
    label = run.label()
    assert run.machine in label and run.dtype in label and run.date in label


def test_round_trip_and_missing_file(tmp_path):
    run = recorded.load()
    recorded.write(run, tmp_path / "r.json")
    again = recorded.load(tmp_path / "r.json")
    assert again == run
    assert recorded.load(tmp_path / "missing.json") is None
    (tmp_path / "bad.json").write_text("{not json")
    assert recorded.load(tmp_path / "bad.json") is None


def test_live_page_opens_on_the_recording_and_steps_without_a_model():
    at = open_page("live.py")
    assert not at.exception
    run = recorded.load()
    assert any(run.label() == c.value for c in at.caption)
    assert md_plain(replay.narrate(run.spec, 0)) in [i.value for i in at.info]
    at.button(key="live_forward").click().run()
    assert md_plain(replay.narrate(run.spec, 1)) in [i.value for i in at.info]
    assert at.session_state[state.LIVE_TRACE] is None  # nothing was run
    assert "Why this speed" in [h.value for h in at.subheader]
