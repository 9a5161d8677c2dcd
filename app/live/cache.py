"""This machine's run cache, for the embedded default (no class queue): a finished run made here is kept on disk,
and the same settings again replay it at once, saying when it was recorded. A "run fresh" box skips it.

The key is everything that decides a run, the machine included (:func:`specsim.classroom.runcache.run_key`); the store
is a
bounded folder of JSON files (:class:`specsim.classroom.runcache.DiskStore`). ``SPECSIM_RUN_CACHE`` names the folder
(default
``$SPECSIM_CACHE/runs``, i.e. ``~/.cache/specsim/runs``), or ``off`` for none; the test suite sets ``off`` and
turns it on where it tests it. Class mode uses the class's shared cache instead (app.live.classmode).
"""

from __future__ import annotations

import time
from datetime import datetime

from specsim.classroom.runcache import CachedRun, DiskStore, run_key
from specsim.core import environment
from specsim.core.cpu import machine_id
from specsim.core.trace import Trace
from specsim.request import RunRequest

CACHE_ENV = environment.env_name("run_cache")
OFF = ("off", "0", "no", "false", "none")


def store() -> DiskStore | None:
    """The run cache this process uses, or None when ``SPECSIM_RUN_CACHE`` turns it off."""
    value = environment.current().run_cache
    if value.lower() in OFF:
        return None
    return DiskStore(value or None)


def key_for(request: RunRequest) -> str:
    """The cache key of ``request`` run in this process, on the device it would run on."""
    return run_key(request, machine_id(request.resolved().device))


def lookup(cache: DiskStore, request: RunRequest) -> CachedRun | None:
    return cache.get(key_for(request))


def keep(cache: DiskStore, request: RunRequest, spec: Trace, plain: Trace) -> None:
    """Store a finished run (both traces); a write that fails (a full or read-only disk) only costs the cache."""
    try:
        cache.put(key_for(request), CachedRun(spec, plain, time.time(), machine_id(request.resolved().device)))
    except OSError:
        pass


def note(entry: CachedRun) -> str:
    when = datetime.fromtimestamp(entry.recorded_at).strftime("%Y-%m-%d %H:%M")
    return (f"Recorded on {when} on {entry.machine}, served from this machine's run cache: these exact settings ran "
            "here before, so the page replays that run (greedy output is fixed by the settings; the timings are "
            "that run's). Tick *Run fresh* for a new run, or change any setting.")


__all__ = ["CACHE_ENV", "keep", "key_for", "lookup", "note", "store"]
