"""A class on one machine: Redis, N queue workers and M app replicas behind nginx with sticky sessions, every one
of them run and watched by supervisord (the ``supervisor`` package from PyPI).

    make class WORKERS=2 REPLICAS=2 PORT=8501        # then open http://localhost:8501
    .venv/bin/python scripts/classroom.py --workers 2 --replicas 2 --port 8501 [--public] [--redis URL]

supervisord starts the parts below and restarts any that dies, at once when it had been running and with a growing
back-off (1 s, 2 s, 3 s, …) when it dies while starting; every start and death goes to its log, which this script
prints as it grows. The class stops only on Ctrl-C (supervisord then stops every part, nginx first, Redis last):

- ``redis-server`` on a free port, its append-only file in the class's folder (or ``--redis URL``: a server already
  running, e.g. on another machine, which workers elsewhere use too);
- N ``python -m specsim.classroom.worker`` processes, one torch thread each, the bundled target loaded before the first
job;
- M Streamlit replicas of the app on free local ports, each in class mode (``SPECSIM_QUEUE_URL``);
- ``nginx`` in front of them on ``--port``. A Streamlit session lives on one replica (its websocket, its
  downloads and media), so nginx sends a browser to the same replica every time: it hashes the client's address
  and user agent (``hash ... consistent``), which keeps a class's learners, one per machine, on their replica.

What a death costs: a worker's run goes back to the front of the queue (:mod:`specsim.classroom.jobs`) and its learner
waits
for it; Redis keeps an append-only file in the class's folder (written every second), so a restarted Redis comes
back with the queue, the jobs and the class cache (at most the last second of writes lost), and the pages wait
for it; a replica's learners reconnect (nginx sends them to the other replica meanwhile: a new session); nginx's
learners reconnect once it is back.

Workers on other machines: start the class with ``--public`` (``make class PUBLIC=1``). Redis then listens on every
interface with a password generated for the class (protected mode stays on), and the script prints the exact command
a worker elsewhere runs, with this machine's address and the password in its Redis URL.
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from specsim.core import environment  # noqa: E402

READY_S = 120.0  # a replica or a worker on a busy 2-core machine
START_S = {"redis": 1, "worker": 5, "replica": 3, "nginx": 1}  # up this long to count as started (else back-off)
RETRIES = 10  # starts in a row that may fail before supervisord gives a part up (FATAL, in its log)
PRIORITY = {"redis": 10, "worker": 20, "replica": 30, "nginx": 40}  # start order; stop order is the reverse
# What each part gets when supervisord itself dies (scripts/die_with_parent.py): Redis and nginx stop cleanly on
# SIGTERM (Redis flushes its append-only file); a worker's run goes back to the queue anyway, and a replica with open
# sessions does not stop on SIGTERM, so both are killed.
ORPHAN_SIGNAL = {"redis": "SIGTERM", "worker": "SIGKILL", "replica": "SIGKILL", "nginx": "SIGTERM"}
WORKER_THREADS = 1  # each worker's torch threads; `make class` measures the machine profile for this many


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def nginx_conf(port: int, replica_ports: list[int], prefix: Path, public: bool = False) -> str:
    """nginx's whole configuration: the replicas as one sticky upstream, websockets passed through."""
    servers = "\n".join(f"        server 127.0.0.1:{p};" for p in replica_ports)
    listen = f"{'0.0.0.0' if public else '127.0.0.1'}:{port}"
    return f"""worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log {prefix}/access.log;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    map $http_upgrade $connection_upgrade {{ default upgrade; '' close; }}
    upstream specsim {{
        hash $remote_addr$http_user_agent consistent;  # sticky: one browser, one replica
{servers}
    }}
    server {{
        listen {listen};
        client_max_body_size 20m;
        location / {{
            proxy_pass http://specsim;
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_read_timeout 86400;
            proxy_buffering off;
            add_header X-Specsim-Replica $upstream_addr always;
        }}
        # A download (st.download_button's file) lives in the memory of the replica that drew the page. After a
        # replica restarts, the sticky hash sends the browser's requests back to it while the page's session is
        # still on the replica that took it in meanwhile: a 404 there means "ask the other replicas".
        location /media/ {{
            proxy_pass http://specsim;
            proxy_next_upstream error timeout http_404;
            proxy_set_header Host $host;
            add_header X-Specsim-Replica $upstream_addr always;
        }}
    }}
}}
"""


@dataclass(frozen=True)
class Program:
    """One part of the class as supervisord runs it: its name, command line and extra environment."""

    name: str
    command: list[str]
    env: dict[str, str]

    @property
    def kind(self) -> str:
        return self.name.split("-")[0]


def _quote_env(env: dict[str, str]) -> str:
    """supervisord's ``environment=`` value: KEY="value" pairs ('%' doubled: supervisord expands %(name)s)."""
    return ",".join(f'{k}="{v.replace("%", "%%")}"' for k, v in sorted(env.items()))


def supervisord_conf(programs: list[Program], folder: Path) -> str:
    """supervisord's whole configuration: every part restarted when it dies, its output in its own log."""
    out = [f"""[supervisord]
nodaemon=true
logfile={folder}/supervisord.log
pidfile={folder}/supervisord.pid
childlogdir={folder}
loglevel=info

[unix_http_server]
file={folder}/supervisor.sock

[rpcinterface:supervisor]
supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface

[supervisorctl]
serverurl=unix://{folder}/supervisor.sock
"""]
    for program in programs:
        guarded = [sys.executable, str(ROOT / "scripts" / "die_with_parent.py"), ORPHAN_SIGNAL[program.kind],
                   *program.command]
        command = shlex.join(guarded).replace("%", "%%")
        out.append(f"""[program:{program.name}]
command={command}
directory={ROOT}
environment={_quote_env(program.env)}
priority={PRIORITY[program.kind]}
autostart=true
autorestart=true
startsecs={START_S[program.kind]}
startretries={RETRIES}
stopsignal=TERM
stopwaitsecs=10
stopasgroup=true
killasgroup=true
redirect_stderr=true
stdout_logfile={folder}/{program.name}.log
""")
    return "\n".join(out)


@dataclass
class Classroom:
    """What is running: the Redis URL, the app's address behind nginx, each replica's own address, and supervisord
    (its process, configuration and folder), which can say each part's process id and state."""

    redis_url: str
    url: str
    replicas: list[str]
    supervisor: subprocess.Popen
    conf: Path
    folder: Path

    def states(self) -> dict[str, tuple[str, int | None]]:
        """name -> (supervisord's state, e.g. RUNNING, STARTING, BACKOFF, EXITED, FATAL; its pid or None)."""
        return supervisor_states(self.conf)

    def pids(self) -> dict[str, int]:
        """name -> pid of every part running now."""
        return {name: pid for name, (_, pid) in self.states().items() if pid}

    def workers(self) -> list[str]:
        return [name for name in self.states() if name.startswith("worker")]


_STATUS = re.compile(r"^(?P<name>\S+)\s+(?P<state>[A-Z]+)(?:\s+pid (?P<pid>\d+),)?")


def supervisor_states(conf: Path) -> dict[str, tuple[str, int | None]]:
    done = subprocess.run([sys.executable, "-m", "supervisor.supervisorctl", "-c", str(conf), "status"],
                          capture_output=True, text=True, timeout=30)
    states = {}
    for line in done.stdout.splitlines():
        match = _STATUS.match(line)
        if match:
            states[match["name"]] = (match["state"], int(match["pid"]) if match["pid"] else None)
    return states


def _wait(check, what: str, supervisor: subprocess.Popen, folder: Path, timeout: float = READY_S) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if check():
            return
        if supervisor.poll() is not None:
            raise RuntimeError(f"supervisord stopped while the class started:\n{_tail(folder / 'supervisord.log')}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} was not ready in {timeout:.0f} s (logs in {folder})")
        time.sleep(0.1)


def _tail(log: Path, lines: int = 15) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:]) if log.exists() else ""


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as response:
            return response.status == 200
    except OSError:
        return False


def _redis_ok(url: str) -> bool:
    from redis import Redis
    from redis.exceptions import RedisError

    try:
        return bool(Redis.from_url(url, socket_timeout=1).ping())
    except RedisError:
        return False


def stop(supervisor: subprocess.Popen) -> None:
    """Stop supervisord, which stops every part (nginx and the replicas first, Redis last); kill what is left."""
    if supervisor.poll() is None:
        supervisor.send_signal(signal.SIGTERM)
    try:
        supervisor.wait(60)
    except subprocess.TimeoutExpired:
        os.killpg(supervisor.pid, signal.SIGKILL)
        supervisor.wait()


def redis_conf(port: int, folder: Path, public: bool, password: str | None) -> str:
    """redis-server's configuration: a class's own port and folder, an append-only file written every second, and,
    for a class other machines reach, every interface with a password. Protected mode stays on (Redis's default): it
    refuses remote clients only while no password is set."""
    lines = [f"port {port}", f"bind {'0.0.0.0' if public else '127.0.0.1'}", 'save ""', "appendonly yes",
             "appendfsync everysec", f"dir {folder}", "protected-mode yes"]
    if password:
        lines.append(f"requirepass {password}")
    return "\n".join(lines) + "\n"


def lan_address() -> str:
    """This machine's address on its network (the interface of its default route), for a worker elsewhere."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.254.254.254", 1))  # no packet is sent: this only picks the outgoing interface
            return s.getsockname()[0]
        except OSError:
            return socket.gethostbyname(socket.gethostname())


def remote_worker_command(redis_url: str) -> str:
    """The command a machine elsewhere runs to serve this class: the class's Redis URL with this machine's address."""
    remote = redis_url.replace("@127.0.0.1:", f"@{lan_address()}:", 1)
    return f"python -m specsim.classroom.worker --redis {remote} --preload bundled"


def programs(workers: int, replicas: int, redis_port: int | None, redis_url: str, replica_ports: list[int],
             nginx: Path, folder: Path, public: bool, env: dict[str, str], queue: str | None) -> list[Program]:
    """Every part of the class, as supervisord runs it (Redis reads ``folder``/redis.conf: :func:`redis_conf`)."""
    out = []
    if redis_port is not None:
        out.append(Program("redis", [shutil.which("redis-server") or "/usr/bin/redis-server",
                                     str(folder / "redis.conf")], {}))
    for i in range(workers):
        out.append(Program(f"worker-{i}", [
            sys.executable, "-m", "specsim.classroom.worker", "--redis", redis_url, "--threads", str(WORKER_THREADS),
            "--preload", "bundled",
            "--name", f"class-{os.getpid()}-{i}"] + (["--queue", queue] if queue else []),
            {"OMP_NUM_THREADS": str(WORKER_THREADS), **env}))
    for i, port in enumerate(replica_ports):
        out.append(Program(f"replica-{i}", [
            sys.executable, "-m", "streamlit", "run", str(ROOT / "app" / "main.py"), "--server.headless", "true",
            "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
            "--server.fileWatcherType", "none"], {environment.env_name("queue_url"): redis_url, **env}))
    out.append(Program("nginx", [shutil.which("nginx") or "/usr/sbin/nginx", "-c", str(nginx), "-p", str(folder),
                                 "-g", "daemon off;"], {}))
    return out


@contextmanager
def classroom(workers: int = 2, replicas: int = 2, port: int | None = None, redis_url: str | None = None,
              public: bool = False, env: dict | None = None, queue: str | None = None):
    """Start a class under supervisord (see the module docstring) and yield its :class:`Classroom`; stop it all
    afterwards."""
    for binary in ("nginx",) + (() if redis_url else ("redis-server",)):
        if shutil.which(binary) is None and not Path("/usr/sbin", binary).exists():
            raise RuntimeError(f"{binary} is not installed (Debian: apt-get install {binary})")
    folder = Path(tempfile.mkdtemp(prefix="specsim-class-"))
    env = {k: str(v) for k, v in (env or {}).items()}
    if queue:
        env[environment.env_name("queue_name")] = queue
    redis_port = None
    if redis_url is None:
        redis_port = free_port()
        password = secrets.token_urlsafe(24) if public else None  # other machines reach it: never without one
        auth = f":{password}@" if password else ""
        redis_url = f"redis://{auth}127.0.0.1:{redis_port}/0"
        conf_file = folder / "redis.conf"
        conf_file.write_text(redis_conf(redis_port, folder, public, password))
        conf_file.chmod(0o600)
    replica_ports = [free_port() for _ in range(replicas)]
    port = port or free_port()
    nginx = folder / "nginx.conf"
    for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (folder / sub).mkdir()
    nginx.write_text(nginx_conf(port, replica_ports, folder, public))
    conf = folder / "supervisord.conf"
    conf.write_text(supervisord_conf(programs(workers, replicas, redis_port, redis_url, replica_ports, nginx, folder,
                                              public, env, queue), folder))
    with (folder / "supervisord.out").open("wb") as out:
        supervisor = subprocess.Popen([sys.executable, "-m", "supervisor.supervisord", "-c", str(conf)], cwd=ROOT,
                                      stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait(lambda: _redis_ok(redis_url), "Redis", supervisor, folder)
        replica_urls = [f"http://127.0.0.1:{p}" for p in replica_ports]
        for url in replica_urls:
            _wait(lambda u=url: _http_ok(f"{u}/_stcore/health"), f"the replica at {url}", supervisor, folder)
        url = f"http://127.0.0.1:{port}"
        _wait(lambda: _http_ok(f"{url}/_stcore/health"), "nginx", supervisor, folder)
        _wait(lambda: _worker_count(redis_url) >= workers, f"{workers} workers", supervisor, folder)
        yield Classroom(redis_url, url, replica_urls, supervisor, conf, folder)
    finally:
        stop(supervisor)


def _worker_count(redis_url: str) -> int:
    from redis import Redis
    from rq import Worker

    return Worker.count(connection=Redis.from_url(redis_url))


def profile_command() -> list[str]:
    """Measure (once; cached) the machine profile the class's workers publish: the one for their thread count, so the
    live page starts at the K measured for the way the workers run (issue 62 (9): a 2-thread profile measured for
    `make run` was never the one 1-thread workers looked up)."""
    return [sys.executable, "-m", "specsim.measure.machine", "--threads", str(WORKER_THREADS)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/classroom.py", description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2, help="queue workers (one core each is a good start)")
    parser.add_argument("--replicas", type=int, default=2, help="Streamlit replicas behind nginx")
    parser.add_argument("--port", type=int, default=8501, help="where nginx listens")
    parser.add_argument("--redis", default=None, help="use this Redis instead of starting one")
    parser.add_argument("--public", action="store_true", help="listen on every interface, not only localhost")
    args = parser.parse_args(argv)
    if args.workers < 1 or args.replicas < 1:
        parser.error("--workers and --replicas must be at least 1")
    measured = subprocess.run(profile_command(), cwd=ROOT, env={**os.environ, "OMP_NUM_THREADS": str(WORKER_THREADS)})
    if measured.returncode != 0:
        print("scripts/classroom.py: the machine profile could not be measured; the live page starts at the lesson's "
              "K", file=sys.stderr)
    try:
        with classroom(args.workers, args.replicas, args.port, args.redis, args.public) as room:
            print(f"specsim for a class: {room.url} ({args.replicas} app replicas, {args.workers} workers; logs in "
                  f"{room.folder}). supervisord restarts a part that stops; Ctrl-C stops the class.", flush=True)
            if args.public and args.redis is None:
                print("A worker on another machine (same checkout, `make run` done once there) serves this class "
                      f"with:\n    {remote_worker_command(room.redis_url)}\nThe password in it is new for this "
                      "class; keep it to the machines you trust.", flush=True)
            log, shown = room.folder / "supervisord.log", 0
            while room.supervisor.poll() is None:  # the supervisor's log as it grows: every death and restart
                lines = log.read_text(errors="replace").splitlines() if log.exists() else []
                for line in lines[shown:]:
                    print(f"supervisord: {line}", flush=True)
                shown = len(lines)
                time.sleep(1)
            print(f"supervisord stopped; its last lines:\n{_tail(log)}", file=sys.stderr)
            return 1
    except KeyboardInterrupt:
        return 0
    except (RuntimeError, TimeoutError) as error:
        print(f"scripts/classroom.py: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
