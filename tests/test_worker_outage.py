"""Issue 62 (2): a worker whose run ends while Redis is away waits for Redis and goes on; it used to log "found an
unhandled exception, quitting" and exit (RQ's end-of-job heartbeat raised ConnectionError), 2 of 5 Redis kills.

A real redis-server with an append-only file (so it comes back with its queue, as a class's does), and the class's
worker class serving in this process: the first job stops Redis as it ends and has it restarted two seconds later;
the worker must finish that job's bookkeeping once Redis is back, then serve the second job.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time

import pytest
from redis import Redis
from rq import Queue

from specsim.classroom.worker import patient_worker_class

SERVERS: list[subprocess.Popen] = []
ARGS: list[str] = []


def _start() -> subprocess.Popen:
    server = subprocess.Popen(ARGS, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    SERVERS.append(server)
    return server


def _wait_for(url: str, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            Redis.from_url(url).ping()
            return
        except Exception:  # noqa: BLE001 - not up yet
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def outage_at_the_end(url: str) -> str:
    """A run that ends as Redis goes away: Redis is shut down now and started again two seconds later."""
    Redis.from_url(url).shutdown(nosave=False)  # the append-only file keeps the queue

    def restart() -> None:
        time.sleep(2)
        _start()

    threading.Thread(target=restart, daemon=True).start()
    time.sleep(0.2)
    return "first"


def after_the_outage() -> str:
    return "second"


@pytest.fixture
def aof_redis(tmp_path):
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    ARGS[:] = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes",
               "--appendfsync", "always", "--dir", str(tmp_path)]
    _start()
    url = f"redis://127.0.0.1:{port}/0"
    _wait_for(url)
    yield url
    for server in SERVERS:
        server.kill()
        server.wait(10)
    SERVERS.clear()


def test_a_worker_waits_out_redis_going_away_as_its_run_ends(aof_redis):
    conn = Redis.from_url(aof_redis)
    queue = Queue("outage", connection=conn)
    first = queue.enqueue(outage_at_the_end, aof_redis)
    second = queue.enqueue(after_the_outage)
    worker = patient_worker_class()([queue], connection=conn, name=f"outage-{time.monotonic_ns()}")
    worked = worker.work(burst=True, logging_level="WARNING")
    assert worked
    assert len(SERVERS) == 2, "Redis was stopped and started again during the first job"
    first.refresh()
    second.refresh()
    assert (first.get_status(), first.return_value()) == ("finished", "first")
    assert (second.get_status(), second.return_value()) == ("finished", "second")
