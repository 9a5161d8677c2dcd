"""The live page in a real browser with the bundled model: run, step, play to the end, hover a token.

The run's own trace is downloaded from the page (its export button) and is what the chips, the
narration and the tooltips are checked against.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from specsim import replay
from specsim.trace import Trace
from tests.browser.conftest import act, alerts, goto, screenshot

PROMPT = "one two three four one two three four one two"
RUN_TIMEOUT = 600_000  # the first run in a server process loads the model


def live_url(prompt: str = PROMPT, n: int = 6, k: int = 3) -> str:
    return f"live?drafter=prompt_lookup&k={k}&n={n}&t=0&seed=0&prompt={quote(prompt)}"


def press(page, name: str, timeout: float = 60_000) -> None:
    act(page, lambda: page.get_by_role("button", name=name, exact=True).click(), timeout)


def run(page, timeout: float = RUN_TIMEOUT) -> None:
    press(page, "Run", timeout)


def download_trace(page) -> Trace:
    with page.expect_download() as info:
        page.get_by_role("button", name="Download the trace (JSON)").click()
    return Trace.from_json(Path(info.value.path()).read_text())


def shown_iteration(page) -> int:
    """The 0-based index of the iteration on screen, read from the 'Iteration i of n' line."""
    text = page.get_by_text("Iteration ", exact=False).filter(has_text=" of ").first.inner_text()
    return int(text.split("Iteration ")[1].split(" of ")[0]) - 1


def test_run_step_play_to_the_end_and_hover_a_token(page):
    goto(page, live_url())
    run(page)
    trace = download_trace(page)
    n = len(trace.iterations)
    assert PROMPT in trace.prompt and trace.settings.k == 3 and n >= 2
    assert any(f"Identical: all {trace.n_generated} tokens match" in a for a in alerts(page))
    assert replay.narrate(trace, 0) in alerts(page)
    screenshot(page, "live")

    press(page, "Forward ▶")
    assert shown_iteration(page) == 1 and replay.narrate(trace, 1) in alerts(page)
    press(page, "◀ Back")
    assert shown_iteration(page) == 0

    press(page, "▶ Play")  # the timer steps on its own until the last iteration, then the button reads Play again
    page.get_by_text(f"Iteration {n} of {n}").wait_for(timeout=60_000)
    page.get_by_role("button", name="▶ Play", exact=True).wait_for(timeout=30_000)
    assert replay.narrate(trace, n - 1) in alerts(page)

    # Hover a draft token: go to the first iteration that drafted anything (prompt lookup may find nothing).
    press(page, "|◀ Restart")
    first = next(i for i, it in enumerate(trace.iterations) if it.slots)
    for _ in range(first):
        press(page, "Forward ▶")
    assert shown_iteration(page) == first
    chip = page.locator(".sx-chip[title*='slot t+1']").first
    chip.hover()
    title = chip.get_attribute("title")
    slot = trace.iterations[first].slots[0]
    assert f"p(x) = {slot.p:.4f} (target)" in title and f"q(x) = {slot.q:.4f} (draft)" in title
