"""Predict, then see, in a real browser: with the sidebar's "Show answers without guessing" off, the calculator hides
the best K until a guess is submitted, then compares; the guess is remembered when the learner comes back.

The test server starts with the switch on (tests/conftest.py sets SPECSIM_SHOW_ANSWERS=1 for the pages the other
browser tests read); this test turns it off the way a learner would, with the sidebar's toggle.
"""

from __future__ import annotations

from specsim.measure import analytics
from tests.browser.conftest import act, alerts, goto

BANNER = "The best K for these settings is"


def test_the_calculator_asks_for_a_guess_before_the_best_k_and_compares_after(page):
    goto(page, "calculator")
    assert any(BANNER in a for a in alerts(page)), "the switch starts on in the test server"
    switch = page.get_by_test_id("stSidebar").get_by_text("Show answers without guessing")
    act(page, switch.click)
    assert not any(BANNER in a for a in alerts(page))
    form = page.get_by_test_id("stForm")
    assert "Predict first." in form.inner_text()

    form.get_by_label("best K").fill("9")
    form.get_by_label("its speedup, ×").fill("3")
    act(page, lambda: form.get_by_role("button", name="Check my guess").click())
    best = analytics.optimal_k(0.70, 0.13)
    shown = alerts(page)
    assert any(f"the best is K = {best}" in a for a in shown), shown
    assert any(BANNER in a for a in shown)
    sidebar = page.get_by_test_id("stSidebar").inner_text()
    assert "Predictions: 1 made, 0 close." in sidebar

    act(page, lambda: page.get_by_test_id("stSidebarNavItems").get_by_role("link", name="The idea").click())
    act(page, lambda: page.get_by_test_id("stSidebarNavItems").get_by_role("link", name="Speedup calculator").click())
    assert any(f"the best is K = {best}" in a for a in alerts(page)), "the guess is kept for the session"
