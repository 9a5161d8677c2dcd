"""The calculator as a person uses it: sliders moved with the mouse and the keyboard, shared links, bad links.

Expected numbers come from :mod:`specsim.analytics` for the values the sliders show on screen, and the
plots are read back from plotly's own data in the page, so a page wired to the wrong setting fails.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from specsim import analytics
from tests.browser.conftest import act, alerts, goto, metrics, screenshot

DOCS_SHOT = Path(__file__).resolve().parents[2] / "docs" / "screenshot-calculator.png"
K_LABEL, ALPHA_LABEL, C_LABEL = "K: tokens", "α: chance", "c: one draft pass"


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


def plot_trace(page, chart: int, name: str) -> dict:
    """x and y of one trace of the ``chart``-th plotly chart, as plotly drew it in the page."""
    return page.evaluate(
        """([i, name]) => {
            const gd = document.querySelectorAll('.js-plotly-plot')[i];
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
    """Plotly loads and draws after the script run ends: wait until all four charts show (K, α)."""
    page.wait_for_function(
        """([k, a]) => {
            const gds = document.querySelectorAll('.js-plotly-plot');
            if (gds.length < 4 || Array.from(gds).some(g => !g._fullData)) return false;
            const find = (g, n) => g._fullData.find(d => d.name === n);
            const drafts = find(gds[0], 'draft proposals'), now = find(gds[3], 'current settings');
            return drafts && now && drafts.x.length === k && now.x[0] === k && now.y[0] === a;
        }""",
        arg=[k, alpha_pct], timeout=30_000,
    )


def check_page_matches_sliders(page) -> tuple[int, int, float]:
    """Metrics, plots and URL agree with what the sliders show; return the sliders' values."""
    k, alpha_pct, c = settings(page)
    wait_charts_drawn(page, k, alpha_pct)
    assert metrics(page) == expected_metrics(k, alpha_pct, c)
    one_loop = plot_trace(page, 0, "draft proposals")
    assert one_loop["x"] == list(range(1, k + 1))
    sweep = plot_trace(page, 1, "speedup")
    ks = sweep["x"]
    assert sweep["y"] == pytest.approx([analytics.speedup(alpha_pct / 100, kk, c) for kk in ks], abs=1e-12)
    current = plot_trace(page, 3, "current settings")
    assert (current["x"], current["y"]) == ([k], [alpha_pct])
    query = parse_qs(urlparse(page.url).query)
    assert (query["k"], query["alpha"], query["c"]) == ([str(k)], [str(alpha_pct)], [f"{c:.2f}"])
    return k, alpha_pct, c


def press(page, label: str, key: str, times: int = 1) -> None:
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


def test_keyboard_arrows_move_each_slider_one_step_and_everything_follows(page):
    goto(page, "calculator")
    start = check_page_matches_sliders(page)
    charts = [svg_signature(page, i) for i in range(4)]
    press(page, K_LABEL, "ArrowRight", 2)
    press(page, ALPHA_LABEL, "ArrowLeft", 3)
    press(page, C_LABEL, "ArrowRight")
    k, alpha_pct, c = check_page_matches_sliders(page)
    assert (k, alpha_pct, round(c, 2)) == (start[0] + 2, start[1] - 3, round(start[2] + 0.01, 2))
    after = [svg_signature(page, i) for i in range(4)]
    assert all(a != b for a, b in zip(charts, after, strict=True)), "every chart re-rendered with new data"
    press(page, K_LABEL, "End")
    assert check_page_matches_sliders(page)[0] == analytics.K_MAX
    press(page, ALPHA_LABEL, "Home")
    assert check_page_matches_sliders(page)[1] == 0


def test_dragging_the_thumbs_with_the_mouse(page):
    goto(page, "calculator")
    before = metrics(page)
    drag(page, K_LABEL, 1.0)
    assert settings(page)[0] == 16
    drag(page, ALPHA_LABEL, 0.3)
    k, alpha_pct, c = check_page_matches_sliders(page)
    assert 25 <= alpha_pct <= 35, "the thumb lands where it was dropped"
    drag(page, C_LABEL, 0.0)
    k, alpha_pct, c = check_page_matches_sliders(page)
    assert c == 0.0 and k == 16
    assert metrics(page) != before


def test_a_shared_link_opens_with_its_settings(page):
    goto(page, "calculator?k=6&alpha=55&c=0.2")
    assert settings(page) == (6, 55, 0.2)
    check_page_matches_sliders(page)
    assert not alerts(page) or all("URL parameter" not in a for a in alerts(page))



def test_screenshots_of_the_calculator(page):
    """The whole page for out/screenshots, and the top of the page at the lesson's example for the README."""
    goto(page, "calculator?k=4&alpha=70&c=0.13")
    check_page_matches_sliders(page)
    screenshot(page, "calculator")
    page.set_viewport_size({"width": 1280, "height": 1000})
    page.wait_for_timeout(500)
    DOCS_SHOT.parent.mkdir(exist_ok=True)
    page.screenshot(path=str(DOCS_SHOT), full_page=False)
    assert DOCS_SHOT.stat().st_size < 400_000
