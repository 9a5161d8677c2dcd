"""Models for the pages, loaded once per process (``st.cache_resource``) with a progress bar.

A model that cannot be loaded (offline hub id, missing package, too big) raises
:class:`~specsim.models.ModelUnavailable`; pages catch it and show its message with ``st.error``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import streamlit as st
from streamlit.logger import get_logger

from specsim import models
from specsim.models import LoadedModel, ModelUnavailable

Progress = Callable[[float, str], None]
_LOG = get_logger(__name__)
LOADS: list[str] = []  # every model this process has loaded, in order (the server log says so too)


class _Once:
    """A model loaded on first use, under a lock, then kept.

    ``st.cache_resource`` holds one of these per model for the whole process. The loading itself
    happens outside the cached function: Streamlit records the elements a cached function draws and
    replays them in other sessions, which must not happen to a progress bar.
    """

    def __init__(self, load: Callable[[Progress], LoadedModel]):
        self._load = load
        self._lock = threading.Lock()
        self.value: LoadedModel | None = None

    def get(self, progress: Progress) -> LoadedModel:
        with self._lock:
            if self.value is None:
                self.value = self._load(progress)  # an exception leaves it unloaded, so a retry loads again
                LOADS.append(self.value.name)
                _LOG.info("specsim loaded model %s (model loads in this process: %d)", self.value.name, len(LOADS))
            return self.value


@st.cache_resource(show_spinner=False)
def _bundled() -> _Once:
    return _Once(lambda progress: models.load_bundled_target(progress=progress))


@st.cache_resource(show_spinner=False, max_entries=4)
def _by_id(name: str) -> _Once:
    return _Once(lambda progress: models.load_model(name, progress=progress))


def _with_bar(label: str, load: Callable[[Progress], LoadedModel]) -> LoadedModel:
    """Run ``load`` with a progress bar that disappears once it is done (a cache hit never shows it)."""
    slot = st.empty()

    def progress(fraction: float, message: str) -> None:
        slot.progress(max(0.0, min(1.0, fraction)), text=f"{label}: {message}")

    try:
        return load(progress)
    finally:
        slot.empty()


def bundled_target() -> LoadedModel:
    """SmolLM2-135M-Instruct from the bundled package (offline)."""
    return _with_bar("Loading the bundled target", _bundled().get)


def model_by_id(name: str) -> LoadedModel:
    """A causal LM by hub id or local folder; raises ModelUnavailable with a readable message."""
    name = name.strip()
    if not name:
        raise ModelUnavailable("No model id given: type a hub id (owner/name) or a local folder.")
    return _with_bar(f"Loading {name}", _by_id(name).get)


__all__ = ["ModelUnavailable", "bundled_target", "model_by_id"]
