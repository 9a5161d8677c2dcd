"""Real-browser fixtures and helpers: one app server and one headless Debian chromium per test session.

Waiting: Streamlit marks its root element with ``data-test-script-state`` (``running``, ``notRunning``, ...).
A script in every page counts the times it turns back to ``notRunning``; :func:`act` performs an action and
waits until one more script run has finished, then checks that no exception box is on screen.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.browser.server import CHROMIUM, CHROMIUM_ARGS, running_app

SHOTS = Path(os.environ.get("SPECSIM_SHOTS", Path(__file__).resolve().parents[2] / "out" / "screenshots"))
EXCEPTION = "[data-testid='stException']"
ALERT = "[data-testid='stAlert']"
METRIC = "[data-testid='stMetricValue']"

# Counts finished script runs (window.__runs) by watching the root element's script-state attribute.
RUN_COUNTER = """
(() => {
  window.__runs = 0;
  let last = null;
  const seen = () => {
    const app = document.querySelector("[data-testid='stApp']");
    const now = app && app.getAttribute('data-test-script-state');
    if (now !== last) {
      if (now === 'notRunning' && last !== null) window.__runs += 1;
      last = now;
    }
  };
  new MutationObserver(seen).observe(document, {attributes: true, childList: true, subtree: true,
                                                attributeFilter: ['data-test-script-state']});
})();
"""
IDLE = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  return app && app.getAttribute('data-test-script-state') === 'notRunning'
      && app.getAttribute('data-test-connection-state') === 'CONNECTED';
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
    context.add_init_script(RUN_COUNTER)
    pg = context.new_page()
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


def runs(page) -> int:
    """Script runs finished so far in the current document."""
    return page.evaluate("() => window.__runs || 0")


def wait_idle(page, after: int = 0, timeout: float = 60_000) -> None:
    """Wait until more than ``after`` script runs have finished and none is running now."""
    page.wait_for_function(f"() => (window.__runs || 0) > {after} && ({IDLE})()", timeout=timeout)


def goto(page, path: str = "", timeout: float = 60_000) -> None:
    """Open a page of the app and wait until Streamlit has finished running the script."""
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
