"""A job that keeps a class worker busy until the test lets it go: tests/browser/test_class_browser.py queues two,
so the learners' runs are sure to wait in the queue whatever the machine's load. A real RQ job, run by a real
worker (it imports this module by name)."""

from __future__ import annotations

import time

from rq import get_current_job


def hold(release_key: str, limit_s: float = 120.0) -> None:
    """Return once ``release_key`` exists in the job's Redis (or after ``limit_s``)."""
    conn = get_current_job().connection
    deadline = time.monotonic() + limit_s
    while not conn.exists(release_key) and time.monotonic() < deadline:
        time.sleep(0.05)
