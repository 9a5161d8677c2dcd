"""The machine a process runs on, by name: what recordings, the measured profile and the kernel cache are keyed by."""

from __future__ import annotations

import platform
from pathlib import Path


def machine_name() -> str:
    """The CPU's model name (Linux), else what platform reports."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
