"""Load what a drafter needs for a loaded target (the registry, :mod:`specsim.methods`, picks which)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from specsim.core.defaults import COPY_NGRAM, DRAFT_MODEL
from specsim.core.errors import brief_error
from specsim.core.model_checks import shared_vocab_size
from specsim.core.models import LoadedModel, ModelUnavailable, load_model

if TYPE_CHECKING:

    from specsim.core.drafters import Drafter, PromptLookupDrafter


def usable_device(name: str) -> bool:
    """Whether ``name`` is a torch device this machine has (cpu, or cuda with a CUDA GPU)."""
    import torch
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError):
        return False
    return device.type == "cpu" or (device.type == "cuda" and torch.cuda.is_available())


def draft_form(drafter: str, draft: str = "") -> str:
    """Which form of drafting a drafter setting runs: for the model drafter "eagle" or "standalone" (a distilled
    folder says which in its draft.json; any other model is a standalone draft), else the drafter kind itself."""
    if drafter != DRAFT_MODEL:
        return drafter
    try:
        kind = json.loads((Path(draft) / "draft.json").read_text(encoding="utf-8")).get("kind")
    except (OSError, ValueError, AttributeError):
        kind = None
    return "eagle" if kind == "eagle" else "standalone"


def load_draft_model(draft: str, target: LoadedModel, local: bool | None = None, copy: bool = True) -> Drafter:
    """A :class:`ModelDrafter` from a hub id or a folder; a folder with ``id_map.json`` is a reduced-vocabulary
    draft saved by ``specsim.distill``. ``local`` as for :func:`specsim.core.models.load_model`.

    ``copy``: a distilled standalone draft also copies where the text repeats itself (:func:`copy_lookup`);
    a hub draft, big enough to copy by itself, never does."""
    from specsim.core.model_drafters import ModelDrafter
    if local is not False and (Path(draft) / "id_map.json").is_file():
        try:
            from specsim.core.trained_drafters import make_drafter  # a standalone draft or the EAGLE-style one
        except ImportError as error:
            raise ModelUnavailable(f"{draft} is a distilled draft, but specsim.distill is not available") from error
        try:
            drafter = make_drafter(draft, target.model, dtype=target.dtype, device=target.device)
        except Exception as error:  # noqa: BLE001 - damaged files become one message, never a traceback
            raise ModelUnavailable(
                f"Could not load the distilled draft in {draft}: {brief_error(error)}. Its files are damaged or "
                "incomplete (model.safetensors, config.json, draft.json, id_map.json); train it again or copy "
                "the folder again, or pick another drafter.") from error
        if copy and isinstance(drafter, ModelDrafter):
            drafter.copy_from = copy_lookup(target)
            drafter.name = drafter.name.removesuffix(")") + COPY_NOTE
        return drafter
    loaded = load_model(draft, device=target.device, dtype=target.dtype, local=local)
    shared_vocab_size(loaded.tokenizer, target.tokenizer)  # raises TokenizerMismatch with a clear message
    return ModelDrafter(loaded.model, name=loaded.name)


COPY_NOTE = ", copying repeated text)"


def copy_lookup(target: LoadedModel) -> PromptLookupDrafter:
    """The n-gram lookup a distilled draft copies with (``defaults.COPY_NGRAM``), blind to special tokens."""
    from specsim.core.drafters import PromptLookupDrafter
    low, high = COPY_NGRAM
    return PromptLookupDrafter(max_ngram=high, min_ngram=low,
                               special_ids=getattr(target.tokenizer, "all_special_ids", ()))


def prompt_lookup_drafter(target: LoadedModel) -> PromptLookupDrafter:
    """Prompt lookup that never matches or copies the target tokenizer's special (chat-template) tokens."""
    from specsim.core.drafters import PromptLookupDrafter
    return PromptLookupDrafter(special_ids=getattr(target.tokenizer, "all_special_ids", ()))
