"""Where a class job is, as its page asks (:func:`status`): queued with its place and an estimate, running,
finished, failed or cancelled; and the one retry of a run whose worker died.

A running job keeps its heartbeat key alive (:mod:`specsim.classroom.running`). When the key is older than
:data:`~specsim.classroom.records.ALIVE_TTL_S` and the job has no result, its worker is gone (killed, out of
memory): :func:`status` puts the run back at the front of its queue once, as a new RQ job (the run's record names
it, ``rq``), and fails it with a message at the second death. RQ has its own detection of abandoned jobs
(``StartedJobRegistry.cleanup``, which honours ``Retry``), but it notices a dead worker only when the job's entry in
that registry expires, after the job's timeout (minutes); a learner waiting at a page is told within seconds.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from rq import Queue, Worker
from rq.job import Job
from rq.job import JobStatus as RQStatus

from specsim.classroom import records

GUESS_S = 30.0  # a run's duration before any run has been timed

DEAD_WORKER = ("The worker running this job stopped (it was killed or ran out of memory) before the run finished. "
               "Nothing was recorded; press Run to try again.")
RETRIED = ("The worker running this run stopped (it was killed or ran out of memory), so the run was put back at the "
           "front of the queue and starts again on the next free worker. ")
DEAD_AGAIN = ("The run's worker stopped twice (killed or out of memory) before the run finished; it was retried once. "
              "Nothing was recorded; press Run to try again.")
LEFT = "Cancelled: you left this run, which goes on for the other learners who asked for the same settings."


@dataclass(frozen=True)
class JobStatus:
    """Where a job is. ``state``: queued, running, finished, failed or cancelled. ``place``: 1 for the next to run
    (queued only); ``eta_s``: seconds until it is done, estimated from recent runs; ``cached``: answered from the
    run cache; ``iterations``: progress reports recorded so far."""

    state: str
    message: str = ""
    place: int | None = None
    eta_s: float | None = None
    cached: bool = False
    iterations: int = 0
    shared: bool = False  # the job follows a run another session started with the same request
    attempt: int = 1  # 2 once the run was put back on the queue because its first worker died


def waiting_status(place: int | None, workers: int, mean_s: float) -> JobStatus:
    """A queued job's status: its place (None: a worker has just taken it off the queue and not yet started it),
    and an estimate from the mean duration of recent runs."""
    if not workers:
        return JobStatus("queued", "Waiting: no worker is serving the class queue right now.", place)
    if place is None:
        return JobStatus("queued", "Waiting: a worker is taking this run off the queue.", None, mean_s)
    eta = mean_s * (place - 1) / workers + mean_s
    return JobStatus("queued", f"Waiting: number {place} in the queue, about {round(eta)} s.", place, eta)


def run_of(meta: dict[str, str], job_id: str) -> str:
    """The run a job id stands for: its own, or the one it follows."""
    return meta.get("run") or job_id


def mean_duration(conn) -> float:
    recent = [float(records.text(v)) for v in conn.lrange(records.DURATIONS, 0, -1)]
    return sum(recent) / len(recent) if recent else GUESS_S


def workers(conn, queue) -> int:
    return Worker.count(connection=conn, queue=queue)


def _timestamp(when: datetime | None) -> float:
    """Unix time of RQ's timestamp (naive ones are UTC); now when it has none."""
    if when is None:
        return time.time()
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


def status(redis_url: str, job_id: str, session_token: str) -> JobStatus:
    """Where the job is (:class:`JobStatus`); NotYourJob for another session's job or an unknown id."""
    conn = records.connect(redis_url)
    meta = records.owned_record(conn, job_id, session_token)
    if meta.get("left"):
        return JobStatus("cancelled", LEFT, shared=True)
    if meta.get("state") == "cached":
        return JobStatus("finished", "Answered from the class's run cache.", cached=True)
    if meta.get("state") in ("failed", "cancelled"):
        return JobStatus(meta["state"], meta.get("error", ""), iterations=conn.llen(records.key(job_id, "iters")))
    run = run_of(meta, job_id)
    if run == job_id:
        return run_state(conn, job_id, meta)
    lead = records.record_of(conn, run)
    if not lead:
        return JobStatus("failed", "The shared run expired before it was read.")
    got = run_state(conn, run, lead)
    message = ("Sharing a run another learner started with the same settings. " + got.message
               if got.state in ("queued", "running") else got.message)
    return replace(got, message=message, shared=True)


def run_state(conn, job_id: str, meta: dict[str, str]) -> JobStatus:
    """Where the run ``job_id`` is, from its own record ``meta`` (no session check: callers did it)."""
    count = conn.llen(records.key(job_id, "iters"))
    if meta.get("state") == "cached":
        return JobStatus("finished", "Answered from the class's run cache.", cached=True)
    if meta.get("state") in ("failed", "cancelled"):
        return JobStatus(meta["state"], meta.get("error", ""), iterations=count)
    job = records.rq_job(conn, meta.get("rq") or job_id)  # "rq": the run's job after a retry
    if job is None:
        return JobStatus("failed", "The run expired before it was read.", iterations=count)
    rq_state = job.get_status()
    attempt = 2 if meta.get("retried") else 1
    mean = mean_duration(conn)
    if rq_state in (RQStatus.QUEUED, RQStatus.DEFERRED, RQStatus.SCHEDULED, RQStatus.CREATED):
        rq_queue = Queue(meta["queue"], connection=conn)
        position = rq_queue.get_job_position(job.id)
        place = None if position is None else position + 1
        waiting = waiting_status(place, workers(conn, rq_queue), mean)
        return replace(waiting, message=RETRIED + waiting.message, attempt=2) if attempt == 2 else waiting
    if rq_state == RQStatus.STARTED:
        started = float(meta["began"]) if "began" in meta else _timestamp(job.started_at)
        if not conn.exists(records.key(job_id, "alive")) and time.time() - started > records.ALIVE_TTL_S:
            # no heartbeat: the run ended and RQ has not marked it yet (its result or its error is written
            # before the heartbeat stops), or its worker died
            if job.latest_result() is not None:
                return JobStatus("finished", "Done.", iterations=count, attempt=attempt)
            if meta.get("returned"):  # the value is on its way into RQ's results
                return JobStatus("running", "Saving the result.", iterations=count, attempt=attempt)
            if meta.get("error"):
                return JobStatus("failed", meta["error"], iterations=count)
            if retry(conn, job_id, meta, job):  # the first death costs a wait, not the run
                return JobStatus("queued", RETRIED + "Waiting for a worker.", 1, mean, attempt=2)
            records.update(conn, job_id, state="failed", error=DEAD_AGAIN if attempt == 2 else DEAD_WORKER)
            return JobStatus("failed", DEAD_AGAIN if attempt == 2 else DEAD_WORKER, iterations=count)
        return JobStatus("running", "Running.", eta_s=max(0.0, mean - (time.time() - started)), iterations=count,
                         attempt=attempt)
    if rq_state == RQStatus.FINISHED:
        return JobStatus("finished", "Done.", iterations=count, attempt=attempt)
    if rq_state == RQStatus.CANCELED:
        return JobStatus("cancelled", "Cancelled before it started.", iterations=count)
    if meta.get("error"):
        return JobStatus("failed", meta["error"], iterations=count)
    last = (job.exc_info or "").strip().splitlines()[-1:]  # the exception's own line
    return JobStatus("failed", f"The run failed: {last[0]}" if last else "The run failed.", iterations=count)


def retry(conn, run: str, meta: dict[str, str], job: Job) -> bool:
    """Put a run whose worker died back at the front of its queue, once (True); the poller that sets the run's
    ``retried`` mark first does it. The dead worker's partial progress is dropped: the run starts again."""
    if meta.get("retried") or not records.claim(conn, run, "retried"):
        return False
    again = f"{run}-retry"  # RQ ids take letters, digits, - and _
    conn.delete(records.key(run, "iters"), records.key(run, "alive"))
    records.update(conn, run, began=None, progress=None, returned=None, rq=again)
    Queue(meta["queue"], connection=conn).enqueue(
        job.func, *job.args, job_id=again, at_front=True, job_timeout=records.JOB_TIMEOUT_S, result_ttl=records.KEEP_S,
        failure_ttl=records.KEEP_S, ttl=records.KEEP_S)
    return True


__all__ = ["DEAD_AGAIN", "DEAD_WORKER", "GUESS_S", "JobStatus", "LEFT", "RETRIED", "mean_duration", "retry",
           "run_of", "run_state", "status", "waiting_status", "workers"]
