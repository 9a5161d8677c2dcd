"""Be the draft in a real browser: pick a guess from the target's top five, check it, read the score."""

from __future__ import annotations

from specsim.lesson import guess, recorded, replay
from tests.browser.conftest import act, click, goto, metrics


def test_a_right_guess_is_kept_and_scored(page):
    run = recorded.load(recorded.RECIPES[0].path)
    first = guess.target_tops(run.spec)[run.spec.n_prefilled][0]  # the target's own token after the prefill's
    goto(page, "live")
    slot = page.get_by_test_id("stRadio").filter(has_text="guess t+1")
    act(page, slot.get_by_text(replay.visible(first.text), exact=True).click)
    click(page, "Check my guesses")
    page.get_by_text("your acceptance α").wait_for()
    shown = metrics(page)
    assert "100%" in shown and any(v.endswith("×") for v in shown)
    assert page.get_by_text(f"✓ {replay.visible(first.text)}").count() >= 1


def test_the_next_loop_opens_on_stop_here_and_picks_stay_with_their_recording(page):
    """Issue 39 (1): after Check my guesses the next loop's radios showed no selection, a pick whose token came back
    stayed selected, and a pick made on one recording showed up on the other."""
    run = recorded.load(recorded.RECIPES[0].path)
    first = guess.target_tops(run.spec)[run.spec.n_prefilled][0]
    goto(page, "live")
    slot = page.get_by_test_id("stRadio").filter(has_text="guess t+1")
    act(page, slot.get_by_text(replay.visible(first.text), exact=True).click)
    click(page, "Check my guesses")
    page.get_by_text("your acceptance α").wait_for()
    for radio in page.get_by_test_id("stRadio").filter(has_text="guess t+").all():
        checked = radio.locator("input:checked")
        assert checked.count() == 1
        assert radio.locator("label", has=page.locator("input:checked")).inner_text().strip() == "(stop here)"
