"""Three users run the live page at the same time on one server, each with their own K, drafter, temperature
and seed (issue 23, item 4): each must get, on screen and in the downloaded trace, exactly their own settings.

The settings arrive through each user's link, all three runs are in flight at once, and the checks read what
each page shows after its run: the form's boxes, the "Recorded run: ..." line and the trace it offers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from app.urlcodec import number_text
from specsim import defaults
from tests.browser.conftest import assert_no_exception, download_trace, goto, new_page, runs, wait_idle

N_NEW = 16


@dataclass(frozen=True)
class User:
    word: str  # in the prompt, and in nobody else's
    drafter: str
    k: int
    temperature: float
    seed: int

    @property
    def prompt(self) -> str:
        return f"{self.word} one two {self.word} one two {self.word} one two"

    def url(self) -> str:
        return (f"live?drafter={self.drafter}&k={self.k}&n={N_NEW}&t={number_text(self.temperature)}"
                f"&seed={self.seed}&prompt={self.prompt.replace(' ', '%20')}")


# What each drafter choice records as its kind: the bundled pair's draft model is a trained head whose own kind
# (its draft.json) the trace keeps, e.g. "eagle".
KIND = {"prompt_lookup": "prompt_lookup", "early_exit": "early_exit",
        "model": json.loads((Path(defaults.DEFAULT_DRAFT) / "draft.json").read_text())["kind"]}
USERS = (User("zebra", "prompt_lookup", 2, 0.0, 0), User("quartz", "early_exit", 3, 0.7, 11),
         User("violin", "model", 5, 1.3, 97))


def test_three_users_at_once_each_get_their_own_settings(browser, app_url):
    pages = [new_page(browser, app_url) for _ in USERS]
    try:
        for pg, user in zip(pages, USERS, strict=True):
            goto(pg, user.url())
        before = [runs(pg) for pg in pages]
        for pg in pages:  # three runs in flight at once on the server
            pg.get_by_role("button", name="Run", exact=True).click()
        for pg, b in zip(pages, before, strict=True):
            wait_idle(pg, b, timeout=900_000)
            assert_no_exception(pg)
        for pg, user in zip(pages, USERS, strict=True):
            trace = download_trace(pg)
            s = trace.settings
            assert (s.drafter, s.k, s.temperature, s.seed, s.max_new_tokens) == (
                KIND[user.drafter], user.k, user.temperature, user.seed, N_NEW), (user, s)
            assert user.prompt in trace.prompt
            boxes = {label: pg.get_by_role("textbox", name=label, exact=True).input_value()
                     for label in ("K: proposals per loop", "Temperature (0 = greedy)", "Seed", "Max new tokens")}
            assert boxes == {"K: proposals per loop": str(user.k), "Temperature (0 = greedy)":
                             number_text(user.temperature), "Seed": str(user.seed), "Max new tokens": str(N_NEW)}
            shown = pg.locator("[data-testid='stMain']").inner_text()
            assert (f"K = {user.k}, temperature {number_text(user.temperature)}, seed {user.seed}") in shown
            others = [u.word for u in USERS if u is not user]
            assert not any(w in trace.prompt or w in trace.text or w in shown for w in others)
    finally:
        for pg in pages:
            pg.context.close()
