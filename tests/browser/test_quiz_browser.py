"""Both quizzes in a real browser, answered the way a learner would: tapping steps, clicking options.

The right answers come from the quiz data through :mod:`specsim.lesson.quiz`, never from the page.
"""

from __future__ import annotations

import re

from specsim.lesson import quiz, quiz_attempts
from tests.browser.conftest import act, goto, screenshot


def button(page, text: str):
    """The one enabled-or-not button whose whole label is ``text``."""
    return page.get_by_role("button", name=text, exact=True)


def test_tap_mode_orders_a_round_and_a_misplaced_step_can_be_sent_back(page):
    from app.quiz import params as quiz_params

    seq = quiz.load_sequence()
    scenario = seq.scenario("greedy-refusal")
    start = quiz_attempts.new_round(seq, 0, scenario.id)
    goto(page, f"sequence?order={quiz_params.encode_sequence(start, seq)}")
    steps = [seq.piece(p) for p in scenario.order]
    cards = len(start.tray_order)
    stranger = seq.piece(sorted(scenario.left_out)[0])
    first, second = steps[0], steps[1]
    # A wrong placement first: the second step into slot 1, then tap it to send it back to the tray.
    act(page, lambda: button(page, second.text).click())
    act(page, lambda: page.get_by_role("button", name="1. Put the selected card here").click())
    act(page, lambda: button(page, f"1. {second.text}").click())
    assert button(page, second.text).is_visible(), "a placed step goes back to the tray when tapped"
    assert page.get_by_role("button", name=f"{cards}. Empty: pick a card first").is_visible()  # a slot per card
    for n, piece in enumerate([*steps, stranger], start=1):
        act(page, lambda piece=piece: button(page, piece.text).click())
        act(page, lambda n=n: page.get_by_role("button", name=f"{n}. Put the selected card here").click())
        assert button(page, f"{n}. {piece.text}").is_visible()
    assert page.get_by_text(f"{len(steps) + 1} of {cards} cards placed").is_visible()
    # A card too many: marked where it stands, and the order is not shown until asked for.
    act(page, lambda: page.get_by_role("button", name="Check my order").click())
    page.get_by_text(f"Not yet: {len(steps)} of your {len(steps) + 1} placed cards are in the right place.").wait_for()
    assert page.get_by_text("(not a step of this case)").count() == 1
    assert page.get_by_role("heading", name="The order of this round").count() == 0
    assert page.get_by_role("button", name="Show the answer").is_visible()
    screenshot(page, "sequence-tap-marked")
    act(page, lambda: button(page, f"{len(steps) + 1}. {stranger.text}").click())
    act(page, lambda: page.get_by_role("button", name="Check my order").click())
    page.get_by_text(f"Right: the {len(steps)} steps of this case, in order, and no other card.").wait_for()
    page.get_by_role("heading", name="The order of this round").wait_for()
    assert page.get_by_text(f"1. {first.text}").count() >= 1
    assert page.get_by_text("left in the tray, rightly").count() == len(scenario.left_out)
    assert page.get_by_text("order one round: solved").count() >= 1
    screenshot(page, "sequence-tap-checked")


def test_all_twenty_questions_answered_right_score_twenty_and_the_review_lists_them(page):
    seed = 4242  # a pristine attempt with a known seed, so the test knows the transfer questions' numbers
    questions = quiz.questions_for(quiz.load_knowledge(), seed)
    by_prompt = {q.prompt: q for q in questions}
    goto(page, f"quiz?kq={seed}.0.{'-' * len(questions)}")
    for n in range(1, len(questions) + 1):
        page.get_by_role("heading", name=f"Question {n} of {len(questions)}").wait_for()
        prompt = page.locator("h5").first.inner_text().strip()
        question = by_prompt[prompt]
        assert page.get_by_text(f"Score: {n - 1}", exact=True).is_visible()
        act(page, lambda q=question: button(page, q.correct_option).click())
        assert page.get_by_text("Right.", exact=True).is_visible()
        last = n == len(questions)
        act(page, lambda last=last: page.get_by_role("button", name="See my results" if last else "Next question")
            .click())
    page.get_by_role("heading", name=f"You scored {len(questions)} / {len(questions)}").wait_for()
    assert page.get_by_text("Every answer right.").is_visible()
    items = page.get_by_text(re.compile(r"^✅ \d+\. "))
    assert items.count() == len(questions)
    for q in questions:
        assert page.get_by_text(q.prompt, exact=False).count() >= 1
    screenshot(page, "quiz-review")
