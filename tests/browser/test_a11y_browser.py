"""Every page in a real browser: it opens without an exception box, and it is accessible (issue 51, item 5):
axe-core on every page, a text alternative for every chart, and the live page worked with the keyboard alone.

Each page is opened once at a laptop's width (1024 px, where the wider code blocks and formulas scroll sideways),
its folded sections opened (the charts' data tables included), the window made as tall as the page so that
nothing is clipped by the viewport, and axe-core (pinned through axe-playwright-python) checks every WCAG 2.1 A and
AA rule. Before the fix, every page failed on the captions' contrast (3.88:1), the hood page on its code blocks (a
keyboard could not scroll them, and their tokens were 2.96:1 to 3.8:1), the live page on inline code (3.03:1) and
the 'never checked' chip (2.5:1), and no chart had a text alternative.
"""

from __future__ import annotations

import pytest
from axe_playwright_python.sync_playwright import Axe

from app.layout import all_pages
from tests.browser.conftest import (
    RUN_TIMEOUT,
    act,
    assert_no_exception,
    goto,
    live_url,
    screenshot,
    shown_iteration,
    visit,
)

WIDTH = 1024
WCAG_21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]

# Streamlit 1.67's own sidebar navigation, which no page of the app draws: with sections (st.navigation with a dict)
# its <ul data-testid="stSidebarNavItems"> wraps each section's <li> items in a <div>, so axe reports "list" (a list
# with <div> children) and "listitem" (an <li> outside a list). Only these two rules, only inside that element, are
# left out; docs/testing.md lists them. Everything else in the navigation is checked.
STREAMLIT_NAV = "[data-testid='stSidebarNavItems']"
STREAMLIT_NAV_RULES = ["list", "listitem"]

AXE = Axe()


def axe_violations(page) -> list[dict]:
    """WCAG 2.1 A/AA violations on the page, but the two of Streamlit's navigation named above."""
    everything_else = AXE.run(page, options={
        "runOnly": {"type": "tag", "values": WCAG_21_AA}, "resultTypes": ["violations"],
        "rules": {rule: {"enabled": False} for rule in STREAMLIT_NAV_RULES}}).response["violations"]
    outside_nav = AXE.run(page, context={"exclude": [[STREAMLIT_NAV]]}, options={
        "runOnly": {"type": "rule", "values": STREAMLIT_NAV_RULES},
        "resultTypes": ["violations"]}).response["violations"]
    return everything_else + outside_nav


def report(violations: list[dict]) -> str:
    lines = []
    for v in violations:
        lines.append(f"{v['id']} ({v['impact']}): {v['help']}, {len(v['nodes'])} element(s)")
        for node in v["nodes"][:5]:
            why = (node.get("any") or node.get("all") or node.get("none") or [{}])[0].get("message", "")
            lines.append(f"    {node['html'][:120]}  {why[:160]}")
    return "\n".join(lines)


def open_every_fold(page) -> None:
    """Open every st.expander (a click on its summary; no script run), so axe sees what is folded inside."""
    page.evaluate("""() => document.querySelectorAll("[data-testid='stExpander'] details:not([open]) > summary")
                           .forEach(s => s.click())""")


def as_tall_as_the_page(page) -> None:
    height = page.evaluate("() => document.querySelector(\"[data-testid='stMain']\")?.scrollHeight || 0")
    page.set_viewport_size({"width": WIDTH, "height": max(768, min(int(height), 12_000))})
    page.wait_for_timeout(500)  # plotly redraws at the new size; new code blocks get their tabindex


@pytest.mark.parametrize("spec", all_pages(), ids=lambda p: p.url_path)
def test_every_page_opens_with_no_wcag_violation_and_every_chart_described(tour, spec):
    """Each page opens under its title without an exception box, folds open too, then axe. The pages are visited in
    the sidebar's order in one tab, each through the sidebar's link, as a learner goes (the first by its address)."""
    page = tour
    page.set_viewport_size({"width": WIDTH, "height": 768})
    visit(page, spec)
    assert page.locator("h1").first.inner_text().strip()
    open_every_fold(page)
    as_tall_as_the_page(page)
    assert_no_exception(page)
    screenshot(page, spec.url_path)  # with SPECSIM_SHOTS: every page, folds open, for a reader of the pages
    violations = axe_violations(page)
    assert not violations, f"{spec.url_path}:\n{report(violations)}"
    charts = page.locator("[data-testid='stPlotlyChart']")
    for i in range(charts.count()):  # each chart is a figure named by its description, its data folded under it
        chart = charts.nth(i)
        assert chart.get_attribute("role") == "figure"
        assert len(chart.get_attribute("aria-label") or "") > 20, chart.get_attribute("aria-label")


def test_the_live_page_works_with_the_keyboard_alone(page):
    """Tab reaches Run, Forward, Back and Play, and Enter or Space presses each (no mouse, no click())."""
    goto(page, live_url(n=6, k=1))

    def tab_to(label: str, backwards: bool = False, most: int = 120) -> None:
        for _ in range(most):
            if page.evaluate("() => document.activeElement?.innerText?.trim() || ''") == label:
                return
            page.keyboard.press("Shift+Tab" if backwards else "Tab")
        raise AssertionError(f"{most} presses of Tab did not reach {label!r}")

    tab_to("Run")
    act(page, lambda: page.keyboard.press("Enter"), RUN_TIMEOUT)
    page.get_by_text("Iteration 1 of ", exact=False).first.wait_for()
    tab_to("Forward ▶")
    act(page, lambda: page.keyboard.press("Space"))
    assert shown_iteration(page) == 1
    tab_to("◀ Back", backwards=True)
    act(page, lambda: page.keyboard.press("Enter"))
    assert shown_iteration(page) == 0
    tab_to("▶ Play")
    act(page, lambda: page.keyboard.press("Space"))
    page.wait_for_function("() => !/Iteration 1 of/.test(document.body.innerText)", timeout=60_000)
    assert shown_iteration(page) > 0
