"""A public class, started as `make class PUBLIC=1` starts it (scripts/classroom.py --public), real processes:

- issue 62 (4): a worker on another machine connects with the printed command, over this machine's network address
  (not 127.0.0.1), and a client without the password is refused;
- issue 62 (3): a kill -9 of supervisord takes every part of the class down with it (it used to leave Redis, the
  workers, the replicas and nginx running with nothing to restart or stop them).
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from tests.conftest import ROOT, require_class_binaries, tidy_class_folder

_spec = importlib.util.spec_from_file_location("specsim_classroom", ROOT / "scripts" / "classroom.py")
classroom = sys.modules.setdefault("specsim_classroom", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(classroom)


@pytest.fixture(scope="module")
def public_room(request):
    require_class_binaries()
    if classroom.lan_address().startswith("127."):
        pytest.skip("this machine has no network address other than loopback")
    with classroom.classroom(workers=1, replicas=1, public=True, env={"OMP_NUM_THREADS": "1"}) as started:
        yield started
    tidy_class_folder(request, started)


def test_a_worker_elsewhere_connects_with_the_printed_command_and_no_one_without_the_password(public_room):
    from redis import Redis
    from redis.exceptions import AuthenticationError, ResponseError

    command = classroom.remote_worker_command(public_room.redis_url)
    remote_url = command.split("--redis ")[1].split()[0]
    lan = classroom.lan_address()
    assert f"@{lan}:" in remote_url and not lan.startswith("127.")
    port = int(remote_url.rsplit(":", 1)[1].split("/")[0])
    with pytest.raises((AuthenticationError, ResponseError), match="(?i)auth"):
        Redis(host=lan, port=port, socket_timeout=5).ping()
    # the worker as the README's step 3 runs it, over the network address; --burst: stop once the queue is empty
    worker = subprocess.run([sys.executable, "-m", "specsim.classroom.worker", "--redis", remote_url, "--burst",
                             "--threads", "1"], cwd=ROOT, capture_output=True, text=True, timeout=180,
                            env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert worker.returncode == 0, worker.stdout[-2000:] + worker.stderr[-2000:]
    assert "DENIED" not in worker.stderr and "protected mode" not in worker.stderr


def test_a_kill_of_supervisord_takes_the_whole_class_down(public_room):
    parts = public_room.pids()
    assert {"redis", "worker-0", "replica-0", "nginx"} <= set(parts)
    family = {pid for pid in parts.values()}
    for pid in parts.values():  # nginx's worker processes, Streamlit's children
        family |= {child.pid for child in psutil.Process(pid).children(recursive=True)}
    os.kill(public_room.supervisor.pid, signal.SIGKILL)
    public_room.supervisor.wait(10)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(_alive(pid) for pid in family):
        time.sleep(0.2)
    assert not [pid for pid in family if _alive(pid)], "a part of the class outlived supervisord"


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
