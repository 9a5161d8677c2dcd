"""The bad-input campaign on the command line: ``python -m specsim.measure.cli`` with bad arguments.

Each case must end with exit code 2 and a one-line ``error:`` message (no traceback), and the
same command with good arguments must work right after. Tiny local models keep it fast.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from specsim.measure import cli
from tests.bad_inputs import CLI, Bad
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, str]:
    from tests.local_models import tiny_pair

    root = tmp_path_factory.mktemp("cli-models")
    target, draft = tiny_pair(root, same_tokenizer=True)
    _, other = tiny_pair(root, same_tokenizer=False)
    return {"tmp": str(root), "target": str(target), "draft": str(draft), "other_draft": str(other)}


def good_argv(folders: dict[str, str]) -> list[str]:
    return ["--prompt", "the quick brown fox", "--target", folders["target"], "--drafter", "draft_model",
            "--draft", folders["draft"], "--max-new-tokens", "4", "-k", "2"]


def run_main(argv: list[str]) -> int:
    try:
        return cli.main(argv)
    except SystemExit as stop:  # argparse's own errors
        return int(stop.code)


def error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if "error" in line.lower()]


@pytest.mark.parametrize("case", CLI, ids=lambda b: b.id)
def test_bad_argument(case: Bad, folders, capsys):
    argv = good_argv(folders) + [a.format(**folders) for a in case.value["argv"]]
    assert run_main(argv) == 2
    out = capsys.readouterr()
    lines = error_lines(out.err)
    assert len(lines) == 1 and case.expect in lines[0], out.err[-500:]
    assert "Traceback" not in out.err
    assert run_main(good_argv(folders)) == 0  # the good command right after
    assert "acceptance rate" in capsys.readouterr().out


def test_a_non_latin_prompt_runs(folders, capsys):
    assert run_main(good_argv(folders)[2:] + ["--prompt", "速い茶色の狐 — быстрая лиса — 🦊"]) == 0
    assert "identical" in capsys.readouterr().out


@pytest.mark.parametrize("extra", [["--temperature", "nan"], ["--target", "no-such-org/no-such-model"]],
                         ids=["bad-number", "unknown-model"])
def test_a_real_process_exits_2_with_one_line(folders, extra):
    cmd = [sys.executable, "-m", "specsim.measure.cli", *good_argv(folders), *extra]
    env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 2
    assert len(error_lines(done.stderr)) == 1 and "Traceback" not in done.stderr, done.stderr[-800:]


@pytest.mark.parametrize("drafter", ["draft_model", "prompt_lookup", "early_exit"])
@pytest.mark.parametrize("t", ["1e-40", "1e-300"])
def test_a_tiny_temperature_runs_with_every_drafter(folders, capsys, drafter, t):
    """Issue 12, defect 2: a tiny positive temperature samples (almost surely the top token), never crashes."""
    argv = good_argv(folders) + ["--drafter", drafter, "--temperature", t]
    if drafter == "early_exit":
        argv += ["--early-exit-layers", "1"]
    assert run_main(argv) == 0
    out = capsys.readouterr()
    assert "Traceback" not in out.err and "acceptance rate" in out.out


@pytest.mark.parametrize("value", ["0", "x", "300"])
def test_the_variants_comparison_checks_its_flags_with_the_requests_sentence(value, capsys):
    """Issue 63, item 1: the variants comparison builds a RunRequest from its flags, so a bad --max-new-tokens gets
    the range sentence every other entry gives (once, before any model loads), naming the flag."""
    from specsim.measure import compare_variants
    from specsim.request import range_problem

    with pytest.raises(SystemExit) as stop:
        compare_variants.main(["--max-new-tokens", value, "--prompt", "hi"])
    assert stop.value.code == 2
    assert range_problem("max_new_tokens", value, "--max-new-tokens") in capsys.readouterr().err
