"""Models for the pages, loaded once per process (``st.cache_resource``) with a progress bar.

A model that cannot be loaded (offline hub id, missing package, too big) raises
:class:`~specsim.core.models.ModelUnavailable`; pages catch it and show its message with ``st.error``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import streamlit as st
from streamlit.logger import get_logger

from app import classqueue
from app.live import pairs as live_pairs
from specsim.core import defaults, models
from specsim.core.defaults import DRAFT_MODEL
from specsim.core.models import LoadedModel, ModelUnavailable
from specsim.liverun import ModelShelf
from specsim.request import RunRequest

if TYPE_CHECKING:
    from specsim.core.model_drafters import ModelDrafter

Progress = Callable[[float, str], None]
T = TypeVar("T")
_LOG = get_logger(__name__)


@st.cache_resource(show_spinner=False)
def shelf() -> ModelShelf:
    """The process's one shelf of models (:class:`specsim.liverun.ModelShelf`, the class workers' kind),
    shared by every session. Loading happens in its calls, outside this cached function: Streamlit records the
    elements a cached function draws and replays them in other sessions, which must not happen to a progress bar."""
    return ModelShelf()


def _with_bar(label: str, load: Callable[[Progress], LoadedModel]) -> LoadedModel:
    """Run ``load`` with a progress bar that disappears once it is done (a model on the shelf never shows it)."""
    slot = st.empty()

    def progress(fraction: float, message: str) -> None:
        slot.progress(max(0.0, min(1.0, fraction)), text=f"{label}: {message}")

    try:
        return _logged(lambda: load(progress))
    finally:
        slot.empty()


_LOGGED = {"loads": 0}  # how many of the shelf's loads the server's log has told
_LOG_LOCK = threading.Lock()


def _logged(load: Callable[[], T]) -> T:
    """Run ``load``; then say in the server's log which models the shelf loaded since the log last said (a class's
    replicas must load none). Each load is told once: sessions load at the same time, and a session that waited
    for another's load used to tell that load too."""
    value = load()
    with _LOG_LOCK:
        loads = list(shelf().loads)
        for count, name in enumerate(loads[_LOGGED["loads"]:], start=_LOGGED["loads"] + 1):
            _LOG.info("specsim loaded model %s (model loads in this process: %d)", name, count)
        _LOGGED["loads"] = len(loads)
    return value


def bundled_target() -> LoadedModel:
    """SmolLM2-135M-Instruct from the bundled package (offline)."""
    return _with_bar("Loading the bundled target",
                     lambda progress: shelf().target_named(defaults.DEFAULT_TARGET, progress=progress))


def bundled_dtype_name() -> str:
    """The dtype :func:`bundled_target` loads the target in on this machine (the loader's default), e.g. "bfloat16";
    in a class, where the workers load it and this replica never loads torch, "the class workers' dtype"."""
    if classqueue.queue_url() is not None:
        return "in the class workers' dtype"
    return str(models.parse_dtype(None, models.default_device())).removeprefix("torch.")


def model_by_id(name: str, local: bool | None = None) -> LoadedModel:
    """A causal LM by hub id or local folder (``local`` as for :func:`specsim.core.models.load_model`); raises
    ModelUnavailable with a readable message."""
    name = name.strip()
    if not name:
        raise ModelUnavailable("No model id given: type a hub id (owner/name) or a local folder.")
    return _with_bar(f"Loading {name}", lambda progress: shelf().target_named(name, local, progress))


def draft_model(name: str, target: LoadedModel, local: bool | None = None) -> ModelDrafter:
    """A fresh :class:`ModelDrafter` around a draft model loaded once per process for this target: drafters keep
    per-run state (their KV cache), so every run gets its own copy; the weights are shared."""
    with st.spinner(f"Loading the draft model {name}…"):
        return _logged(lambda: shelf().draft(name.strip(), local, target))


def load_models(request: RunRequest) -> LoadedModel:
    """Put a run request's models (:func:`app.live.pairs.request_for`) on the shelf, with progress bars, and return
    its target; no drafter is built here: :func:`specsim.liverun.run_request` builds the run's one drafter
    from :func:`shelf`. Errors name the models as the learner typed them, never the server's paths."""
    where, draft = live_pairs.sources_of(request)
    try:
        target = bundled_target() if where is None else model_by_id(where.name, where.local)
    except ModelUnavailable as error:
        raise ModelUnavailable(where.hide_path(str(error)) if where else str(error)) from None
    if request.drafter == DRAFT_MODEL:
        if draft is None:
            raise ModelUnavailable(live_pairs.NO_DRAFT)
        try:
            with st.spinner(f"Loading the draft model {draft.typed or draft.name}…"):
                _logged(lambda: shelf().load(request))
        except ModelUnavailable as error:
            raise ModelUnavailable(draft.hide_path(str(error))) from None
    return target


__all__ = ["ModelUnavailable", "bundled_dtype_name", "bundled_target", "draft_model", "load_models", "model_by_id",
           "shelf"]


@st.cache_resource(show_spinner=False)
def medusa_heads():
    """The shipped Medusa heads (raises FileNotFoundError with a how-to when missing)."""
    from specsim.variants.medusa import MedusaHeads

    return MedusaHeads.load()
