"""The variants page in a real browser: every variant runs on the bundled target and the results show."""

from __future__ import annotations

import pytest

from tests.browser.conftest import act, alerts, goto, nav, screenshot

RUN_TIMEOUT = 900_000


@pytest.mark.slow  # about 100 s on a busy 2-core machine; the default run only opens the page (shell test)
def test_variants_run_and_show_their_results(page):
    goto(page, "variants")
    tokens = page.locator("[data-testid='stSlider']", has_text="New tokens per variant").locator("input[type='range']")
    act(page, lambda: (tokens.focus(), page.keyboard.press("Home")))  # the fewest tokens: 8
    assert tokens.input_value() == "8"
    act(page, lambda: page.get_by_role("button", name="Run every variant on this prompt").click(), RUN_TIMEOUT)
    page.get_by_role("heading", name="Side by side").wait_for(timeout=60_000)
    assert not any(a.startswith("Press the button") for a in alerts(page))
    table = page.locator("[data-testid='stTable'], [data-testid='stDataFrame']").first
    assert table.is_visible()
    screenshot(page, "variants-run")


def test_leaving_mid_run_and_coming_back_says_the_run_was_cancelled(page):
    """Issue 23 (6): the page came back to its pre-run box without a word that the run had been cancelled."""
    goto(page, "variants")
    page.get_by_role("button", name="Run every variant on this prompt").click()
    page.locator("[data-testid='stProgress']").first.wait_for(timeout=RUN_TIMEOUT)
    act(page, lambda: nav(page, "Speedup calculator").click(), RUN_TIMEOUT)
    page.get_by_role("heading", name="Speedup calculator").wait_for(timeout=RUN_TIMEOUT)
    act(page, lambda: nav(page, "Variants").click(), RUN_TIMEOUT)
    page.get_by_text("Cancelled: the run on the prompt").wait_for(timeout=60_000)
    assert any(a.startswith("Press the button") for a in alerts(page))
