"""How a class worker's memory moves as it serves runs: ``make class``'s worker, measured (issue 62, item 10).

    .venv/bin/python scripts/worker_memory.py --runs 24 [--env MALLOC_ARENA_MAX=2]

It starts a redis-server on a free port and one real worker (``python -m specsim.classroom.worker --preload
bundled --threads 1``, as scripts/classroom.py starts it), then submits ``--runs`` different live runs one after
another (every drafter, greedy and sampled, short and long), and prints the worker's own memory (RssAnon, what it
allocated) and its resident total (VmRSS) after loading and after each run, with the run that preceded it.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rq import Worker  # noqa: E402

from specsim.classroom import jobs, records, tasks  # noqa: E402
from specsim.core import defaults  # noqa: E402
from specsim.request import RunRequest  # noqa: E402

PROMPTS = ["Name three colours.", "Count from one to ten, one number per line.", "Write a haiku about rain.",
           "def fib(n):\n    ", "Explain what a compiler does in two sentences.", "List five fruits and their colours."]
DRAFTERS = (defaults.DRAFT_MODEL, "prompt_lookup", "early_exit")
LONGEST_PROMPT = 2000  # characters: the live page's limit (app.live.params.MAX_PROMPT_CHARS)


def memory_mb(pid: int) -> tuple[float, float]:
    """(RssAnon, VmRSS) of ``pid`` in MB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, rest = line.partition(":")
        if name in ("RssAnon", "VmRSS"):
            fields[name] = int(rest.split()[0]) / 1024
    return round(fields["RssAnon"], 1), round(fields["VmRSS"], 1)


def requests(n: int, long: bool = False) -> list[RunRequest]:
    """``n`` runs of every drafter, greedy and sampled; ``long``: the longest prompt the page takes and 256 tokens."""
    out = []
    for i in range(n):
        drafter = DRAFTERS[i % len(DRAFTERS)]
        draft = {"draft": str(defaults.DEFAULT_DRAFT), "draft_local": True} if drafter == defaults.DRAFT_MODEL else {}
        out.append(RunRequest(prompt=PROMPTS[i % len(PROMPTS)], drafter=drafter, k=1 + i % 6, **draft,
                              temperature=0.0 if i % 2 == 0 else 0.8, seed=i, max_new_tokens=(16, 48, 96)[i % 3]))
        if long:
            text = " ".join(PROMPTS[j % len(PROMPTS)] for j in range(i, i + 400))[:LONGEST_PROMPT]
            out[-1] = out[-1].model_copy(update={"prompt": text, "max_new_tokens": 256, "k": 16})
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/worker_memory.py", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=24)
    parser.add_argument("--long", action="store_true", help="the longest prompts, 256 tokens, K = 16")
    parser.add_argument("--tasks", action="store_true", help="then the pages' tasks (v(n), variants, snippet)")
    parser.add_argument("--env", nargs="*", default=[], metavar="NAME=VALUE", help="extra environment for the worker")
    args = parser.parse_args(argv)
    port = free_port()
    folder = Path(tempfile.mkdtemp(prefix="specsim-memory-"))
    redis = subprocess.Popen(["redis-server", "--port", str(port), "--save", "", "--appendonly", "no",
                              "--dir", str(folder)], stdout=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false",
           **dict(item.split("=", 1) for item in args.env)}
    log = (folder / "worker.log").open("w")
    worker = subprocess.Popen([sys.executable, "-m", "specsim.classroom.worker", "--redis", url, "--threads", "1",
                               "--preload", "bundled"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        time.sleep(1.0)
        conn = records.connect(url)
        deadline = time.monotonic() + 300
        while not Worker.count(connection=conn) and time.monotonic() < deadline:
            time.sleep(0.5)
        time.sleep(2.0)
        print(f"worker env: {' '.join(args.env) or '(default)'}")
        print("| after | RssAnon MB | VmRSS MB |")
        print("| --- | ---: | ---: |")
        anon, rss = memory_mb(worker.pid)
        print(f"| loading the bundled target | {anon:.0f} | {rss:.0f} |", flush=True)
        first = None
        for i, request in enumerate(requests(args.runs, args.long)):
            token = f"memory-{i}"
            job = jobs.submit(url, request, token)
            while jobs.status(url, job, token).state in ("queued", "running"):
                time.sleep(0.2)
            state = jobs.status(url, job, token).state
            anon, rss = memory_mb(worker.pid)
            first = first or anon
            print(f"| run {i + 1}: {request.drafter}, K = {request.k}, T = {request.temperature:g}, "
                  f"{request.max_new_tokens} tokens ({state}) | {anon:.0f} | {rss:.0f} |", flush=True)
        if args.tasks:
            from specsim.measure import compare_variants as cmp

            label = next(iter(cmp.DEMO_PROMPTS))
            draft = str(defaults.DEFAULT_DRAFT)
            for kind, params in (("verify_curve", {}), ("variants", {"label": label, "max_new": 32}),
                                 ("snippet", {"prompt": PROMPTS[1], "k": 4, "max_new": 32}),
                                 ("policies", {"prompt": PROMPTS[4], "draft": draft, "max_new": 48}),
                                 ("domains", {"k": 4, "max_new": 32}), ("blockcheck", {"runs": 600})):
                token = f"memory-{kind}"
                job = tasks.submit(url, kind, params, token)
                while jobs.status(url, job, token).state in ("queued", "running"):
                    time.sleep(0.5)
                state = jobs.status(url, job, token).state
                anon, rss = memory_mb(worker.pid)
                print(f"| the {kind} task ({state}) | {anon:.0f} | {rss:.0f} |", flush=True)
            for i, request in enumerate(requests(6)):
                token = f"memory-after-{i}"
                job = jobs.submit(url, request.model_copy(update={"seed": 100 + i}), token)
                while jobs.status(url, job, token).state in ("queued", "running"):
                    time.sleep(0.2)
                anon, rss = memory_mb(worker.pid)
                print(f"| a run after the tasks: {request.drafter} | {anon:.0f} | {rss:.0f} |", flush=True)
        print(f"\ngrowth from the first run to the last: {anon - first:+.0f} MB (RssAnon)")
    finally:
        worker.terminate()
        worker.wait(30)
        redis.terminate()
        redis.wait(10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
