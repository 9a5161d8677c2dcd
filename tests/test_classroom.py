"""`make class` (issue 40): Redis, a queue worker and two app replicas in class mode behind nginx, all real plain
processes started by scripts/classroom.py. nginx keeps a browser on one replica and spreads browsers over both; a
run submitted to the class's Redis is served by its worker; stopping the class stops every process."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from specsim import jobs
from specsim.liverun import RunRequest
from tests.conftest import ROOT

_spec = importlib.util.spec_from_file_location("specsim_classroom", ROOT / "scripts" / "classroom.py")
classroom = sys.modules.setdefault("specsim_classroom", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(classroom)


@pytest.fixture(scope="module")
def room():
    for binary in ("nginx", "redis-server"):
        if shutil.which(binary) is None and not Path("/usr/sbin", binary).exists():
            message = f"{binary} is not installed (apt-get install {binary}; .ci/run installs it)"
            if os.environ.get("SPECSIM_SKIP_REDIS") == "1":
                pytest.skip(message)
            pytest.fail(message + "; set SPECSIM_SKIP_REDIS=1 to skip the class tests")
    with classroom.classroom(workers=1, replicas=2, env={"OMP_NUM_THREADS": "1"}) as started:
        yield started
    assert all(part.process.poll() is not None for part in started.parts), "a process outlived the class"


def _replica(url: str, agent: str) -> str:
    request = urllib.request.Request(f"{url}/_stcore/health", headers={"User-Agent": agent})
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200
        return response.headers["X-Specsim-Replica"]


def test_nginx_keeps_a_browser_on_one_replica_and_spreads_browsers_over_both(room):
    behind = {replica.removeprefix("http://") for replica in room.replicas}
    seen = {agent: {_replica(room.url, agent) for _ in range(3)} for agent in (f"learner-{i}" for i in range(12))}
    assert all(len(replicas) == 1 for replicas in seen.values()), seen  # sticky
    used = set().union(*seen.values())
    assert used == behind, (used, behind)  # twelve browsers reach both replicas


def test_a_run_submitted_to_the_class_is_served_by_its_worker(room):
    request = RunRequest((), prompt="Say one two three one two three.", drafter="prompt_lookup", k=2,
                         max_new_tokens=3)
    job = jobs.submit(room.redis_url, request, "a learner's token")
    deadline = time.monotonic() + 120
    while (status := jobs.status(room.redis_url, job, "a learner's token")).state in ("queued", "running"):
        assert time.monotonic() < deadline, status
        time.sleep(0.2)
    assert status.state == "finished", status
    result = jobs.result(room.redis_url, job, "a learner's token")
    assert result.run.spec.generated_ids == result.run.plain.generated_ids and result.run.spec.n_generated == 3


def test_the_nginx_configuration_is_sticky_and_passes_websockets(tmp_path):
    conf = classroom.nginx_conf(8501, [9001, 9002], tmp_path)
    assert "hash $remote_addr$http_user_agent consistent;" in conf
    assert "server 127.0.0.1:9001;" in conf and "server 127.0.0.1:9002;" in conf
    assert "proxy_set_header Upgrade $http_upgrade;" in conf and "listen 127.0.0.1:8501;" in conf
    assert "listen 0.0.0.0:8501;" in classroom.nginx_conf(8501, [9001], tmp_path, public=True)
