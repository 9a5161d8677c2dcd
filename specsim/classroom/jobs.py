"""Live runs for a whole class: jobs on a real queue (RQ over Redis), served by workers
(:mod:`specsim.classroom.worker`).

A page submits a :class:`~specsim.request.RunRequest` with its session's token and gets a job id back; it then
asks for the job's :func:`status` (queued with its place and an estimate, running, finished, failed), reads the
iterations as the worker records them (:func:`iterations`), and the traces once it is done (:func:`result`).
:func:`cancel` takes a waiting job off the queue, or asks a running one to stop at the end of its iteration.

- Job ids are unguessable (``secrets.token_urlsafe``) and bound to the session token that submitted them: reading
  or cancelling with another token is refused (:class:`NotYourJob`), the same way whether the job exists or not.
- A request already run on a worker's machine is answered from the shared run cache (:mod:`specsim.classroom.runcache`)
  without queueing; a finished, complete run goes into it.
- Identical requests in flight run once. A request that matches one still queued or running (the same
  :func:`~specsim.classroom.runcache.run_key`) gets its own job id that follows that run: its status, iterations and
  result are the run's. Cancelling such a ticket only leaves the run; the run itself is cancelled when no ticket still
  wants it.
- The queue is bounded: past ``max_queued`` waiting runs :func:`submit` raises :class:`QueueFull`, whose message
  says roughly when to try again.
- A run whose worker dies is put back on the queue once; :func:`status` (:mod:`specsim.classroom.jobstate`) says so.

The page's side of a class job is this module and :mod:`specsim.classroom.jobstate`; a job's record, the keys Redis
holds beside RQ and the connection are :mod:`specsim.classroom.records`'; the worker's side (what a worker runs for a
job, and the heartbeat beside it) is :mod:`specsim.classroom.running`. A run's traces are the RQ job's stored result
(a cached answer gets one at once, :class:`rq.results.Result`).
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass

from rq import Queue
from rq.job import Job
from rq.job import JobStatus as RQStatus
from rq.results import Result

from specsim.classroom import jobstate, records
from specsim.classroom.jobstate import (
    DEAD_AGAIN,
    DEAD_WORKER,
    GUESS_S,
    LEFT,
    RETRIED,
    JobStatus,
    status,
    waiting_status,
)
from specsim.classroom.runcache import CachedRun, RedisStore, run_key
from specsim.classroom.running import run_job
from specsim.core.trace import Iteration, Trace
from specsim.liverun import LiveRun, Progress
from specsim.request import RunRequest

MAX_QUEUED = 20  # waiting runs; a class of 30 pressing Run at once fills it with a few workers busy


class QueueFull(records.JobError):
    pass


@dataclass(frozen=True)
class JobResult:
    """A finished job's run (``run.plain`` None when it was cancelled), and when and where it was recorded."""

    run: LiveRun
    recorded_at: float
    machine: str
    cached: bool


def _unqueued(conn, job_id: str, record: dict, result: dict | None = None) -> None:
    """An RQ job that never runs: a ticket that follows another run, or a cached answer (finished, ``result`` its
    stored result). It carries the record, and expires KEEP_S from now."""
    job = Job.create(run_job, (job_id, {}), connection=conn, id=job_id, meta=record, result_ttl=records.KEEP_S,
                     failure_ttl=records.KEEP_S, ttl=records.KEEP_S,
                     status=RQStatus.FINISHED if result is not None else RQStatus.CREATED)
    with conn.pipeline() as pipe:
        job.save(pipeline=pipe)
        if result is not None:
            Result.create(job, Result.Type.SUCCESSFUL, ttl=records.KEEP_S, return_value=result, pipeline=pipe)
        tickets = records.key(job_id, "tickets")
        pipe.expire(job.key, records.KEEP_S).sadd(tickets, job_id).expire(tickets, records.KEEP_S)
        pipe.execute()


def _inflight(request: RunRequest) -> str:
    """Where the run of ``request`` in flight is named: any worker's run of it will do, whatever its machine."""
    return f"specsim:inflight:{run_key(request, 'any worker', resolve=False)}"


def cached_run(conn, request: RunRequest) -> tuple[str, CachedRun] | None:
    """(key, entry) when a run of ``request`` on a machine a worker runs on is in the shared cache."""
    store = RedisStore(conn)
    for machine in sorted(records.text(m) for m in conn.smembers(records.MACHINES)):
        key = run_key(request, machine, resolve=False)
        entry = store.get(key)
        if entry is not None:
            return key, entry
    return None


def submit(redis_url: str, request: RunRequest, session_token: str, queue: str = records.QUEUE,
           max_queued: int = MAX_QUEUED) -> str:
    """Queue a run of ``request`` for the session ``session_token`` and return its job id; a run already in the
    shared cache is answered at once (its job is finished as soon as it exists). The request was checked when it
    was built (:class:`~specsim.request.RunRequest`); QueueFull when the queue is full (it may overfill by a
    request or two submitted at the same moment)."""
    conn = records.connect(redis_url)  # the request as the page built it: each worker resolves it on its own machine
    job_id = secrets.token_urlsafe(18)
    meta = {"token": records.digest(session_token), "queue": queue, "submitted": time.time()}
    hit = cached_run(conn, request)
    if hit is not None:
        key, entry = hit
        result = {"spec": json.loads(entry.spec.to_json()), "plain": json.loads(entry.plain.to_json()),
                  "stopped_in": None, "recorded_at": entry.recorded_at, "machine": entry.machine, "cached": True}
        _unqueued(conn, job_id, {**meta, "key": key, "state": "cached"}, result)
        return job_id
    leader = records.text(conn.get(_inflight(request)) or "")
    if leader and _follow(conn, leader, job_id, meta):
        return job_id
    rq_queue = Queue(queue, connection=conn)
    check_room(conn, rq_queue, max_queued)
    if not conn.set(_inflight(request), job_id, ex=records.KEEP_S, nx=True):  # another session's run got there first
        leader = records.text(conn.get(_inflight(request)) or "")
        if leader and _follow(conn, leader, job_id, meta):
            return job_id
        conn.set(_inflight(request), job_id, ex=records.KEEP_S)
    return records.new_job(conn, queue, run_job, (request.to_dict(),), session_token, job_id=job_id,
                           submitted=meta["submitted"], inflight=_inflight(request))


def _follow(conn, leader: str, job_id: str, meta: dict) -> bool:
    """Make ``job_id`` a ticket for the run ``leader`` when that run is still queued or running (True)."""
    lead = records.record_of(conn, leader)
    if not lead or lead.get("state") or jobstate.run_state(conn, leader, lead).state not in ("queued", "running"):
        return False
    _unqueued(conn, job_id, {**meta, "run": leader})
    conn.sadd(records.key(leader, "tickets"), job_id)
    return True


def check_room(conn, rq_queue, max_queued: int) -> None:
    """QueueFull, saying roughly when to try again, when ``max_queued`` jobs already wait."""
    waiting = rq_queue.count
    if waiting >= max_queued:
        wait = round(jobstate.mean_duration(conn) * (waiting + 1) / max(1, jobstate.workers(conn, rq_queue)))
        raise QueueFull(f"The class queue is full ({waiting} runs waiting); try again in ~{wait} s.")


def iterations(redis_url: str, job_id: str, session_token: str, start: int = 0) -> list[Progress]:
    """The progress reports recorded from the ``start``-th on (one per iteration of the timed runs, in order)."""
    conn = records.connect(redis_url)
    run = jobstate.run_of(records.owned_record(conn, job_id, session_token), job_id)
    out = []
    for raw in conn.lrange(records.key(run, "iters"), start, -1):
        data = json.loads(raw)
        out.append(Progress(data["phase"], data["done"], data["goal"], Iteration.from_json(data["iteration"])))
    return out


def result(redis_url: str, job_id: str, session_token: str) -> JobResult | None:
    """The finished job's run; None while it has not finished (or after a failure)."""
    conn = records.connect(redis_url)
    meta = records.owned_record(conn, job_id, session_token)
    run = jobstate.run_of(meta, job_id)
    lead = meta if run == job_id else records.record_of(conn, run)
    job = records.rq_job(conn, lead.get("rq") or run)
    data = None if job is None else job.return_value(refresh=True)
    if data is None:
        return None

    def trace(part: str) -> Trace | None:
        return None if data[part] is None else Trace.from_json(json.dumps(data[part]))

    return JobResult(LiveRun(trace("spec"), trace("plain"), data["stopped_in"]), float(data["recorded_at"]),
                     data["machine"], bool(data["cached"]))


def cancel(redis_url: str, job_id: str, session_token: str) -> str:
    """Cancel: while another session's ticket still wants the run, this ticket only leaves it ("left"). Otherwise a
    waiting run leaves the queue ("cancelled"), and a running one stops at the end of its current iteration, keeping
    what it recorded ("stopping"); a job already done is left alone (its state)."""
    conn = records.connect(redis_url)
    meta = records.owned_record(conn, job_id, session_token)
    if meta.get("left"):
        return "left"
    if meta.get("state"):
        return "finished" if meta["state"] == "cached" else meta["state"]
    run = jobstate.run_of(meta, job_id)
    job = records.rq_job(conn, records.record_of(conn, run).get("rq") or run)  # a retried run's new job
    if job is None:
        return status(redis_url, job_id, session_token).state
    rq_state = job.get_status()
    wanted = rq_state in (RQStatus.QUEUED, RQStatus.STARTED)
    if wanted:
        with conn.pipeline() as pipe:
            pipe.srem(records.key(run, "tickets"), job_id).scard(records.key(run, "tickets"))
            others = pipe.execute()[-1]
        if others:  # "left", not "state": a leader's record is also its run's, which goes on
            records.update(conn, job_id, left=1)
            return "left"
    if rq_state == RQStatus.QUEUED:
        conn.set(records.key(run, "cancel"), 1, ex=records.KEEP_S)  # in case a worker takes it at this very moment
        job.cancel()
        records.landed(conn, run)
        for ticket in {run, job_id}:
            records.update(conn, ticket, state="cancelled", error="Cancelled before it started.")
        return "cancelled"
    if rq_state == RQStatus.STARTED:
        conn.set(records.key(run, "cancel"), 1, ex=records.KEEP_S)
        return "stopping"
    return status(redis_url, job_id, session_token).state


__all__ = ["DEAD_AGAIN", "DEAD_WORKER", "GUESS_S", "JobResult", "JobStatus", "LEFT", "MAX_QUEUED", "QueueFull",
           "RETRIED", "cached_run", "cancel", "check_room", "iterations", "result", "status", "submit",
           "waiting_status"]
