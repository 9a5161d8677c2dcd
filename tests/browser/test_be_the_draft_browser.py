"""Be the draft in a real browser: pick a guess from the target's top five, check it, read the score."""

from __future__ import annotations

from specsim import guess, recorded, replay
from tests.browser.conftest import act, click, goto, metrics


def test_a_right_guess_is_kept_and_scored(page):
    run = recorded.load(recorded.RECIPES[0].path)
    first = guess.target_tops(run.spec)[0][0]  # the target's own first token
    goto(page, "live")
    slot = page.get_by_test_id("stRadio").filter(has_text="guess t+1")
    act(page, slot.get_by_text(replay.visible(first.text), exact=True).click)
    click(page, "Check my guesses")
    page.get_by_text("your acceptance α").wait_for()
    shown = metrics(page)
    assert "100%" in shown and any(v.endswith("×") for v in shown)
    assert page.get_by_text(f"✓ {replay.visible(first.text)}").count() >= 1
