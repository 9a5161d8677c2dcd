"""▶ Play must reach the last iteration, every time: ten fresh sessions, ten runs of different lengths.

Each session runs the bundled model with prompt lookup on a short budget (so each trace has its own
number of iterations), sets the fastest speed and presses Play. When the Play button comes back, the
page must show the last iteration, and keep showing it once every queued timer tick has been served.
"""

from __future__ import annotations

import pytest

from tests.browser.conftest import (
    IDLE,
    act,
    click,
    download_trace,
    goto,
    live_url,
    new_page,
    run,
    runs,
    shown_iteration,
    slider,
    wait_idle,
)
from tests.browser.server import running_app

BUDGETS = (2, 3, 4, 5, 6, 7, 8, 9, 10, 12)  # max new tokens, one run each


@pytest.fixture(scope="module")
def app_url():
    """A server of its own, so no earlier test's leftover run competes with the playback timer."""
    with running_app() as url:
        yield url


def test_play_reaches_the_last_iteration_of_ten_runs(browser, app_url):
    lengths = []
    for n_new in BUDGETS:
        page = new_page(browser, app_url)
        try:
            goto(page, live_url(n=n_new, k=1))
            run(page)
            before = runs(page)
            n = len(download_trace(page).iterations)
            wait_idle(page, before)  # the download button reruns the script
            lengths.append(n)
            if n < 2:
                continue  # nothing to play (Play is disabled)
            speed = slider(page, "iterations/s").locator("input[type='range']")
            act(page, lambda p=page, s=speed: (s.focus(), p.keyboard.press("End")))
            click(page, "▶ Play")
            page.get_by_role("button", name="▶ Play", exact=True).wait_for(timeout=60_000)
            page.wait_for_function(IDLE, timeout=60_000)
            page.wait_for_timeout(600)  # two more timer periods: a stale tick would have landed by now
            page.wait_for_function(IDLE, timeout=60_000)
            assert shown_iteration(page) == n - 1, f"run of {n} iterations stopped at {shown_iteration(page) + 1}"
            assert page.get_by_role("button", name="Forward ▶", exact=True).is_disabled()
        finally:
            page.context.close()
    assert len(set(lengths)) >= 5, f"the runs should differ in length: {lengths}"
