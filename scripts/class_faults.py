"""Break a class on purpose and print what the learners noticed: ``make class``'s fault check.

    .venv/bin/python scripts/class_faults.py                      # 12 learners per fault, 2 workers, 2 replicas
    .venv/bin/python scripts/class_faults.py --learners 12 --max-new-tokens 8 --faults worker redis

It starts one class on this machine (scripts/classroom.py: Redis, the workers and the replicas behind nginx, all
under supervisord) and, for each fault in turn, plays ``--learners`` learners the way the live page does in class
mode (through ``specsim.classroom.jobs``: submit, poll every 0.25 s, read the result; while Redis does not answer, wait
for it
as the page does; a learner whose page shows an error presses Run once more, as a learner would). About a second
after the first run starts, it injects the fault:

- ``worker``: kill -9 the worker running a learner's run (supervisord starts it again; the run goes back to the
  front of the queue);
- ``redis``: kill -9 Redis (supervisord starts it again, and it reads back its append-only file: the runs it held
  go on);
- ``replica``: kill -9 an app replica (nginx sends its learners' pages to the other replica meanwhile);
- ``nginx``: stop nginx (SIGTERM; supervisord starts it again).

It is bounded: localhost only, ``--learners`` at most 40, every run must end within ``--timeout`` s. The table:
per fault, the learners affected (a run retried, an error shown, a page that could not reach the app, or a page
that nginx sent to another replica), the runs lost (no result in the end), the runs retried by the queue, the time
from the fault until every part runs again and the class serves (health through nginx, the workers registered),
the learners whose page showed an error and how many of them got their run by pressing Run again, the pages that
could not reach the app for a moment, and the pages nginx sent to another replica, where a browser's session
starts afresh (each learner's page is watched through nginx with the learner's own user agent, every 0.25 s).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from redis.exceptions import RedisError  # noqa: E402
from rq import Queue  # noqa: E402
from rq.registry import StartedJobRegistry  # noqa: E402

from app.live.classmode import OUTAGE_S  # noqa: E402 - how long the page waits for a restarting Redis
from specsim.classroom import jobs  # noqa: E402
from specsim.request import RunRequest  # noqa: E402


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"specsim_{name}", ROOT / "scripts" / f"{name}.py")
    module = sys.modules.setdefault(f"specsim_{name}", importlib.util.module_from_spec(spec))
    spec.loader.exec_module(module)
    return module


classroom = _load("classroom")
FAULTS = ("worker", "redis", "replica", "nginx")
NGINX_FAIL_TIMEOUT_S = 10  # nginx's default fail_timeout: how long it keeps a replica that failed out of the hash
PROMPTS = ["Name three colours.", "Count from one to five.", "Say hello in French.", "List two fruits.",
           "What is two plus two?", "Write a short greeting.", "Name a large animal.", "Give one word for happy.",
           "Say good night.", "Name a planet.", "Spell the word cat.", "Name a season."]


@dataclass
class Learner:
    index: int
    request: RunRequest
    errors: list[str] = field(default_factory=list)  # what the page would have shown, in order
    retried: bool = False  # the queue put the run back after its worker died
    unreachable_s: float = 0.0  # time the learner's replica (through nginx) did not answer
    moves: int = 0  # times nginx sent the learner's browser to another replica (each a new session there)
    done: bool = False  # got their own finished run in the end


def play(learner: Learner, room, start: float, timeout_s: float) -> None:
    """Submit, poll like the page, and press Run once more after an error shown on the page."""
    time.sleep(max(0.0, start + 0.3 * learner.index - time.monotonic()))
    token = f"fault-learner-{learner.index}-{time.monotonic_ns()}"
    deadline = time.monotonic() + timeout_s
    for _attempt in range(2):
        try:
            job = jobs.submit(room.redis_url, learner.request, token)
            away = None
            while time.monotonic() < deadline:
                try:
                    status = jobs.status(room.redis_url, job, token)
                    away = None
                except (OSError, RedisError):  # as the page: wait for a restarting Redis, then give up
                    away = away or time.monotonic()
                    if time.monotonic() - away > OUTAGE_S:
                        raise
                    time.sleep(0.25)
                    continue
                learner.retried = learner.retried or status.attempt > 1
                if status.state not in ("queued", "running"):
                    break
                time.sleep(0.25)
            else:
                learner.errors.append(f"not done after {timeout_s:.0f} s")
                return
            result = jobs.result(room.redis_url, job, token)
            if status.state == "finished" and result is not None and result.run.plain is not None \
                    and learner.request.prompt in result.run.spec.prompt:
                learner.done = True
                return
            learner.errors.append(status.message or "no result")
        except (OSError, RedisError, jobs.JobError) as error:  # the page's "cannot be reached" or "stopped answering"
            learner.errors.append(f"{type(error).__name__}: {error}")
        time.sleep(2.0)  # the learner reads the message, then presses Run again


def _replica(url: str, agent: str = "class-faults") -> str | None:
    """The replica that answers at ``url`` for a browser with this user agent (nginx picks it by the agent), or
    None when nothing answers."""
    request = urllib.request.Request(f"{url}/_stcore/health", headers={"User-Agent": agent})
    try:
        with urllib.request.urlopen(request, timeout=1) as response:
            return response.headers.get("X-Specsim-Replica", "direct") if response.status == 200 else None
    except OSError:
        return None


def _healthy(url: str, agent: str = "class-faults") -> bool:
    return _replica(url, agent) is not None


def _recovered(room, workers: int) -> bool:
    states = room.states()
    return (all(state == "RUNNING" for state, _ in states.values()) and _healthy(room.url)
            and all(_healthy(r) for r in room.replicas) and classroom._worker_count(room.redis_url) >= workers)


def _victim(room, fault: str) -> int:
    """The process id to kill for ``fault``: for a worker, one running a learner's run."""
    pids = room.pids()
    if fault != "worker":
        return pids[{"redis": "redis", "replica": "replica-0", "nginx": "nginx"}[fault]]
    registry = StartedJobRegistry(queue=Queue(jobs.QUEUE, connection=jobs.connect(room.redis_url)))
    for job_id in registry.get_job_ids():
        job = Queue(jobs.QUEUE, connection=jobs.connect(room.redis_url)).fetch_job(job_id)
        name = getattr(job, "worker_name", None) or ""
        index = name.rsplit("-", 1)[-1]
        if f"worker-{index}" in pids:
            return pids[f"worker-{index}"]
    return pids["worker-0"]


def one_fault(room, fault: str, args) -> dict:
    players = [Learner(i, RunRequest(prompt=f"{PROMPTS[i % len(PROMPTS)]} ({fault} {i})",
                                     drafter="prompt_lookup", k=3, seed=i, max_new_tokens=args.max_new_tokens))
               for i in range(args.learners)]
    start = time.monotonic() + 0.5
    threads = [threading.Thread(target=play, args=(p, room, start, args.timeout)) for p in players]
    watchers_stop = threading.Event()

    def watch(p: Learner) -> None:  # the learner's page: its own replica through nginx, every 0.25 s
        agent = f"Mozilla/5.0 specsim-fault-learner-{p.index}"
        home = _replica(room.url, agent)
        while not watchers_stop.is_set():
            t0 = time.monotonic()
            now = _replica(room.url, agent)
            if now is None:
                p.unreachable_s += max(0.25, time.monotonic() - t0)
            elif now != home:  # nginx sent the browser to another replica: its session there starts afresh
                p.moves += 1
                home = now
            watchers_stop.wait(0.25)

    watchers = [threading.Thread(target=watch, args=(p,), daemon=True) for p in players]
    for thread in threads + watchers:
        thread.start()
    conn = jobs.connect(room.redis_url)
    registry = StartedJobRegistry(queue=Queue(jobs.QUEUE, connection=conn))
    deadline = time.monotonic() + 120
    while not registry.get_job_ids() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)
    victim = _victim(room, fault)
    injected = time.monotonic()
    os.kill(victim, signal.SIGTERM if fault == "nginx" else signal.SIGKILL)
    time.sleep(0.5)
    while not _recovered(room, args.workers) and time.monotonic() - injected < args.timeout:
        time.sleep(0.2)
    recovered = time.monotonic() - injected
    for thread in threads:
        thread.join()
    # nginx keeps sending a failed replica's browsers elsewhere for its fail_timeout (10 s), then back: watch that too,
    # and let the next fault start from a class that has settled
    time.sleep(max(0.0, NGINX_FAIL_TIMEOUT_S + 2 - (time.monotonic() - injected)))
    watchers_stop.set()
    affected = [p for p in players if p.errors or p.retried or p.unreachable_s > 0 or p.moves]
    return {"fault": fault, "learners": len(players), "affected": len(affected),
            "lost": sum(not p.done for p in players), "retried": sum(p.retried for p in players),
            "recover_s": recovered, "errors": sum(bool(p.errors) for p in players),
            "pressed_again": sum(bool(p.errors) and p.done for p in players),
            "moved": sum(p.moves > 0 for p in players), "moved_back": sum(p.moves > 1 for p in players),
            "unreachable": sum(p.unreachable_s > 0 for p in players),
            "messages": sorted({m.split(" (")[0][:90] for p in players for m in p.errors})}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/class_faults.py", description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=12)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--max-new-tokens", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=240.0, help="seconds each learner's run may take")
    parser.add_argument("--faults", nargs="+", choices=FAULTS, default=list(FAULTS))
    args = parser.parse_args(argv)
    if not 1 <= args.learners <= 40:
        parser.error("--learners must be between 1 and 40")
    rows = []
    with classroom.classroom(workers=args.workers, replicas=args.replicas, env={"OMP_NUM_THREADS": "1"}) as room:
        print(f"class up: {room.url}, {args.workers} workers, {args.replicas} replicas; logs in {room.folder}",
              flush=True)
        for fault in args.faults:
            rows.append(one_fault(room, fault, args))
            print(f"  {fault}: done in the class's own time", flush=True)
        log = (room.folder / "supervisord.log").read_text(errors="replace")
    print()
    print("| fault | learners | affected | runs lost | runs retried | recovered in | pages with an error | "
          "of those, ran after pressing Run again | pages that lost the app for a moment | sent to another replica "
          "(a new session) | and back again (another) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(f"| {r['fault']} | {r['learners']} | {r['affected']} | {r['lost']} | {r['retried']} | "
              f"{r['recover_s']:.1f} s | {r['errors']} | {r['pressed_again']} | {r['unreachable']} | {r['moved']} | "
              f"{r['moved_back']} |")
    print()
    for r in rows:
        if r["messages"]:
            print(f"{r['fault']}: the pages said: " + "; ".join(r["messages"]))
    print()
    print("supervisord's log of the deaths and restarts:")
    for line in log.splitlines():
        if "exited:" in line or "spawned:" in line:
            print("  " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
