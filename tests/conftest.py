"""Shared test helpers."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

MAIN = str(ROOT / "app" / "main.py")


def app_in_a_new_process(steps: str, timeout: float = 120) -> str:
    """Run ``steps``, Python that drives the app through AppTest, in a new interpreter, so what it imports starts
    from nothing. The lines of ``steps`` before a ``# ---- the app`` line run first (they may block modules); then
    ``at`` is made from app/main.py, not yet run, and the lines after it drive it. Returns what the process printed;
    a non-zero exit fails the calling test with the end of its stderr."""
    import subprocess

    before, _, after = steps.rpartition("# ---- the app\n")
    code = (before + "from streamlit.testing.v1 import AppTest\n"
            f"at = AppTest.from_file({MAIN!r}, default_timeout={timeout})\n" + after)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=timeout * 5)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout

# The embedded run cache (app.live.cache) would replay a run an earlier test made with the same settings: the
# suite runs without it, whatever the shell says, and tests/test_live_run_cache.py turns it on where it tests it.
os.environ["SPECSIM_RUN_CACHE"] = "off"
# Pages that ask for a prediction before an answer (app.predict) show their answers at once in the servers the tests
# start (the browser tests check the answers); tests/test_predict.py and the browser's own predict test turn it off.
os.environ["SPECSIM_SHOW_ANSWERS"] = "1"


def _scan_components_once() -> None:
    """Every AppTest's first run scans all installed distributions for Streamlit component manifests (Streamlit
    1.67, components v2): about 0.4 s each time, a third of a short page test. What is installed does not change
    while the suite runs, so a test process scans once and every later AppTest reads the same list (a served app
    scans once per process too)."""
    import functools

    from streamlit.components.v2 import manifest_scanner

    if not hasattr(manifest_scanner.scan_component_manifests, "cache_info"):
        manifest_scanner.scan_component_manifests = functools.cache(manifest_scanner.scan_component_manifests)


_scan_components_once()


def open_page(script: str | None = None, timeout: float = 120, query: dict | None = None, answers: bool = True):
    """Run the app through AppTest on ``pages/<script>`` (home when None), as a browser opens a link to that page:
    its first script run draws that page, with ``query`` in the address.

    ``answers``: the sidebar's "Show answers without guessing" is on, so a page shows its answers without asking
    for a prediction first (tests/test_predict.py opens pages with it off).
    """
    from streamlit.testing.v1 import AppTest

    from app.keys import SHOW_ANSWERS

    at = AppTest.from_file(MAIN, default_timeout=timeout)
    at.session_state[SHOW_ANSWERS] = answers
    for key, value in (query or {}).items():
        at.query_params[key] = value
    if script is not None:  # each page's file is named as its address (app.layout), so no first run is needed
        at.switch_page(str(ROOT / "pages" / script))
    return at.run()


def open_tab(at, label: str):
    """Open the calculator's tab ``label`` (only the open tab is drawn) and rerun."""
    from app.keys import CALC_TAB, widget_key

    at.session_state[widget_key(CALC_TAB)] = label
    return at.run()


# ---- models (engine tests) -------------------------------------------------------------------------


@pytest.fixture
def one_torch_thread():
    """Model tests run much faster without intra-op threads fighting over two busy cores."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def bundled_target():
    """The bundled SmolLM2-135M-Instruct target in float32 on the CPU, loaded once per test session."""
    from specsim.core.models import load_bundled_target

    return load_bundled_target(device="cpu", dtype="float32")


@pytest.fixture(scope="session")
def default_target():
    """The bundled target as the app runs it on this machine: bfloat16 with the position-invariant decode path
    where the CPU has native bfloat16 arithmetic (float32 elsewhere)."""
    from specsim.core.models import load_bundled_target

    return load_bundled_target(device="cpu")


@pytest.fixture(scope="session")
def bf16_targets():
    """The bundled target in bfloat16 twice: with the position-invariant decode path and without it."""
    from specsim.core.models import load_bundled_target

    return (load_bundled_target(device="cpu", dtype="bfloat16", invariant=True),
            load_bundled_target(device="cpu", dtype="bfloat16", invariant=False))


# ---- a real Redis server (the class queue and the shared run cache) -------------------------------------------


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory):
    """A redis-server of its own on a free port, no persistence, stopped after the session; its URL."""
    import shutil

    binary = shutil.which("redis-server")
    if binary is None:  # like the browser tests: missing is a failure unless skipping was asked for
        message = "redis-server is not installed (apt-get install redis-server; .ci/run installs it)"
        if os.environ.get("SPECSIM_SKIP_REDIS") == "1":
            pytest.skip(message)
        pytest.fail(message + "; set SPECSIM_SKIP_REDIS=1 to skip the class-queue tests")
    server, url = start_redis(binary, tmp_path_factory.mktemp("redis"))
    yield url
    stop_process(server, 10)


def start_redis(binary: str, folder, port: int | None = None):
    """(process, URL) of a redis-server on ``port`` (a free one when None), no persistence, answering pings."""
    import socket
    import subprocess
    import time

    if port is None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
    server = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                               "no", "--dir", str(folder)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    url = f"redis://127.0.0.1:{port}/0"
    from redis import Redis
    from redis.exceptions import ConnectionError as NoRedis

    deadline = time.monotonic() + 15
    while True:
        try:
            Redis.from_url(url).ping()
            return server, url
        except NoRedis:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                pytest.fail(f"redis-server on port {port} did not start (exit code {server.poll()})")
            time.sleep(0.05)


def stop_process(process, grace_s: float = 5.0) -> None:
    """Ask a process to stop, then make it stop: an idle queue worker may sit in its dequeue wait."""
    import subprocess

    if process.poll() is None:
        process.terminate()
        try:
            process.wait(grace_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def start_worker(redis_url: str, queue: str, log, preload: tuple[str, ...] = ()):
    """A real class-queue worker (``python -m specsim.classroom.worker``) serving ``queue``, one torch thread."""
    import subprocess

    cmd = [sys.executable, "-m", "specsim.classroom.worker", "--redis", redis_url, "--queue", queue, "--threads", "1"]
    cmd += ["--preload", *preload] if preload else []
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)


def heartbeat_stale_at(conn, run: str, killed: float) -> float:
    """Read right after a class worker running ``run`` was killed (at ``killed``, time.monotonic()): when its heartbeat
    stops counting, at the latest. The alive key's time left is read first, the clock after it, so the sum is never
    before the key expires; without the key (-2) a run older than the TTL is already stale."""
    from specsim.classroom import records

    left_ms = conn.pttl(records.key(run, "alive"))
    read_at = time.monotonic()
    return read_at + left_ms / 1000 if left_ms > 0 else killed + records.ALIVE_TTL_S


HEAVY_FILES = ("test_distill.py", "test_invariant.py", "test_variants_bundled.py", "test_bad_input_app.py",
               "test_engine_greedy.py", "test_variants_page.py", "test_live_page.py", "test_kpolicy.py",
               "test_whole_block.py", "test_cache_lengths.py", "test_accepted_mass.py")
"""The longest in-process files: the two test workers (pytest-xdist, one file at a time) take them early, so
neither worker is left with a long file at the end while the other waits."""

HEAVY_BROWSER_FILES = ("test_calculator_browser.py", "test_live_playback.py", "test_bad_input.py",
                       "test_class_browser.py", "test_instant_numbers.py", "test_shell_browser.py",
                       "test_a11y_browser.py")
"""The longest real-browser files, taken first for the same reason."""


def in_browser_dir(path) -> bool:
    return "tests/browser" in str(path)


def pytest_collection_modifyitems(config, items):
    """Alternate real-browser files with in-process ones, the longest in-process files first, then the rest.

    A browser test mostly waits (for the page, the server's script, a timer) and leaves a core idle, so the two
    test workers (pytest-xdist, one file at a time) should rarely both run one: they take files in this order
    (``--no-loadscope-reorder``: by default xdist would sort files by their number of tests, which put every
    browser file last), so each gets a mix and the short files fill the end. Playwright's sync API refuses to
    start inside a running asyncio loop, which some in-process Streamlit tests leave behind, so a worker starts
    its browser before its first test (below).
    """
    files: dict[str, list] = {}
    for item in items:
        files.setdefault(str(item.fspath), []).append(item)
    browser = sorted((f for f in files if in_browser_dir(f)), key=lambda f: not f.endswith(HEAVY_BROWSER_FILES))
    others = sorted((f for f in files if not in_browser_dir(f)), key=lambda f: not f.endswith(HEAVY_FILES))
    order = [f for i in range(max(len(browser), len(others))) for f in (*browser[i:i + 1], *others[i:i + 1])]
    items[:] = [item for f in order for item in files[f]]


ONE_RENDERER_PER_SITE = ["--process-per-site"]
"""The tabs of one browser context that show the app share one renderer process while any of them is open
(tests.browser.conftest.tabs keeps one open), so a test's new tab does not start a renderer and compile Streamlit's
and plotly's scripts again: six page loads, each in a new tab, cost the machine 37 CPU s without it and 17-20 s with
it. Pages in different contexts (the class's learners, each with a user agent of their own) still get a process
each."""


@pytest.fixture(scope="session")
def browser():
    """One headless Debian chromium per test worker (Playwright, never its own download)."""
    from tests.browser.conftest import SKIP_ENV
    from tests.browser.server import CHROMIUM, CHROMIUM_ARGS

    if not os.path.exists(CHROMIUM):
        pytest.fail(f"Debian chromium is not installed at {CHROMIUM} (apt-get install chromium; .ci/run installs "
                    f"it). The browser tests are part of the suite: set {SKIP_ENV}=1 to skip them on purpose.",
                    pytrace=False)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, *ONE_RENDERER_PER_SITE])
        yield b
        b.close()


@pytest.fixture(scope="session", autouse=True)
def _browser_before_any_test(request):
    """A worker that will run browser tests starts chromium before its first test of any kind (see
    :func:`pytest_collection_modifyitems`); without chromium the browser tests themselves say so."""
    from tests.browser.conftest import skip_requested
    from tests.browser.server import CHROMIUM

    if (any(in_browser_dir(item.fspath) for item in request.session.items) and not skip_requested()
            and os.path.exists(CHROMIUM)):
        request.getfixturevalue("browser")


def tidy_class_folder(request, room) -> None:
    """After a class the tests started has stopped: remove its folder in /tmp (its logs, Redis's append-only file,
    nginx's scratch folders), unless a test has failed so far, when the logs are kept for reading."""
    import shutil

    if request.session.testsfailed == 0:
        shutil.rmtree(room.folder, ignore_errors=True)


def require_class_binaries() -> None:
    """nginx and redis-server, which a whole class needs: missing is a failure unless SPECSIM_SKIP_REDIS=1 asks to
    skip the class tests (tests/browser/test_class_browser.py, tests/test_class_public.py)."""
    import shutil

    for binary in ("nginx", "redis-server"):
        if shutil.which(binary) is None and not Path("/usr/sbin", binary).exists():
            message = f"{binary} is not installed (apt-get install {binary}; .ci/run installs it)"
            if os.environ.get("SPECSIM_SKIP_REDIS") == "1":
                pytest.skip(message)
            pytest.fail(message + "; set SPECSIM_SKIP_REDIS=1 to skip the class tests")


# ---- where the suite's time goes: seconds per test file, summed over setup, call and teardown -----------------------
FILE_SECONDS: dict[str, float] = {}
FILES_SHOWN = 20


def pytest_runtest_logreport(report):
    """Add a test phase's duration to its file's total (under xdist the controller sees every worker's reports)."""
    path = report.nodeid.split("::", 1)[0]
    FILE_SECONDS[path] = FILE_SECONDS.get(path, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter):
    """The files that took longest, with their share of all the test time: where a faster suite starts."""
    if not FILE_SECONDS or hasattr(terminalreporter.config, "workerinput"):
        return
    total = sum(FILE_SECONDS.values())
    terminalreporter.section(f"slowest {FILES_SHOWN} test files (of {total:.0f} s of test time in all)")
    for path, seconds in sorted(FILE_SECONDS.items(), key=lambda item: -item[1])[:FILES_SHOWN]:
        terminalreporter.write_line(f"{seconds:8.1f} s  {seconds / total:5.1%}  {path}")
