"""The bad-input campaign's browser part (rows ``where == "browser"`` in tests/bad_inputs.py).

Hostile links typed into the address bar, a huge prompt and an out-of-range K typed into the live
page, and a run cancelled or left for another page half-way. Each case: a clear message, no
exception box, nothing the user entered or answered is lost, and a normal action works right after.
"""

from __future__ import annotations

import pytest

from tests.bad_inputs import BROWSER
from tests.browser.conftest import (
    ALERT,
    K_LABEL,
    RUN_TIMEOUT,
    act,
    alerts,
    check_page_matches_sliders,
    download_trace,
    expected_metrics,
    goto,
    live_url,
    metrics,
    nav,
    press_key,
    run,
    settings,
    shown_iteration,
)

CASES = {b.id: b for b in BROWSER}
LONG_RUN = 256  # tokens: long enough to still be running when we interrupt it


def box(page, label: str):
    """A text area or number field by its label."""
    return page.get_by_role("textbox", name=label, exact=True).or_(
        page.get_by_role("spinbutton", name=label, exact=True))


def type_into(page, label: str, text: str) -> None:
    """Type into a field and leave it (Tab), which is when Streamlit takes the value."""
    field = box(page, label)
    act(page, lambda: (field.fill(text), field.press("Tab")))


def identical_shown(page) -> None:
    """Wait for the greedy identity line of the run just finished.

    After a page switch mid-run, script runs that were already queued can finish between reading the run
    count and the click on Run, so act() may return before the new run is drawn: wait for what a learner
    waits for, the identity line."""
    page.locator(ALERT).filter(has_text="Identical").first.wait_for(timeout=RUN_TIMEOUT)


def told(page, expect: str) -> None:
    text = " ".join(alerts(page)).replace("`", "")
    assert expect in text, alerts(page)


@pytest.mark.parametrize("case_id", [c for c in CASES if c.startswith("browser-calc-")])
def test_hostile_calculator_link(page, case_id):
    case = CASES[case_id]
    goto(page, case.value["url"])
    told(page, case.expect)
    assert not page.dialogs, "no script from the link ran"
    k, alpha_pct, c = settings(page)
    assert alpha_pct == 55, "the good parameter of the same link is kept"
    assert metrics(page) == expected_metrics(k, alpha_pct, c)
    press_key(page, K_LABEL, "ArrowRight")  # a normal action right after (the charts are checked elsewhere)
    assert metrics(page) == expected_metrics(k + 1, alpha_pct, c)


def test_an_unknown_page_says_so_and_the_app_keeps_working(page):
    case = CASES["browser-unknown-page"]
    goto(page, case.value["url"])
    page.get_by_text(case.expect).wait_for(timeout=30_000)  # Streamlit's own notice, then the main page
    assert page.locator("h1").first.inner_text().startswith("Speculative decoding")
    page.keyboard.press("Escape")  # close the notice, as a person would
    page.get_by_text(case.expect).wait_for(state="hidden", timeout=30_000)
    act(page, lambda: nav(page, "Speedup calculator").click())
    check_page_matches_sliders(page)


def test_huge_prompt_and_bad_k_are_refused_and_kept_then_a_fix_runs(page):
    goto(page, live_url(n=3, k=2))
    prompt_box = box(page, "Prompt")
    huge = CASES["browser-live-huge-prompt-typed"]
    type_into(page, "Prompt", huge.value["prompt"])
    run(page)
    told(page, huge.expect)
    assert len(prompt_box.input_value()) == len(huge.value["prompt"]), "the typed prompt is not lost"
    type_into(page, "Prompt", "one two three one two three one two")
    bad_k = CASES["browser-live-k-typed-beyond"]
    type_into(page, "K: proposals per loop", bad_k.value["k"])
    run(page)
    told(page, bad_k.expect)
    assert prompt_box.input_value() == "one two three one two three one two"
    type_into(page, "K: proposals per loop", "2")
    run(page)  # a normal action right after
    identical_shown(page)
    trace = download_trace(page)
    assert trace.settings.k == 2


def _start_long_run(page, prompt: str) -> None:
    goto(page, live_url(prompt=prompt, n=LONG_RUN, k=2))
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_role("button", name="Cancel").wait_for(timeout=600_000)
    page.get_by_text("Speculative decoding:").wait_for(timeout=600_000)  # a first iteration is done


def test_cancel_in_the_middle_keeps_the_partial_run_and_the_settings(page):
    case = CASES["browser-live-cancel-mid-run"]
    prompt = "red green blue red green blue red green blue"
    _start_long_run(page, prompt)
    act(page, lambda: page.get_by_role("button", name="Cancel").click(), timeout=600_000)
    told(page, case.expect)
    partial = download_trace(page)
    assert 1 <= partial.n_generated < LONG_RUN and shown_iteration(page) == 0
    assert box(page, "Prompt").input_value() == prompt
    assert box(page, "K: proposals per loop").input_value() == "2", page.url  # settings kept too
    assert page.get_by_role("radio", name="prompt lookup (no second model)").is_checked(), page.url
    type_into(page, "Max new tokens", "3")
    run(page)  # a normal action right after
    identical_shown(page)


def test_leaving_for_another_page_mid_run_keeps_the_partial_run(page):
    case = CASES["browser-live-switch-page-mid-run"]
    prompt = "north south east west north south east west"
    _start_long_run(page, prompt)
    act(page, lambda: nav(page, case.value["action"]).click(), timeout=600_000)
    page.get_by_role("heading", name="Speedup calculator").wait_for()
    act(page, lambda: nav(page, "Live decoding").click(), timeout=600_000)
    told(page, case.expect)
    assert box(page, "Prompt").input_value() == prompt, "the prompt survives the page switch"
    partial = download_trace(page)
    assert prompt in partial.prompt and partial.n_generated < LONG_RUN
    type_into(page, "Max new tokens", "3")
    run(page)
    identical_shown(page)


NUMBER_BOXES = (("K: proposals per loop", "2"), ("Max new tokens", "3"), ("Temperature (0 = greedy)", "0"))


def test_letters_typed_into_a_number_box_are_named_and_kept(page):
    """Issue 23 (8): letters typed into K or Max new tokens became 0, and the message then named 0; typed into
    the temperature they became 0 too, and the run went greedy without a word. Each box in turn, on one page: the
    letters, Run, the message, then the box set right again before the next."""
    goto(page, live_url(n=3, k=2))
    for label, good in NUMBER_BOXES:
        field = box(page, label)
        field.click()
        page.keyboard.press("ControlOrMeta+a")
        act(page, lambda f=field: (page.keyboard.type("abc"), f.press("Tab")))
        run(page)
        told(page, f"“{label}” must be a")  # the box the learner typed into, not the URL's name
        told(page, "not 'abc'")
        assert field.input_value() == "abc", f"what was typed into {label} stays for the user to fix"
        type_into(page, label, good)
