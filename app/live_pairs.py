"""Which models the live page runs: the bundled target (offline), hub presets, or custom ids.

Turns the page's settings into model ids and drafter settings (pure, no Streamlit);
:func:`app.loaders.load_pair` loads them. An unknown pair raises
:class:`~specsim.models.ModelUnavailable` with a message for the user.
"""

from __future__ import annotations

import re

from app.live_params import LiveSettings
from specsim import defaults, models
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


def target_id(settings: LiveSettings) -> str | None:
    """The target's hub id or folder for the settings; None for the bundled target."""
    if settings.pair == BUNDLED:
        return None
    if settings.pair == CUSTOM:
        if settings.target.strip() in models.BUNDLED_ALIASES:  # the one bundled copy, not a second load
            return None
        return settings.target
    presets = _presets()
    if settings.pair not in presets:
        raise ModelUnavailable(f"Unknown model pair {settings.pair!r}.")
    return presets[settings.pair][0]


def draft_id(settings: LiveSettings) -> str | None:
    """The draft model's hub id or folder for the settings (None: none ships for this pair)."""
    if settings.pair == CUSTOM:
        return settings.draft
    if settings.pair == BUNDLED:
        return defaults.DEFAULT_DRAFT or None
    return _presets()[settings.pair][1]


def early_exit_layers(settings: LiveSettings, target: LoadedModel) -> int:
    """Layers the early-exit drafter runs: the tuned default for the bundled target, else half the target's."""
    if settings.pair == BUNDLED:
        return defaults.DEFAULT_EARLY_EXIT_LAYERS
    return max(1, len(target.model.model.layers) // 2)


def encode(target: LoadedModel, prompt: str) -> list[int]:
    """Token ids of the prompt as the target expects it (its chat template when it has one)."""
    return models.format_prompt(target.tokenizer, prompt)
