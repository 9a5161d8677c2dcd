"""Start the real app on a free port for browser tests and the start-up benchmark."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# SPECSIM_CHROMIUM points at another chromium binary (tests/test_ci.py uses it to check the missing-browser path)
CHROMIUM = os.environ.get("SPECSIM_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, timeout: float = 60.0) -> float:
    """Poll Streamlit's health endpoint; return the seconds it took to answer."""
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as r:
                if r.status == 200:
                    return time.perf_counter() - start
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"the app at {url} did not become healthy in {timeout:.0f} s")


@dataclass
class Server:
    """A running app: its process and the file its output goes to."""

    process: subprocess.Popen
    log: Path

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


SERVERS: dict[str, Server] = {}  # base URL -> the server behind it


@contextmanager
def running_app(port: int | None = None, env: dict | None = None):
    """Run ``streamlit run app/main.py`` headless; yield its base URL; stop it afterwards.

    Its output goes to a temporary log file (``SERVERS[url].log``), never to an unread pipe.
    """
    port = port or free_port()
    cmd = [
        sys.executable, "-m", "streamlit", "run", str(ROOT / "app" / "main.py"),
        "--server.headless", "true", "--server.port", str(port), "--server.address", "127.0.0.1",
        "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
    ]
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **(env or {})}
    log = Path(tempfile.mkstemp(prefix="specsim-server-", suffix=".log")[1])
    with log.open("wb") as sink:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=full_env, stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    SERVERS[url] = Server(proc, log)
    try:
        wait_healthy(url)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        SERVERS.pop(url, None)
        log.unlink(missing_ok=True)
