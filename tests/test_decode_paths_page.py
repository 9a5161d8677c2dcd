"""The Verify page's section on this app's decode path (issue 54): every figure read from the committed
measurement of the two decode-pass paths, the sentence agreeing with its chart."""

from __future__ import annotations

import dataclasses

from app.verify.paths import paths_figure, paths_text
from specsim.core.paths import DECODE_PATHS_MEASURED
from specsim.measure import pathbench
from tests.conftest import open_page


def _run() -> pathbench.PathRun:
    run = pathbench.load(DECODE_PATHS_MEASURED)
    assert run is not None, "assets/measurements/decode_paths.json is missing or no longer loads"
    return run


def test_the_committed_measurement_loads_and_found_the_same_tokens():
    run = _run()
    assert [row.path for row in run.rows] == list(pathbench.PATHS)
    assert all(row.same_plain and row.same_spec for row in run.rows)
    assert run.row("one call").pass_ms < run.row("previous").pass_ms


def test_a_saved_run_loads_back_field_for_field(tmp_path):
    run = _run()
    pathbench.save(run, tmp_path / "paths.json")
    assert pathbench.load(tmp_path / "paths.json") == run
    (tmp_path / "bad.json").write_text('{"machine": 1}')
    assert pathbench.load(tmp_path / "bad.json") is None and pathbench.load(tmp_path / "none.json") is None


def test_the_sentence_quotes_the_charts_v_at_k_plus_one_and_the_runs_costs():
    run = _run()
    text, fig = paths_text(run), paths_figure(run)
    n = run.k + 1
    for trace, row in zip(fig.data, run.rows, strict=True):
        assert f"{row.v[n]:.2f}" in text and list(trace.y)[n - 1] == row.v[n]
        assert f"{row.draft_cost:.3f}" in text and f"{row.pass_ms:.1f}" in text
    assert f"{run.row('one call').plain_speedup:.2f}×" in text


def test_the_sentence_follows_the_numbers_when_the_speedup_holds():
    run = _run()
    old, new = run.row("previous"), run.row("one call")
    held = dataclasses.replace(run, rows=(old, dataclasses.replace(new, spec_speedup=old.spec_speedup + 0.1)))
    fell = dataclasses.replace(run, rows=(old, dataclasses.replace(new, spec_speedup=old.spec_speedup - 0.1)))
    assert "fell from" in paths_text(fell) and "fell from" not in paths_text(held)
    assert f"{old.spec_speedup + 0.1:.2f}×" in paths_text(held)


def test_the_page_shows_the_section_from_the_measurement():
    at = open_page("verify.py")
    assert not at.exception and not at.error
    # fine print for a learner: in an expander, after the model and the GPU measurement
    assert "How this app's own decode path changes v and c" in [e.label for e in at.main.expander]
    assert paths_text(_run()) in [m.value for m in at.markdown]
