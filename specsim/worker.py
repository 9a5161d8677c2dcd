"""A class-queue worker: ``python -m specsim.worker --redis redis://host:6379/0``.

It serves the live runs that :func:`specsim.jobs.submit` queues, and the pages' measurements that
:func:`specsim.tasks.submit` queues, one at a time, in this process (RQ's
``SimpleWorker``: no fork per job), so the models it loads stay loaded for the next job (``--preload bundled``
loads the bundled target before the first). Start as many as the machine has room for; each registers the
machine it runs on, so a run it records can answer the same request later from the shared run cache. After a
Redis restart (which comes back empty) it reconnects and registers again.
"""

from __future__ import annotations

import argparse
import os


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m specsim.worker", description=__doc__.split("\n\n")[0])
    parser.add_argument("--redis", required=True, help="the Redis URL the app submits to, e.g. redis://localhost:6379/0")
    parser.add_argument("--queue", default=None, help="the queue to serve (default: specsim.jobs.QUEUE)")
    parser.add_argument("--preload", nargs="*", default=[], metavar="TARGET",
                        help="targets to load before the first job ('bundled', a hub id or a folder)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    parser.add_argument("--burst", action="store_true", help="stop once the queue is empty")
    parser.add_argument("--name", default=None, help="the worker's name in RQ (default: host and process id)")
    args = parser.parse_args(argv)

    import torch
    from rq import Queue, SimpleWorker

    from specsim import jobs
    from specsim.liverun import RunRequest
    from specsim.models import default_device
    from specsim.runcache import machine_id

    if args.threads:
        torch.set_num_threads(args.threads)
    conn = jobs.connect(args.redis)
    conn.ping()  # a wrong URL fails here, with redis' own message
    for target in args.preload:
        jobs.SHELF.target(RunRequest((), target=target))
    machine = machine_id(default_device())
    conn.sadd(jobs.MACHINES, machine)

    class ClassWorker(SimpleWorker):
        """RQ's SimpleWorker that registers again when Redis came back empty after a restart: RQ reconnects on its
        own, but its registration (what Worker.count, the pages' "no worker" and estimates read) was lost."""

        def heartbeat(self, timeout=None, pipeline=None):
            if pipeline is None and not self.connection.exists(self.key):
                self.log.warning("Worker %s: Redis lost this worker's registration (a restart?); registering again",
                                 self.name)
                self.register_birth()
                self.connection.sadd(jobs.MACHINES, machine)
            super().heartbeat(timeout, pipeline)

    name = args.name or f"specsim-{os.uname().nodename}-{os.getpid()}"
    worker = ClassWorker([Queue(args.queue or jobs.QUEUE, connection=conn)], connection=conn, name=name)
    worker.work(burst=args.burst, logging_level="WARNING")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
