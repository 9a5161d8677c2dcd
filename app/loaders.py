"""Models for the pages, loaded once per process (``st.cache_resource``) with a progress bar.

A model that cannot be loaded (offline hub id, missing package, too big) raises
:class:`~specsim.core.models.ModelUnavailable`; pages catch it and show its message with ``st.error``.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

import streamlit as st
from streamlit.logger import get_logger

from app.live import pairs as live_pairs
from specsim import methods
from specsim.core import models
from specsim.core.models import LoadedModel, ModelUnavailable
from specsim.request import RunRequest

if TYPE_CHECKING:
    from specsim.core.drafters import Drafter, ModelDrafter

Progress = Callable[[float, str], None]
_LOG = get_logger(__name__)
LOADS: list[str] = []  # every model this process has loaded, in order (the server log says so too)


T = TypeVar("T")


class _Once(Generic[T]):
    """A model loaded on first use, under a lock, then kept.

    ``st.cache_resource`` holds one of these per model for the whole process. The loading itself
    happens outside the cached function: Streamlit records the elements a cached function draws and
    replays them in other sessions, which must not happen to a progress bar.
    """

    def __init__(self, load: Callable[[Progress], T]):
        self._load = load
        self._lock = threading.Lock()
        self.value: T | None = None

    def get(self, progress: Progress) -> T:
        with self._lock:
            if self.value is None:
                self.value = self._load(progress)  # an exception leaves it unloaded, so a retry loads again
                LOADS.append(self.value.name)
                _LOG.info("specsim loaded model %s (model loads in this process: %d)", self.value.name, len(LOADS))
            return self.value


@st.cache_resource(show_spinner=False)
def _bundled() -> _Once[LoadedModel]:
    return _Once(lambda progress: models.load_bundled_target(progress=progress))


@st.cache_resource(show_spinner=False, max_entries=4)
def _by_id(name: str, local: bool | None) -> _Once[LoadedModel]:
    return _Once(lambda progress: models.load_model(name, progress=progress, local=local))


@st.cache_resource(show_spinner=False, max_entries=4)
def _draft(name: str, local: bool | None, target_name: str, device: str, dtype: str,
           _target: LoadedModel) -> _Once[ModelDrafter]:
    """Keyed by names; ``_target`` (not hashed) is the loaded target those names describe."""
    from specsim.core import draft_loader
    return _Once(lambda _progress: draft_loader.load_draft_model(name, _target, local=local))


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


def bundled_dtype_name() -> str:
    """The dtype :func:`bundled_target` loads the target in on this machine (the loader's default), e.g. "bfloat16";
    in a class, where the workers load it and this replica never loads torch, "the class workers' dtype"."""
    from app.live import classmode  # here: classmode imports the live page's views

    if classmode.queue_url() is not None:
        return "in the class workers' dtype"
    return str(models.parse_dtype(None, models.default_device())).removeprefix("torch.")


def model_by_id(name: str, local: bool | None = None) -> LoadedModel:
    """A causal LM by hub id or local folder (``local`` as for :func:`specsim.core.models.load_model`); raises
    ModelUnavailable with a readable message."""
    name = name.strip()
    if not name:
        raise ModelUnavailable("No model id given: type a hub id (owner/name) or a local folder.")
    return _with_bar(f"Loading {name}", _by_id(name, local).get)


def draft_model(name: str, target: LoadedModel, local: bool | None = None) -> ModelDrafter:
    """A fresh :class:`ModelDrafter` around a draft model loaded once per process for this target.

    Drafters keep per-run state (their KV cache), so every run gets its own shallow copy; the
    weights are shared. ``start()`` gives the copy a cache of its own.
    """
    holder = _draft(name.strip(), local, target.name, str(target.device), str(target.dtype), target)
    with st.spinner(f"Loading the draft model {name}…"):
        return copy.copy(holder.get(lambda _fraction, _message: None))


def load_pair(request: RunRequest) -> tuple[LoadedModel, Drafter]:
    """(target, a fresh drafter) for a run request (:func:`app.live.pairs.request_for`); loads what is not loaded
    yet. Errors name the models as the learner typed them, never the server's paths."""
    where, draft = live_pairs.sources_of(request)
    try:
        target = bundled_target() if where is None else model_by_id(where.name, where.local)
    except ModelUnavailable as error:
        raise ModelUnavailable(where.hide_path(str(error)) if where else str(error)) from None
    if request.drafter == "model":
        if draft is None:
            raise ModelUnavailable(live_pairs.NO_DRAFT)
        try:
            return target, draft_model(draft.name, target, draft.local)
        except ModelUnavailable as error:
            raise ModelUnavailable(draft.hide_path(str(error))) from None
    layers = request.early_exit_layers or max(1, len(target.model.model.layers) // 2)
    return target, methods.build_drafter(request.drafter, target, early_exit_layers=layers)


class PageShelf:
    """The page's shelf for :func:`specsim.classroom.liverun.run_request` (a class worker's is
    :class:`specsim.classroom.liverun.ModelShelf`): the models this module keeps for every session, loaded with a
    progress
    bar. :meth:`load` loads one run's pair before the run's own progress bar appears; :meth:`pair` hands it to the
    run (or loads it then)."""

    def __init__(self):
        self._ready: dict[str, tuple[LoadedModel, Drafter]] = {}

    def load(self, request: RunRequest) -> None:
        self._ready[request.model_dump_json()] = load_pair(request)

    def pair(self, request: RunRequest) -> tuple[LoadedModel, Drafter]:
        return self._ready.pop(request.model_dump_json(), None) or load_pair(request)


__all__ = ["ModelUnavailable", "PageShelf", "bundled_dtype_name", "bundled_target", "draft_model", "load_pair",
           "model_by_id"]


@st.cache_resource(show_spinner=False)
def medusa_heads():
    """The shipped Medusa heads (raises FileNotFoundError with a how-to when missing)."""
    from specsim.variants.medusa import MedusaHeads

    return MedusaHeads.load()
