"""A class on one machine: Redis, N queue workers and M app replicas behind nginx with sticky sessions.

    make class WORKERS=2 REPLICAS=2 PORT=8501        # then open http://localhost:8501
    .venv/bin/python scripts/classroom.py --workers 2 --replicas 2 --port 8501 [--public] [--redis URL]

Every part is a plain process this launcher starts and stops (Ctrl-C stops them all; so does any one of them
dying, with its log's last lines):

- ``redis-server`` on a free port, no persistence (or ``--redis URL``: a server already running, e.g. on another
  machine, which workers elsewhere use too);
- N ``python -m specsim.worker`` processes, one torch thread each, the bundled target loaded before the first job;
- M Streamlit replicas of the app on free local ports, each in class mode (``SPECSIM_QUEUE_URL``);
- ``nginx`` in front of them on ``--port``. A Streamlit session lives on one replica (its websocket, its
  downloads and media), so nginx sends a browser to the same replica every time: it hashes the client's address
  and user agent (``hash ... consistent``), which keeps a class's learners, one per machine, on their replica.

Workers on other machines: run ``python -m specsim.worker --redis redis://THIS_HOST:PORT/0 --preload bundled``
there, with Redis started here with ``--public`` (it then listens on every interface: protect it by a firewall).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
READY_S = 120.0  # a replica or a worker on a busy 2-core machine


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
    }}
}}
"""


@dataclass
class Part:
    """One process of the class and the file its output goes to."""

    name: str
    process: subprocess.Popen
    log: Path

    def tail(self, lines: int = 15) -> str:
        text = self.log.read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:])


@dataclass
class Classroom:
    """What is running: the Redis URL, the app's address behind nginx, each replica's own address, every process."""

    redis_url: str
    url: str
    replicas: list[str]
    parts: list[Part] = field(default_factory=list)
    folder: Path | None = None

    def dead(self) -> Part | None:
        return next((p for p in self.parts if p.process.poll() is not None), None)

    def workers(self) -> list[Part]:
        return [p for p in self.parts if p.name.startswith("worker")]


def _start(parts: list[Part], folder: Path, name: str, cmd: list[str], env: dict | None = None) -> Part:
    log = folder / f"{name}.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, **(env or {})}, stdout=sink,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    part = Part(name, process, log)
    parts.append(part)
    return part


def _wait(check, what: str, parts: list[Part], timeout: float = READY_S) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if check():
            return
        dead = next((p for p in parts if p.process.poll() is not None), None)
        if dead is not None:
            raise RuntimeError(f"{dead.name} stopped while starting:\n{dead.tail()}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} was not ready in {timeout:.0f} s")
        time.sleep(0.1)


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


def stop(parts: list[Part]) -> None:
    """Stop every part: nginx and the replicas first, then the workers, Redis last."""
    for part in reversed(parts):
        if part.process.poll() is None:
            os.killpg(part.process.pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    for part in reversed(parts):
        try:
            part.process.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(part.process.pid, signal.SIGKILL)
            part.process.wait()


@contextmanager
def classroom(workers: int = 2, replicas: int = 2, port: int | None = None, redis_url: str | None = None,
              public: bool = False, env: dict | None = None, queue: str | None = None):
    """Start a class (see the module docstring) and yield its :class:`Classroom`; stop it all afterwards."""
    for binary in ("nginx",) + (() if redis_url else ("redis-server",)):
        if shutil.which(binary) is None and not Path("/usr/sbin", binary).exists():
            raise RuntimeError(f"{binary} is not installed (Debian: apt-get install {binary})")
    folder = Path(tempfile.mkdtemp(prefix="specsim-class-"))
    parts: list[Part] = []
    env = dict(env or {})
    if queue:
        env["SPECSIM_QUEUE_NAME"] = queue
    with ExitStack() as stack:
        stack.callback(stop, parts)
        if redis_url is None:
            rport = free_port()
            _start(parts, folder, "redis", [shutil.which("redis-server") or "/usr/bin/redis-server", "--port",
                                            str(rport), "--bind", "0.0.0.0" if public else "127.0.0.1", "--save", "",
                                            "--appendonly", "no", "--dir", str(folder)])
            redis_url = f"redis://127.0.0.1:{rport}/0"
        _wait(lambda: _redis_ok(redis_url), "Redis", parts)
        for i in range(workers):
            cmd = [sys.executable, "-m", "specsim.worker", "--redis", redis_url, "--threads", "1", "--preload",
                   "bundled", "--name", f"class-{os.getpid()}-{i}"] + (["--queue", queue] if queue else [])
            _start(parts, folder, f"worker-{i}", cmd, {"OMP_NUM_THREADS": "1", **env})
        ports = [free_port() for _ in range(replicas)]
        for i, p in enumerate(ports):
            _start(parts, folder, f"replica-{i}", [
                sys.executable, "-m", "streamlit", "run", str(ROOT / "app" / "main.py"), "--server.headless", "true",
                "--server.port", str(p), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
                "--server.fileWatcherType", "none"], {"SPECSIM_QUEUE_URL": redis_url, **env})
        port = port or free_port()
        conf = folder / "nginx.conf"
        for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (folder / sub).mkdir()
        conf.write_text(nginx_conf(port, ports, folder, public))
        _start(parts, folder, "nginx", [shutil.which("nginx") or "/usr/sbin/nginx", "-c", str(conf), "-p",
                                        str(folder), "-g", "daemon off;"])
        replica_urls = [f"http://127.0.0.1:{p}" for p in ports]
        for url in replica_urls:
            _wait(lambda u=url: _http_ok(f"{u}/_stcore/health"), f"the replica at {url}", parts)
        url = f"http://127.0.0.1:{port}"
        _wait(lambda: _http_ok(f"{url}/_stcore/health"), "nginx", parts)
        _wait(lambda: _worker_count(redis_url) >= workers, f"{workers} workers", parts)
        yield Classroom(redis_url, url, replica_urls, parts, folder)


def _worker_count(redis_url: str) -> int:
    from redis import Redis
    from rq import Worker

    return Worker.count(connection=Redis.from_url(redis_url))


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
    try:
        with classroom(args.workers, args.replicas, args.port, args.redis, args.public) as room:
            print(f"specsim for a class: {room.url} ({args.replicas} app replicas, {args.workers} workers, Redis at "
                  f"{room.redis_url}; logs in {room.folder}). Ctrl-C stops it.", flush=True)
            while room.dead() is None:
                time.sleep(1)
            dead = room.dead()
            print(f"{dead.name} stopped; stopping the class. Its last lines:\n{dead.tail()}", file=sys.stderr)
            return 1
    except KeyboardInterrupt:
        return 0
    except (RuntimeError, TimeoutError) as error:
        print(f"scripts/classroom.py: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
