"""Real browser: the drag-and-drop component loads offline and a full correct drag is graded right."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time

import pytest

from specsim import quiz
from tests.conftest import ROOT

pytestmark = pytest.mark.browser
CHROMIUM = shutil.which("chromium")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def app_url():
    if CHROMIUM is None:
        pytest.skip("chromium is not installed")
    port = _free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", str(ROOT / "app" / "main.py"), "--server.headless", "true",
           "--server.address", "localhost", "--server.port", str(port), "--browser.gatherUsageStats", "false"]
    server = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("localhost", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    pytest.fail("the streamlit server did not start")
                time.sleep(0.3)
        yield f"http://localhost:{port}"
    finally:
        server.terminate()
        server.wait(timeout=30)


def _drag(page, source, target_box) -> None:
    box = source.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 5, y + 5, steps=3)  # past the sensor's activation distance
    page.mouse.move(target_box["x"] + target_box["width"] / 2, target_box["y"] + target_box["height"] - 4, steps=15)
    page.mouse.up()


def test_dragging_every_step_into_place_is_graded_right(app_url):
    playwright = pytest.importorskip("playwright.sync_api")
    sync_playwright, expect = playwright.sync_playwright, playwright.expect
    seq = quiz.load_sequence()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1300, "height": 1100})
            page.goto(f"{app_url}/sequence")
            page.get_by_text("Drag and drop").click()
            frame = page.frame_locator("iframe[title*='sortable']")
            for n, piece in enumerate(seq.pieces):
                frame.locator(".sortable-item").first.wait_for(timeout=30_000)
                answer = frame.locator(".sortable-container-body").nth(1)
                _drag(page, frame.locator(".sortable-item", has_text=piece.text), answer.bounding_box())
                page.get_by_text(f"{len(seq.pieces) - n - 1} piece").wait_for(timeout=15_000)
            page.get_by_role("button", name="Check my order").click()
            page.get_by_text(f"All {len(seq.pieces)} steps are in the right place.").wait_for(timeout=15_000)
            page.get_by_role("button", name="Reset and reshuffle").click()
            page.get_by_text(f"{len(seq.pieces)} pieces left to place").wait_for(timeout=15_000)
            expect(page.locator("iframe[title*='sortable']")).to_have_count(1, timeout=15_000)  # remounted
            frame.locator(".sortable-container-body").nth(0).locator(".sortable-item").nth(4).wait_for(timeout=15_000)
        finally:
            browser.close()
