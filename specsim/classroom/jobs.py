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
- A running job keeps a heartbeat key alive (every :data:`HEARTBEAT_S`, for :data:`ALIVE_TTL_S`). When its worker
  dies (killed, out of memory), :func:`status` notices within :data:`ALIVE_TTL_S` of the death and puts the run
  back at the front of its queue, once, as a new RQ job (the run's record names it, ``rq``); the status says so.
  A second death fails the run with a message; it never waits on a dead worker.

Every job id is an RQ job, and its record is RQ's job ``meta``: the token's digest, its queue, the run it follows
(``run``), the cache key and state of a cached answer, an error message for the page, a task's latest progress, and
after a retry the RQ job that runs it now (``rq``). Updates to a record take a short Redis lock (:func:`_update`), so
the page and the worker never overwrite each other's fields. A run's traces, and a task's value, are the RQ job's
stored result (a cached answer gets one at once, :class:`rq.results.Result`). Beside RQ, Redis holds what RQ has no
feature for: ``specsim:job:<id>:iters`` (one JSON progress report per iteration, read while the run goes on),
``…:cancel`` (the cooperative stop, which keeps a partial trace), ``…:alive`` (the run's own heartbeat, for the
3-second dead-worker report) and ``…:tickets`` (the job ids that want this run: its own and its followers');
``specsim:inflight:<key>`` points at the run of a request while it is queued or running. Every one expires
:data:`KEEP_S` after the job is submitted or done.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import threading
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from redis import Redis
from redis.exceptions import RedisError
from rq import Queue, Worker, get_current_job
from rq.exceptions import NoSuchJobError
from rq.job import Job
from rq.job import JobStatus as RQStatus
from rq.results import Result

from specsim.classroom.runcache import CachedRun, RedisStore, run_key
from specsim.core.cpu import machine_id
from specsim.core.trace import Iteration, Trace
from specsim.liverun import LiveRun, ModelShelf, Progress, run_request
from specsim.request import RunRequest

QUEUE = "specsim-live"
MAX_QUEUED = 20  # waiting runs; a class of 30 pressing Run at once fills it with a few workers busy
HEARTBEAT_S = 0.25  # a running job's heartbeat: iterations flushed, cancel flag read, alive key refreshed
ALIVE_TTL_S = 3  # a running job whose heartbeat is this old is reported failed: its worker is gone
JOB_TIMEOUT_S = 600  # RQ stops a job running longer than this
KEEP_S = 3600  # how long a job's keys, iterations and result stay readable
GUESS_S = 30.0  # a run's duration before any run has been timed
DURATIONS_KEPT = 20

MACHINES = "specsim:machines"  # the machine ids workers run on (cpu.machine_id): where a cached run may be
DURATIONS = "specsim:durations"  # seconds of recent complete runs, newest first
# the workers' machine profile (specsim.measure.machine.Profile as JSON), for the replicas' pages
PROFILE = "specsim:profile"

DEAD_WORKER = ("The worker running this job stopped (it was killed or ran out of memory) before the run finished. "
               "Nothing was recorded; press Run to try again.")
RETRIED = ("The worker running this run stopped (it was killed or ran out of memory), so the run was put back at the "
           "front of the queue and starts again on the next free worker. ")
DEAD_AGAIN = ("The run's worker stopped twice (killed or out of memory) before the run finished; it was retried once. "
              "Nothing was recorded; press Run to try again.")
NOT_YOURS = "No such run for this session (it is another session's, or it has expired)."
LEFT = "Cancelled: you left this run, which goes on for the other learners who asked for the same settings."

SHELF = ModelShelf()  # a worker process's models, loaded once


class JobError(RuntimeError):
    """A job request refused, with a message for the user."""


class QueueFull(JobError):
    pass


class NotYourJob(JobError):
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

_CONNECTIONS: dict[str, object] = {}


def connect(redis_url: str):
    """One client per URL and process (redis-py's clients pool their connections and are thread-safe)."""
    if redis_url not in _CONNECTIONS:
        _CONNECTIONS[redis_url] = Redis.from_url(redis_url)
    return _CONNECTIONS[redis_url]


def _key(job_id: str, part: str = "") -> str:
    return f"specsim:job:{job_id}{':' + part if part else ''}"


def _digest(session_token: str) -> str:
    return hashlib.sha256(session_token.encode()).hexdigest()


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _job(conn, job_id: str) -> Job | None:
    """The RQ job ``job_id`` (None when there is none, or the id is not one RQ could have made)."""
    try:
        return Job.fetch(job_id, connection=conn)
    except (NoSuchJobError, ValueError):
        return None


def _record(conn, job_id: str) -> dict[str, str]:
    """The job's record (its RQ meta) as text; empty when there is none."""
    job = _job(conn, job_id)
    return {} if job is None else {k: _text(v) for k, v in job.meta.items() if v is not None}


def _update(conn, job_id: str, **fields) -> None:
    """Set ``fields`` in the job's record (a None drops one). The lock keeps a page's and a worker's updates of the
    same record from overwriting each other (RQ saves ``meta`` whole)."""
    with conn.lock(f"specsim:lock:{job_id}", timeout=5, blocking_timeout=5):
        job = _job(conn, job_id)
        if job is None:
            return
        job.meta.update({k: v for k, v in fields.items() if v is not None})
        for k in [k for k, v in fields.items() if v is None]:
            job.meta.pop(k, None)
        job.save_meta()


def _claim(conn, job_id: str, field: str) -> bool:
    """Set ``field`` in the job's record unless it is set already; True for the one caller that set it."""
    with conn.lock(f"specsim:lock:{job_id}", timeout=5, blocking_timeout=5):
        job = _job(conn, job_id)
        if job is None or job.meta.get(field):
            return False
        job.meta[field] = time.time()
        job.save_meta()
        return True


def _unqueued(conn, job_id: str, record: dict, result: dict | None = None) -> None:
    """An RQ job that never runs: a ticket that follows another run, or a cached answer (finished, ``result`` its
    stored result). It carries the record, and expires KEEP_S from now."""
    job = Job.create(run_job, (job_id, {}), connection=conn, id=job_id, meta=record, result_ttl=KEEP_S,
                     failure_ttl=KEEP_S, ttl=KEEP_S,
                     status=RQStatus.FINISHED if result is not None else RQStatus.CREATED)
    with conn.pipeline() as pipe:
        job.save(pipeline=pipe)
        if result is not None:
            Result.create(job, Result.Type.SUCCESSFUL, ttl=KEEP_S, return_value=result, pipeline=pipe)
        pipe.expire(job.key, KEEP_S).sadd(_key(job_id, "tickets"), job_id).expire(_key(job_id, "tickets"), KEEP_S)
        pipe.execute()


def _meta(conn, job_id: str, session_token: str) -> dict[str, str]:
    """The job's record, when ``session_token`` submitted it; NotYourJob otherwise (one message for both)."""
    if not isinstance(job_id, str) or not job_id or ":" in job_id:
        raise NotYourJob(NOT_YOURS)
    meta = _record(conn, job_id)
    if not meta or not hmac.compare_digest(meta.get("token", ""), _digest(session_token)):
        raise NotYourJob(NOT_YOURS)
    return meta


def _inflight(request: RunRequest) -> str:
    """Where the run of ``request`` in flight is named: any worker's run of it will do, whatever its machine."""
    return f"specsim:inflight:{run_key(request, 'any worker', resolve=False)}"


def _run_of(meta: dict[str, str], job_id: str) -> str:
    """The run a job id stands for: its own, or the one it follows."""
    return meta.get("run") or job_id


def _mean_duration(conn) -> float:
    recent = [float(_text(v)) for v in conn.lrange(DURATIONS, 0, -1)]
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
    for machine in sorted(_text(m) for m in conn.smembers(MACHINES)):
        key = run_key(request, machine, resolve=False)
        entry = store.get(key)
        if entry is not None:
            return key, entry
    return None


def publish_profile(conn, profile_json: str | None) -> None:
    """A worker's machine profile, for the pages of the class (a replica measures nothing itself and loads no torch);
    the last worker to start wins (a class's workers run on one kind of machine)."""
    if profile_json:
        conn.set(PROFILE, profile_json)


def class_profile(redis_url: str) -> str | None:
    """The profile a worker published (JSON), or None: none yet, or Redis away (the pages then use the lesson's K)."""
    try:
        raw = connect(redis_url).get(PROFILE)
    except (OSError, RedisError):
        return None
    return None if raw is None else _text(raw)


# ---- one job's record, for any kind of job (the live runs below; the pages' measurements in specsim.classroom.tasks)
# ---------


def new_job(conn, queue: str, func, args: tuple, session_token: str, **meta) -> str:
    """Give a job a record bound to ``session_token`` (its digest, the queue, ``meta``), queue ``func(job_id,
    *args)`` on RQ under the same id, and return the id. :func:`status` and :func:`cancel` then follow it."""
    job_id = secrets.token_urlsafe(18)
    record = {"token": _digest(session_token), "queue": queue, "submitted": time.time(), **meta}
    conn.sadd(_key(job_id, "tickets"), job_id)
    conn.expire(_key(job_id, "tickets"), KEEP_S)
    Queue(queue, connection=conn).enqueue(func, job_id, *args, job_id=job_id, meta=record, job_timeout=JOB_TIMEOUT_S,
                                          result_ttl=KEEP_S, failure_ttl=KEEP_S, ttl=KEEP_S)
    return job_id


def record(redis_url: str, job_id: str, session_token: str) -> dict[str, str]:
    """The job's record, when ``session_token`` submitted it; NotYourJob otherwise."""
    return _meta(connect(redis_url), job_id, session_token)


def returned_value(redis_url: str, job_id: str, session_token: str):
    """What the job's function returned, as RQ stored it; None before it finished (or after a failure)."""
    conn = connect(redis_url)
    meta = _meta(conn, job_id, session_token)
    job = _job(conn, meta.get("rq") or job_id)
    return job.return_value(refresh=True) if job is not None and job.get_status() == RQStatus.FINISHED else None


def began(conn, job_id: str) -> None:
    """A worker started the job (the time the dead-worker check counts from)."""
    _update(conn, job_id, began=time.time())


def ended(conn, job_id: str, state: str | None = None, message: str = "") -> None:
    """The job's function is done: it ``returned`` (state None; RQ stores its value), or it ended ``failed`` or
    ``cancelled`` with ``message`` for the page."""
    if state is None:
        _update(conn, job_id, returned=1)
    elif state == "failed":
        _update(conn, job_id, error=message)
    else:
        _update(conn, job_id, state=state, error=message)


# ---- the page's side --------------------------------------------------------------------------------------------


def submit(redis_url: str, request: RunRequest, session_token: str, queue: str = QUEUE,
           max_queued: int = MAX_QUEUED) -> str:
    """Queue a run of ``request`` for the session ``session_token`` and return its job id; a run already in the
    shared cache is answered at once (its job is finished as soon as it exists). The request was checked when it
    was built (:class:`~specsim.request.RunRequest`); QueueFull when the queue is full (it may overfill by a
    request or two submitted at the same moment)."""
    conn = connect(redis_url)  # the request as the page built it: each worker resolves it on its own machine
    job_id = secrets.token_urlsafe(18)
    meta = {"token": _digest(session_token), "queue": queue, "submitted": time.time()}
    hit = cached_run(conn, request)
    if hit is not None:
        key, entry = hit
        result = {"spec": json.loads(entry.spec.to_json()), "plain": json.loads(entry.plain.to_json()),
                  "stopped_in": None, "recorded_at": entry.recorded_at, "machine": entry.machine, "cached": True}
        _unqueued(conn, job_id, {**meta, "key": key, "state": "cached"}, result)
        return job_id
    leader = _text(conn.get(_inflight(request)) or "")
    if leader and _follow(conn, leader, job_id, meta):
        return job_id
    rq_queue = Queue(queue, connection=conn)
    check_room(conn, rq_queue, max_queued)
    if not conn.set(_inflight(request), job_id, ex=KEEP_S, nx=True):  # another session's run got there first
        leader = _text(conn.get(_inflight(request)) or "")
        if leader and _follow(conn, leader, job_id, meta):
            return job_id
        conn.set(_inflight(request), job_id, ex=KEEP_S)
    conn.sadd(_key(job_id, "tickets"), job_id)
    conn.expire(_key(job_id, "tickets"), KEEP_S)
    rq_queue.enqueue(run_job, job_id, request.to_dict(), job_id=job_id, meta={**meta, "inflight": _inflight(request)},
                     job_timeout=JOB_TIMEOUT_S, result_ttl=KEEP_S, failure_ttl=KEEP_S, ttl=KEEP_S)
    return job_id


def _follow(conn, leader: str, job_id: str, meta: dict) -> bool:
    """Make ``job_id`` a ticket for the run ``leader`` when that run is still queued or running (True)."""
    lead = _record(conn, leader)
    if not lead or lead.get("state") or _run_state(conn, leader, lead).state not in ("queued", "running"):
        return False
    _unqueued(conn, job_id, {**meta, "run": leader})
    conn.sadd(_key(leader, "tickets"), job_id)
    return True


def check_room(conn, rq_queue, max_queued: int) -> None:
    """QueueFull, saying roughly when to try again, when ``max_queued`` jobs already wait."""
    waiting = rq_queue.count
    if waiting >= max_queued:
        wait = round(_mean_duration(conn) * (waiting + 1) / max(1, _workers(conn, rq_queue)))
        raise QueueFull(f"The class queue is full ({waiting} runs waiting); try again in ~{wait} s.")


def status(redis_url: str, job_id: str, session_token: str) -> JobStatus:
    """Where the job is (:class:`JobStatus`); NotYourJob for another session's job or an unknown id."""
    conn = connect(redis_url)
    meta = _meta(conn, job_id, session_token)
    if meta.get("left"):
        return JobStatus("cancelled", LEFT, shared=True)
    if meta.get("state") == "cached":
        return JobStatus("finished", "Answered from the class's run cache.", cached=True)
    if meta.get("state") in ("failed", "cancelled"):
        return JobStatus(meta["state"], meta.get("error", ""), iterations=conn.llen(_key(job_id, "iters")))
    run = _run_of(meta, job_id)
    if run == job_id:
        return _run_state(conn, job_id, meta)
    lead = _record(conn, run)
    if not lead:
        return JobStatus("failed", "The shared run expired before it was read.")
    got = _run_state(conn, run, lead)
    message = ("Sharing a run another learner started with the same settings. " + got.message
               if got.state in ("queued", "running") else got.message)
    return replace(got, message=message, shared=True)


def _run_state(conn, job_id: str, meta: dict[str, str]) -> JobStatus:
    """Where the run ``job_id`` is, from its own record ``meta`` (no session check: callers did it)."""
    count = conn.llen(_key(job_id, "iters"))
    if meta.get("state") == "cached":
        return JobStatus("finished", "Answered from the class's run cache.", cached=True)
    if meta.get("state") in ("failed", "cancelled"):
        return JobStatus(meta["state"], meta.get("error", ""), iterations=count)
    job = _job(conn, meta.get("rq") or job_id)  # "rq": the run's job after a retry
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
        if not conn.exists(_key(job_id, "alive")) and time.time() - started > ALIVE_TTL_S:
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
            _update(conn, job_id, state="failed", error=DEAD_AGAIN if attempt == 2 else DEAD_WORKER)
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
    if meta.get("retried") or not _claim(conn, run, "retried"):
        return False
    again = f"{run}-retry"  # RQ ids take letters, digits, - and _
    conn.delete(_key(run, "iters"), _key(run, "alive"))
    _update(conn, run, began=None, progress=None, returned=None, rq=again)
    Queue(meta["queue"], connection=conn).enqueue(
        job.func, *job.args, job_id=again, at_front=True, job_timeout=JOB_TIMEOUT_S, result_ttl=KEEP_S,
        failure_ttl=KEEP_S, ttl=KEEP_S)
    return True


def iterations(redis_url: str, job_id: str, session_token: str, start: int = 0) -> list[Progress]:
    """The progress reports recorded from the ``start``-th on (one per iteration of the timed runs, in order)."""
    conn = connect(redis_url)
    run = _run_of(_meta(conn, job_id, session_token), job_id)
    out = []
    for raw in conn.lrange(_key(run, "iters"), start, -1):
        data = json.loads(raw)
        out.append(Progress(data["phase"], data["done"], data["goal"], Iteration.from_json(data["iteration"])))
    return out


def result(redis_url: str, job_id: str, session_token: str) -> JobResult | None:
    """The finished job's run; None while it has not finished (or after a failure)."""
    conn = connect(redis_url)
    meta = _meta(conn, job_id, session_token)
    run = _run_of(meta, job_id)
    lead = meta if run == job_id else _record(conn, run)
    job = _job(conn, lead.get("rq") or run)
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
    conn = connect(redis_url)
    meta = _meta(conn, job_id, session_token)
    if meta.get("left"):
        return "left"
    if meta.get("state"):
        return "finished" if meta["state"] == "cached" else meta["state"]
    run = _run_of(meta, job_id)
    job = _job(conn, _record(conn, run).get("rq") or run)  # a retried run's new job
    if job is None:
        return status(redis_url, job_id, session_token).state
    rq_state = job.get_status()
    wanted = rq_state in (RQStatus.QUEUED, RQStatus.STARTED)
    if wanted:
        with conn.pipeline() as pipe:
            pipe.srem(_key(run, "tickets"), job_id).scard(_key(run, "tickets"))
            others = pipe.execute()[-1]
        if others:  # "left", not "state": a leader's record is also its run's, which goes on
            _update(conn, job_id, left=1)
            return "left"
    if rq_state == RQStatus.QUEUED:
        conn.set(_key(run, "cancel"), 1, ex=KEEP_S)  # in case a worker takes it at this very moment
        job.cancel()
        _landed(conn, run)
        for ticket in {run, job_id}:
            _update(conn, ticket, state="cancelled", error="Cancelled before it started.")
        return "cancelled"
    if rq_state == RQStatus.STARTED:
        conn.set(_key(run, "cancel"), 1, ex=KEEP_S)
        return "stopping"
    return status(redis_url, job_id, session_token).state


def _landed(conn, run: str) -> None:
    """The run ``run`` is no longer in flight: a new identical request starts a run of its own."""
    inflight = _record(conn, run).get("inflight", "")
    if inflight and _text(conn.get(inflight) or "") == run:
        conn.delete(inflight)


# ---- the worker's side ------------------------------------------------------------------------------------------


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
                _update(self.conn, self.job_id, progress=json.dumps(latest))
            with self.conn.pipeline() as pipe:
                pipe.set(_key(self.job_id, "alive"), 1, ex=ALIVE_TTL_S)
                if batch:
                    pipe.rpush(_key(self.job_id, "iters"), *batch).expire(_key(self.job_id, "iters"), KEEP_S)
                pipe.exists(_key(self.job_id, "cancel"))
                cancelled = pipe.execute()[-1]
        except (OSError, RedisError):
            with self.lock:  # not written: the next beat writes them, in order, before newer ones
                self.pending = reports + self.pending
                self.latest = self.latest or latest
            raise
        if cancelled:
            self.cancelled.set()

    def run(self) -> None:
        while not self.done.wait(HEARTBEAT_S):
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
    _update(conn, job_id, began=began)
    request_ = RunRequest.from_dict(request)
    heart = Heartbeat(conn, job_id)
    heart.beat()
    heart.start()
    try:
        run = run_request(request_, SHELF, on_progress=heart.add, should_stop=heart.cancelled.is_set)
    except (ModelUnavailable, ValueError) as error:
        ended(conn, job_id, "failed", str(error))
        raise
    finally:
        heart.stop()  # its last beat keeps the job alive ALIVE_TTL_S more, while the result is written
        _landed(conn, job_id)
    machine = machine_id(request_.resolved().device)
    recorded = time.time()
    data = {"spec": None if run.spec is None else json.loads(run.spec.to_json()),
            "plain": None if run.plain is None else json.loads(run.plain.to_json()),
            "stopped_in": run.stopped_in, "recorded_at": recorded, "machine": machine, "cached": False}
    if run.plain is not None and run.stopped_in is None:  # a complete run: the class may reuse it
        key = run_key(request_, machine, resolve=False)  # as the pages look it up: the request they submitted
        RedisStore(conn).put(key, CachedRun(run.spec, run.plain, recorded, machine))
        with conn.pipeline() as pipe:
            pipe.sadd(MACHINES, machine).lpush(DURATIONS, recorded - began).ltrim(DURATIONS, 0, DURATIONS_KEPT - 1)
            pipe.execute()
    ended(conn, job_id)  # RQ stores the value next; the heartbeat's last beat keeps the run alive until then
    return data


__all__ = ["ALIVE_TTL_S", "DEAD_AGAIN", "DEAD_WORKER", "Heartbeat", "JobError", "JobResult", "JobStatus", "KEEP_S",
           "LEFT", "MAX_QUEUED", "NotYourJob", "PROFILE", "QUEUE", "QueueFull", "RETRIED", "SHELF", "began",
           "cached_run", "cancel", "check_room", "class_profile", "connect", "ended", "iterations", "new_job",
           "publish_profile", "record", "result", "returned_value", "run_job", "status", "submit", "waiting_status"]
