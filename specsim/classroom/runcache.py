"""A cache of finished live runs, keyed by everything that decides a run, shared by a class.

A run's tokens depend on the models, the drafter, the prompt, K and its policy, temperature, top-p, seed and the
token budget; its timings also on the dtype, the decode path and the machine. :func:`run_key` is the sha256 of
all of that as canonical JSON, so two requests share an entry only when a second run would repeat the first.

Two stores with one interface (``get(key)``, ``put(key, entry)``): :class:`DiskStore`, a folder of JSON files
(bounded by entry count and age, least recently used evicted first), and :class:`RedisStore`, for several app
replicas and workers (each entry with a TTL, a sorted set by last use bounding their number).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pydantic import TypeAdapter

from specsim.core.defaults import DRAFT_MODEL
from specsim.core.trace import Trace
from specsim.request import RunRequest

KEY_VERSION = 3  # bump when what decides a run changes, so old entries are never read as new ones
MAX_ENTRIES = 500
MAX_AGE_S = 14 * 24 * 3600.0


def _identity(name: str, local: bool | None) -> str:
    """A model or draft by name; a local folder also by a digest of its config and weights' sizes and times, so a
    folder retrained under the same name is a different model."""
    folder = Path(name)
    if local is False or not folder.is_dir():
        return name
    digest = hashlib.sha256()
    for path in sorted(folder.iterdir()):
        if path.suffix in (".json", ".safetensors", ".bin", ".pt"):
            stat = path.stat()
            digest.update(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    return f"{name} {digest.hexdigest()[:12]}"


def run_key(request: RunRequest, machine: str, resolve: bool = True) -> str:
    """sha256 of the canonical JSON of everything that decides the run ``request`` describes, on ``machine``.

    ``resolve``: fill in this process's device, dtype and decode path first. A class's pages pass False: the workers
    resolve a request on their own machine (a replica never loads torch), and ``machine`` decides those defaults."""
    r = request.resolved() if resolve else request
    decides = {
        "version": KEY_VERSION, "target": _identity(r.target, r.target_local), "drafter": r.drafter,
        "draft": _identity(r.draft, r.draft_local) if r.drafter == DRAFT_MODEL else "",
        "early_exit_layers": r.early_exit_layers if r.drafter == "early_exit" else None,
        "prompt_ids": list(r.prompt_ids), "prompt": "" if r.prompt_ids else r.prompt,
        "k": r.k, "policy": r.policy, "temperature": float(r.temperature),
        "top_p": r.top_p, "top_k": r.top_k, "seed": r.seed, "max_new_tokens": r.max_new_tokens, "device": r.device,
        "dtype": r.dtype, "invariant": r.invariant, "machine": machine,
    }
    if r.min_p is not None:  # a later setting: keys of runs without it stay as they were
        decides["min_p"] = r.min_p
    if r.tree_nodes is not None:  # a token tree (specsim.core.trees): likewise
        decides["tree"] = [r.tree_nodes, r.tree_depth]
    return hashlib.sha256(json.dumps(decides, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


@dataclass(frozen=True)
class CachedRun:
    """A finished run: both traces, and when (Unix time) and on which machine they were recorded."""

    spec: Trace
    plain: Trace
    recorded_at: float
    machine: str

    def to_json(self) -> str:
        return _ENTRY.dump_json(self).decode()

    @classmethod
    def from_json(cls, text: str) -> CachedRun:
        return _ENTRY.validate_json(text)


_ENTRY = TypeAdapter(CachedRun)  # pydantic writes and reads a cache entry, the traces inside it included


class RunStore(Protocol):
    def get(self, key: str) -> CachedRun | None: ...

    def put(self, key: str, entry: CachedRun) -> None: ...


def default_folder() -> Path:
    """``$SPECSIM_CACHE/runs``, by default ``~/.cache/specsim/runs``."""
    from specsim.core.paths import cache_dir

    return cache_dir() / "runs"


class DiskStore:
    """One JSON file per entry; a read marks it used (its modification time), a write evicts entries not used for
    ``max_age_s`` and then the least recently used beyond ``max_entries``."""

    def __init__(self, folder: str | Path | None = None, max_entries: int = MAX_ENTRIES, max_age_s: float = MAX_AGE_S):
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.folder = Path(folder) if folder is not None else default_folder()
        self.max_entries, self.max_age_s = max_entries, max_age_s
        self._last_ns = 0

    def _touch(self, path: Path) -> None:
        """Mark a file used now, to the nanosecond (a file system's own clock may tick only every few ms)."""
        stamp = max(time.time_ns(), self._last_ns + 1)
        self._last_ns = stamp
        os.utime(path, ns=(stamp, stamp))

    def _path(self, key: str) -> Path:
        if not key.isalnum():
            raise ValueError(f"not a run key: {key!r}")
        return self.folder / f"{key}.json"

    def get(self, key: str) -> CachedRun | None:
        path = self._path(key)
        try:
            if time.time() - path.stat().st_mtime > self.max_age_s:
                path.unlink(missing_ok=True)
                return None
            entry = CachedRun.from_json(path.read_text(encoding="utf-8"))
            self._touch(path)  # used now: the last to be evicted
            return entry
        except (OSError, ValueError, KeyError, TypeError):  # missing, or a damaged file: a miss
            return None

    def put(self, key: str, entry: CachedRun) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self._path(key)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(entry.to_json(), encoding="utf-8")
        tmp.replace(path)  # readers never see half a file
        self._touch(path)
        self.evict()

    def keys(self) -> list[str]:
        """Every stored key, least recently used first."""
        files = []
        for path in self.folder.glob("*.json"):
            try:
                files.append((path.stat().st_mtime_ns, path.stem))
            except OSError:
                continue
        return [key for _, key in sorted(files)]

    def evict(self) -> None:
        now, keys = time.time(), self.keys()
        for key in keys:
            path = self._path(key)
            try:
                if now - path.stat().st_mtime > self.max_age_s:
                    path.unlink(missing_ok=True)
            except OSError:
                continue
        for key in self.keys()[: -self.max_entries]:
            self._path(key).unlink(missing_ok=True)


class RedisStore:
    """Entries as Redis strings with a TTL; the sorted set ``{prefix}lru`` scores each key by its last use, and a
    write drops the least recently used beyond ``max_entries``. Several processes share it safely."""

    def __init__(self, connection, max_entries: int = MAX_ENTRIES, ttl_s: float = MAX_AGE_S,
                 prefix: str = "specsim:run:"):
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.redis, self.max_entries, self.ttl_s, self.prefix = connection, max_entries, int(ttl_s), prefix
        self.lru = f"{prefix}lru"

    def get(self, key: str) -> CachedRun | None:
        text = self.redis.get(self.prefix + key)
        if text is None:
            self.redis.zrem(self.lru, key)
            return None
        with self.redis.pipeline() as pipe:
            pipe.zadd(self.lru, {key: time.time()}).expire(self.prefix + key, self.ttl_s).execute()
        try:
            return CachedRun.from_json(text)
        except (ValueError, KeyError, TypeError):
            return None

    def put(self, key: str, entry: CachedRun) -> None:
        with self.redis.pipeline() as pipe:
            pipe.set(self.prefix + key, entry.to_json(), ex=self.ttl_s).zadd(self.lru, {key: time.time()}).execute()
        self.evict()

    def keys(self) -> list[str]:
        """Every key the sorted set holds, least recently used first."""
        return [k.decode() if isinstance(k, bytes) else k for k in self.redis.zrange(self.lru, 0, -1)]

    def evict(self) -> None:
        self.redis.zremrangebyscore(self.lru, "-inf", time.time() - self.ttl_s)  # expired by their TTL already
        extra = self.redis.zcard(self.lru) - self.max_entries
        if extra > 0:
            for key, _score in self.redis.zpopmin(self.lru, extra):
                self.redis.delete(self.prefix + (key.decode() if isinstance(key, bytes) else key))


__all__ = ["CachedRun", "DiskStore", "RedisStore", "RunStore", "default_folder", "run_key"]
