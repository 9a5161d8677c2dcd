"""Five people use the live page at the same time, each in their own browser context (own session).

Each must get a correct trace for their own prompt (greedy output identical to plain decoding, as the
page's identity check says), nobody may see anyone else's prompt or output, and the server must load
the model once and keep its memory bounded. Peak RSS and wall time go to out/live-users.txt.
"""

from __future__ import annotations

import threading
import time

import psutil

from tests.browser.conftest import (
    SHOTS,
    alerts,
    assert_no_exception,
    download_trace,
    goto,
    live_url,
    new_page,
    runs,
    wait_idle,
)
from tests.browser.server import SERVERS

WORDS = ("zebra", "quartz", "violin", "tundra", "saffron")  # one per user, unlikely in another's output
N_NEW = 3


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


def test_five_users_at_once_each_see_their_own_correct_run(browser, app_url):
    server = SERVERS[app_url]
    prompts = [f"{w} one two {w} one two {w} one two" for w in WORDS]
    pages = [new_page(browser, app_url) for _ in WORDS]
    try:
        for pg, prompt in zip(pages, prompts, strict=True):
            goto(pg, live_url(prompt, n=N_NEW, k=2))
        if "specsim loaded model" not in server.log_text():  # run alone: load the model first, measure after
            b = runs(pages[0])
            pages[0].get_by_role("button", name="Run", exact=True).click()
            wait_idle(pages[0], b, timeout=900_000)
        with PeakRSS(server.process.pid) as rss:
            start = time.perf_counter()
            before = [runs(pg) for pg in pages]
            for pg in pages:  # five runs in flight at once on the server
                pg.get_by_role("button", name="Run", exact=True).click()
            for pg, b in zip(pages, before, strict=True):
                wait_idle(pg, b, timeout=900_000)
                assert_no_exception(pg)
            elapsed = time.perf_counter() - start
        for pg, word, prompt in zip(pages, WORDS, prompts, strict=True):
            trace = download_trace(pg)
            assert prompt in trace.prompt
            assert any(f"Identical: all {trace.n_generated} tokens match" in a for a in alerts(pg)), alerts(pg)
            shown = pg.locator("[data-testid='stMain']").inner_text()
            others = [w for w in WORDS if w != word]
            assert not any(w in trace.prompt or w in trace.text or w in shown for w in others)
        loads = [line for line in server.log_text().splitlines() if "specsim loaded model" in line]
        assert len(loads) <= 1, loads  # once per process (none here if an earlier test loaded it)
        one_model = 135e6 * 4  # SmolLM2-135M in float32
        assert rss.peak - rss.first < 2 * one_model, "memory grows with users: a model per session?"
    finally:
        for pg in pages:
            pg.context.close()
    SHOTS.parent.mkdir(parents=True, exist_ok=True)
    report = (f"users {len(WORDS)}, {N_NEW} new tokens each, prompt lookup K=2\n"
              f"wall time from five Run clicks to the last run finished: {elapsed:.1f} s\n"
              f"server RSS before: {rss.first / 2**20:.0f} MiB, peak: {rss.peak / 2**20:.0f} MiB\n"
              f"model loads in the server log: {len(loads)}\n")
    (SHOTS.parent / "live-users.txt").write_text(report)
    print(report)
