"""Real-browser fixtures and helpers: one app server and one headless Debian chromium per test session.

Waiting: every page listens to its websocket and counts the script runs the server reports finished
(Streamlit's ``script_finished`` message; a run cut short by a newer one does not count). :func:`act`
performs an action, waits until one more run has finished and the page shows it, then checks that no
exception box is on screen.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.browser.server import CHROMIUM, CHROMIUM_ARGS, running_app

SHOTS = Path(os.environ.get("SPECSIM_SHOTS", Path(__file__).resolve().parents[2] / "out" / "screenshots"))
EXCEPTION = "[data-testid='stException']"
ALERT = "[data-testid='stAlert']"
METRIC = "[data-testid='stMetricValue']"

IDLE = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  return app && app.getAttribute('data-test-script-state') === 'notRunning'
      && app.getAttribute('data-test-connection-state') === 'CONNECTED'
      && !document.querySelector("[data-testid='stSkeleton']");
}"""


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser" in str(item.fspath):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def app_url():
    with running_app() as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian chromium is not installed (apt-get install chromium); .ci/run installs it")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def new_page(browser, app_url: str):
    """A page in a fresh browser context (its own cookies, so its own Streamlit session)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.script_runs = 0  # type: ignore[attr-defined]

    def on_frame(payload) -> None:
        if isinstance(payload, bytes | bytearray) and _finished_run(bytes(payload)):
            pg.script_runs += 1

    pg.on("websocket", lambda ws: ws.on("framereceived", on_frame))
    pg.base_url = app_url  # type: ignore[attr-defined]
    pg.js_errors = []  # type: ignore[attr-defined]
    pg.dialogs = []  # type: ignore[attr-defined]
    pg.on("pageerror", lambda e: pg.js_errors.append(str(e)))

    def on_dialog(d) -> None:  # an alert() would mean injected script ran
        pg.dialogs.append(d.message)
        d.dismiss()

    pg.on("dialog", on_dialog)
    return pg


@pytest.fixture
def page(browser, app_url):
    pg = new_page(browser, app_url)
    yield pg
    try:
        assert not pg.dialogs, f"a script dialog opened: {pg.dialogs}"
        if not pg.is_closed():
            assert_no_exception(pg)
    finally:
        pg.context.close()


def _finished_run(payload: bytes) -> bool:
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    try:
        msg = ForwardMsg.FromString(payload)
    except Exception:  # not a ForwardMsg: nothing to count
        return False
    return msg.WhichOneof("type") == "script_finished" and msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN


def runs(page) -> int:
    """Script runs (and fragment runs) the server has reported finished to this page so far."""
    return page.script_runs


def wait_idle(page, after: int = 0, timeout: float = 60_000) -> None:
    """Wait until more than ``after`` script runs have finished and the page shows no run in progress."""
    deadline = time.monotonic() + timeout / 1000
    while page.script_runs <= after:
        if time.monotonic() > deadline:
            raise TimeoutError(f"no script run finished within {timeout / 1000:.0f} s")
        page.wait_for_timeout(20)  # lets Playwright deliver websocket events
    page.wait_for_function(IDLE, timeout=timeout)


def goto(page, path: str = "", timeout: float = 60_000) -> None:
    """Open a page of the app and wait until Streamlit has finished running the script."""
    page.script_runs = 0
    page.goto(f"{page.base_url}/{path}")
    page.wait_for_selector("h1", timeout=timeout)
    wait_idle(page, 0, timeout)
    assert_no_exception(page)


def act(page, action: Callable[[], object], timeout: float = 60_000) -> None:
    """Do something that reruns the script, wait for that run to finish, and check for exception boxes."""
    before = runs(page)
    action()
    wait_idle(page, before, timeout)
    assert_no_exception(page)


def nav(page, title: str):
    """The sidebar's link to the page called ``title``."""
    return page.get_by_test_id("stSidebarNavItems").get_by_role("link", name=title, exact=True)


def assert_no_exception(page) -> None:
    boxes = page.locator(EXCEPTION)
    assert boxes.count() == 0, boxes.first.inner_text()


def alerts(page) -> list[str]:
    """Text of every st.error / st.warning / st.info / st.success box on screen."""
    return page.locator(ALERT).all_inner_texts()


def metrics(page) -> list[str]:
    return [t.strip() for t in page.locator(METRIC).all_inner_texts()]


def screenshot(page, name: str, full_page: bool = True) -> Path:
    """Save ``out/screenshots/<name>.png``; the whole page (Streamlit scrolls inside its main section)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    size = page.viewport_size
    if full_page:
        height = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]')?.scrollHeight || 0")
        page.set_viewport_size({"width": size["width"], "height": max(size["height"], min(int(height), 12_000))})
        page.wait_for_timeout(300)
    try:
        page.screenshot(path=str(path), full_page=full_page)
    finally:
        page.set_viewport_size(size)
    return path
