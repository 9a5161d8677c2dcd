"""`make class` (issue 40): scripts/classroom.py's nginx configuration. The class itself (Redis, workers, replicas
behind nginx, all real processes) is exercised in tests/browser/test_class_browser.py, which shares one class among
its tests."""

from __future__ import annotations

import importlib.util
import sys

from tests.conftest import ROOT

_spec = importlib.util.spec_from_file_location("specsim_classroom", ROOT / "scripts" / "classroom.py")
classroom = sys.modules.setdefault("specsim_classroom", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(classroom)


def test_the_nginx_configuration_is_sticky_and_passes_websockets(tmp_path):
    conf = classroom.nginx_conf(8501, [9001, 9002], tmp_path)
    assert "hash $remote_addr$http_user_agent consistent;" in conf
    assert "server 127.0.0.1:9001;" in conf and "server 127.0.0.1:9002;" in conf
    assert "proxy_set_header Upgrade $http_upgrade;" in conf and "listen 127.0.0.1:8501;" in conf
    assert "listen 0.0.0.0:8501;" in classroom.nginx_conf(8501, [9001], tmp_path, public=True)
    assert f"pid {tmp_path}/nginx.pid;" in conf  # everything it writes stays in the class's own folder


def test_supervisord_restarts_every_part_in_order_with_its_own_log_and_environment(tmp_path):
    """Issue 52: the class runs under supervisord; each part restarts when it dies, starts in the order Redis,
    workers, replicas, nginx (and stops in reverse), and gets its environment ('%' escaped for supervisord)."""
    import configparser

    parts = classroom.programs(2, 1, 6390, "redis://127.0.0.1:6390/0", [9001], tmp_path / "nginx.conf", tmp_path,
                               False, {"OMP_NUM_THREADS": "1", "ODD": "50%"}, None)
    text = classroom.supervisord_conf(parts, tmp_path)
    conf = configparser.RawConfigParser()
    conf.read_string(text)
    names = [s.removeprefix("program:") for s in conf.sections() if s.startswith("program:")]
    assert names == ["redis", "worker-0", "worker-1", "replica-0", "nginx"]
    priorities = [int(conf[f"program:{n}"]["priority"]) for n in names]
    assert priorities == sorted(priorities) and priorities[0] < priorities[1] < priorities[-2] < priorities[-1]
    for name in names:
        section = conf[f"program:{name}"]
        assert section["autorestart"] == "true" and int(section["startretries"]) >= 3
        assert section["stdout_logfile"] == f"{tmp_path}/{name}.log" and section["killasgroup"] == "true"
    assert 'ODD="50%%"' in conf["program:worker-0"]["environment"]
    assert 'SPECSIM_QUEUE_URL="redis://127.0.0.1:6390/0"' in conf["program:replica-0"]["environment"]
    assert conf["program:redis"]["command"].endswith(f"{tmp_path}/redis.conf")
    assert "appendonly yes" in classroom.redis_conf(6390, tmp_path, False, None)  # a restarted Redis keeps its jobs
    for name in names:  # each part dies with supervisord, whatever kills it (issue 62)
        command = conf[f"program:{name}"]["command"]
        assert "die_with_parent.py" in command.split()[1] and command.split()[2] in ("SIGTERM", "SIGKILL")


def test_a_public_class_has_a_password_and_keeps_protected_mode(tmp_path):
    """Issue 62 (4): with PUBLIC=1, Redis listened on every interface with no password, and Redis 7's protected mode
    refused the remote worker. A public class's Redis now has a password and protected mode on."""
    local = classroom.redis_conf(6390, tmp_path, False, None)
    assert "bind 127.0.0.1" in local and "requirepass" not in local
    public = classroom.redis_conf(6390, tmp_path, True, "s3cret")
    assert "bind 0.0.0.0" in public and "requirepass s3cret" in public and "protected-mode yes" in public
    command = classroom.remote_worker_command("redis://:s3cret@127.0.0.1:6390/0")
    assert "redis://:s3cret@" in command and "@127.0.0.1:" not in command and "--preload bundled" in command


def test_the_class_measures_the_profile_its_workers_look_up(tmp_path):
    """Issue 62 (9): the workers run with one torch thread and publish the profile cached for one thread, but `make
    class` measured the default (two-thread) profile, so the class page always opened on the lesson's K."""
    command = classroom.profile_command()
    assert command[1:4] == ["-m", "specsim.measure.machine", "--threads"]
    worker = next(p for p in classroom.programs(1, 1, 6390, "redis://127.0.0.1:6390/0", [9001], tmp_path / "n.conf",
                                                tmp_path, False, {}, None) if p.kind == "worker")
    threads = worker.command[worker.command.index("--threads") + 1]
    assert command[4] == threads == str(classroom.WORKER_THREADS) == worker.env["OMP_NUM_THREADS"]
