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
from urllib.parse import parse_qs, quote, urlparse

import pytest

from app.calculator.params import BY_NAME as _CALC_PARAMS
from specsim.core.trace import Trace
from specsim.measure import analytics
from tests.browser.server import running_app

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


SKIP_ENV = "SPECSIM_SKIP_BROWSER"  # set to 1 to skip the browser tests on purpose (a local run without chromium)


def skip_requested() -> bool:
    return os.environ.get(SKIP_ENV, "") == "1"


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser" in str(item.fspath):
            item.add_marker(pytest.mark.browser)
            if skip_requested():
                item.add_marker(pytest.mark.skip(reason=f"{SKIP_ENV}=1 asked to skip the browser tests"))


@pytest.fixture(scope="session")
def app_url():
    with running_app() as url:
        yield url


VIEWPORT = {"width": 1400, "height": 1000}


def new_page(browser, app_url: str, user_agent: str | None = None):
    """A page in a fresh browser context (its own cookies and cache), or a new tab of ``browser`` when it is a
    context; either way its own Streamlit session. ``user_agent`` for a learner the class's proxy should tell apart
    from the others."""
    if hasattr(browser, "new_context"):
        options = {"user_agent": user_agent} if user_agent else {}
        pg = browser.new_context(viewport=VIEWPORT, **options).new_page()
    else:
        pg = browser.new_page()
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


@pytest.fixture(scope="session")
def _one_context(browser):
    """The browser context every test's tab opens in (a test worker's whole run), and the tab that keeps its
    renderer alive (opened by the first :func:`tabs`)."""
    context = browser.new_context(viewport=VIEWPORT)
    keeper: list = []
    yield context, keeper
    context.close()


@pytest.fixture
def tabs(_one_context, app_url):
    """One browser context for the tests of a test worker: each test gets its own tab, so its own Streamlit session
    and its own history. The tabs share the browser's cache, and one renderer process
    (tests.conftest.ONE_RENDERER_PER_SITE: a site is the host, whatever the port, so every app server here is one
    site), which a tab left open on a server's health address keeps alive between tests and between test files: a
    test's tab then opens the app without a new process compiling Streamlit's and plotly's scripts again. (A context
    per test file started that process once a file: eight small browser files alone, 110-113 CPU s of the whole
    machine that way, 80-97 with one context.)"""
    return _kept_alive(_one_context, app_url)


def _kept_alive(one_context, app_url):
    context, keeper = one_context
    if not keeper:
        keeper.append(context.new_page())
        keeper[0].goto(f"{app_url}/_stcore/health")
    return context


@pytest.fixture
def page(tabs, app_url):
    pg = new_page(tabs, app_url)
    yield pg
    _close_checked(pg)


@pytest.fixture(scope="module")
def tour(_one_context, app_url):
    """One tab, one Streamlit session, for a test file that walks through the pages as a learner does, from page to
    page through the sidebar (:func:`visit`): a switch inside the app costs the browser about 1 CPU s, a fresh load
    of the app 2-5 (six of each, measured over the whole machine: 5.9-6.3 CPU s against 15-22)."""
    pg = new_page(_kept_alive(_one_context, app_url), app_url)
    yield pg
    _close_checked(pg)


def visit(page, spec) -> None:
    """Open the page ``spec`` (an app.layout.PageSpec) through the sidebar when the app is on screen and well, by its
    address otherwise (the first page of a tour, or after a test that left an exception box)."""
    if page.url.startswith(page.base_url) and not page.locator(EXCEPTION).count():
        act(page, lambda: nav(page, spec.title).click())
        addresses = {f"{page.base_url}/{spec.url_path}"} | ({page.base_url} if spec.default else set())
        page.wait_for_url(lambda url: url.split("?")[0].rstrip("/") in addresses)
        page.wait_for_function(IDLE)
    else:
        goto(page, spec.url_path)


def _close_checked(pg) -> None:
    try:
        assert not pg.dialogs, f"a script dialog opened: {pg.dialogs}"
        if not pg.is_closed():
            assert_no_exception(pg)
    finally:
        pg.close()


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


def shots_asked() -> bool:
    """Whether this run keeps screenshots: SPECSIM_SHOTS names their folder, or SPECSIM_UPDATE_DOCS=1 refreshes the
    README's pictures from them. A plain test run takes none (a whole-page shot costs the browser about a second)."""
    return "SPECSIM_SHOTS" in os.environ or os.environ.get("SPECSIM_UPDATE_DOCS") == "1"


def screenshot(page, name: str, full_page: bool = True, always: bool = False) -> Path | None:
    """Save ``<SHOTS>/<name>.png`` when screenshots are asked for (:func:`shots_asked`) or ``always``; the whole page
    (Streamlit scrolls inside its main section). Returns the file, or None when no shot was taken."""
    if not (always or shots_asked()):
        return None
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


# ---- the calculator -------------------------------------------------------------------------------
K_LABEL, ALPHA_LABEL, C_LABEL = "K: tokens", "α: chance", "c: one draft pass"
C_NUMBER = _CALC_PARAMS["c"].number  # how the URL writes c


def slider(page, label: str):
    return page.locator("[data-testid='stSlider']", has_text=label)


def slider_value(page, label: str) -> str:
    return slider(page, label).locator("input[type='range']").input_value()


def settings(page) -> tuple[int, int, float]:
    """(K, α in percent, c) as the sliders show them."""
    return int(slider_value(page, K_LABEL)), int(slider_value(page, ALPHA_LABEL)), float(slider_value(page, C_LABEL))


def expected_metrics(k: int, alpha_pct: int, c: float, v: float = 1.0) -> list[str]:
    a = alpha_pct / 100
    return [
        f"{analytics.expected_accepted_prefix(a, k):.2f}",
        f"{analytics.tokens_per_loop(a, k):.2f}",
        f"{analytics.cost_per_loop(k, c, v):.2f}",
        f"{analytics.speedup(a, k, c, v):.2f}×",
    ]


def plot_trace(page, chart: int | None, name: str) -> dict:
    """x and y of one trace of the ``chart``-th plotly chart (None: the first chart that has a trace called
    ``name``), as plotly drew it in the page."""
    return page.evaluate(
        """([i, name]) => {
            const gds = Array.from(document.querySelectorAll('.js-plotly-plot'));
            const gd = i === null ? gds.find(g => g._fullData && g._fullData.some(d => d.name === name)) : gds[i];
            const t = gd._fullData.find(d => d.name === name);
            return {x: Array.from(t.x), y: Array.from(t.y)};
        }""",
        [chart, name],
    )


def svg_signature(page, chart: int) -> str:
    """The drawn shapes and texts of a chart (ids stripped), to see that it re-rendered differently."""
    return page.evaluate(
        """(i) => {
            const chart = document.querySelectorAll('[data-testid="stPlotlyChart"]')[i];
            return Array.from(chart.querySelectorAll('.main-svg path, .main-svg text, .main-svg image')).map(
                e => (e.getAttribute('d') || e.getAttribute('href') || '') + e.textContent).join('|');
        }""",
        chart,
    )


def wait_charts_drawn(page, k: int, alpha_pct: int) -> None:
    """Plotly draws after the (fragment) run ends: wait until the open tab's charts show (K, α).

    Each of the calculator's charts has one trace that names the setting it was drawn for; the open tab has
    at least one chart, and every chart on the page must show (K, α) (the tabs not open draw nothing)."""
    page.wait_for_function(
        """([k, a]) => {
            const gds = Array.from(document.querySelectorAll('.js-plotly-plot'));
            if (gds.length < 1 || gds.some(g => !g._fullData)) return false;
            const find = n => gds.map(g => g._fullData.find(d => d.name === n)).find(t => t);
            const drafts = find('draft proposals'), now = find('current settings'), dist = find('P(j = i)');
            const sweep = find('current K');
            return (!drafts || drafts.x.length === k) && (!now || (now.x[0] === k && now.y[0] === a))
                && (!dist || dist.x.length === k + 1) && (!sweep || sweep.x[0] === k);
        }""",
        arg=[k, alpha_pct], timeout=30_000,
    )


def open_tab(page, label: str) -> None:
    """Open the calculator's tab ``label`` (it reruns the page's fragment to draw it)."""
    act(page, lambda: page.get_by_role("tab", name=label, exact=True).click())


def check_page_matches_sliders(page, bare_address_ok: bool = False) -> tuple[int, int, float]:
    """Metrics, the open tab's plots and the URL agree with what the sliders show; return the sliders' values.

    ``bare_address_ok``: an address without the calculator's parameters passes too (Back onto the entry a page
    switch made leaves it as it was)."""
    k, alpha_pct, c = settings(page)
    wait_charts_drawn(page, k, alpha_pct)
    assert metrics(page) == expected_metrics(k, alpha_pct, c)
    a = alpha_pct / 100
    tab = page.get_by_role("tab", selected=True).inner_text().strip()
    if tab == "One loop":
        assert plot_trace(page, None, "draft proposals")["x"] == list(range(1, k + 1))
        dist = plot_trace(page, None, "P(j)")
        assert dist["y"] == pytest.approx(list(analytics.prefix_distribution(a, k)), abs=1e-12)
    elif tab == "Choosing K":
        sweep = plot_trace(page, None, "speedup")
        assert sweep["y"] == pytest.approx([analytics.speedup(a, kk, c) for kk in sweep["x"]], abs=1e-12)
        kept = plot_trace(page, None, "kept on average, E[j]")
        assert kept["y"] == pytest.approx([analytics.expected_accepted_prefix(a, kk) for kk in kept["x"]], abs=1e-12)
    elif tab == "Where it pays off":
        current = plot_trace(page, None, "current settings")
        assert (current["x"], current["y"]) == ([k], [alpha_pct])
    else:
        raise AssertionError(f"no check for the charts of tab {tab!r}")
    query = parse_qs(urlparse(page.url).query)
    if not {"k", "alpha", "c", "v"} & set(query):
        # a bare address: after Back onto the entry a page switch made, or at the lesson's example, which the page
        # does not write (issue 39 (8): a page switch is then one history entry)
        assert bare_address_ok or (k, alpha_pct, c) == (4, 70, 0.13), f"settings {k, alpha_pct, c} not in {page.url}"
        return k, alpha_pct, c
    assert (query["k"], query["alpha"], query["c"]) == ([str(k)], [str(alpha_pct)], [C_NUMBER.format(c)])
    return k, alpha_pct, c


def press_key(page, label: str, key: str, times: int = 1) -> None:
    thumb = slider(page, label).locator("input[type='range']")
    for _ in range(times):
        act(page, lambda: (thumb.focus(), page.keyboard.press(key)))


def drag(page, label: str, fraction: float) -> None:
    """Grab the slider's thumb with the mouse and drop it at ``fraction`` of the track's width."""
    thumb = slider(page, label).locator("[data-testid='stSliderThumbValue'] >> xpath=..")
    track = thumb.locator("xpath=..").bounding_box()
    box = thumb.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2

    def move() -> None:
        page.mouse.move(x, y)
        page.mouse.down()
        page.mouse.move(track["x"] + fraction * track["width"], y, steps=12)
        page.mouse.up()

    act(page, move)


# ---- the live page --------------------------------------------------------------------------------
LIVE_PROMPT = "one two three four one two three four one two"
RUN_TIMEOUT = 600_000  # the first run in a server process loads the model


def live_url(prompt: str = LIVE_PROMPT, n: int = 6, k: int = 3) -> str:
    return f"live?drafter=prompt_lookup&k={k}&n={n}&t=0&seed=0&prompt={quote(prompt)}"


def click(page, name: str, timeout: float = 60_000) -> None:
    act(page, lambda: page.get_by_role("button", name=name, exact=True).click(), timeout)


def run(page, timeout: float = RUN_TIMEOUT) -> None:
    click(page, "Run", timeout)


def download_trace(page) -> Trace:
    with page.expect_download() as info:
        page.get_by_role("button", name="Download the trace (JSON)").click()
    return Trace.from_json(Path(info.value.path()).read_text())


def shown_iteration(page) -> int:
    """The 0-based index of the iteration on screen, read from the 'Iteration i of n' line."""
    text = page.get_by_text("Iteration ", exact=False).filter(has_text=" of ").first.inner_text()
    return int(text.split("Iteration ")[1].split(" of ")[0]) - 1
