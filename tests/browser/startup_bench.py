"""Start-up and interaction benchmark: ``python -m tests.browser.startup_bench``.

Prints a table of
- cold start: from launching ``streamlit run`` to the first page rendered in a real browser;
- calculator latency: from a slider key press in the browser to the new numbers on screen.
Goals (issue 8): cold start <= 3 s without models, interaction <= 100 ms.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from tests.browser.server import CHROMIUM, CHROMIUM_ARGS, ROOT, free_port, wait_healthy

METRIC = "[data-testid='stMetricValue']"


def cold_start(browser) -> tuple[float, float]:
    """Seconds to a healthy server, and to the home page's title rendered in the browser."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app" / "main.py"), "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        wait_healthy(url)
        healthy = time.perf_counter() - start
        page = browser.new_page()
        page.goto(url)
        page.wait_for_selector("h1", timeout=60_000)
        rendered = time.perf_counter() - start
        page.close()
        return healthy, rendered
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def slider_latency(browser, url: str, presses: int) -> list[float]:
    """Milliseconds from an ArrowRight/ArrowLeft on the K slider to a changed metric value."""
    page = browser.new_page()
    page.goto(f"{url}/calculator")
    page.wait_for_selector(METRIC, timeout=60_000)
    thumb = page.locator("[data-testid='stSlider'] input[type='range']").first
    times = []
    for i in range(presses):
        before = page.locator(METRIC).first.inner_text()
        thumb.focus()
        t0 = time.perf_counter()
        thumb.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
        page.wait_for_function(
            "([sel, old]) => { const e = document.querySelector(sel); return e && e.innerText !== old; }",
            arg=[METRIC, before], timeout=10_000, polling="raf",
        )
        times.append((time.perf_counter() - t0) * 1000)
        page.wait_for_timeout(300)
    page.close()
    return times


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--presses", type=int, default=10)
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    from tests.browser.server import running_app

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        starts = [cold_start(browser) for _ in range(args.starts)]
        with running_app() as url:
            lat = slider_latency(browser, url, args.presses)
        browser.close()
    rows = [
        ("cold start: server healthy (s)", [s[0] for s in starts], 3.0),
        ("cold start: first page rendered (s)", [s[1] for s in starts], 3.0),
        ("calculator: key press to new numbers (ms)", lat, 100.0),
    ]
    print(f"{'measure':45s} {'median':>8s} {'min':>8s} {'max':>8s} {'goal':>6s}  n")
    for name, values, goal in rows:
        print(f"{name:45s} {statistics.median(values):8.2f} {min(values):8.2f} {max(values):8.2f} "
              f"{goal:6.0f}  {len(values)}")


if __name__ == "__main__":
    main()
