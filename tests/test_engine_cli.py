"""The command line (python -m specsim.measure.cli) and the measured-cost arithmetic behind its statistics."""

from __future__ import annotations

from pathlib import Path

import pytest

import specsim.measure.cli as cli_module
from specsim.core.trace import Iteration, Settings, Slot, TokenProb, Trace, acceptance_given_reached
from specsim.measure.costmodel import cost_model
from tests.live_traces import plain_steps


@pytest.fixture
def cli(monkeypatch, bundled_target):
    """specsim.measure.cli with the session's bundled target on its shelf instead of a fresh load."""
    from specsim.liverun import ModelShelf

    class Shelf(ModelShelf):
        def target(self, request, progress=None):
            return bundled_target

    monkeypatch.setattr(cli_module, "ModelShelf", Shelf)
    return cli_module


def test_prints_marked_text_and_statistics(cli, capsys):
    code = cli.main(["--prompt", "Copy this: red, green, blue, red, green, blue.", "-k", "3",
                     "--drafter", "prompt_lookup", "--max-new-tokens", "12", "--threads", "1"])
    out = capsys.readouterr().out
    assert code == 0
    assert "{+" in out and "acceptance rate" in out and "speedup" in out and "identical" in out
    assert "\033[" not in out  # not a terminal: plain markers, no colour codes


def test_a_tree_run_prints_plain_decodings_tokens_and_names_the_tree(cli, capsys):
    code = cli.main(["--prompt", "List three colours.", "--drafter", "early_exit", "--early-exit-layers", "8",
                     "--tree", "6", "--tree-depth", "3", "--max-new-tokens", "10", "--threads", "1"])
    out = capsys.readouterr().out
    assert code == 0
    assert "tree of 6 guesses, depth 3" in out and "identical" in out and "K = " not in out


@pytest.mark.parametrize("argv", [
    ["--prompt", "hi", "-k", "0"],
    ["--prompt", "hi", "--max-new-tokens", "0"],
    ["--prompt", "hi", "--temperature", "-1"],
    ["--prompt", "hi", "--tree", "0"],
    ["--prompt", "hi", "--tree", "8", "--drafter", "prompt_lookup"],
    ["--prompt", "hi", "--drafter", "nonsense"],
    ["--prompt", "hi", "--drafter", "draft_model", "--draft", ""],
    ["-k", "4"],
])
def test_bad_arguments_exit_2_with_one_line(cli, capsys, argv):
    with pytest.raises(SystemExit) as stop:
        cli.main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "error:" in err and "Traceback" not in err


def test_unavailable_draft_is_one_line_exit_2(cli, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    code = cli.main(["--prompt", "hi", "--drafter", "draft_model", "--draft", "no-such-org/no-such-draft"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "no-such-org/no-such-draft" in err


def _iteration(k: int, n_accepted: int, draft_s: float, verify_s: float) -> Iteration:
    slots = tuple(Slot(i + 1, 5, "x", 0.5, 0.5, 1.0, "accepted" if i < n_accepted else
                       "rejected" if i == n_accepted else "unchecked", draft_time_s=draft_s) for i in range(k))
    return Iteration(0, 10, slots, n_accepted, TokenProb(6, "y", 0.9), "bonus", (), None, verify_s,
                     emitted=tuple([5] * n_accepted + [6]))


def test_cost_model_matches_the_closed_form_for_constant_k():
    iterations = (_iteration(4, 2, 0.01, 0.12), _iteration(4, 4, 0.01, 0.12), _iteration(4, 0, 0.01, 0.12))
    n = sum(len(it.emitted) for it in iterations)
    spec = Trace("speculative", Settings(4, n), "", (1,), tuple([5] * n), "", total_time_s=0.5,
                 iterations=iterations)
    plain = Trace("plain", Settings(0, 10, drafter="plain"), "", (1,), tuple([5] * 10), "", total_time_s=1.0,
                  iterations=plain_steps([5] * 10, [0.1] * 10))
    m = cost_model([spec], [plain])
    assert m.alpha == pytest.approx(6 / 8)  # 2 + 4 + 0 kept of 3 + 4 + 1 checked
    assert m.draft_cost == pytest.approx(0.1) and m.verify_cost == pytest.approx(1.2)
    assert m.tokens_per_loop == pytest.approx(n / 3)
    assert m.other_cost == pytest.approx((0.5 - 3 * (0.04 + 0.12)) / 3 / 0.1)
    assert m.speedup == pytest.approx((n / 3) / (4 * 0.1 + 1.2 + m.other_cost))
    assert m.wall_clock_speedup == pytest.approx((n / 0.5) / 10.0)


def test_bench_prints_a_table(monkeypatch, capsys, bundled_target):
    import specsim.measure.bench as bench

    monkeypatch.setattr(bench, "load_model", lambda *a, **k: bundled_target)
    # the table's wiring, not its precision: one timed round of each pass size, one short plain run
    measure, speed = bench.measure_pass_costs, bench.plain_tokens_per_s
    monkeypatch.setattr(bench, "measure_pass_costs", lambda t: measure(t, repeats=1, warmup=1))
    monkeypatch.setattr(bench, "plain_tokens_per_s", lambda t: speed(t, max_new_tokens=4, repeats=1))
    code = bench.main(["--drafters", "prompt_lookup", "--k", "2", "--prompts", "1", "--max-new-tokens", "6",
                       "--threads", "1"])
    out = capsys.readouterr().out
    assert code == 0
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if "cost model" in line and "HF tok/s" in line)
    row = lines[header + 2].split()  # after the rule line
    assert row[:2] == ["prompt_lookup", "2"] and row[-1] == "yes"
    fair = row[bench.COLUMNS.index("fair")]  # one word per cell in a row
    tokens_per_loop = float(row[bench.COLUMNS.index("tok/loop")])
    assert float(fair.rstrip("*")) <= tokens_per_loop + 0.005  # never above tokens per target pass
    footnote = bench.NOISY_NOTE in out
    assert fair.endswith("*") == footnote  # the footnote only with a row that carries its mark
    assert any(line.startswith("dtype: float32") for line in lines)
    ns = next(line for line in lines if line.strip().startswith("n new tokens")).split()[3:]
    assert ns == [str(n) for n in range(1, 18)]
    v = next(line for line in lines if line.strip().startswith("float32 v(n)")).split()[2:]
    assert len(v) == 17 and v[0] == "1.00" and all(float(x) > 0 for x in v)
    assert "plain decoding: float32" in out


def test_bench_rows_per_k_policy_write_plain_decodings_tokens(monkeypatch, capsys, bundled_target):
    """Issue 38 (7): bench rows for the adaptive K policies, each checked token for token against plain decoding."""
    import specsim.measure.bench as bench

    monkeypatch.setattr(bench, "load_model", lambda *a, **k: bundled_target)
    code = bench.main(["--drafters", "prompt_lookup", "--k", "2", "--prompts", "1", "--max-new-tokens", "8",
                       "--threads", "1", "--no-passes", "--no-hf", "--policies", "fixed", "heuristic", "confidence"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 0
    header = next(i for i, line in enumerate(lines) if "cost model" in line and "HF tok/s" in line)
    rows = [line.split() for line in lines[header + 2:header + 5]]
    assert [r[0] for r in rows] == ["prompt_lookup", "prompt_lookup/heuristic", "prompt_lookup/confidence"]
    assert all(r[1] == "2" and r[bench.COLUMNS.index("identical")] == "yes" for r in rows)
    assert all(r[bench.COLUMNS.index("HF tok/s")] == "nan" for r in rows)


def test_bench_rounds_over_held_out_prompts_break_down_every_run(monkeypatch, capsys, bundled_target):
    """Two rounds over two held-out prompts: four runs per row, each counted in its prompt's domain."""
    import specsim.measure.bench as bench

    monkeypatch.setattr(bench, "load_model", lambda *a, **k: bundled_target)
    code = bench.main(["--drafters", "prompt_lookup", "--k", "2", "--heldout", "2", "--rounds", "2",
                       "--max-new-tokens", "4", "--threads", "1", "--no-passes", "--no-hf"])
    out = capsys.readouterr().out
    assert code == 0 and "acceptance per domain and per draft position" in out


def test_the_same_text_ratio_compares_only_the_runs_that_wrote_the_same_tokens():
    import dataclasses

    from specsim.measure.bench import same_text_ratio
    from tests.live_traces import hand_plain

    base = hand_plain()
    ours = [dataclasses.replace(base, total_time_s=2.0), dataclasses.replace(base, total_time_s=4.0)]
    theirs = [dataclasses.replace(base, total_time_s=3.0),  # the same tokens, 1.5x ours' time
              dataclasses.replace(base, generated_ids=base.generated_ids[:-1] + (99,), total_time_s=1.0)]
    assert same_text_ratio(ours, theirs) == (1.5, 1)
    ratio, count = same_text_ratio(ours[1:], theirs[1:])
    assert count == 0 and ratio != ratio  # nothing in common: NaN


@pytest.mark.parametrize("argv", [["--k", "0"], ["--prompts", "0"], ["--drafters", "draft_model", "--draft", ""],
                                  ["--rounds", "0"]])
def test_bench_bad_arguments_exit_2(capsys, argv):
    import specsim.measure.bench as bench

    with pytest.raises(SystemExit) as stop:
        bench.main(argv)
    assert stop.value.code == 2 and "error:" in capsys.readouterr().err


def test_acceptance_per_position_and_per_group():
    import specsim.measure.bench as bench

    def trace(*accepted):
        iterations = tuple(_iteration(4, a, 0.01, 0.1) for a in accepted)
        n = sum(len(it.emitted) for it in iterations)
        return Trace("speculative", Settings(4, n), "", (1,), tuple([5] * n), "", total_time_s=0.5,
                     iterations=iterations)

    a, b = trace(2, 4, 0), trace(1)
    # position 1 reached 4 times, accepted 3; position 2 reached 3, accepted 2; 3: 2/1; 4: 1/1
    assert acceptance_given_reached([a, b], 4) == pytest.approx([3 / 4, 2 / 3, 1 / 2, 1.0])
    # a: 6 accepted of 8 checked; b: 1 of 2
    assert bench.acceptance_by([a, b], ["x", "y"]) == pytest.approx({"x": 6 / 8, "y": 1 / 2})
    assert bench.acceptance_by([a, b], ["x", "x"]) == pytest.approx({"x": 7 / 10})


def test_heldout_prompts_spread_over_domains():
    import specsim.measure.bench as bench

    picked = bench.heldout_prompts(7)
    assert len({p["domain"] for p in picked}) == 7
    assert len(bench.heldout_prompts(1000)) == len({p["id"] for p in bench.heldout_prompts(1000)}) >= 40


def test_bench_heldout_prints_domain_and_position_breakdown(monkeypatch, capsys, bundled_target):
    import specsim.measure.bench as bench

    monkeypatch.setattr(bench, "load_model", lambda *a, **k: bundled_target)
    code = bench.main(["--drafters", "prompt_lookup", "--k", "2", "--heldout", "2", "--max-new-tokens", "6",
                       "--threads", "1", "--no-hf", "--no-passes"])  # the v(n) table is test_bench_prints_a_table's
    out = capsys.readouterr().out
    assert code == 0 and "2 held-out prompts" in out
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if "pos 1" in line)
    domains = [h["domain"] for h in bench.heldout_prompts(2)]
    assert all(d in lines[head] for d in domains) and "pos 2" in lines[head]
    assert lines[head + 2].split()[:2] == ["prompt_lookup", "2"]


def test_bench_no_copy_adds_the_draft_without_copying(monkeypatch, capsys, bundled_target):
    import specsim.measure.bench as bench
    from specsim.core.defaults import DEFAULT_DRAFT

    monkeypatch.setattr(bench, "load_model", lambda *a, **k: bundled_target)
    code = bench.main(["--drafters", "draft_model", "--draft", DEFAULT_DRAFT, "--k", "2", "--prompts", "1",
                       "--max-new-tokens", "6", "--threads", "1", "--no-hf", "--no-passes", "--no-copy"])
    out = capsys.readouterr().out
    assert code == 0 and "copying repeated text" in out
    name = Path(DEFAULT_DRAFT).name
    rows = [line.split() for line in out.splitlines() if line.split()[:1] == [name]]
    assert [r[1:4] for r in rows][:2] == [["2"] + rows[0][2:4], ["no", "copy", "2"]]
