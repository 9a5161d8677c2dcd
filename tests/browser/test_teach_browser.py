"""The teaching panels in a real browser: the live page's recorded run and its "Why this speed" panel, the
variants guide before any run, the verification page and "In practice"; each page screenshotted. One tab goes from
page to page through the sidebar, as a learner does (tests.browser.conftest.tour)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from app.layout import all_pages
from specsim.lesson import recorded, replay
from tests.browser.conftest import act, alerts, click, screenshot, shown_iteration, visit

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = {spec.url_path: spec for spec in all_pages()}


def _publish(shot: Path | None, name: str) -> None:
    """SPECSIM_UPDATE_DOCS=1 copies the screenshot into docs/ for the README."""
    if shot is not None and os.environ.get("SPECSIM_UPDATE_DOCS") == "1":
        DOCS.mkdir(exist_ok=True)
        shutil.copyfile(shot, DOCS / f"screenshot-{name}.png")


def test_live_page_opens_on_the_recording_and_explains_its_speed(tour):
    page = tour
    visit(page, PAGES["live"])
    run = recorded.load(recorded.RECIPES[0].path)
    assert replay.narrate(run.spec, 0) in alerts(page)  # the browser shows the text as typed
    assert page.get_by_text(run.label()).count() == 1
    click(page, "Forward ▶")
    assert shown_iteration(page) == 1
    heading = page.get_by_role("heading", name="Why this speed")
    heading.wait_for()
    page.wait_for_function("() => Array.from(document.querySelectorAll('.js-plotly-plot')).some("
                           "g => g._fullData && g._fullData.some(t => t.name === 'verification pass (v)'))")
    heading.scroll_into_view_if_needed()
    _publish(screenshot(page, "live-why-speed", full_page=False), "live-why-speed")


def test_the_slot_a_learner_picks_stays_picked_as_they_step(tour):
    """The slot radio's choice survives each step (tests/test_live_page.py says why it did not): on the recording, t+2
    picked on the first iteration is still the one chosen four iterations on, where its verdict has changed."""
    page = tour
    visit(page, PAGES["live"])
    if shown_iteration(page) != 0:
        click(page, "|◀ Restart")
    slots = page.locator("[data-testid='stRadio']").filter(has_text="Look closer at slot")
    act(page, lambda: slots.get_by_text("t+2", exact=True).click())
    for step in range(1, 5):
        click(page, "Forward ▶")
        assert shown_iteration(page) == step
        chosen = slots.evaluate("r => [...r.querySelectorAll('input')].filter(i => i.checked)"
                                ".map(i => i.closest('label').innerText.trim().split('\\n')[0])")
        assert chosen == ["t+2"], f"iteration {step + 1}: chosen {chosen}"


def test_variants_guide_before_any_run(tour):
    page = tour
    visit(page, PAGES["variants"])
    assert page.get_by_text("How each variant makes its guess").count() == 1
    page.get_by_text("Prompt lookup and inference with reference").click()
    page.wait_for_timeout(300)
    assert page.get_by_role("button", name="Run every variant on this prompt").count() == 1
    _publish(screenshot(page, "variants-guide"), "variants-guide")


def test_verification_page_measures_and_plots(tour):
    page = tour
    visit(page, PAGES["verify"])
    act(page, lambda: page.get_by_role("button", name="Measure v(n) on this machine (a few seconds)").click(),
        timeout=300_000)
    page.wait_for_function("() => Array.from(document.querySelectorAll('.js-plotly-plot')).some("
                           "g => g._fullData && g._fullData.some(t => t.name === 'measured v(n)'))")
    assert page.get_by_text("Open the calculator with v =").count() >= 1
    _publish(screenshot(page, "verify-free"), "verify-free")


def test_in_practice_page(tour):
    page = tour
    visit(page, PAGES["practice"])
    assert page.get_by_role("link", name="arXiv:2302.01318").count() == 1
    screenshot(page, "in-practice")
