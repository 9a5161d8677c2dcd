"""A class-queue worker: ``python -m specsim.classroom.worker --redis redis://host:6379/0``.

It serves the live runs that :func:`specsim.classroom.jobs.submit` queues, and the pages' measurements that
:func:`specsim.classroom.tasks.submit` queues, one at a time, in this process (RQ's
``SimpleWorker``: no fork per job), so the models it loads stay loaded for the next job (``--preload bundled``
loads the bundled target before the first). Start as many as the machine has room for; each registers the
machine it runs on, so a run it records can answer the same request later from the shared run cache. After a
Redis restart (which comes back empty) it reconnects and registers again.
"""

from __future__ import annotations

import argparse
import os
import threading
import time

from specsim.measure import flags

REGISTERED_CHECK_S = 2.0
REDIS_PATIENCE_S = 60.0  # how long a starting worker waits for a Redis that does not answer (one restarting)
REDIS_OUTAGE_S = 600.0  # how long a worker that finished a run waits for Redis to come back before giving up


def _when_redis_answers(call, patience_s: float = REDIS_PATIENCE_S, on_retry=None):
    """``call()``, again every half second while Redis does not answer, for up to ``patience_s``: a Redis restarted
    while the worker starts (supervisord restarts both) costs a wait, not the worker. ``on_retry`` runs before each
    new try."""
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError

    deadline = time.monotonic() + patience_s
    while True:
        try:
            return call()
        except (RedisConnectionError, RedisTimeoutError, OSError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
            if on_retry is not None:
                try:
                    on_retry()
                except (RedisConnectionError, RedisTimeoutError, OSError):
                    pass


def give_back_memory() -> None:
    """Collect the last job's garbage and hand the C heap's free pages back to the system (glibc's ``malloc_trim``):
    a worker's size then stays near its models' after every job, instead of keeping the largest job's buffers."""
    import ctypes
    import ctypes.util
    import gc

    gc.collect()
    name = ctypes.util.find_library("c")
    if name and "libc" in name:  # glibc; elsewhere (musl, macOS) there is nothing to call
        try:
            ctypes.CDLL(name).malloc_trim(0)
        except (OSError, AttributeError):
            pass


def patient_worker_class():
    """RQ's ``SimpleWorker``, made to wait out a Redis outage where a job ends.

    A run that ends while Redis is away used to kill its worker (issue 62 (2)): RQ's end-of-job bookkeeping
    (``handle_execution_ended``'s heartbeat, then the success or failure records) raised ``ConnectionError``, the work
    loop logged "found an unhandled exception, quitting" and the process exited. Each of those steps now waits for
    Redis, as the start-up does, and then goes on where it stopped."""
    from rq import SimpleWorker

    class PatientWorker(SimpleWorker):
        def _patiently(self, call):
            return _when_redis_answers(call, REDIS_OUTAGE_S)

        def handle_execution_ended(self, job, queue, heartbeat_ttl):
            give_back_memory()  # the job's own buffers are garbage now: the next job starts from the same size
            return self._patiently(lambda: super(PatientWorker, self).handle_execution_ended(job, queue,
                                                                                              heartbeat_ttl))

        def handle_job_success(self, job, queue, started_job_registry):
            return self._patiently(lambda: super(PatientWorker, self).handle_job_success(job, queue,
                                                                                          started_job_registry))

        def handle_job_failure(self, job, queue, started_job_registry=None, exc_string=""):
            return self._patiently(lambda: super(PatientWorker, self).handle_job_failure(
                job, queue, started_job_registry=started_job_registry, exc_string=exc_string))

        def heartbeat(self, timeout=None, pipeline=None):
            if pipeline is not None:  # queued on a pipeline: nothing is sent yet
                return super().heartbeat(timeout, pipeline)
            return self._patiently(lambda: super(PatientWorker, self).heartbeat(timeout))

    return PatientWorker


def _profile_json() -> str | None:
    """This machine's profile as JSON (None when it has not been measured), for the class's pages."""
    from specsim.measure import machine

    profile = machine.cached()
    return None if profile is None else profile.to_json()


def _publish_profile(conn) -> None:
    from specsim.classroom import records

    records.publish_profile(conn, _profile_json())


def _stay_registered(worker, machine: str) -> None:
    """Register again after Redis came back empty from a restart. RQ reconnects on its own (a blocked wait for a job
    is retried by redis-py), but the registration that Worker.count and the pages' estimates read is gone."""
    from specsim.classroom import records

    while True:
        time.sleep(REGISTERED_CHECK_S)
        try:
            registered = worker.key in worker.all_keys(connection=worker.connection)
            if worker.birth_date is not None and not registered:
                worker.log.warning("Worker %s: Redis lost this worker's registration (a restart?); registering again",
                                   worker.name)
                # RQ's own heartbeat may already have written a bare key back, which register_birth would refuse
                worker.connection.delete(worker.key)
                worker.register_birth()
                worker.connection.sadd(records.MACHINES, machine)
                _publish_profile(worker.connection)
        except Exception:  # noqa: BLE001 - Redis still down: the next check tries again
            continue


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m specsim.classroom.worker", description=__doc__.split("\n\n")[0])
    parser.add_argument("--redis", required=True, help="the Redis URL the app submits to, e.g. redis://localhost:6379/0")
    parser.add_argument("--queue", default=None, help="the queue to serve (default: specsim.classroom.records.QUEUE)")
    parser.add_argument("--preload", nargs="*", default=[], metavar="TARGET",
                        help="targets to load before the first job ('bundled', a hub id or a folder)")
    parser.add_argument("--threads", type=flags.positive_int, default=None,
                        help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--burst", action="store_true", help="stop once the queue is empty")
    parser.add_argument("--name", default=None, help="the start of the worker's name in RQ, which ends with the "
                                                     "process id (default: the host's name)")
    args = parser.parse_args(argv)

    from rq import Queue

    from specsim.classroom import records, running
    from specsim.core.cpu import machine_id
    from specsim.core.models import default_device
    from specsim.request import RunRequest

    flags.apply_threads(args.threads)
    conn = records.connect(args.redis)
    _when_redis_answers(conn.ping)  # a wrong URL fails here, with redis' own message, after REDIS_PATIENCE_S
    for target in args.preload:
        running.SHELF.target(RunRequest(prompt=".", target=target))  # a target to load, not a run
    machine, profile = machine_id(default_device()), _profile_json()
    _when_redis_answers(lambda: (conn.sadd(records.MACHINES, machine), records.publish_profile(conn, profile)))

    # The process id makes the name unique: a worker restarted after a kill -9 must not meet its predecessor's
    # registration, which stays in Redis until it expires (RQ then refuses the name).
    name = f"{args.name or 'specsim-' + os.uname().nodename}-{os.getpid()}"
    worker = patient_worker_class()([Queue(args.queue or records.QUEUE, connection=conn)], connection=conn, name=name)
    threading.Thread(target=_stay_registered, args=(worker, machine), daemon=True).start()
    # RQ registers the worker as work() starts; a failed start leaves a half-written registration to clear first
    _when_redis_answers(lambda: worker.work(burst=args.burst, logging_level="WARNING"),
                        on_retry=lambda: worker.connection.delete(worker.key))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
