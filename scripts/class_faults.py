"""Break a class on purpose and print what the learners SAW: ``make class``'s fault drill, in real browser pages.

    nice -n 19 .venv/bin/python scripts/class_faults.py                       # 6 learners per fault, every fault
    nice -n 19 .venv/bin/python scripts/class_faults.py --learners 2 --faults worker

It starts one class on this machine (scripts/classroom.py: Redis, the workers and the replicas behind nginx, all
under supervisord) and, for each fault in turn, opens ``--learners`` learners, each a real page of Debian chromium
(Playwright, ``/usr/bin/chromium``, never a downloaded browser) with its own user agent, so nginx's sticky hash
(address + user agent) spreads them over both replicas. Each opens
``live?drafter=prompt_lookup&k=3&n=N&t=0&seed=<i>&prompt=<its prompt>`` through nginx and presses Run. The script
watches each page the way its learner would: its st.error / st.warning / st.info boxes, the progress bar's text,
Streamlit's exception boxes, the connection state and any dialog; when the run has ended it downloads the trace
(the page's "Download the trace (JSON)") and checks that it is the learner's own run (prompt, seed, tokens); when
the download fails twice it reads the run from the page instead (its "Recorded run: …, seed S" line and the prompt
box) and counts the failure. A learner whose page shows an error presses Run once more, as a learner would; so does
one whose run vanished from the page without a word (counted apart). The class's sessions start with "Show answers
without guessing" on (``SPECSIM_SHOW_ANSWERS=1``, the lecturer's demo switch the browser tests use), so a finished
run shows its replay and its download at once. About a second after the first page shows tokens streaming from a
worker, the fault is injected:

- ``worker``: kill -9 the worker running a learner's run (supervisord starts it again; the run goes back to the
  front of the queue);
- ``redis``: kill -9 Redis (supervisord starts it again; it reads back its append-only file);
- ``replica``: kill -9 the replica most of the learners are on (nginx sends their pages to the other one, where the
  page finds its run again through the ``specsim_run`` cookie);
- ``nginx``: SIGTERM to nginx (supervisord starts it again);
- ``loading``: ``supervisorctl restart`` of a worker, then kill -9 of the new worker about a second after
  supervisord spawned it, while it loads its model, with the other learners' runs queued meanwhile;
- ``two``: kill -9 of the worker running a learner's run and of the replica most learners are on, in one second;
- ``supervisord``: kill -9 of supervisord itself: every part must exit (scripts/die_with_parent.py), and the pages
  must say the app cannot be reached, not show an exception. It ends the class, so it runs after the faults above;
- ``public``: a second class, started with ``public=True`` (one worker of its own), and a worker started as a
  machine elsewhere would (``classroom.remote_worker_command``, over this machine's network address, with the
  class's password); once it streams a learner's run it is killed -9 (a machine elsewhere going away: nobody
  restarts it), and its run must finish on the class's own worker ("recovered in": until that run started again
  there).

Each worker's own memory (RssAnon in /proc/<pid>/status) is read before the fault's runs and after them (a worker
supervisord restarted is read in its new process). "Recovered in": from the fault until supervisord shows every part
RUNNING, nginx and every replica answer and the workers are registered.

It is bounded: localhost only (and this machine's own network address for ``public``), ``--learners`` at most 12,
each run must end within ``--timeout`` s. Run it under ``nice -n 19`` on a shared machine. The table is printed at
the end (:func:`table`).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402
from rq import Queue, Worker  # noqa: E402
from rq.registry import StartedJobRegistry  # noqa: E402

from app.live.classmode import FOUND_AGAIN, REATTACHED, RETRIED_NOTE  # noqa: E402 - what the page says
from specsim.classroom import records  # noqa: E402


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"specsim_{name}", ROOT / "scripts" / f"{name}.py")
    module = sys.modules.setdefault(f"specsim_{name}", importlib.util.module_from_spec(spec))
    spec.loader.exec_module(module)
    return module


classroom = _load("classroom")
FAULTS = ("worker", "redis", "replica", "nginx", "loading", "two", "supervisord", "public")
ENDS_CLASS = ("supervisord",)  # run after every other fault of the class
OWN_CLASS = ("public",)  # a class of its own
CHROMIUM = "/usr/bin/chromium"
# one torch thread a worker; every session starts with the sidebar's "Show answers without guessing" on (the lecturer's
# demo switch, as the browser tests run), so a finished run shows its replay and its download at once instead of
# asking for a guess first
CLASS_ENV = {"OMP_NUM_THREADS": "1", "SPECSIM_SHOW_ANSWERS": "1"}
NGINX_FAIL_TIMEOUT_S = 10  # nginx's default fail_timeout: how long it keeps a replica that failed out of the hash
PROMPTS = ["Name three colours.", "Count from one to five.", "Say hello in French.", "List two fruits.",
           "What is two plus two?", "Write a short greeting.", "Name a large animal.", "Give one word for happy.",
           "Say good night.", "Name a planet.", "Spell the word cat.", "Name a season."]
CLICK_RUN = "() => [...document.querySelectorAll('button')].find(b => b.innerText.trim() === 'Run').click()"
STREAMING = re.compile(r"(\d+) of (\d+) tokens")
# the alerts that speak of the class (the queue, its workers and servers), not of the lesson's run
CLASS_WORDS = re.compile(r"class|queue|Cancelled|worker|server|reach|session", re.I)
RETRIED_WORDS = "ran again on another worker"  # the page's notice once the queue ran a run again (RETRIED_NOTE)
assert RETRIED_WORDS in RETRIED_NOTE
# what the learner sees, in one call: every alert box with its kind, the progress bar, exception boxes, dialogs
LOOK = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  const alerts = [...document.querySelectorAll("[data-testid='stAlertContainer']")].map(a => {
    const c = a.querySelector("[data-testid^='stAlertContent']");
    return [c ? c.getAttribute('data-testid').slice('stAlertContent'.length).toLowerCase() : '', a.innerText];
  });
  const bars = [...document.querySelectorAll("[data-testid='stProgress']")].map(b => b.innerText);
  return {
    alerts: alerts, progress: bars.join(' | '), exceptions: [...document.querySelectorAll(
      "[data-testid='stException']")].map(e => e.innerText.slice(0, 400)),
    dialogs: [...document.querySelectorAll("[role='dialog']")].map(d => d.innerText.slice(0, 300)),
    conn: app ? app.getAttribute('data-test-connection-state') : 'NO_APP',
    script: app ? app.getAttribute('data-test-script-state') : null,
    download: [...document.querySelectorAll('button')].some(b => b.innerText.trim() === 'Download the trace (JSON)'),
  };
}"""


# ---- what a page showed, and the table: pure functions (tests/test_class_faults_table.py) ------------------------
@dataclass
class Seen:
    """Everything one learner's page showed during one fault, in order and without repeats."""

    alerts: list[tuple[str, str]] = field(default_factory=list)  # (kind: error/warning/info/success, text)
    progress: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    connection: list[str] = field(default_factory=list)

    def add(self, look: dict) -> None:
        for kind, text in look.get("alerts", []):
            _append(self.alerts, (kind, text.strip()))
        if look.get("progress"):
            _append(self.progress, look["progress"].strip())
        for text in look.get("exceptions", []):
            _append(self.exceptions, text.strip())
        for text in look.get("dialogs", []):
            _append(self.dialogs, text.strip())
        if look.get("conn"):
            _append(self.connection, look["conn"])


def _append(items: list, item) -> None:
    if item not in items:
        items.append(item)


def verdict(seen: Seen) -> dict[str, bool]:
    """What the page told its learner: an error, a cancelled run nobody asked for, a run the queue ran again, a run
    found again after the page's server session changed, the app out of reach, an exception box."""
    texts = [text for _, text in seen.alerts]
    return {
        "error": any(kind == "error" for kind, _ in seen.alerts),
        "cancelled": any(text.startswith("Cancelled") for text in texts),
        "retried": any(RETRIED_WORDS in text for text in texts),
        "found_again": any(FOUND_AGAIN.strip() in text for text in seen.progress)
        or any(REATTACHED.strip()[:60] in text for text in texts),
        "unreachable": any(state != "CONNECTED" for state in seen.connection) or any(
            "Connection error" in text or "Is Streamlit still running" in text for text in seen.dialogs),
        "exception": bool(seen.exceptions),
    }


def streaming(progress: str) -> bool:
    """The progress bar says a worker has written tokens of this run."""
    return any(int(done) >= 1 for done, _ in STREAMING.findall(progress))


COLUMNS = ["fault", "learners", "affected", "runs lost", "cancelled by the fault", "retried by the queue",
           "found again (new session)", "exception boxes", "pages with an error", "of those, ran after pressing Run "
           "again", "run vanished without a word", "trace download failed", "recovered in",
           "worker memory before → after (MB)"]


def row(fault: str, learners: list[dict], recovered_s: float | None, memory: str) -> dict:
    """One line of the table from each learner's :func:`verdict` plus ``done`` (their own finished run at the end),
    ``pressed`` (times they pressed Run) and ``vanished`` (their run left the page without a word)."""
    errors = [p for p in learners if p["error"]]
    return {"fault": fault, "learners": len(learners),
            "affected": sum(any(p[k] for k in ("error", "cancelled", "retried", "found_again", "unreachable",
                                               "exception", "vanished")) or not p["done"] for p in learners),
            "lost": sum(not p["done"] for p in learners), "cancelled": sum(p["cancelled"] for p in learners),
            "retried": sum(p["retried"] for p in learners), "found_again": sum(p["found_again"] for p in learners),
            "exceptions": sum(p["exception"] for p in learners), "errors": len(errors),
            "pressed_again": sum(p["done"] and p["pressed"] > 1 for p in errors),
            "vanished": sum(p["vanished"] for p in learners),
            "download_failed": sum(p.get("download_failed", False) for p in learners), "recovered_s": recovered_s,
            "memory": memory}


def table(rows: list[dict]) -> str:
    out = ["| " + " | ".join(COLUMNS) + " |", "| --- |" + " ---: |" * (len(COLUMNS) - 2) + " --- |"]
    for r in rows:
        recovered = "—" if r["recovered_s"] is None else f"{r['recovered_s']:.1f} s"
        cells = [r["fault"], r["learners"], r["affected"], r["lost"], r["cancelled"], r["retried"], r["found_again"],
                 r["exceptions"], r["errors"], r["pressed_again"], r["vanished"], r["download_failed"], recovered,
                 r["memory"]]
        out.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(out)


def rss_anon_mb(status_text: str) -> float | None:
    """RssAnon of a /proc/<pid>/status text, in MB (10^6 bytes)."""
    match = re.search(r"^RssAnon:\s+(\d+)\s+kB", status_text, re.M)
    return int(match[1]) * 1024 / 1e6 if match else None


def memory_cell(before: dict[str, float | None], after: dict[str, float | None]) -> str:
    """``worker-0 812 → 815, worker-1 790 → —`` (— : no such process at that moment)."""
    def mb(value):
        return "—" if value is None else f"{value:.0f}"
    names = sorted(set(before) | set(after))
    return ", ".join(f"{name.removeprefix('worker-') if name.startswith('worker-') else name} "
                     f"{mb(before.get(name))} → {mb(after.get(name))}" for name in names) or "—"


# ---- the class ----------------------------------------------------------------------------------------------------
def _memory(pids: dict[str, int]) -> dict[str, float | None]:
    out = {}
    for name, pid in pids.items():
        try:
            out[name] = rss_anon_mb(Path(f"/proc/{pid}/status").read_text())
        except OSError:
            out[name] = None
    return out


def _worker_pids(room, remote: subprocess.Popen | None = None) -> dict[str, int]:
    pids = {name: pid for name, pid in room.pids().items() if name.startswith("worker")}
    if remote is not None and remote.poll() is None:
        pids["remote"] = remote.pid
    return pids


def _replica_of(url: str, agent: str) -> str | None:
    request = urllib.request.Request(f"{url}/_stcore/health", headers={"User-Agent": agent})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.headers.get("X-Specsim-Replica", "direct") if response.status == 200 else None
    except OSError:
        return None


def agents(room, fault: str, n: int) -> list[tuple[str, str]]:
    """``n`` (user agent, replica name) nginx spreads over the replicas in turn."""
    names = {r.removeprefix("http://"): f"replica-{i}" for i, r in enumerate(room.replicas)}
    by_replica: dict[str, list[str]] = {}
    for i in range(16 * n + 32):
        agent = f"Mozilla/5.0 specsim-fault-{fault}-learner-{i}"
        by_replica.setdefault(names.get(_replica_of(room.url, agent) or "", "?"), []).append(agent)
    order = sorted(by_replica)
    picked = []
    for i in range(max(len(a) for a in by_replica.values())):
        for name in order:
            if i < len(by_replica[name]):
                picked.append((by_replica[name][i], name))
    return picked[:n]


def _recovered(room, workers: int) -> bool:
    try:
        states = room.states()
    except (OSError, subprocess.SubprocessError):
        return False
    return (bool(states) and all(state == "RUNNING" for state, _ in states.values())
            and _replica_of(room.url, "class-faults") is not None
            and all(_replica_of(r, "class-faults") is not None for r in room.replicas)
            and classroom._worker_count(room.redis_url) >= workers)


class JobWatch(threading.Thread):
    """Which worker each started run is on (RQ's started registry, every 0.25 s), for the victims and the report."""

    def __init__(self, room):
        super().__init__(daemon=True)
        self.room, self.stop, self.on = room, threading.Event(), {}

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                conn = records.connect(self.room.redis_url)
                queue = Queue(records.QUEUE, connection=conn)
                for job_id in StartedJobRegistry(queue=queue).get_job_ids():
                    job = queue.fetch_job(job_id)
                    if job is not None and getattr(job, "worker_name", None):
                        self.on[job_id] = job.worker_name
                self.running = [self.on.get(j) for j in StartedJobRegistry(queue=queue).get_job_ids()]
            except Exception:  # noqa: BLE001 - Redis down for a moment: try again
                pass
            self.stop.wait(0.25)

    running: list = []


def _busy_worker(room, watch: JobWatch) -> tuple[str, int] | None:
    """(name, pid) of a class worker running a run now (RQ's worker name ends with the worker's process id)."""
    by_pid = {pid: name for name, pid in room.pids().items() if name.startswith("worker")}
    for name in list(watch.running):
        tail = (name or "").rsplit("-", 1)[-1]
        if tail.isdigit() and int(tail) in by_pid:
            return by_pid[int(tail)], int(tail)
    return None


def _most_learners_replica(learners) -> str:
    counts: dict[str, int] = {}
    for p in learners:
        counts[p.replica] = counts.get(p.replica, 0) + 1
    return max(sorted(counts), key=lambda name: counts[name])


def _kill(pid: int, sig=signal.SIGKILL) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


class Injector(threading.Thread):
    """Waits for the go (the first tokens streaming + 1 s), injects the fault, then times the recovery."""

    def __init__(self, room, fault: str, learners, watch: JobWatch, workers: int, remote=None):
        super().__init__(daemon=True)
        self.room, self.fault, self.learners, self.watch, self.workers, self.remote = (
            room, fault, learners, watch, workers, remote)
        self.go, self.done = threading.Event(), threading.Event()
        self.recovered_s: float | None = None
        self.notes: list[str] = []
        self.injected_at: float | None = None

    def note(self, text: str) -> None:
        self.notes.append(f"{time.strftime('%H:%M:%S')} {text}")

    def run(self) -> None:
        try:
            self.go.wait()
            time.sleep(1.0)
            getattr(self, f"_{self.fault}")()
            self._wait_recovered()
        except Exception as error:  # noqa: BLE001 - say it in the report instead of dying silently
            self.note(f"the injector failed: {type(error).__name__}: {error}")
        finally:
            self.done.set()

    def _wait_recovered(self) -> None:
        if self.fault == "supervisord":
            return
        deadline = time.monotonic() + 300
        time.sleep(0.5)
        while time.monotonic() < deadline:
            if self._serving():
                self.recovered_s = time.monotonic() - self.injected_at
                return
            time.sleep(0.3)
        self.note("the class did not recover within 300 s")

    def _serving(self) -> bool:
        if self.fault == "public" and self.remote_job is not None:  # its run started again on the class's worker
            name = self.watch.on.get(f"{self.remote_job}-retry") or ""  # jobstate.retry's id for the run again
            return bool(name) and not name.startswith("fault-remote") and _recovered(self.room, 1)
        return _recovered(self.room, self.workers)

    remote_job: str | None = None

    def _mark(self) -> None:
        self.injected_at = self.injected_at or time.monotonic()

    def _kill_busy_worker(self) -> None:
        busy = _busy_worker(self.room, self.watch)
        name, pid = busy or ("worker-0", self.room.pids()["worker-0"])
        self._mark()
        _kill(pid)
        self.note(f"kill -9 {name} (pid {pid}){'' if busy else ' (no worker seen running a run: worker-0)'}")

    def _kill_replica(self) -> None:
        name = _most_learners_replica(self.learners)
        pid = self.room.pids()[name]
        self._mark()
        _kill(pid)
        self.note(f"kill -9 {name} (pid {pid}), the replica of "
                  f"{sum(p.replica == name for p in self.learners)} learners")

    def _worker(self) -> None:
        self._kill_busy_worker()

    def _redis(self) -> None:
        pid = self.room.pids()["redis"]
        self._mark()
        _kill(pid)
        self.note(f"kill -9 redis (pid {pid})")

    def _replica(self) -> None:
        self._kill_replica()

    def _nginx(self) -> None:
        pid = self.room.pids()["nginx"]
        self._mark()
        _kill(pid, signal.SIGTERM)
        self.note(f"SIGTERM nginx (pid {pid})")

    def _two(self) -> None:
        self._kill_busy_worker()
        time.sleep(0.3)
        self._kill_replica()

    def _loading(self) -> None:
        busy = _busy_worker(self.room, self.watch)
        pids = self.room.pids()
        idle = [n for n in sorted(pids) if n.startswith("worker") and (busy is None or n != busy[0])]
        name = idle[0] if idle else "worker-0"
        old = pids[name]
        self._mark()
        subprocess.Popen([sys.executable, "-m", "supervisor.supervisorctl", "-c", str(self.room.conf), "restart",
                          name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.note(f"supervisorctl restart {name} (pid {old}; {'idle' if idle else 'the only choice'} at that moment)")
        suffix = f"-{name.rsplit('-', 1)[1]}"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            fresh = [c for c in psutil.Process(self.room.supervisor.pid).children()
                     if c.pid != old and "specsim.classroom.worker" in " ".join(_cmdline(c))
                     and _cmdline(c)[-1].endswith(suffix)]
            if fresh:
                time.sleep(1.0)  # supervisord spawned it: it is loading its model now
                registered = _registered(self.room, fresh[0].pid)
                _kill(fresh[0].pid)
                self.note(f"kill -9 the new {name} (pid {fresh[0].pid}) 1 s after supervisord spawned it, while "
                          f"it loaded its model (registered with the queue by then: {registered}; "
                          f"{len(self.watch.running)} runs running)")
                return
            time.sleep(0.05)
        self.note(f"supervisord did not spawn {name} again within 120 s")

    def _supervisord(self) -> None:
        parts = self.room.pids()
        family = set(parts.values())
        for pid in parts.values():
            try:
                family |= {c.pid for c in psutil.Process(pid).children(recursive=True)}
            except psutil.NoSuchProcess:
                pass
        self._mark()
        _kill(self.room.supervisor.pid)
        self.note(f"kill -9 supervisord (pid {self.room.supervisor.pid}); {len(family)} processes of the class")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and [pid for pid in family if _alive(pid)]:
            time.sleep(0.2)
        left = [pid for pid in family if _alive(pid)]
        self.family_exited_s = time.monotonic() - self.injected_at
        self.left = left
        self.note(f"every process of the class exited in {self.family_exited_s:.1f} s" if not left else
                  f"OUTLIVED supervisord after 30 s: {[(pid, _cmdline_of(pid)) for pid in left]}")
        for pid in left:  # ours to clean up
            _kill(pid)

    def _public(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if any(name and name.startswith("fault-remote") for name in self.watch.running):
                break
            time.sleep(0.1)
        served = sorted({j for j, name in self.watch.on.items() if name and name.startswith("fault-remote")})
        running = [j for j, name in self.watch.on.items() if name and name.startswith("fault-remote")
                   and name in self.watch.running]
        self.remote_job = running[0] if running else None
        self._mark()
        _kill(self.remote.pid)
        self.note(f"kill -9 the remote worker (pid {self.remote.pid}; it had taken {len(served)} runs; running one "
                  f"now: {any(n and n.startswith('fault-remote') for n in self.watch.running)})")

    family_exited_s: float | None = None
    left: list = []


def _registered(room, pid: int) -> bool:
    """The worker with this process id has registered with the queue (its RQ name ends with the pid)."""
    try:
        return any(w.name.endswith(f"-{pid}") for w in Worker.all(connection=records.connect(room.redis_url)))
    except Exception:  # noqa: BLE001 - Redis down for a moment
        return False


def _cmdline(process) -> list[str]:
    try:
        return process.cmdline() or [""]
    except psutil.Error:
        return [""]


def _cmdline_of(pid: int) -> str:
    try:
        return " ".join(psutil.Process(pid).cmdline())[:120]
    except psutil.Error:
        return "?"


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


# ---- the learners -------------------------------------------------------------------------------------------------
@dataclass
class Learner:
    index: int
    prompt: str
    seed: int
    agent: str
    replica: str
    page: object = None
    seen: Seen = field(default_factory=Seen)
    pressed: int = 0
    pressed_at: float = 0.0
    runs_before: int = 0
    began: bool = False
    idle_since: float | None = None
    again_at: float | None = None
    state: str = "new"  # new, watching, again, done, gave_up
    vanished: bool = False
    download_failed: list[str] = field(default_factory=list)
    read_from_page: bool = False  # the download failed; the run was read from the page
    media_errors: list[str] = field(default_factory=list)  # failed /media/ requests (downloads), and which replica
    note: str = ""

    def press(self) -> None:
        self.runs_before = self.page.script_runs
        self.page.evaluate(CLICK_RUN)
        self.pressed += 1
        self.pressed_at = time.monotonic()
        self.began, self.idle_since, self.state = False, None, "watching"


def _own(p: Learner, n_new: int) -> bool:
    """Download the page's trace and check it is this learner's run. When the download fails (twice at most), read
    the run the page shows instead (its "Recorded run: …, seed S, …" line), and say so."""
    from specsim.core.trace import Trace

    if len(p.download_failed) < 2:
        try:
            with p.page.expect_download(timeout=20_000) as info:
                p.page.get_by_role("button", name="Download the trace (JSON)").click(timeout=10_000)
            trace = Trace.from_json(Path(info.value.path()).read_text())
        except Exception as error:  # noqa: BLE001 - the download failed: try again once, then read the page
            p.download_failed.append(f"{type(error).__name__}: {str(error).splitlines()[0][:120]}")
        else:
            ok = p.prompt in trace.prompt and trace.settings.seed == p.seed and trace.settings.max_new_tokens == n_new
            if not ok:
                p.note += (f"; the page's trace is not this learner's run (seed {trace.settings.seed}, "
                           f"{trace.settings.max_new_tokens} tokens, prompt {trace.prompt[:60]!r})")
            return ok
        if len(p.download_failed) < 2:
            return False
    body = p.page.inner_text("body")
    ok = (f", seed {p.seed}, " in body and "recorded earlier and replayed here" not in body
          and p.prompt in p.page.get_by_label("Prompt", exact=True).input_value())
    p.read_from_page = ok
    return ok


def _media_error(p: Learner, response) -> None:
    if response.status >= 400 and "/media/" in response.url:
        _append(p.media_errors, f"HTTP {response.status} for /media/{response.url.rsplit('/', 1)[-1]} from the "
                                f"replica at {response.headers.get('x-specsim-replica', '?')}")


def _look(p: Learner) -> dict | None:
    try:
        look = p.page.evaluate(LOOK)
    except Exception as error:  # noqa: BLE001 - the page is navigating or its renderer died
        _append(p.seen.connection, f"page error: {type(error).__name__}")
        return None
    p.seen.add(look)
    return look


def _step(p: Learner, look: dict, now: float, n_new: int, timeout: float) -> None:
    """One look at a learner's page: go on watching, or decide (own run, an error to press Run again on, gave up)."""
    if p.state == "again":
        if now >= p.again_at:
            p.press()
        return
    if p.state != "watching":
        return
    if look["progress"]:
        p.began = True
    idle = (look["script"] == "notRunning" and look["conn"] == "CONNECTED" and not look["progress"]
            and p.page.script_runs > p.runs_before)
    if not idle:
        p.idle_since = None
    else:
        p.idle_since = p.idle_since or now
    if now - p.pressed_at > timeout:
        p.state = "gave_up"
        p.note += f"; no own run within {timeout:.0f} s"
        return
    if not idle or now - p.idle_since < 1.5:  # a reconnect's rerun has not started yet: look again
        return
    error = any(kind == "error" for kind, _ in look["alerts"])
    if not error and look["download"]:
        failed = len(p.download_failed)
        if _own(p, n_new):
            p.state = "done"
            return
        if len(p.download_failed) > failed:
            return  # the download itself failed: try it again (then read the page), no reason to press Run
    if not error and not p.began:
        return  # the script ran but has not shown the run yet
    if p.pressed >= 2:
        p.state = "gave_up"
        p.note += "; still no own run after pressing Run again"
        return
    if not error:
        p.vanished = True  # the run left the page and the page said nothing: the learner presses Run again too
    p.state, p.again_at = "again", now + 2.0  # reads the message, then presses Run again


def one_fault(room, browser, fault: str, args, remote=None) -> tuple[dict, list[str]]:
    from tests.browser.conftest import new_page, wait_idle

    picked = agents(room, fault, args.learners)
    learners = [Learner(i, f"{PROMPTS[i % len(PROMPTS)]} ({fault} drill, learner {i})", i, agent, replica)
                for i, (agent, replica) in enumerate(picked)]
    notes = [f"learners on {', '.join(sorted({p.replica for p in learners}))}: "
             + ", ".join(f"{p.index}→{p.replica}" for p in learners) + " ("
             + ", ".join(f"replica-{i} = {r.removeprefix('http://')}" for i, r in enumerate(room.replicas)) + ")"]
    workers_expected = args.workers if fault != "public" else 1
    watch = JobWatch(room)
    watch.start()
    memory_before = _memory(_worker_pids(room, remote))
    try:
        for p in learners:
            p.page = new_page(browser, room.url, user_agent=p.agent)
            p.page.on("response", lambda r, p=p: _media_error(p, r))
            p.page.script_runs = 0
            p.page.goto(f"{room.url}/live?drafter=prompt_lookup&k=3&n={args.max_new_tokens}&t=0&seed={p.seed}"
                        f"&prompt={quote(p.prompt)}")
        for p in learners:
            try:
                wait_idle(p.page, 0, timeout=180_000)
                p.page.get_by_role("button", name="Run", exact=True).wait_for(timeout=60_000)
            except Exception as error:
                look = _look(p) or {}
                raise RuntimeError(f"learner {p.index}'s page never offered Run ({type(error).__name__}); it showed "
                                   f"{look}") from error
        injector = Injector(room, fault, learners, watch, workers_expected, remote)
        injector.start()
        start = time.monotonic()
        for p in learners:  # a class pressing Run within a second or two
            p.press()
            p.page.wait_for_timeout(250)
        first_tokens, class_gone = None, None
        while any(p.state in ("watching", "again") for p in learners) or fault == "supervisord":
            now = time.monotonic()
            if fault == "supervisord" and injector.done.is_set():  # the class is gone: watch the pages for 25 s
                class_gone = class_gone or now
                if now - class_gone > 25:
                    break
            for p in learners:
                if p.state in ("done", "gave_up") and not (fault == "supervisord" and class_gone):
                    continue  # (once the class is gone, every page is watched: what does it say now?)
                look = _look(p)
                if look is None:
                    continue
                if first_tokens is None and streaming(look["progress"]):
                    first_tokens = now
                    injector.go.set()
                _step(p, look, time.monotonic(), args.max_new_tokens, args.timeout)
            if not injector.go.is_set() and now - start > 120:
                injector.go.set()
                notes.append("no page showed tokens streaming within 120 s: the fault went in anyway")
            learners[0].page.wait_for_timeout(200)
        injector.go.set()
        injector.done.wait(max(60.0, args.timeout))
        if injector.injected_at is None:
            notes.append("the fault was never injected")
        elif fault in ("replica", "two", "nginx"):
            # nginx keeps a failed replica's browsers elsewhere for its fail_timeout, then sends them back: let the
            # next fault start from a class that has settled
            time.sleep(max(0.0, NGINX_FAIL_TIMEOUT_S + 2 - (time.monotonic() - injector.injected_at)))
        memory_after = _memory(_worker_pids(room, remote)) if fault != "supervisord" else {}
        served = {}
        for name in watch.on.values():
            key = "remote" if name.startswith("fault-remote") else "class"
            served[key] = served.get(key, 0) + 1
        notes += injector.notes
        notes.append(f"runs taken by workers (incl. runs again): {served}")
        for p in learners:
            v = verdict(p.seen)
            shown = [f"{kind}: {text[:160]}" for kind, text in p.seen.alerts if CLASS_WORDS.search(text)]
            flags = [k for k, on in v.items() if on] + (["vanished"] if p.vanished else [])
            notes.append(f"learner {p.index} ({p.replica}): {p.state}, pressed Run {p.pressed}x"
                         f"{', ' + ', '.join(flags) if flags else ''}{p.note}")
            for failure in p.media_errors:
                notes.append(f"    {failure}")
            for failure in p.download_failed:
                notes.append(f"    DOWNLOAD FAILED: {failure}")
            if p.read_from_page:
                notes.append("    its own run read from the page instead (the 'Recorded run' line and the prompt box)")
            for line in shown:
                notes.append(f"    saw {line}")
            bars: list[str] = []
            for text in p.seen.progress:
                if FOUND_AGAIN.strip() in text or "not answering" in text or "stopped" in text or " | " in text:
                    _append(bars, re.sub(r"\d+ of (\d+) tokens", r"… of \1 tokens", text)[:240])
            notes += [f"    bar: {text}" for text in bars]
            for text in p.seen.exceptions:
                notes.append(f"    EXCEPTION BOX: {text[:300]}")
            for text in p.seen.dialogs:
                notes.append(f"    dialog: {text[:200]}")
            if p.seen.connection != ["CONNECTED"]:
                notes.append(f"    connection states: {', '.join(p.seen.connection)}")
        states = [{**verdict(p.seen), "done": p.state == "done", "pressed": p.pressed, "vanished": p.vanished,
                   "download_failed": bool(p.download_failed)}
                  for p in learners]
        result = row(fault, states, injector.recovered_s, memory_cell(memory_before, memory_after))
        if fault == "supervisord":
            result["class_down"] = (injector.family_exited_s, injector.left)
        return result, notes
    finally:
        watch.stop.set()
        for p in learners:
            if p.page is not None:
                try:
                    p.page.context.close()
                except Exception:  # noqa: BLE001 - the browser already closed it
                    pass


def _remote_worker(room) -> subprocess.Popen:
    """A worker started as the class prints it for another machine (over this machine's network address)."""
    command = shlex.split(classroom.remote_worker_command(room.redis_url))
    assert command[0] == "python"
    command = [sys.executable, *command[1:], "--threads", "1", "--name", "fault-remote"]
    log = (room.folder / "remote-worker.log").open("wb")
    return subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                            env={**os.environ, "OMP_NUM_THREADS": "1"})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/class_faults.py", description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=6)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--max-new-tokens", type=int, default=16)
    parser.add_argument("--timeout", type=float, default=240.0, help="seconds each learner's run may take")
    parser.add_argument("--faults", nargs="+", choices=FAULTS, default=list(FAULTS))
    args = parser.parse_args(argv)
    if not 1 <= args.learners <= 12:
        parser.error("--learners must be between 1 and 12")
    if not os.path.exists(CHROMIUM):
        parser.error(f"Debian chromium is not installed at {CHROMIUM}")
    from playwright.sync_api import sync_playwright

    from tests.browser.server import CHROMIUM_ARGS

    in_class = [f for f in FAULTS if f in args.faults and f not in ENDS_CLASS + OWN_CLASS] + [
        f for f in ENDS_CLASS if f in args.faults]
    rows, notes = [], {}
    logs = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            if in_class:
                with classroom.classroom(workers=args.workers, replicas=args.replicas,
                                         env=CLASS_ENV) as room:
                    print(f"class up: {room.url}, {args.workers} workers, {args.replicas} replicas; logs in "
                          f"{room.folder}", flush=True)
                    for fault in in_class:
                        t0 = time.monotonic()
                        try:
                            result, notes[fault] = one_fault(room, browser, fault, args)
                        except Exception as error:  # noqa: BLE001 - report it and go on with the next fault
                            notes[fault] = [f"THE DRILL FAILED: {type(error).__name__}: {str(error)[:600]}"]
                            print(f"  {fault}: the drill failed: {type(error).__name__}", flush=True)
                            continue
                        rows.append(result)
                        print(f"  {fault}: done in {time.monotonic() - t0:.0f} s: {table([result]).splitlines()[-1]}",
                              flush=True)
                    logs.append(("class", (room.folder / "supervisord.log").read_text(errors="replace")))
            if "public" in args.faults:
                if classroom.lan_address().startswith("127."):
                    print("public: this machine has no network address other than loopback; skipped")
                else:
                    with classroom.classroom(workers=1, replicas=args.replicas, public=True,
                                             env=CLASS_ENV) as room:
                        remote = _remote_worker(room)
                        try:
                            deadline = time.monotonic() + 180
                            while classroom._worker_count(room.redis_url) < 2:
                                if remote.poll() is not None or time.monotonic() > deadline:
                                    raise RuntimeError("the remote worker did not register: see "
                                                       f"{room.folder}/remote-worker.log")
                                time.sleep(0.5)
                            print(f"public class up: {room.url}, 1 worker + 1 remote worker over "
                                  f"{classroom.lan_address()}", flush=True)
                            t0 = time.monotonic()
                            result, notes["public"] = one_fault(room, browser, "public", args, remote)
                            rows.append(result)
                            print(f"  public: done in {time.monotonic() - t0:.0f} s: "
                                  f"{table([result]).splitlines()[-1]}", flush=True)
                        finally:
                            if remote.poll() is None:
                                remote.kill()
                            remote.wait(30)
                        logs.append(("public class", (room.folder / "supervisord.log").read_text(errors="replace")))
        finally:
            browser.close()
    print()
    print(table(rows))
    for r in rows:
        if "class_down" in r:
            took, left = r["class_down"]
            print("\nsupervisord: " + (f"every process of the class exited in {took:.1f} s" if not left
                                      else f"processes OUTLIVED it: {left}"))
    for fault, lines in notes.items():
        print(f"\n{fault}:")
        for line in lines:
            print(f"  {line}")
    for name, log in logs:
        print(f"\n{name}: supervisord's log of the deaths and restarts:")
        for line in log.splitlines():
            if "exited:" in line or "spawned:" in line or "gave up" in line:
                print("  " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
