"""Which models the live page runs: the bundled target (offline), hub presets, or custom ids.

Turns the page's settings into a loaded target and a drafter; anything that cannot be loaded
raises :class:`~specsim.models.ModelUnavailable` with a message for the user.
"""

from __future__ import annotations

from app import loaders
from app.live_params import LiveSettings
from specsim import models
from specsim.drafters import EarlyExitDrafter, ModelDrafter, PromptLookupDrafter
from specsim.models import LoadedModel, ModelUnavailable

BUNDLED = "bundled"
CUSTOM = "custom"
EARLY_EXIT_LAYERS = 10  # of the bundled target's 30; used when specsim.defaults does not say


def _presets() -> dict[str, tuple[str, str]]:
    """Hub pairs, key -> (target id, draft id)."""
    presets = getattr(models, "PRESETS", {}) or {}
    out = {}
    for key, value in presets.items():
        target = getattr(value, "target", None) or (value[0] if isinstance(value, tuple | list) else None)
        draft = getattr(value, "draft", None) or (value[1] if isinstance(value, tuple | list) else None)
        if target and draft:
            out[str(key)] = (str(target), str(draft))
    return out


def choices() -> dict[str, str]:
    """Pair key -> label, bundled first and custom last."""
    out = {BUNDLED: "SmolLM2-135M-Instruct (bundled, offline)"}
    for key, (target, draft) in _presets().items():
        out[key] = f"{draft} → {target} (hub)"
    out[CUSTOM] = "Custom: hub ids or local folders"
    return out


def _target(settings: LiveSettings) -> LoadedModel:
    if settings.pair == BUNDLED:
        return loaders.bundled_target()
    if settings.pair == CUSTOM:
        return loaders.model_by_id(settings.target)
    presets = _presets()
    if settings.pair not in presets:
        raise ModelUnavailable(f"Unknown model pair {settings.pair!r}.")
    return loaders.model_by_id(presets[settings.pair][0])


def _draft_id(settings: LiveSettings) -> str | None:
    if settings.pair == CUSTOM:
        return settings.draft
    if settings.pair == BUNDLED:
        return None
    return _presets()[settings.pair][1]


def load(settings: LiveSettings):
    """(target, drafter) for the settings; loads what is not loaded yet."""
    target = _target(settings)
    if settings.drafter == "prompt_lookup":
        return target, PromptLookupDrafter()
    if settings.drafter == "early_exit":
        total = len(target.model.model.layers)
        return target, EarlyExitDrafter(target.model, min(EARLY_EXIT_LAYERS, max(1, total // 3)))
    draft_id = _draft_id(settings)
    if draft_id is None:
        raise ModelUnavailable("No draft model ships with the bundled target yet: choose prompt lookup or early "
                               "exit as the drafter, or a hub pair when online.")
    draft = loaders.model_by_id(draft_id)
    models.shared_vocab_size(draft.tokenizer, target.tokenizer)  # TokenizerMismatch (a ValueError) if they differ
    return target, ModelDrafter(draft.model, name=draft.name)


def encode(target: LoadedModel, prompt: str) -> list[int]:
    """Token ids of the prompt as the target expects it (its chat template when it has one)."""
    fmt = getattr(models, "format_prompt", None)
    if fmt is not None:
        ids = fmt(target.tokenizer, prompt)
        if isinstance(ids, str):
            ids = target.tokenizer(ids, add_special_tokens=False)["input_ids"]
        return list(ids)
    return list(target.tokenizer(prompt)["input_ids"])
