"""Play a class against the class queue and print what each learner waited: ``make class``'s load check.

    .venv/bin/python scripts/class_load.py                         # 12 learners, against 1 and then 2 workers
    .venv/bin/python scripts/class_load.py --learners 12 --workers 1 2 --spread 20 --max-new-tokens 8

For each worker count it starts a class on this machine (scripts/classroom.py: Redis, the workers, one app replica
behind nginx) and plays the learners the way the live page does in class mode, through ``specsim.classroom.jobs``: each
one
arrives at a random moment within ``--spread`` seconds, submits a run and polls it until it is done. Half of them
run the same example prompt with the same settings (the class cache may answer them), the others a prompt of their
own. It is bounded: localhost only, ``--learners`` at most 40, and every run must end within ``--timeout`` s.

The table: queue wait (submit to running) and total time per learner (median and max), runs answered from the
class cache, the peak memory of each kind of process, and whether any run was lost (failed, timed out, no result)
or mixed up (a learner got a run of other settings).
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import statistics
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from specsim.classroom import jobs, records  # noqa: E402
from specsim.request import RunRequest  # noqa: E402

_spec = importlib.util.spec_from_file_location("specsim_classroom", ROOT / "scripts" / "classroom.py")
classroom = sys.modules.setdefault("specsim_classroom", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(classroom)

EXAMPLE = "Repeat after me: the cat sat on the mat, the cat sat on the mat."
OWN = ["Name three colours.", "Count from one to five.", "Say hello in French.", "List two fruits.",
       "What is two plus two?", "Write a short greeting.", "Name a large animal.", "Give one word for happy.",
       "Say good night.", "Name a planet.", "Spell the word cat.", "Name a season.", "Say thank you.",
       "Name a tree.", "Name a river.", "Name a city.", "Name a bird.", "Name a fish.", "Name a flower.",
       "Name a metal."]


@dataclass
class Learner:
    index: int
    request: RunRequest
    arrive_s: float
    wait_s: float | None = None
    total_s: float | None = None
    cached: bool = False
    shared: bool = False  # followed a run another learner's identical request had started (specsim.classroom.jobs)
    recorded_at: float | None = None
    outcome: str = "lost"  # "ok", "lost" (failed, timed out, no result) or "mixed up" (another run's settings)
    message: str = ""


def learners(count: int, spread_s: float, max_new_tokens: int, seed: int) -> list[Learner]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        same = i % 2 == 0
        request = RunRequest(prompt=EXAMPLE if same else OWN[i // 2 % len(OWN)], drafter="prompt_lookup", k=3,
                             seed=0 if same else i, max_new_tokens=max_new_tokens)
        out.append(Learner(i, request, rng.uniform(0.0, spread_s)))
    return out


def play(learner: Learner, redis_url: str, start: float, timeout_s: float) -> None:
    """One learner: arrive, submit, poll like the page does, check the run that comes back is theirs."""
    time.sleep(max(0.0, start + learner.arrive_s - time.monotonic()))
    token = f"learner-{learner.index}"
    t0 = time.monotonic()
    try:
        job = jobs.submit(redis_url, learner.request, token)
        while True:
            status = jobs.status(redis_url, job, token)
            if status.state != "queued" and learner.wait_s is None:
                learner.wait_s = time.monotonic() - t0
            if status.state not in ("queued", "running"):
                break
            if time.monotonic() - t0 > timeout_s:
                learner.message = f"not done after {timeout_s:.0f} s"
                jobs.cancel(redis_url, job, token)
                return
            time.sleep(0.25)
        learner.total_s = time.monotonic() - t0
        result = jobs.result(redis_url, job, token)
        if status.state != "finished" or result is None or result.run.plain is None:
            learner.message = status.message or "no result"
            return
        spec = result.run.spec
        learner.cached, learner.shared, learner.recorded_at = result.cached, status.shared, result.recorded_at
        asked = learner.request
        theirs = (asked.prompt in spec.prompt and spec.settings.seed == asked.seed and spec.settings.k == asked.k
                  and spec.settings.max_new_tokens == asked.max_new_tokens)
        learner.outcome = "ok" if theirs else "mixed up"
    except records.JobError as error:
        learner.message = str(error)


class PeakMemory(threading.Thread):
    """The largest resident memory each process of the class reached, sampled twice a second."""

    def __init__(self, room):
        super().__init__(daemon=True)
        self.room, self.peak, self.done = room, {}, threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.5):
            for name, pid in self.room.pids().items():  # supervisord's parts (a restarted one has a new pid)
                try:
                    rss = psutil.Process(pid).memory_info().rss
                except psutil.Error:
                    continue
                self.peak[name] = max(self.peak.get(name, 0), rss)


def one_class(workers: int, args) -> dict:
    with classroom.classroom(workers=workers, replicas=1, env={"OMP_NUM_THREADS": "1"}) as room:
        memory = PeakMemory(room)
        memory.start()
        players = learners(args.learners, args.spread, args.max_new_tokens, args.seed)
        start = time.monotonic() + 0.5
        threads = [threading.Thread(target=play, args=(p, room.redis_url, start, args.timeout)) for p in players]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        memory.done.set()
        memory.join()
    waits = [p.wait_s for p in players if p.wait_s is not None]
    totals = [p.total_s for p in players if p.total_s is not None]
    mb = {kind: max((v for k, v in memory.peak.items() if k.startswith(kind)), default=0) / 2**20
          for kind in ("worker", "replica", "redis", "nginx")}
    return {"workers": workers, "learners": len(players),
            "wait median": statistics.median(waits) if waits else float("nan"), "wait max": max(waits, default=0.0),
            "total median": statistics.median(totals) if totals else float("nan"),
            "total max": max(totals, default=0.0), "cache hits": sum(p.cached for p in players),
            "shared": sum(p.shared for p in players),
            "runs computed": len({p.recorded_at for p in players if p.recorded_at is not None and not p.cached}),
            "lost": sum(p.outcome == "lost" for p in players),
            "mixed up": sum(p.outcome == "mixed up" for p in players),
            **{f"{kind} MB": value for kind, value in mb.items()},
            "messages": sorted({p.message for p in players if p.message})}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/class_load.py", description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=12)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--spread", type=float, default=20.0, help="learners arrive within this many seconds")
    parser.add_argument("--max-new-tokens", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=300.0, help="a run not done after this is counted lost")
    parser.add_argument("--seed", type=int, default=0, help="the arrival times' random seed")
    args = parser.parse_args(argv)
    if not 1 <= args.learners <= 40 or any(not 1 <= w <= 8 for w in args.workers):
        parser.error("--learners must be 1..40 and each --workers 1..8")
    rows = []
    for workers in args.workers:
        print(f"playing {args.learners} learners against {workers} worker(s)…", flush=True)
        rows.append(one_class(workers, args))
    columns = ["workers", "learners", "wait median", "wait max", "total median", "total max", "cache hits", "shared",
               "runs computed", "lost",
               "mixed up", "worker MB", "replica MB", "redis MB", "nginx MB"]

    def cell(value) -> str:
        return f"{value:.1f}" if isinstance(value, float) else str(value)

    table = [columns] + [[cell(row[c]) for c in columns] for row in rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(columns))]
    lines = ["  ".join(v.rjust(w) for v, w in zip(r, widths, strict=True)) for r in table]
    lines.insert(1, "-" * len(lines[0]))
    print("\n" + "\n".join(lines))
    print("\n(seconds; wait = submit to running, total = submit to the finished run; MB = peak resident memory of one "
          "process of that kind; half the learners ran the same example prompt and settings)")
    for row in rows:
        for message in row["messages"]:
            print(f"{row['workers']} worker(s): {message}")
    return 1 if any(row["lost"] or row["mixed up"] for row in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
