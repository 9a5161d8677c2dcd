"""Real-browser fixtures: one app server and one headless Debian chromium per test session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.browser.server import CHROMIUM, CHROMIUM_ARGS, running_app

SHOTS = Path(os.environ.get("SPECSIM_SHOTS", Path(__file__).resolve().parents[2] / "out" / "screenshots"))


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


@pytest.fixture
def page(browser, app_url):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.base_url = app_url  # type: ignore[attr-defined]
    yield pg
    context.close()


def goto(page, path: str = "") -> None:
    """Open a page of the app and wait until Streamlit has finished running the script."""
    page.goto(f"{page.base_url}/{path}")
    wait_idle(page)


def wait_idle(page, timeout: float = 60_000) -> None:
    page.wait_for_selector("[data-testid='stApp']", timeout=timeout)
    page.wait_for_selector("h1", timeout=timeout)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
        " && !document.querySelector('[data-testid=\"stSkeleton\"]')",
        timeout=timeout,
    )
    page.wait_for_timeout(300)


def assert_no_exception(page) -> None:
    boxes = page.locator("[data-testid='stException']")
    assert boxes.count() == 0, boxes.first.inner_text()


def screenshot(page, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
