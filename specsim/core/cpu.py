"""The machine a process runs on: ``/proc/cpuinfo`` read in one place, the CPU's name and flags, and the one identity
every measurement is keyed by (:func:`machine_id`: recordings, the run cache, the machine profile, the kernels)."""

from __future__ import annotations

import functools
import platform
from pathlib import Path


@functools.cache
def _cpuinfo() -> str:
    """/proc/cpuinfo's text, read once ("" where it cannot be read: not Linux)."""
    try:
        return Path("/proc/cpuinfo").read_text()
    except OSError:
        return ""


def machine_name(cpuinfo: str | None = None) -> str:
    """The CPU's model name (Linux), else what platform reports. ``cpuinfo`` stands in for the file's text."""
    for line in (_cpuinfo() if cpuinfo is None else cpuinfo).splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def cpu_flags(cpuinfo: str | None = None) -> frozenset[str]:
    """Every feature flag the CPU lists (x86 ``flags``, Arm ``Features``); empty where the file cannot be read."""
    flags: set[str] = set()
    for line in (_cpuinfo() if cpuinfo is None else cpuinfo).splitlines():
        name, _, value = line.partition(":")
        if name.strip() in ("flags", "Features"):
            flags.update(value.split())
    return frozenset(flags)


def device_name(device: str) -> str:
    """The GPU's name for a CUDA device, else the CPU's model name: what a pass's timings belong to."""
    if device.startswith("cuda"):
        import torch  # here: a CUDA device is torch's

        return torch.cuda.get_device_name(torch.device(device))
    return machine_name()


def machine_id(device: str, threads: int | None = None) -> str:
    """What a timing depends on besides what was run: the CPU (which also sets a GPU pass's cost, through the
    host), the GPU on a CUDA device, the thread count and the torch build."""
    import torch  # here: a class replica names no machine and never loads torch

    gpu = f" | {device_name(device)}" if device.startswith("cuda") else ""
    n = threads or torch.get_num_threads()
    return f"{machine_name()}{gpu} | {n} thread{'' if n == 1 else 's'} | torch {torch.__version__}"
