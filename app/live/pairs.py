"""Which models the live page runs: the bundled target (offline), hub presets, or custom ids.

Turns the page's settings into model sources and drafter settings (no Streamlit);
:func:`app.loaders.load_models` loads them. An unknown pair raises
:class:`~specsim.core.models.ModelUnavailable` with a message for the user.

A custom id is typed by whoever uses the page, on a server: a hub id (``owner/name``) is loaded from the
hub and never looked up on this machine's disk, and a local folder only inside the folders the server
allows (:func:`allowed_roots`). Any other path gets one message, the same whether it exists, is a file
or a folder, so the page tells nothing about the server's file system.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from app.live import params as live_params
from app.settings import LiveSettings
from specsim.core import defaults, environment, model_checks, models, paths
from specsim.core.defaults import DRAFT_MODEL
from specsim.core.models import LoadedModel, ModelUnavailable
from specsim.request import RunRequest

BUNDLED = "bundled"
CUSTOM = "custom"
MODEL_DIRS_ENV = environment.env_name("model_dirs")
"""More folders custom models may be loaded from, separated by ``os.pathsep``."""
NOT_ALLOWED = ("The {side} must be a Hugging Face hub id (owner/name) or a folder inside the folders this server "
               "loads models from: the project folder, the specsim cache, the Hugging Face cache, or a folder listed "
               f"in {MODEL_DIRS_ENV} when the server was started. Other paths are not opened.")


NOT_A_URL = ("The {side} is a web address: type a Hugging Face hub id (owner/name) or a folder on this server "
             "instead. Models are not downloaded from other addresses.")


@dataclass(frozen=True)
class Source:
    """A model to load: a hub id (``local`` False: never read from this machine's disk), or a folder's real path.

    ``typed`` is the name as the user typed it: messages show that, never the server's real path.
    """

    name: str
    local: bool
    typed: str = field(default="", compare=False)

    def hide_path(self, message: str) -> str:
        """``message`` with this source's real path replaced by the name the user typed."""
        return message.replace(self.name, self.typed) if self.local and self.typed else message


def allowed_roots() -> list[Path]:
    """The folders custom models may come from: the project, the specsim cache, the Hugging Face cache, and
    every folder in ``$SPECSIM_MODEL_DIRS``; each with its links resolved."""
    from huggingface_hub import constants

    roots = [paths.REPO_ROOT, paths.cache_dir(), Path(constants.HF_HUB_CACHE)]
    roots += list(environment.current().model_dirs)
    return [Path(os.path.realpath(root)) for root in roots]


def source(name: str, side: str) -> Source:
    """Where to load the custom ``side`` ("target" or "draft") named ``name`` from; ModelUnavailable when the
    server may not open it."""
    name = name.strip()
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", name):
        raise ModelUnavailable(NOT_A_URL.format(side=side))
    path = Path(os.path.expanduser(name) if name == "~" or name.startswith("~/") else name)
    real = Path(os.path.realpath(paths.resolve(path)))  # relative to the project, links resolved, .. gone
    inside = any(real.is_relative_to(root) for root in allowed_roots())
    if model_checks.is_hub_id(name):  # a local folder only when an allowed one has that name
        return Source(str(real), local=True, typed=name) if inside and real.is_dir() else Source(name, local=False)
    if inside:
        return Source(str(real), local=True, typed=name)
    raise ModelUnavailable(NOT_ALLOWED.format(side=side))


def _slug(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")


def _presets() -> dict[str, tuple[str, str]]:
    """Hub pairs, URL key -> (target id, draft id)."""
    return {_slug(p.label): (p.target, p.draft) for p in models.PRESET_PAIRS}


def choices() -> dict[str, str]:
    """Pair key -> label, bundled first and custom last."""
    out = {BUNDLED: "SmolLM2-135M-Instruct (bundled, offline)"}
    out.update({_slug(p.label): f"{p.label} (hub, needs the internet once)" for p in models.PRESET_PAIRS})
    out[CUSTOM] = "Custom: hub ids or local folders"
    return out


def target(settings: LiveSettings) -> Source | None:
    """Where the target comes from for the settings; None for the bundled target."""
    if settings.pair == BUNDLED:
        return None
    if settings.pair == CUSTOM:
        if settings.target.strip() in models.BUNDLED_ALIASES:  # the one bundled copy, not a second load
            return None
        return source(settings.target, "target")
    presets = _presets()
    if settings.pair not in presets:
        raise ModelUnavailable(f"Unknown model pair {settings.pair!r}.")
    return Source(presets[settings.pair][0], local=False)


def draft(settings: LiveSettings) -> Source | None:
    """Where the draft model comes from for the settings (None: none ships for this pair, or none was typed)."""
    if settings.pair == CUSTOM:
        return source(settings.draft, "draft") if settings.draft.strip() else None
    if settings.pair == BUNDLED:
        return Source(defaults.DEFAULT_DRAFT, local=True) if defaults.DEFAULT_DRAFT else None
    return Source(_presets()[settings.pair][1], local=False)


def early_exit_layers(settings: LiveSettings, target: LoadedModel) -> int:
    """Layers the early-exit drafter runs: the tuned default for the bundled target, else half the target's."""
    if settings.pair == BUNDLED:
        return defaults.DEFAULT_EARLY_EXIT_LAYERS
    return max(1, len(target.model.model.layers) // 2)


def encode(target: LoadedModel, prompt: str) -> list[int]:
    """Token ids of the prompt as the target expects it (its chat template when it has one)."""
    return models.format_prompt(target.tokenizer, prompt)


NO_DRAFT = ("No draft model is given for this pair (none is installed in assets/drafts, or the custom pair names "
            "none): choose prompt lookup or early exit as the drafter, or type a draft model in a custom pair.")


def request_for(settings: LiveSettings) -> RunRequest:
    """The run the settings describe, built once per Run: this process runs it, or a class worker does
    (:func:`specsim.liverun.run_request` either way). The prompt goes as text (the process that loads the
    target
    encodes it); the names the learner typed ride in ``extra``, so a loading error shows them, never the server's
    paths. ModelUnavailable for a custom path the server may not open, BadRequest out of range."""
    where = target(settings)
    source_of_draft = draft(settings) if settings.drafter == DRAFT_MODEL else None
    if settings.drafter == DRAFT_MODEL and source_of_draft is None:
        raise ModelUnavailable(NO_DRAFT)
    typed = {side: s.typed for side, s in (("target", where), ("draft", source_of_draft)) if s is not None and s.typed}
    return RunRequest.checked(
        live_params.LABELS, prompt=settings.prompt, target=defaults.DEFAULT_TARGET if where is None else where.name,
        target_local=None if where is None else where.local, drafter=settings.drafter,
        draft="" if source_of_draft is None else source_of_draft.name,
        draft_local=None if source_of_draft is None else source_of_draft.local,
        early_exit_layers=defaults.DEFAULT_EARLY_EXIT_LAYERS if where is None else 0,  # 0: half the target's
        k=defaults.DEFAULT_K if settings.policy == live_params.TREE else settings.k,  # a tree has no K
        policy="fixed" if settings.policy == live_params.TREE else settings.policy,
        tree_nodes=settings.tree_nodes if settings.policy == live_params.TREE else None,
        tree_depth=settings.tree_depth if settings.policy == live_params.TREE else defaults.DEFAULT_TREE_DEPTH,
        temperature=settings.temperature, seed=settings.seed,
        top_k=settings.top_k, top_p=settings.top_p, min_p=settings.min_p,
        max_new_tokens=settings.max_new_tokens, extra={"typed": typed} if typed else {})


def sources_of(request: RunRequest) -> tuple[Source | None, Source | None]:
    """Where the request's target (None: the bundled one) and draft model (None: none) come from, with the names
    the learner typed (:func:`request_for`)."""
    typed = request.extra.get("typed", {})
    where = None if request.target == defaults.DEFAULT_TARGET else Source(
        request.target, bool(request.target_local), typed.get("target", ""))
    draft_from = Source(request.draft, bool(request.draft_local), typed.get("draft", "")) if request.draft else None
    return where, draft_from
