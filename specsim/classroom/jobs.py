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
  result
  are the run's. Cancelling such a ticket only leaves the run; the run itself is cancelled when no ticket still
  wants it.
- The queue is bounded: past ``max_queued`` waiting runs :func:`submit` raises :class:`QueueFull`, whose message
  says roughly when to try again.
- A running job keeps a heartbeat key alive (every :data:`~specsim.classroom.records.HEARTBEAT_S`, for
  :data:`~specsim.classroom.records.ALIVE_TTL_S`). When its worker
  dies (killed, out of memory), :func:`status` notices within :data:`ALIVE_TTL_S` of the death and puts the run
  back at the front of its queue, once, as a new RQ job (the run's record names it, ``rq``); the status says so.
  A second death fails the run with a message; it never waits on a dead worker.

A job's record, the keys Redis holds beside RQ and the connection are :mod:`specsim.classroom.records`'; what a worker
runs for a job, and the heartbeat beside it, are :mod:`specsim.classroom.running`'s. A run's traces are the RQ job's
stored result (a cached answer gets one at once, :class:`rq.results.Result`).
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from rq import Queue, Worker
from rq.job import Job
from rq.job import JobStatus as RQStatus
from rq.results import Result

from specsim.classroom import records
from specsim.classroom.runcache import CachedRun, RedisStore, run_key
from specsim.classroom.running import run_job
from specsim.core.trace import Iteration, Trace
from specsim.liverun import LiveRun, Progress
from specsim.request import RunRequest

MAX_QUEUED = 20  # waiting runs; a class of 30 pressing Run at once fills it with a few workers busy
GUESS_S = 30.0  # a run's duration before any run has been timed

# the workers' machine profile (specsim.measure.machine.Profile as JSON), for the replicas' pages

DEAD_WORKER = ("The worker running this job stopped (it was killed or ran out of memory) before the run finished. "
               "Nothing was recorded; press Run to try again.")
RETRIED = ("The worker running this run stopped (it was killed or ran out of memory), so the run was put back at the "
           "front of the queue and starts again on the next free worker. ")
DEAD_AGAIN = ("The run's worker stopped twice (killed or out of memory) before the run finished; it was retried once. "
              "Nothing was recorded; press Run to try again.")
LEFT = "Cancelled: you left this run, which goes on for the other learners who asked for the same settings."





class QueueFull(records.JobError):
    pass




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


@dataclass(frozen=True)
class JobResult:
    """A finished job's run (``run.plain`` None when it was cancelled), and when and where it was recorded."""

    run: LiveRun
    recorded_at: float
    machine: str
    cached: bool


def waiting_status(place: int | None, workers: int, mean_s: float) -> JobStatus:
    """A queued job's status: its place (None: a worker has just taken it off the queue and not yet started it),
    and an estimate from the mean duration of recent runs."""
    if not workers:
        return JobStatus("queued", "Waiting: no worker is serving the class queue right now.", place)
    if place is None:
        return JobStatus("queued", "Waiting: a worker is taking this run off the queue.", None, mean_s)
    eta = mean_s * (place - 1) / workers + mean_s
    return JobStatus("queued", f"Waiting: number {place} in the queue, about {round(eta)} s.", place, eta)


# ---- Redis ----------------------------------------------------------------------------------------------------



















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


def _run_of(meta: dict[str, str], job_id: str) -> str:
    """The run a job id stands for: its own, or the one it follows."""
    return meta.get("run") or job_id


def _mean_duration(conn) -> float:
    recent = [float(records.text(v)) for v in conn.lrange(records.DURATIONS, 0, -1)]
    return sum(recent) / len(recent) if recent else GUESS_S


def _workers(conn, queue) -> int:
    return Worker.count(connection=conn, queue=queue)


def _timestamp(when: datetime | None) -> float:
    """Unix time of RQ's timestamp (naive ones are UTC); now when it has none."""
    if when is None:
        return time.time()
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


def cached_run(conn, request: RunRequest) -> tuple[str, CachedRun] | None:
    """(key, entry) when a run of ``request`` on a machine a worker runs on is in the shared cache."""
    store = RedisStore(conn)
    for machine in sorted(records.text(m) for m in conn.smembers(records.MACHINES)):
        key = run_key(request, machine, resolve=False)
        entry = store.get(key)
        if entry is not None:
            return key, entry
    return None






# ---- one job's record, for any kind of job (the live runs below; the pages' measurements in specsim.classroom.tasks)
# ---------












# ---- the page's side --------------------------------------------------------------------------------------------


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
    conn.sadd(records.key(job_id, "tickets"), job_id)
    conn.expire(records.key(job_id, "tickets"), records.KEEP_S)
    rq_queue.enqueue(run_job, job_id, request.to_dict(), job_id=job_id, meta={**meta, "inflight": _inflight(request)},
                     job_timeout=records.JOB_TIMEOUT_S, result_ttl=records.KEEP_S, failure_ttl=records.KEEP_S,
                     ttl=records.KEEP_S)
    return job_id


def _follow(conn, leader: str, job_id: str, meta: dict) -> bool:
    """Make ``job_id`` a ticket for the run ``leader`` when that run is still queued or running (True)."""
    lead = records.record_of(conn, leader)
    if not lead or lead.get("state") or _run_state(conn, leader, lead).state not in ("queued", "running"):
        return False
    _unqueued(conn, job_id, {**meta, "run": leader})
    conn.sadd(records.key(leader, "tickets"), job_id)
    return True


def check_room(conn, rq_queue, max_queued: int) -> None:
    """QueueFull, saying roughly when to try again, when ``max_queued`` jobs already wait."""
    waiting = rq_queue.count
    if waiting >= max_queued:
        wait = round(_mean_duration(conn) * (waiting + 1) / max(1, _workers(conn, rq_queue)))
        raise QueueFull(f"The class queue is full ({waiting} runs waiting); try again in ~{wait} s.")


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
    run = _run_of(meta, job_id)
    if run == job_id:
        return _run_state(conn, job_id, meta)
    lead = records.record_of(conn, run)
    if not lead:
        return JobStatus("failed", "The shared run expired before it was read.")
    got = _run_state(conn, run, lead)
    message = ("Sharing a run another learner started with the same settings. " + got.message
               if got.state in ("queued", "running") else got.message)
    return replace(got, message=message, shared=True)


def _run_state(conn, job_id: str, meta: dict[str, str]) -> JobStatus:
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
    mean = _mean_duration(conn)
    if rq_state in (RQStatus.QUEUED, RQStatus.DEFERRED, RQStatus.SCHEDULED, RQStatus.CREATED):
        rq_queue = Queue(meta["queue"], connection=conn)
        position = rq_queue.get_job_position(job.id)
        place = None if position is None else position + 1
        waiting = waiting_status(place, _workers(conn, rq_queue), mean)
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
            if _retry(conn, job_id, meta, job):  # the first death costs a wait, not the run
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


def _retry(conn, run: str, meta: dict[str, str], job: Job) -> bool:
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


def iterations(redis_url: str, job_id: str, session_token: str, start: int = 0) -> list[Progress]:
    """The progress reports recorded from the ``start``-th on (one per iteration of the timed runs, in order)."""
    conn = records.connect(redis_url)
    run = _run_of(records.owned_record(conn, job_id, session_token), job_id)
    out = []
    for raw in conn.lrange(records.key(run, "iters"), start, -1):
        data = json.loads(raw)
        out.append(Progress(data["phase"], data["done"], data["goal"], Iteration.from_json(data["iteration"])))
    return out


def result(redis_url: str, job_id: str, session_token: str) -> JobResult | None:
    """The finished job's run; None while it has not finished (or after a failure)."""
    conn = records.connect(redis_url)
    meta = records.owned_record(conn, job_id, session_token)
    run = _run_of(meta, job_id)
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
    run = _run_of(meta, job_id)
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




# ---- the worker's side ------------------------------------------------------------------------------------------






__all__ = ["DEAD_AGAIN", "DEAD_WORKER", "GUESS_S", "JobResult", "JobStatus", "LEFT", "MAX_QUEUED", "QueueFull",
           "RETRIED", "cached_run", "cancel", "check_room", "iterations", "result", "status", "submit",
           "waiting_status"]
