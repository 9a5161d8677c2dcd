"""A class in real browsers (issue 40): two app replicas behind nginx, two queue workers, one Redis, all started
by scripts/classroom.py (``make class``), real plain processes. nginx keeps a browser on one replica and spreads
browsers over both; a run submitted to the class's Redis is served by a worker; four learners, two on each replica,
press Run within a second with different settings: each gets exactly their own run, and the places in the queue
each one is shown never move backwards. Stopping the class stops every process."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import time
from urllib.parse import quote
from urllib.request import Request, urlopen

import psutil
import pytest
from rq import Queue
from rq.registry import StartedJobRegistry

from specsim.classroom import jobs, records
from specsim.request import RunRequest
from tests.browser.conftest import IDLE, assert_no_exception, download_trace, goto, new_page
from tests.class_hold import hold
from tests.conftest import ROOT, require_class_binaries, tidy_class_folder

_spec = importlib.util.spec_from_file_location("specsim_classroom", ROOT / "scripts" / "classroom.py")
classroom = sys.modules.setdefault("specsim_classroom", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(classroom)

LEARNERS = [  # (prompt, K, seed): four different runs
    ("one two three one two three one two", 1, 0),
    ("red green blue red green blue red green", 2, 1),
    ("cat dog cat dog cat dog cat dog", 3, 2),
    ("up down up down up down up down", 2, 3),
]
N_NEW = 3
PLACE = re.compile(r"number (\d+) in the queue")
CLICK_RUN = "() => [...document.querySelectorAll('button')].find(b => b.innerText.trim() === 'Run').click()"
CLICK_RUN_AT = ("(at) => setTimeout(() => { window.specsimClickedAt = Date.now(); (" + CLICK_RUN + ")(); }, "
                "Math.max(0, at - Date.now()))")


@pytest.fixture(scope="module")
def room(request):
    require_class_binaries()
    with classroom.classroom(workers=2, replicas=2, env={"OMP_NUM_THREADS": "1"}) as started:
        yield started
        pids = started.pids()
    assert started.supervisor.poll() is not None and not any(psutil.pid_exists(pid) for pid in pids.values()), \
        "a process outlived the class"
    tidy_class_folder(request, started)


def _replica_of(url: str, agent: str) -> str:
    with urlopen(Request(f"{url}/_stcore/health", headers={"User-Agent": agent}), timeout=10) as response:
        return response.headers["X-Specsim-Replica"]


def _agents(room, per_replica: int = 2) -> list[str]:
    """User agents nginx sends to each replica in turn: two learners on each of the two replicas."""
    by_replica: dict[str, list[str]] = {}
    for i in range(64):
        agent = f"Mozilla/5.0 specsim-learner-{i}"
        by_replica.setdefault(_replica_of(room.url, agent), []).append(agent)
    assert len(by_replica) == 2, by_replica.keys()
    picked = [agents[:per_replica] for agents in by_replica.values()]
    return [agent for pair in zip(*picked, strict=True) for agent in pair]


def test_nginx_keeps_a_browser_on_one_replica_and_spreads_browsers_over_both(room):
    behind = {replica.removeprefix("http://") for replica in room.replicas}
    seen = {agent: {_replica_of(room.url, agent) for _ in range(3)} for agent in (f"learner-{i}" for i in range(12))}
    assert all(len(replicas) == 1 for replicas in seen.values()), seen  # sticky
    assert set().union(*seen.values()) == behind  # twelve browsers reach both replicas


def test_a_run_submitted_to_the_class_is_served_by_a_worker(room):
    request = RunRequest(prompt="Say one two three one two three.", drafter="prompt_lookup", k=2,
                         max_new_tokens=3)
    job = jobs.submit(room.redis_url, request, "a learner's token")
    deadline = time.monotonic() + 120
    while (status := jobs.status(room.redis_url, job, "a learner's token")).state in ("queued", "running"):
        assert time.monotonic() < deadline, status
        time.sleep(0.2)
    assert status.state == "finished", status
    result = jobs.result(room.redis_url, job, "a learner's token")
    assert result.run.spec.generated_ids == result.run.plain.generated_ids and result.run.spec.n_generated == 3


def test_four_learners_press_run_at_once_and_each_gets_their_own_run(browser, room):
    agents = _agents(room)
    pages = [new_page(browser, room.url, user_agent=agent) for agent in agents]
    try:
        for page, (prompt, k, seed) in zip(pages, LEARNERS, strict=True):
            goto(page, f"live?drafter=prompt_lookup&k={k}&n={N_NEW}&t=0&seed={seed}&prompt={quote(prompt)}",
                 timeout=120_000)
        for page in pages:
            page.get_by_role("button", name="Run", exact=True).wait_for()
        # both workers busy first (a real job that holds a worker until released), so the four runs are sure to
        # wait in the queue whatever the machine's load
        conn = records.connect(room.redis_url)
        release = f"specsim:test:release:{time.monotonic_ns()}"
        queue = Queue(records.QUEUE, connection=conn)
        held = [queue.enqueue(hold, release, job_timeout=300) for _ in range(2)]
        registry = StartedJobRegistry(queue=queue)
        deadline = time.monotonic() + 120
        while not all(job.id in registry.get_job_ids() for job in held):
            assert time.monotonic() < deadline, "the two holding jobs did not start"
            time.sleep(0.1)
        # a click as the learner's browser delivers it, without Playwright's checks in between, each browser timing
        # its own click for one moment of the machine's clock (four evaluate calls in a row took over a second on a
        # loaded machine)
        at = time.time() * 1000 + 1500
        for page in pages:
            page.evaluate(CLICK_RUN_AT, at)
        for page in pages:
            page.wait_for_function("() => window.specsimClickedAt !== undefined", timeout=30_000)
        clicked = [page.evaluate("() => window.specsimClickedAt") for page in pages]
        assert max(clicked) - min(clicked) < 1000, f"the four clicks were {max(clicked) - min(clicked):.0f} ms apart"
        started = time.monotonic()
        places: list[list[int]] = [[] for _ in pages]
        began, done = [False] * len(pages), [False] * len(pages)
        deadline = time.monotonic() + 300
        while not all(done):
            assert time.monotonic() < deadline, f"not every run finished: {done}"
            for i, page in enumerate(pages):
                if done[i]:
                    continue
                text = page.inner_text("body")
                places[i] += [int(n) for n in PLACE.findall(text)]
                running = page.get_by_test_id("stProgress").count() > 0  # the run's progress bar (none on a replay)
                began[i] = began[i] or running
                done[i] = began[i] and not running
            if not conn.exists(release) and (all(places) or time.monotonic() > started + 90):
                conn.set(release, 1, ex=600)  # every learner has been told their place: free the workers
            pages[0].wait_for_timeout(100)
        assert all(places), f"a learner waiting behind two busy workers was not shown a place in the queue: {places}"
        for i, (page, (prompt, k, seed)) in enumerate(zip(pages, LEARNERS, strict=True)):
            page.wait_for_function(IDLE, timeout=60_000)
            assert_no_exception(page)
            trace = download_trace(page)
            assert prompt in trace.prompt and (trace.settings.k, trace.settings.seed) == (k, seed), f"learner {i}"
            assert trace.settings.max_new_tokens == N_NEW and trace.n_generated == N_NEW
            assert places[i] == sorted(places[i], reverse=True), f"learner {i} moved back in the queue: {places[i]}"
            assert all(1 <= place <= len(pages) for place in places[i]), places[i]
    finally:
        for page in pages:
            page.context.close()


def _restarted(room, name: str, old_pid: int, timeout: float = 120) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state, pid = room.states().get(name, ("", None))
        if state == "RUNNING" and pid and pid != old_pid:
            return pid
        time.sleep(0.2)
    raise AssertionError(f"{name} was not restarted: {room.states()}")


def test_a_killed_worker_or_redis_is_restarted_and_the_class_goes_on(room):
    """Issue 52: `make class` stopped the whole class when one part died. Under supervisord a killed worker and a
    killed Redis come back; every other part keeps its process, nginx keeps serving, and a run goes through after."""
    import signal

    before = room.pids()
    assert {"redis", "worker-0", "worker-1", "replica-0", "replica-1", "nginx"} <= set(before), before
    os.kill(before["worker-0"], signal.SIGKILL)
    _restarted(room, "worker-0", before["worker-0"])
    os.kill(before["redis"], signal.SIGKILL)
    _restarted(room, "redis", before["redis"])
    after = room.pids()
    assert all(after[name] == before[name] for name in ("worker-1", "replica-0", "replica-1", "nginx")), (before, after)
    with urlopen(f"{room.url}/_stcore/health", timeout=10) as response:
        assert response.status == 200
    deadline = time.monotonic() + 120  # the workers reconnect to the new Redis on their own
    while classroom._worker_count(room.redis_url) < 2:
        assert time.monotonic() < deadline, "the workers did not come back to the restarted Redis"
        time.sleep(0.5)
    log = (room.folder / "supervisord.log").read_text()
    assert "exited: worker-0 (terminated by SIGKILL" in log and "exited: redis (terminated by SIGKILL" in log
    assert "(exit status" not in log, log  # no part failed after its restart (a worker once met its own old name)
    test_a_run_submitted_to_the_class_is_served_by_a_worker(room)


def test_a_run_in_flight_survives_a_redis_restart(room):
    """Issue 52: make class's Redis keeps an append-only file, so a run queued or running when Redis is killed is
    still there when supervisord has started it again; the worker goes on writing and the learner gets the run."""
    import signal

    token = f"redis-restart-{time.monotonic_ns()}"
    request = RunRequest(prompt="Count slowly from one to twenty, one number per line.", drafter="prompt_lookup",
                         k=2, max_new_tokens=40, seed=11)
    job = jobs.submit(room.redis_url, request, token)
    deadline = time.monotonic() + 120
    while jobs.status(room.redis_url, job, token).state == "queued":
        assert time.monotonic() < deadline, "the run did not start"
        time.sleep(0.1)
    before = room.pids()["redis"]
    time.sleep(1.5)  # the append-only file is written every second
    os.kill(before, signal.SIGKILL)
    _restarted(room, "redis", before)
    deadline = time.monotonic() + 180
    while True:
        try:
            status = jobs.status(room.redis_url, job, token)
        except OSError:
            status = None
        if status is not None and status.state not in ("queued", "running"):
            break
        assert time.monotonic() < deadline, status
        time.sleep(0.25)
    assert status.state == "finished", status
    result = jobs.result(room.redis_url, job, token)
    assert result.run.plain is not None and result.run.spec.n_generated >= 1


def test_a_page_whose_replica_is_killed_finds_its_run_on_the_other(browser, room):
    """Issue 62 (6): kill -9 of a replica sent its learners' pages to the other replica as new sessions, in the
    opening state with no word about their runs, which they had to start again. The browser keeps its run (a cookie
    with the job's id and token); the page on the other replica follows that run to its end and says so."""
    import signal

    from app.live.classmode import FOUND_AGAIN, REATTACHED

    agent = _agents(room, per_replica=1)[0]
    replica = _replica_of(room.url, agent)
    name = f"replica-{[r.removeprefix('http://') for r in room.replicas].index(replica)}"
    page = new_page(browser, room.url, user_agent=agent)
    conn = records.connect(room.redis_url)
    release = f"specsim:test:release:{time.monotonic_ns()}"
    try:
        prompt, k, seed = "north south east west north south east west", 2, 41
        goto(page, f"live?drafter=prompt_lookup&k={k}&n={N_NEW}&t=0&seed={seed}&prompt={quote(prompt)}",
             timeout=120_000)
        page.get_by_role("button", name="Run", exact=True).wait_for()
        queue = Queue(records.QUEUE, connection=conn)
        held = [queue.enqueue(hold, release, job_timeout=300) for _ in range(2)]  # the run waits while the page dies
        registry = StartedJobRegistry(queue=queue)
        deadline = time.monotonic() + 120
        while not all(job.id in registry.get_job_ids() for job in held):
            assert time.monotonic() < deadline, "the two holding jobs did not start"
            time.sleep(0.1)
        page.evaluate(CLICK_RUN)
        page.wait_for_function("() => /number \\d+ in the queue/.test(document.body.innerText)", timeout=60_000)
        waiting = len(queue)
        os.kill(room.pids()[name], signal.SIGKILL)
        page.wait_for_function(f"() => document.body.innerText.includes({FOUND_AGAIN!r})", timeout=120_000)
        assert len(queue) == waiting, "the page submitted its run again instead of finding it"
        conn.set(release, 1, ex=600)
        page.wait_for_function(IDLE, timeout=180_000)
        page.wait_for_function("() => !document.querySelector(\"[data-testid='stProgress']\")", timeout=180_000)
        assert_no_exception(page)
        _restarted(room, name, 0)  # supervisord brings the killed replica back, and nginx, after its fail_timeout,
        deadline = time.monotonic() + 60  # sends this browser's requests to it again while the page's session
        while _replica_of(room.url, agent) != replica:  # stays on the other replica
            assert time.monotonic() < deadline, "nginx did not take the restarted replica back"
            time.sleep(0.5)
        trace = download_trace(page)  # its file is on the other replica: nginx asks there after a 404
        assert prompt in trace.prompt and (trace.settings.k, trace.settings.seed) == (k, seed)
        body = page.inner_text("body")
        assert trace.n_generated == N_NEW and "Cancelled" not in body and REATTACHED in body
    finally:
        conn.set(release, 1, ex=600)
        page.context.close()
