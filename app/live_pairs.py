"""Which models the live page runs: the bundled target (offline), hub presets, or custom ids.

Turns the page's settings into a loaded target and a drafter; anything that cannot be loaded
raises :class:`~specsim.models.ModelUnavailable` with a message for the user.
"""

from __future__ import annotations

import re

from app import loaders
from app.live_params import LiveSettings
from specsim import build, defaults, models
from specsim.drafters import Drafter
from specsim.models import LoadedModel, ModelUnavailable

BUNDLED = "bundled"
CUSTOM = "custom"


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


def _target(settings: LiveSettings) -> LoadedModel:
    if settings.pair == BUNDLED:
        return loaders.bundled_target()
    if settings.pair == CUSTOM:
        if settings.target.strip() in models.BUNDLED_ALIASES:  # the one bundled copy, not a second load
            return loaders.bundled_target()
        return loaders.model_by_id(settings.target)
    presets = _presets()
    if settings.pair not in presets:
        raise ModelUnavailable(f"Unknown model pair {settings.pair!r}.")
    return loaders.model_by_id(presets[settings.pair][0])


def _draft_id(settings: LiveSettings) -> str | None:
    if settings.pair == CUSTOM:
        return settings.draft
    if settings.pair == BUNDLED:
        return defaults.DEFAULT_DRAFT or None
    return _presets()[settings.pair][1]


def load(settings: LiveSettings) -> tuple[LoadedModel, Drafter]:
    """(target, drafter) for the settings; loads what is not loaded yet."""
    target = _target(settings)
    if settings.drafter == "model":
        draft_id = _draft_id(settings)
        if not draft_id:
            raise ModelUnavailable("No draft model ships with the bundled target yet: choose prompt lookup or "
                                   "early exit as the drafter, or a hub pair when online.")
        return target, loaders.draft_model(draft_id, target)
    total = len(target.model.model.layers) if settings.drafter == "early_exit" else 0
    layers = defaults.DEFAULT_EARLY_EXIT_LAYERS if settings.pair == BUNDLED else max(1, total // 2)
    return target, build.build_drafter(settings.drafter, target, early_exit_layers=layers)


def encode(target: LoadedModel, prompt: str) -> list[int]:
    """Token ids of the prompt as the target expects it (its chat template when it has one)."""
    return models.format_prompt(target.tokenizer, prompt)
