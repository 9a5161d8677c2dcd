"""Start-up and interaction benchmark: ``python -m tests.browser.startup_bench``.

Prints a table of
- cold start: from launching ``streamlit run app/main.py`` to the first page rendered in a real browser, beside
  the same for a bare page;
- calculator latency: from a slider key press in the browser to the new numbers on screen, to the end of
  the (fragment) run it started (the run's last message reaches the page), and to the page settled (its last
  change on screen: the charts drawn);
- replay step: on the live page, stepping through the shipped recording it opens on (no model runs), from a
  click on Forward ▶ to the next iteration drawn (its "Iteration i of n" line on screen), and to the end of
  that (fragment) run.
A bare Streamlit page (one title), started and opened the same way and interleaved with the app's, is the
floor under the cold start: what Streamlit's own server and front end take before any of the app's code runs.
Goals (issues 8, 12 and 41): cold start <= 2 s without models; key press to new numbers <= 50 ms median,
to the script run done <= 150 ms; replay step <= 150 ms.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.browser.server import CHROMIUM, CHROMIUM_ARGS, ROOT, free_port, wait_healthy

METRIC = "[data-testid='stMetricValue']"
MAIN = ROOT / "app" / "main.py"


# The floor under the cold start: a Streamlit page that only draws a title, started and opened the same way.
BARE_PAGE = 'import streamlit as st\nst.title("A bare page")\n'


def cold_start(browser, launch: list[str]) -> tuple[float, float]:
    """Seconds to a healthy server, and to the page's title rendered in the browser."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, *launch, "--server.headless", "true",
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


# Every message from the server is timestamped in the page, so "settled" can wait for the run's answer.
_HOOK_SOCKET = """(() => {
  const Orig = window.WebSocket;
  window.WebSocket = class extends Orig {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', () => {
        const lat = window.__lat;
        if (lat && lat.t0 !== null) { lat.messages += 1; lat.last = lat.message = performance.now(); }
      });
    }
  };
})();"""

# Timed inside the page (performance.now), so the driver's own round trips do not count: from the key
# going down to the first metric showing a new value, and to the page settled: the last change to the page
# (or message from the server) before a quiet spell, once the server has answered. The numbers can change
# before the run begins (the calculator recomputes them in the browser), and a fragment run can be over before
# the app's "running" state is ever drawn, so "settled" watches the page itself, not that state.
_WATCH = """(sel) => {
  const old = document.querySelector(sel).innerText;
  window.__lat = {t0: null, numbers: null, messages: 0, message: null, last: null};
  const seen = () => {
    const now = performance.now(), lat = window.__lat;
    if (lat.t0 === null) return;
    lat.last = now;
    if (lat.numbers === null && document.querySelector(sel).innerText !== old) lat.numbers = now - lat.t0;
  };
  window.addEventListener('keydown', () => { window.__lat.t0 = performance.now(); }, {capture: true, once: true});
  if (window.__watch) window.__watch.disconnect();
  window.__watch = new MutationObserver(seen);
  window.__watch.observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true});
}"""
QUIET_MS = 400  # no change to the page for this long: it has settled
_SETTLED = f"""() => {{
  const lat = window.__lat;
  return lat.t0 !== null && lat.numbers !== null && lat.messages > 0 && performance.now() - lat.last > {QUIET_MS};
}}"""


def slider_latency(browser, url: str, presses: int) -> tuple[list[float], list[float], list[float]]:
    """Milliseconds from an arrow key on the K slider to new numbers, to the last message of the run it started
    (the run is over: its "finished" message is the last), and to the page settled (all of it drawn)."""
    page = browser.new_page()
    page.add_init_script(_HOOK_SOCKET)
    page.goto(f"{url}/calculator")
    page.wait_for_selector(METRIC, timeout=60_000)
    page.wait_for_timeout(2000)
    thumb = page.locator("[data-testid='stSlider'] input[type='range']").first
    numbers, done, settled = [], [], []
    for i in range(presses):
        thumb.focus()
        page.evaluate(_WATCH, METRIC)
        thumb.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
        page.wait_for_function(_SETTLED, timeout=30_000)
        lat = page.evaluate("() => window.__lat")
        numbers.append(lat["numbers"])
        done.append(lat["message"] - lat["t0"])
        settled.append(lat["last"] - lat["t0"])
    page.close()
    return numbers, done, settled


# From the pointer going down on Forward ▶ to the next "Iteration i of n" line, and to the run's end.
_WATCH_STEP = """(want) => {
  window.__lat = {t0: null, drawn: null, done: null};
  const seen = () => {
    const now = performance.now(), lat = window.__lat;
    if (lat.t0 === null) return;
    if (lat.drawn === null && document.body.innerText.includes(want)) lat.drawn = now - lat.t0;
    const app = document.querySelector("[data-testid='stApp']");
    if (lat.drawn !== null && lat.done === null && app.getAttribute('data-test-script-state') === 'notRunning')
      lat.done = now - lat.t0;
  };
  window.addEventListener('pointerdown', () => { window.__lat.t0 = performance.now(); },
                          {capture: true, once: true});
  if (window.__watch) window.__watch.disconnect();
  window.__watch = new MutationObserver(seen);
  window.__watch.observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true});
}"""


def replay_latency(browser, url: str, steps: int) -> tuple[list[float], list[float]]:
    """Milliseconds from a click on Forward ▶ to the next iteration drawn, and to the end of that run.

    The live page opens on a shipped recording, so its first "Iteration 1 of n" line is on screen before
    any run: the steps go through that recording and no model is loaded.
    """
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{url}/live")
    first = page.get_by_text("Iteration 1 of ", exact=False)
    first.wait_for(timeout=60_000)
    page.wait_for_timeout(2000)
    n = int(first.inner_text().split(" of ")[1].split()[0])
    forward = page.get_by_role("button", name="Forward ▶", exact=True)
    drawn, done, shown = [], [], 0
    for _ in range(steps):
        if shown >= n - 1:  # at the end: back to the start, untimed
            page.get_by_role("button", name="|◀ Restart", exact=True).click()
            page.get_by_text(f"Iteration 1 of {n}").wait_for(timeout=30_000)
            page.wait_for_timeout(500)
            shown = 0
        page.evaluate(_WATCH_STEP, f"Iteration {shown + 2} of {n}")
        forward.click()
        page.wait_for_function("() => window.__lat.done !== null", timeout=30_000)
        lat = page.evaluate("() => window.__lat")
        drawn.append(lat["drawn"])
        done.append(lat["done"])
        shown += 1
        page.wait_for_timeout(300)  # let plotly finish drawing before the next click
    page.close()
    return drawn, done


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--presses", type=int, default=10)
    parser.add_argument("--steps", type=int, default=10, help="Forward ▶ clicks timed on the live page")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    from tests.browser.server import running_app

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        with tempfile.TemporaryDirectory() as tmp:
            bare = Path(tmp) / "bare.py"
            bare.write_text(BARE_PAGE)
            starts, floors = [], []
            for _ in range(args.starts):  # interleaved, so both see the same machine
                starts.append(cold_start(browser, ["-m", "streamlit", "run", str(MAIN)]))
                floors.append(cold_start(browser, ["-m", "streamlit", "run", str(bare)]))
        with running_app() as url:
            numbers, done, settled = slider_latency(browser, url, args.presses)
            step_drawn, step_done = replay_latency(browser, url, args.steps)
        browser.close()
    rows = [
        ("cold start: server healthy (s)", [s[0] for s in starts], None),
        ("cold start: first page rendered (s)", [s[1] for s in starts], 2.0),
        ("cold start, bare Streamlit page: server healthy (s)", [s[0] for s in floors], None),
        ("cold start, bare Streamlit page: title rendered (s)", [s[1] for s in floors], None),
        ("calculator: key press to new numbers (ms)", numbers, 50.0),
        ("calculator: key press to run done (ms)", done, 150.0),
        ("calculator: key press to page settled, all drawn (ms)", settled, None),
        ("live replay: Forward ▶ to next iteration drawn (ms)", step_drawn, 150.0),
        ("live replay: Forward ▶ to run done (ms)", step_done, None),
    ]
    print(f"{'measure':56s} {'median':>8s} {'min':>8s} {'max':>8s} {'goal':>6s}  n")
    for name, values, goal in rows:
        shown = "-" if goal is None else f"{goal:g}"
        print(f"{name:56s} {statistics.median(values):8.2f} {min(values):8.2f} {max(values):8.2f} "
              f"{shown:>6s}  {len(values)}")


if __name__ == "__main__":
    main()
