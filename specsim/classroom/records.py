"""A class job's record, for every kind of job (the live runs of :mod:`specsim.classroom.jobs`, the pages'
measurements of :mod:`specsim.classroom.tasks`): one Redis connection per process, the keys beside RQ's, and the
record itself.

Every job id is an RQ job, and its record is RQ's job ``meta``: the token's digest, its queue, the run it follows
(``run``), the cache key and state of a cached answer, an error message for the page, a task's latest progress, and
after a retry the RQ job that runs it now (``rq``). Updates to a record take a short Redis lock (:func:`update`), so
the page and the worker never overwrite each other's fields. Beside RQ, Redis holds what RQ has no feature for:
``specsim:job:<id>:iters`` (one JSON progress report per iteration, read while the run goes on), ``…:cancel`` (the
cooperative stop, which keeps a partial trace), ``…:alive`` (the run's own heartbeat, for the 3-second dead-worker
report) and ``…:tickets`` (the job ids that want this run: its own and its followers'); ``specsim:inflight:<key>``
points at the run of a request while it is queued or running. Every one expires :data:`KEEP_S` after the job is
submitted or done.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time

from redis import Redis
from redis.exceptions import RedisError
from rq import Queue
from rq.exceptions import NoSuchJobError
from rq.job import Job
from rq.job import JobStatus as RQStatus

QUEUE = "specsim-live"
HEARTBEAT_S = 0.25  # a running job's heartbeat: iterations flushed, cancel flag read, alive key refreshed
ALIVE_TTL_S = 3  # a running job whose heartbeat is this old is reported failed: its worker is gone
JOB_TIMEOUT_S = 600  # RQ stops a job running longer than this
KEEP_S = 3600  # how long a job's keys, iterations and result stay readable

MACHINES = "specsim:machines"  # the machine ids workers run on (cpu.machine_id): where a cached run may be
DURATIONS = "specsim:durations"  # seconds of recent complete runs, newest first
DURATIONS_KEPT = 20
# the workers' machine profile (specsim.measure.machine.Profile as JSON), for the replicas' pages
PROFILE = "specsim:profile"

NOT_YOURS = "No such run for this session (it is another session's, or it has expired)."


class JobError(RuntimeError):
    """A job request refused, with a message for the user."""


class NotYourJob(JobError):
    pass


_CONNECTIONS: dict[str, object] = {}


def connect(redis_url: str):
    """One client per URL and process (redis-py's clients pool their connections and are thread-safe)."""
    if redis_url not in _CONNECTIONS:
        _CONNECTIONS[redis_url] = Redis.from_url(redis_url)
    return _CONNECTIONS[redis_url]


def key(job_id: str, part: str = "") -> str:
    return f"specsim:job:{job_id}{':' + part if part else ''}"


def digest(session_token: str) -> str:
    return hashlib.sha256(session_token.encode()).hexdigest()


def text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def rq_job(conn, job_id: str) -> Job | None:
    """The RQ job ``job_id`` (None when there is none, or the id is not one RQ could have made)."""
    try:
        return Job.fetch(job_id, connection=conn)
    except (NoSuchJobError, ValueError):
        return None


def record_of(conn, job_id: str) -> dict[str, str]:
    """The job's record (its RQ meta) as text; empty when there is none."""
    job = rq_job(conn, job_id)
    return {} if job is None else {k: text(v) for k, v in job.meta.items() if v is not None}


def update(conn, job_id: str, **fields) -> None:
    """Set ``fields`` in the job's record (a None drops one). The lock keeps a page's and a worker's updates of the
    same record from overwriting each other (RQ saves ``meta`` whole)."""
    with conn.lock(f"specsim:lock:{job_id}", timeout=5, blocking_timeout=5):
        job = rq_job(conn, job_id)
        if job is None:
            return
        job.meta.update({k: v for k, v in fields.items() if v is not None})
        for k in [k for k, v in fields.items() if v is None]:
            job.meta.pop(k, None)
        job.save_meta()


def claim(conn, job_id: str, field: str) -> bool:
    """Set ``field`` in the job's record unless it is set already; True for the one caller that set it."""
    with conn.lock(f"specsim:lock:{job_id}", timeout=5, blocking_timeout=5):
        job = rq_job(conn, job_id)
        if job is None or job.meta.get(field):
            return False
        job.meta[field] = time.time()
        job.save_meta()
        return True


def owned_record(conn, job_id: str, session_token: str) -> dict[str, str]:
    """The job's record, when ``session_token`` submitted it; NotYourJob otherwise (one message for both)."""
    if not isinstance(job_id, str) or not job_id or ":" in job_id:
        raise NotYourJob(NOT_YOURS)
    meta = record_of(conn, job_id)
    if not meta or not hmac.compare_digest(meta.get("token", ""), digest(session_token)):
        raise NotYourJob(NOT_YOURS)
    return meta


def new_job(conn, queue: str, func, args: tuple, session_token: str, job_id: str | None = None, **meta) -> str:
    """Give a job a record bound to ``session_token`` (its digest, the queue, the time, ``meta``), queue
    ``func(job_id, *args)`` on RQ under the same id (``job_id``, or a new unguessable one), and return the id; the
    page then follows it (:func:`specsim.classroom.jobstate.status`)."""
    job_id = job_id or secrets.token_urlsafe(18)
    record = {"token": digest(session_token), "queue": queue, "submitted": time.time(), **meta}
    conn.sadd(key(job_id, "tickets"), job_id)
    conn.expire(key(job_id, "tickets"), KEEP_S)
    Queue(queue, connection=conn).enqueue(func, job_id, *args, job_id=job_id, meta=record, job_timeout=JOB_TIMEOUT_S,
                                          result_ttl=KEEP_S, failure_ttl=KEEP_S, ttl=KEEP_S)
    return job_id


def record(redis_url: str, job_id: str, session_token: str) -> dict[str, str]:
    """The job's record, when ``session_token`` submitted it; NotYourJob otherwise."""
    return owned_record(connect(redis_url), job_id, session_token)


def returned_value(redis_url: str, job_id: str, session_token: str):
    """What the job's function returned, as RQ stored it; None before it finished (or after a failure)."""
    conn = connect(redis_url)
    meta = owned_record(conn, job_id, session_token)
    job = rq_job(conn, meta.get("rq") or job_id)
    return job.return_value(refresh=True) if job is not None and job.get_status() == RQStatus.FINISHED else None


def began(conn, job_id: str) -> None:
    """A worker started the job (the time the dead-worker check counts from)."""
    update(conn, job_id, began=time.time())


def ended(conn, job_id: str, state: str | None = None, message: str = "") -> None:
    """The job's function is done: it ``returned`` (state None; RQ stores its value), or it ended ``failed`` or
    ``cancelled`` with ``message`` for the page."""
    if state is None:
        update(conn, job_id, returned=1)
    elif state == "failed":
        update(conn, job_id, error=message)
    else:
        update(conn, job_id, state=state, error=message)


def landed(conn, run: str) -> None:
    """The run ``run`` is no longer in flight: a new identical request starts a run of its own."""
    inflight = record_of(conn, run).get("inflight", "")
    if inflight and text(conn.get(inflight) or "") == run:
        conn.delete(inflight)


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
    return None if raw is None else text(raw)


__all__ = ["ALIVE_TTL_S", "DURATIONS", "DURATIONS_KEPT", "HEARTBEAT_S", "JOB_TIMEOUT_S", "JobError", "KEEP_S",
           "MACHINES", "NOT_YOURS", "NotYourJob", "PROFILE", "QUEUE", "began", "claim", "class_profile", "connect",
           "digest", "ended", "key", "landed", "new_job", "owned_record", "publish_profile", "record", "record_of",
           "returned_value", "rq_job", "text", "update"]
