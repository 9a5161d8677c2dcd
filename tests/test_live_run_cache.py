"""The embedded run cache (issue 40): the live page without a class queue keeps each finished run on disk, and the
same settings again replay it at once with a note; a different seed or "Run fresh" runs the models again."""

from __future__ import annotations

import pytest

from app import state
from app.live import cache as live_cache
from app.urlcodec import number_text
from specsim.classroom.runcache import DiskStore, default_folder
from tests.conftest import open_page

PROMPT = "red green blue red green blue red green"


def _form(at, seed=0, temperature=0.0):
    at.text_area(key=state.widget_key(state.LIVE_PROMPT)).set_value(PROMPT)
    at.radio(key=state.widget_key(state.LIVE_DRAFTER)).set_value("prompt_lookup")
    at.text_input(key=state.widget_key(state.LIVE_K)).set_value("3")
    at.text_input(key=state.widget_key(state.LIVE_MAX_NEW)).set_value("6")
    at.text_input(key=state.widget_key(state.LIVE_TEMPERATURE)).set_value(number_text(temperature))
    at.text_input(key=state.widget_key(state.LIVE_SEED)).set_value(str(seed))
    return at


def _run(at):
    at.button(key=state.LIVE_RUN_BUTTON).click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    spec = at.session_state[state.LIVE_TRACE]
    cached = [i.value for i in at.info if "served from this machine's run cache" in i.value]
    return spec, cached


def test_the_cache_is_off_in_tests_and_follows_its_variable(monkeypatch, tmp_path):
    assert live_cache.store() is None  # conftest: no run leaks from one test into another
    monkeypatch.setenv(live_cache.CACHE_ENV, str(tmp_path))
    assert isinstance(live_cache.store(), DiskStore) and live_cache.store().folder == tmp_path
    monkeypatch.setenv(live_cache.CACHE_ENV, "")
    assert live_cache.store().folder == default_folder()


@pytest.fixture
def page(monkeypatch, tmp_path):
    monkeypatch.setenv(live_cache.CACHE_ENV, str(tmp_path))
    return _form(open_page("live.py", timeout=300)), tmp_path


def test_the_same_settings_replay_the_cached_run_and_say_so(page):
    at, folder = page
    first, note = _run(at)
    assert first is not None and not note and len(list(folder.glob("*.json"))) == 1
    again, note = _run(at)
    assert len(note) == 1 and "Tick *Run fresh*" in note[0]
    # the very run recorded before, timings included: nothing ran again
    assert again.generated_ids == first.generated_ids and again.total_time_s == first.total_time_s
    assert at.session_state[state.LIVE_PLAIN] is not None


def test_another_seed_or_run_fresh_runs_the_models_again(page):
    at, folder = page
    first, _ = _run(at)
    _form(at, seed=1, temperature=0.8).run()
    sampled, note = _run(at)
    assert not note and len(list(folder.glob("*.json"))) == 2  # another seed is another run
    _form(at).run()
    at.checkbox(key=state.LIVE_FRESH_BOX).check().run()
    fresh, note = _run(at)
    assert not note and fresh.total_time_s != first.total_time_s  # run again, not replayed
    assert fresh.generated_ids == first.generated_ids  # greedy: the settings fix the tokens
    assert len(list(folder.glob("*.json"))) == 2  # the fresh run replaced its entry


def test_a_failed_run_is_not_kept(page, monkeypatch):
    at, folder = page
    monkeypatch.setattr("specsim.liverun.run_live",
                        lambda *a, **k: (_ for _ in ()).throw(RuntimeError("boom")))
    at.button(key=state.LIVE_RUN_BUTTON).click().run()
    assert any("The run failed" in e.value for e in at.error)
    assert not list(folder.glob("*.json"))
