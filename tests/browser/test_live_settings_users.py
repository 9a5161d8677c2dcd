"""Three users run the live page at the same time on one server, each with their own K, drafter, temperature
and seed: each must get, on screen and in the downloaded trace, exactly their own settings.

The settings arrive through each user's link, all three runs are in flight at once, and the checks read what
each page shows after its run: the form's boxes, the "Recorded run: ..." line and the trace it offers. Nobody
sees another's prompt or output, the greedy user's output is identical to plain decoding, the server loads
each model once, and its memory does not grow by a model per user. Peak RSS and wall time go to
out/live-users.txt.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from app.urlcodec import number_text
from specsim.core import defaults
from tests.browser.conftest import SHOTS, alerts, assert_no_exception, download_trace, goto, new_page, runs, wait_idle
from tests.browser.server import SERVERS

N_NEW = 8


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


# What each drafter choice records as its kind: a standalone draft model runs as the "draft_model" drafter, while an
# EAGLE-style head (its draft.json says so) runs as its own drafter kind, "eagle".
_DRAFT_KIND = json.loads((Path(defaults.DEFAULT_DRAFT) / "draft.json").read_text())["kind"]
KIND = {"prompt_lookup": "prompt_lookup", "early_exit": "early_exit",
        "draft_model": "eagle" if _DRAFT_KIND == "eagle" else "draft_model"}
USERS = (User("zebra", "prompt_lookup", 2, 0.0, 0), User("quartz", "early_exit", 3, 0.7, 11),
         User("violin", "draft_model", 5, 1.3, 97))


class PeakRSS:
    """Samples a process's resident memory (with its children) in a background thread."""

    def __init__(self, pid: int, every_s: float = 0.1):
        self.proc, self.every_s = psutil.Process(pid), every_s
        self.peak = self.first = self._rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _rss(self) -> int:
        procs = [self.proc, *self.proc.children(recursive=True)]
        return sum(p.memory_info().rss for p in procs if p.is_running())

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            self.peak = max(self.peak, self._rss())

    def __enter__(self) -> PeakRSS:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def test_three_users_at_once_each_get_their_own_settings(tabs, app_url):
    pages = [new_page(tabs, app_url) for _ in USERS]  # three tabs: three sessions of the server
    try:
        for pg, user in zip(pages, USERS, strict=True):
            goto(pg, user.url())
        server = SERVERS[app_url]
        if "specsim loaded model" not in server.log_text():  # run alone: load the target first, measure after
            b = runs(pages[0])
            pages[0].get_by_role("button", name="Run", exact=True).click()
            wait_idle(pages[0], b, timeout=900_000)
        logged_before = len(server.log_text())  # other tests on this server may have loaded other models
        with PeakRSS(server.process.pid) as rss:
            start = time.perf_counter()
            before = [runs(pg) for pg in pages]
            for pg in pages:  # three runs in flight at once on the server
                pg.get_by_role("button", name="Run", exact=True).click()
            for pg, b in zip(pages, before, strict=True):
                wait_idle(pg, b, timeout=900_000)
                assert_no_exception(pg)
            elapsed = time.perf_counter() - start
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
            if user.temperature == 0:
                assert any(f"Identical: all {trace.n_generated} tokens match" in a for a in alerts(pg)), alerts(pg)
        # what the three runs loaded: the violin's draft, once for three sessions (nothing if already loaded); the
        # server may have loaded other models for earlier tests, or been restarted by one, before this test
        loads = [line for line in server.log_text()[logged_before:].splitlines() if "specsim loaded model" in line]
        assert len(loads) <= 1, loads
        one_model = 135e6 * 4  # SmolLM2-135M in float32
        assert rss.peak - rss.first < 2 * one_model, "memory grows with users: a model per session?"
    finally:
        for pg in pages:
            pg.close()
    SHOTS.parent.mkdir(parents=True, exist_ok=True)
    report = (f"users {len(USERS)}, {N_NEW} new tokens each: " + ", ".join(
                  f"{u.drafter} K={u.k} T={number_text(u.temperature)}" for u in USERS) + "\n"
              f"wall time from {len(USERS)} Run clicks to the last run finished: {elapsed:.1f} s\n"
              f"server RSS before: {rss.first / 2**20:.0f} MiB, peak: {rss.peak / 2**20:.0f} MiB\n"
              f"model loads in the server log: {len(loads)}\n")
    (SHOTS.parent / "live-users.txt").write_text(report)
    print(report)
