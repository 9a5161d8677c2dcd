"""Real browser: the drag-and-drop component loads offline and a full correct drag is graded right, the cards that
are not steps of the round left in the tray."""

from __future__ import annotations

import pytest

from app.quiz import params as quiz_params
from specsim.lesson import quiz, quiz_attempts
from tests.browser.conftest import assert_no_exception, goto, screenshot


def _link(seq, scenario: str, placed: dict[int, int] | None = None) -> str:
    """A link to a round of ``scenario``, step i of its order in slot ``placed[i]``."""
    sc = seq.scenario(scenario)
    attempt = quiz_attempts.new_round(seq, 0, scenario)
    for step, slot in (placed or {}).items():
        attempt = attempt.place(sc.order[step], slot)
    return quiz_params.encode_sequence(attempt, seq)


def _drag(page, source, target_box) -> None:
    box = source.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 5, y + 5, steps=3)  # past the sensor's activation distance
    page.mouse.move(target_box["x"] + target_box["width"] / 2, target_box["y"] + target_box["height"] - 4, steps=15)
    page.mouse.up()


def test_dragging_every_step_into_place_is_graded_right(page):
    expect = pytest.importorskip("playwright.sync_api").expect
    seq = quiz.load_sequence()
    scenario = seq.scenario("sampling-refusal")
    cards = len(scenario.order) + len(scenario.left_out)
    goto(page, f"sequence?order={_link(seq, scenario.id)}")
    page.get_by_text(scenario.setting).wait_for(timeout=30_000)
    page.get_by_text("Drag and drop").click()
    frame = page.frame_locator("iframe[title*='sortable']")
    for n, step in enumerate(scenario.order):
        frame.locator(".sortable-item").first.wait_for(timeout=30_000)
        answer = frame.locator(".sortable-container-body").nth(1)
        _drag(page, frame.locator(".sortable-item", has_text=seq.piece(step).text), answer.bounding_box())
        page.get_by_text(f"{n + 1} of {cards} cards placed").wait_for(timeout=15_000)
    page.get_by_role("button", name="Check my order").click()
    page.get_by_text(f"Right: the {len(scenario.order)} steps of this case, in order, and no other card.").wait_for(
        timeout=15_000)
    page.get_by_text("left in the tray, rightly").first.wait_for(timeout=15_000)
    screenshot(page, "sequence-checked")
    page.get_by_role("button", name="Reset and reshuffle").click()
    page.get_by_text(f"0 of {cards} cards placed").wait_for(timeout=15_000)
    expect(page.locator("iframe[title*='sortable']")).to_have_count(1, timeout=15_000)  # remounted
    frame.locator(".sortable-container-body").nth(0).locator(".sortable-item").nth(cards - 1).wait_for(timeout=15_000)
    assert_no_exception(page)


NUMBERS = """(body) => Array.from(body.querySelectorAll('.sortable-container')).map(c =>
    Array.from(c.querySelectorAll('.sortable-item')).map(i => getComputedStyle(i, '::before').content))"""


def _numbers(page) -> list[list[str]]:
    """The number drawn before each item of the tray and of "Your order" (none: 'none' or 'normal')."""
    frame = page.frame_locator("iframe[title*='sortable']")
    frame.locator(".sortable-item").first.wait_for(timeout=30_000)
    return frame.locator("body").evaluate(NUMBERS)


def test_the_numbers_sit_on_your_order_and_a_link_with_gaps_keeps_its_slot_numbers(page):
    """Issue 23 (3): the numbers 1-5 were drawn on the shuffled tray, and a link with gaps showed its steps
    in slots 2 and 4 as 1 and 2."""
    seq = quiz.load_sequence()
    sc = seq.scenario("greedy-all-kept")
    cards = len(sc.order) + len(sc.left_out)
    goto(page, f"sequence?order={_link(seq, sc.id, {2: 1, 4: 3})}")
    page.get_by_text("Drag and drop").click()
    page.get_by_text("slots 1 and 3 are empty").wait_for(timeout=30_000)
    tray, answer = _numbers(page)
    assert len(tray) == cards - 2 and all(n in ("none", "normal") for n in tray), tray
    assert answer == ['"2. "', '"4. "'], answer
    page.get_by_text("Reset and reshuffle").click()
    page.get_by_text(f"0 of {cards} cards placed").wait_for(timeout=15_000)
    expect = pytest.importorskip("playwright.sync_api").expect
    expect(page.locator("iframe[title*='sortable']")).to_have_count(1, timeout=15_000)  # the remounted list only
    frame = page.frame_locator("iframe[title*='sortable']")
    round_ = page.locator("[data-testid='stAlert']", has_text="This round:").first.inner_text()
    order = next(sc.order for sc in seq.scenarios if sc.setting in round_)
    for step in order[:2]:
        frame.locator(".sortable-item").first.wait_for(timeout=30_000)
        _drag(page, frame.locator(".sortable-item", has_text=seq.piece(step).text),
              frame.locator(".sortable-container-body").nth(1).bounding_box())
        page.wait_for_timeout(500)
    page.get_by_text(f"2 of {cards} cards placed").wait_for(timeout=15_000)
    tray, answer = _numbers(page)
    assert all(n in ("none", "normal") for n in tray) and answer == ['"1. "', '"2. "'], (tray, answer)
    assert_no_exception(page)
