"""The shipped recordings: real, labelled, steady baselines, the typical run first, and they open the page."""

from __future__ import annotations

from pathlib import Path

import pytest

from app import state
from app.live import view as live_view
from app.live.tokens import md_plain
from app.recording import choice_label
from specsim.core.prompt_sets import EXAMPLES
from specsim.lesson import recorded, replay
from specsim.measure import costmodel, fairtime
from tests.conftest import open_page
from tests.live_traces import with_pass_times

RUNS = {r.name: recorded.load(r.path) for r in recorded.RECIPES}


@pytest.mark.parametrize("recipe", recorded.RECIPES, ids=lambda r: r.name)
def test_each_recording_is_its_recipe_with_a_steady_baseline(recipe):
    run = RUNS[recipe.name]
    assert run is not None
    s = run.spec.settings
    assert run.spec.prompt.find(EXAMPLES[recipe.example]) >= 0
    assert s.k == recipe.k and s.temperature == 0.0
    assert s.drafter == recipe.drafter or Path(recipe.draft).name in (s.draft or "")
    assert run.spec.n_generated == run.plain.n_generated
    assert replay.identity(run.spec, run.plain).identical  # greedy, so the recording shows the promise kept
    assert costmodel.baseline_noise(costmodel.plain_pass_times([run.plain])) is None
    assert fairtime.fair_speedup([(run.spec, run.plain)]).agrees  # wall clock and cost model tell one story
    label = run.label()
    assert run.machine in label and run.dtype in label and run.date in label and f"{run.threads} thread" in label


def test_the_typical_recording_comes_first_and_the_best_case_second():
    """Issue 61, item 5: the page opens on a real draft model on prose (every loop drafts), the best case one click
    away."""
    typical, best = (RUNS[r.name] for r in recorded.RECIPES)
    assert typical.spec.settings.drafter == "draft_model" and all(it.slots for it in typical.spec.iterations[:1])
    win = fairtime.fair_speedup([(best.spec, best.plain)]).headline
    usual = fairtime.fair_speedup([(typical.spec, typical.plain)]).headline
    assert win > 1.3 and usual < win


def test_round_trip_and_missing_file(tmp_path):
    run = RUNS["win_run"]
    recorded.write(run, tmp_path / "r.json")
    again = recorded.load(tmp_path / "r.json")
    assert again == run
    assert recorded.load(tmp_path / "missing.json") is None
    (tmp_path / "bad.json").write_text("{not json")
    assert recorded.load(tmp_path / "bad.json") is None


def test_the_recorder_refuses_a_noisy_baseline(monkeypatch):
    """record() runs again while the plain baseline is noisy, and gives up with a clear error."""
    run = RUNS["win_run"]
    noisy = with_pass_times(run.plain, [t * (0.5 if i % 3 == 0 else 1.0) for i, t in enumerate(run.plain.pass_times)])
    assert costmodel.baseline_noise(costmodel.plain_pass_times([noisy])) is not None
    import specsim.core.engine as engine
    import specsim.core.models as models

    plains = iter([noisy, run.plain])
    monkeypatch.setattr(models, "load_bundled_target", lambda **k: type("T", (), {"tokenizer": None,
                                                                                 "dtype": "torch.bfloat16"})())
    monkeypatch.setattr(models, "format_prompt", lambda tok, text: [1, 2])
    monkeypatch.setattr("specsim.methods.build_drafter", lambda *a: None)
    monkeypatch.setattr(engine, "speculative_generate", lambda *a: run.spec)
    monkeypatch.setattr(engine, "plain_generate", lambda t, ids, n: next(plains) if n > 2 else run.plain)
    refused = []
    again = recorded.record(recorded.RECIPES[0], threads=1, log=refused.append)
    assert again.plain == run.plain and len(refused) == 1 and "noisy" in refused[0]
    monkeypatch.setattr(engine, "plain_generate", lambda t, ids, n: noisy)
    with pytest.raises(recorded.NoisyBaseline):
        recorded.record(recorded.RECIPES[0], threads=1, attempts=2, log=refused.append)


def test_live_page_opens_on_the_typical_recording_and_steps_without_a_model():
    at = open_page("live.py")
    assert not at.exception and not at.warning, [w.value for w in at.warning]
    run = RUNS["prose_run"]
    # the form shows the settings of the run on screen
    assert at.radio(key=state.widget_key(state.LIVE_DRAFTER)).value == run.spec.settings.drafter
    assert at.text_input(key=state.widget_key(state.LIVE_K)).value == str(run.spec.settings.k)
    assert at.text_area(key=state.widget_key(state.LIVE_PROMPT)).value == EXAMPLES["Prose"]
    assert any(run.label() == m.value for m in at.markdown)  # in "How this was measured"
    assert md_plain(replay.narrate(run.spec, 0)) in [i.value for i in at.info]
    at.button(key="live_forward").click().run()
    assert md_plain(replay.narrate(run.spec, 1)) in [i.value for i in at.info]
    assert at.session_state[state.LIVE_TRACE] is None  # nothing was run
    # the recording was made by the engine whose prefill chooses the first token: the page says which one
    assert run.spec.first is not None and run.spec.first.token_id == run.spec.generated_ids[0]
    assert md_plain(live_view.prefill_sentence(run.spec)) in [c.value for c in at.caption]
    assert f"first new token, {run.spec.first.text!r} (p = {run.spec.first.prob:.2f})" in (
        live_view.prefill_sentence(run.spec))
    headings = [h.value for h in at.subheader]
    assert headings.index("Step through the run") < headings.index("Why this speed")  # the run, then the why


def test_switching_to_the_best_case_restarts_the_replay_and_the_form_follows():
    at = open_page("live.py")
    at.button(key="live_forward").click().run()
    radio = at.radio(key=state.widget_key(state.LIVE_RECORDING))
    assert radio.options == [choice_label(n, RUNS[n]) for n in RUNS]
    radio.set_value("win_run").run()
    run = RUNS["win_run"]
    assert any(run.label() == m.value for m in at.markdown)  # in "How this was measured"
    assert md_plain(replay.narrate(run.spec, 0)) in [i.value for i in at.info]
    assert not at.exception and not at.warning
    assert at.radio(key=state.widget_key(state.LIVE_DRAFTER)).value == "prompt_lookup"
    assert at.text_area(key=state.widget_key(state.LIVE_PROMPT)).value == EXAMPLES["Repeats its input"]


def test_a_run_that_proposed_fewer_than_k_says_so_beside_the_closed_form():
    """Review finding: α = 100 % with 4.00 tokens a loop against the closed form's 5.00 was left unexplained; prompt
    lookup proposed fewer than K guesses in some loops."""
    at = open_page("live.py")
    at.radio(key=state.widget_key(state.LIVE_RECORDING)).set_value("win_run").run()
    text = " ".join(m.value for m in at.markdown)
    spec = RUNS["win_run"].spec
    proposed = sum(it.k for it in spec.iterations) / len(spec.iterations)
    assert proposed < spec.k_max
    assert f"an average loop proposed only {proposed:.2f} of its K = {spec.k_max} guesses" in text
