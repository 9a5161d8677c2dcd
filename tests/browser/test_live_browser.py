"""The live page in a real browser with the bundled model: run, step, play to the end, hover a token.

The run's own trace is downloaded from the page (its export button) and is what the chips, the
narration and the tooltips are checked against.
"""

from __future__ import annotations

import pytest

from specsim.lesson import replay
from tests.browser.conftest import (
    IDLE,
    alerts,
    click,
    download_trace,
    goto,
    live_url,
    plot_trace,
    run,
    screenshot,
    shown_iteration,
)
from tests.browser.server import running_app

# Prompt lookup copies from this prompt within the first loops (with the bundled target in bfloat16 its answer
# starts "One two three four"), so a drafted chip is there to hover.
DRAFTING_PROMPT = "Repeat after me: one two three four one two three four"


@pytest.fixture(scope="module")
def app_url():
    """A server of its own: runs left going by earlier tests' cancel and page-switch cases must not
    compete with this run's playback timer for the two cores."""
    with running_app() as url:
        yield url


def test_run_step_play_to_the_end_and_hover_a_token(page):
    goto(page, live_url(DRAFTING_PROMPT))
    run(page)
    trace = download_trace(page)
    n = len(trace.iterations)
    assert DRAFTING_PROMPT in trace.prompt and trace.settings.k == 3 and n >= 2
    assert any(f"Identical: all {trace.n_generated} tokens match" in a for a in alerts(page))
    assert replay.narrate(trace, 0) in alerts(page)
    screenshot(page, "live-run")

    click(page, "Forward ▶")
    assert shown_iteration(page) == 1 and replay.narrate(trace, 1) in alerts(page)
    click(page, "◀ Back")
    assert shown_iteration(page) == 0

    click(page, "▶ Play")  # the timer steps on its own until the last iteration, then the button reads Play again
    page.get_by_text(f"Iteration {n} of {n}").wait_for(timeout=60_000)
    page.get_by_role("button", name="▶ Play", exact=True).wait_for(timeout=30_000)
    # The button is drawn before the run that stops the timer has finished: let it finish, and any timer tick
    # already on its way land, so the next click's run is the one the test waits for.
    page.wait_for_function(IDLE, timeout=60_000)
    page.wait_for_timeout(600)
    page.wait_for_function(IDLE, timeout=60_000)
    assert replay.narrate(trace, n - 1) in alerts(page)

    # Hover a draft token: go to the first iteration that drafted anything (prompt lookup may find nothing).
    click(page, "|◀ Restart")
    first = next(i for i, it in enumerate(trace.iterations) if it.slots)
    for _ in range(first):
        click(page, "Forward ▶")
    assert shown_iteration(page) == first
    chip = page.locator(".sx-chip[title*='slot t+1']").first
    chip.hover()
    title = chip.get_attribute("title")
    slot = trace.iterations[first].slots[0]
    assert slot.copied  # prompt lookup's guesses are copies: no draft pass, q = 1 (issue 51)
    assert f"p(x) = {slot.p:.4f} (target)" in title
    assert "copied from earlier in the text, not drafted: q(x) = 1" in title
    # The prefill's token leads the generated text, and its tooltip says where it came from.
    prefilled = page.locator(".sx-chip.sx-output[title*='chosen by the prefill']")
    assert prefilled.count() == 1 and trace.first is not None
    assert replay.visible(trace.first.text).replace("␣", "") in prefilled.inner_text().replace("␣", "")


def test_the_step_box_behind_the_iteration_header_is_hidden(page):
    """The header's box only tells the server which step is on screen (issue 51): the learner reads its label, never
    a box holding '0' (Streamlit 1.67 renamed the element the old CSS hid, and the box showed)."""
    goto(page, "live")
    box = page.locator(".st-key-live_step_seen_box")
    assert box.get_by_text("Iteration 1 of").is_visible()
    assert not box.get_by_test_id("stTextInputField").is_visible()


def test_a_tree_run_draws_each_loops_tree_with_its_verdicts_and_the_plus_one(page):
    """Issue 64, item 2, in the browser: a tree run from a link, then each iteration's tree as plotly drew it: one
    marker per node of the recorded tree, in the series of its verdict, and the +1 token's diamond."""
    from urllib.parse import quote

    from app.live.tree_figure import NAME, PLUS_ONE

    goto(page, f"live?drafter=draft_model&policy=tree&tree=6&depth=3&n=6&t=0&seed=0&prompt={quote(DRAFTING_PROMPT)}")
    run(page)
    trace = download_trace(page)
    assert trace.settings.tree == (6, 3, 3) and all(it.tree is not None for it in trace.iterations)
    for step, it in enumerate(trace.iterations[:2]):
        if step:
            click(page, "Forward ▶")
        assert replay.narrate(trace, step) in alerts(page)
        title = f"This loop's tree: {len(it.tree.nodes) - 1} guesses scored in one pass of {it.tree.width_read} tokens"
        page.locator("[data-testid='stPlotlyChart']").filter(has_text=title).first.wait_for(timeout=30_000)
        drawn = {status: len(plot_trace(page, None, name)["x"]) for status, name in NAME.items()
                 if any(n.status == status for n in it.tree.nodes)}
        assert drawn == {status: sum(n.status == status for n in it.tree.nodes) for status in drawn}
        assert sum(drawn.values()) == len(it.tree.nodes)
        assert len(plot_trace(page, None, PLUS_ONE)["x"]) == 1
