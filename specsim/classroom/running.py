"""What a class worker runs for a live run (:func:`run_job`), and the heartbeat beside every running job (a live run
or a page's measurement, :mod:`specsim.classroom.tasks`): iterations written out, the cancel flag read, the job kept
alive, so the timed loop itself never waits on the network."""

from __future__ import annotations

import json
import threading
import time

from redis.exceptions import RedisError
from rq import get_current_job

from specsim.classroom import records
from specsim.classroom.runcache import CachedRun, RedisStore, run_key
from specsim.core.cpu import machine_id
from specsim.liverun import ModelShelf, Progress, run_request
from specsim.request import RunRequest

SHELF = ModelShelf()  # a worker process's models, loaded once


class Heartbeat(threading.Thread):
    """Beside a running job: every HEARTBEAT_S refresh the alive key, push the iterations recorded since, and
    read the cancel flag, so the timed loop itself never waits on the network."""

    def __init__(self, conn, job_id: str):
        super().__init__(daemon=True)
        self.conn, self.job_id = conn, job_id
        self.pending: list[Progress] = []
        self.cancelled, self.done = threading.Event(), threading.Event()
        self.lock = threading.Lock()
        self.latest: tuple[float, str] | None = None

    def add(self, progress: Progress) -> None:
        """Called in the timed loop: only keeps the report (this thread writes it out)."""
        with self.lock:
            self.pending.append(progress)

    def report(self, fraction: float, text: str) -> None:
        """A task's progress (specsim.classroom.tasks): only the latest is kept and written out."""
        with self.lock:
            self.latest = (fraction, text)

    def beat(self) -> None:
        """Write out what the run recorded since the last beat; while Redis is away (a restart), keep it for the next
        beat instead of dying: the run goes on, and its learner's page waits for Redis too."""
        try:
            self._beat()
        except (OSError, RedisError):
            pass

    def _beat(self) -> None:
        with self.lock:
            reports, self.pending = self.pending, []
            latest, self.latest = self.latest, None
        batch = [json.dumps({"phase": r.phase, "done": r.done, "goal": r.goal, "iteration": r.iteration.to_json()})
                 for r in reports]
        try:
            if latest is not None:
                records.update(self.conn, self.job_id, progress=json.dumps(latest))
            with self.conn.pipeline() as pipe:
                pipe.set(records.key(self.job_id, "alive"), 1, ex=records.ALIVE_TTL_S)
                if batch:
                    iters = records.key(self.job_id, "iters")
                    pipe.rpush(iters, *batch).expire(iters, records.KEEP_S)
                pipe.exists(records.key(self.job_id, "cancel"))
                cancelled = pipe.execute()[-1]
        except (OSError, RedisError):
            with self.lock:  # not written: the next beat writes them, in order, before newer ones
                self.pending = reports + self.pending
                self.latest = self.latest or latest
            raise
        if cancelled:
            self.cancelled.set()

    def run(self) -> None:
        while not self.done.wait(records.HEARTBEAT_S):
            self.beat()

    def stop(self) -> None:
        self.done.set()
        self.join()
        self.beat()


def run_job(job_id: str, request: dict) -> dict:
    """What a worker runs for a job: the run, its iterations as they come, and the run cache; it returns the traces
    and where they were recorded, which RQ stores as the job's result."""
    from specsim.core.models import ModelUnavailable

    conn = get_current_job().connection
    began = time.time()
    records.update(conn, job_id, began=began)
    request_ = RunRequest.from_dict(request)
    heart = Heartbeat(conn, job_id)
    heart.beat()
    heart.start()
    try:
        run = run_request(request_, SHELF, on_progress=heart.add, should_stop=heart.cancelled.is_set)
    except (ModelUnavailable, ValueError) as error:
        records.ended(conn, job_id, "failed", str(error))
        raise
    finally:
        heart.stop()  # its last beat keeps the job alive ALIVE_TTL_S more, while the result is written
        records.landed(conn, job_id)
    machine = machine_id(request_.resolved().device)
    recorded = time.time()
    data = {"spec": None if run.spec is None else json.loads(run.spec.to_json()),
            "plain": None if run.plain is None else json.loads(run.plain.to_json()),
            "stopped_in": run.stopped_in, "recorded_at": recorded, "machine": machine, "cached": False}
    if run.plain is not None and run.stopped_in is None:  # a complete run: the class may reuse it
        key = run_key(request_, machine, resolve=False)  # as the pages look it up: the request they submitted
        RedisStore(conn).put(key, CachedRun(run.spec, run.plain, recorded, machine))
        with conn.pipeline() as pipe:
            pipe.sadd(records.MACHINES, machine).lpush(records.DURATIONS, recorded - began)
            pipe.ltrim(records.DURATIONS, 0, records.DURATIONS_KEPT - 1)
            pipe.execute()
    records.ended(conn, job_id)  # RQ stores the value next; the heartbeat's last beat keeps the run alive until then
    return data


__all__ = ["Heartbeat", "SHELF", "run_job"]
