"""CI's entry points: `.ci/run` runs the browser tests or fails, and `make test` treats only pytest's
"no tests collected" (exit code 5) as success. Each runs with stand-ins for apt-get, make, python and
ruff in a folder of its own, so nothing is installed and no test suite runs twice.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT


def _bin(tmp_path: Path, **scripts: str) -> Path:
    """A PATH folder with the basic tools CI's script needs, plus ``scripts`` (name -> bash body)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in ("bash", "env", "dirname", "cat", "touch", "echo", "sh"):
        found = shutil.which(tool)
        if found:
            (bindir / tool).symlink_to(found)
    for name, body in scripts.items():
        path = bindir / name
        path.write_text(f"#!/bin/bash\n{body}\n")
        path.chmod(0o755)
    return bindir


def _ci(bindir: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(ROOT / ".ci" / "run")], env={"PATH": str(bindir), **env},
                          capture_output=True, text=True, timeout=60)


def test_ci_fails_when_chromium_is_missing_and_cannot_be_installed(tmp_path):
    marker = tmp_path / "make-ran"
    bindir = _bin(tmp_path, **{"apt-get": "exit 100", "make": f"touch {marker}"})
    done = _ci(bindir)
    assert done.returncode != 0
    assert "chromium" in done.stderr and "SPECSIM_SKIP_BROWSER=1" in done.stderr
    assert not marker.exists(), "the tests must not run without a browser unless skipping was asked for"


@pytest.mark.parametrize("make_rc", [0, 2])
def test_ci_skips_the_browser_only_when_asked_and_passes_make_test_through(tmp_path, make_rc):
    marker = tmp_path / "make-ran"
    make = f'echo "$SPECSIM_SKIP_BROWSER" > {marker}; exit {make_rc}'
    bindir = _bin(tmp_path, **{"apt-get": "exit 100", "make": make, "redis-server": "exit 0", "nginx": "exit 0"})
    done = _ci(bindir, SPECSIM_SKIP_BROWSER="1")
    assert done.returncode == make_rc
    assert marker.read_text().strip() == "1"  # the request reaches pytest, which skips the browser tests


def test_ci_installs_nothing_when_chromium_and_redis_are_there(tmp_path):
    marker = tmp_path / "apt-ran"
    bindir = _bin(tmp_path, **{"apt-get": f"touch {marker}; exit 1", "chromium": "exit 0", "redis-server": "exit 0",
                               "nginx": "exit 0", "make": "exit 0"})
    assert _ci(bindir).returncode == 0
    assert not marker.exists()


def test_ci_installs_redis_for_the_queue_tests_when_it_is_missing(tmp_path):
    asked = tmp_path / "apt-args"
    bindir = _bin(tmp_path, **{"apt-get": f'echo "$@" >> {asked}', "chromium": "exit 0", "make": "exit 0"})
    done = _ci(bindir)
    assert "redis-server" in asked.read_text()  # it asked for it
    assert done.returncode != 0  # and, the stand-in installing nothing, refused to run the suite without it
    assert "redis-server" in done.stderr and "SPECSIM_SKIP_REDIS=1" in done.stderr


def test_ci_runs_without_redis_only_when_asked(tmp_path):
    marker = tmp_path / "make-ran"
    bindir = _bin(tmp_path, **{"apt-get": "exit 100", "chromium": "exit 0",
                               "make": f'echo "$SPECSIM_SKIP_REDIS" > {marker}'})
    assert _ci(bindir).returncode != 0 and not marker.exists()
    assert _ci(bindir, SPECSIM_SKIP_REDIS="1").returncode == 0
    assert marker.read_text().strip() == "1"  # the request reaches pytest, whose redis fixture then skips


@pytest.mark.parametrize("pytest_rc,make_rc", [(0, 0), (5, 0), (1, 2), (2, 2)])
def test_make_test_maps_only_no_tests_collected_to_success(tmp_path, pytest_rc, make_rc):
    if shutil.which("make") is None:
        pytest.fail("make is not installed; CI runs through it")
    venv = tmp_path / "venv"
    bindir = venv / "bin"
    bindir.mkdir(parents=True)
    for name, body in (("python", f"exit {pytest_rc}"), ("ruff", "exit 0"), ("pip", "exit 0")):
        (bindir / name).write_text(f"#!/bin/bash\n{body}\n")
        (bindir / name).chmod(0o755)
    for stamp in (".runtime", ".dev"):  # up to date: make installs nothing
        (venv / stamp).touch()
    done = subprocess.run(["make", "-s", "-C", str(ROOT), "test", f"VENV={venv}", f"BIN={bindir}"],
                          capture_output=True, text=True, timeout=60, env={**os.environ, "MAKEFLAGS": ""})
    assert (done.returncode == 0) == (make_rc == 0), done.stdout + done.stderr
    assert ("no tests collected" in done.stdout) == (pytest_rc == 5)


@pytest.mark.parametrize("fallback_rc,make_rc", [(0, 0), (1, 2)])
def test_the_fallback_beside_the_suite_fails_make_test_on_its_own(tmp_path, fallback_rc, make_rc):
    """The run with the fused kernels switched off goes beside the suite: its failure alone fails the target, and
    its output is shown after the suite's."""
    venv = tmp_path / "venv"
    bindir = venv / "bin"
    bindir.mkdir(parents=True)
    python = f'if [ "$SPECSIM_NO_FUSED" = 1 ]; then echo fallback ran; exit {fallback_rc}; fi; exit 0'
    for name, body in (("python", python), ("ruff", "exit 0"), ("pip", "exit 0")):
        (bindir / name).write_text(f"#!/bin/bash\n{body}\n")
        (bindir / name).chmod(0o755)
    for stamp in (".runtime", ".dev"):
        (venv / stamp).touch()
    done = subprocess.run(["make", "-s", "-C", str(ROOT), "test", f"VENV={venv}", f"BIN={bindir}"],
                          capture_output=True, text=True, timeout=60, env={**os.environ, "MAKEFLAGS": ""})
    assert (done.returncode == 0) == (make_rc == 0), done.stdout + done.stderr
    assert "fallback ran" in done.stdout.split("SPECSIM_NO_FUSED=1):")[-1], done.stdout


def _browser_test(**env: str) -> subprocess.CompletedProcess:
    """One browser test in a child pytest, with ``env`` on top of ours."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
           "tests/browser/test_shell_browser.py::test_the_declared_home_path_opens_the_first_page"]
    full = {k: v for k, v in os.environ.items() if k != "SPECSIM_SKIP_BROWSER"}
    return subprocess.run(cmd, cwd=ROOT, env={**full, **env}, capture_output=True, text=True, timeout=300)


def test_a_missing_browser_fails_the_browser_tests(tmp_path):
    done = _browser_test(SPECSIM_CHROMIUM=str(tmp_path / "no-chromium"))
    assert done.returncode == 1, done.stdout
    assert "SPECSIM_SKIP_BROWSER=1" in done.stdout and "1 error" in done.stdout


def test_the_browser_tests_skip_only_when_asked(tmp_path):
    done = _browser_test(SPECSIM_CHROMIUM=str(tmp_path / "no-chromium"), SPECSIM_SKIP_BROWSER="1")
    assert done.returncode == 0, done.stdout
    assert "1 skipped" in done.stdout


def test_make_runs_its_commands_without_pythondontwritebytecode():
    """These machines set PYTHONDONTWRITEBYTECODE; under make every process keeps what it compiled, so the suite's
    workers, servers and subprocesses import torch and transformers from .pyc files instead of compiling them
    again each (9.5 s against 3.3 s per process)."""
    if shutil.which("make") is None:
        pytest.fail("make is not installed; CI runs through it")
    probe = f'probe: ; @{sys.executable} -c "import sys; print(sys.dont_write_bytecode)"'
    done = subprocess.run(["make", "-s", "--no-print-directory", "--eval", probe, "probe"], cwd=ROOT,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
