"""Each page's settings as a frozen dataclass, with its defaults, defined once. Pure: no Streamlit.

:mod:`app.keys` takes the session-state defaults of these settings from here, the URL codecs
(:mod:`app.calculator.params`, :mod:`app.live.params`) read links into them, and the pages compute from them.
"""

from __future__ import annotations

from dataclasses import dataclass

from specsim.core import defaults
from specsim.core.defaults import BATCH_CONTEXT, GPU_RIDGE


@dataclass(frozen=True)
class CalcSettings:
    """What the calculator shows: K, acceptance in percent, draft cost and verification cost factor."""

    k: int = defaults.DEFAULT_K
    alpha_pct: int = defaults.CALC_ALPHA_PCT
    draft_cost: float = defaults.CALC_DRAFT_COST
    verify_cost: float = defaults.CALC_VERIFY_COST  # one target pass over K+1 tokens, in one-token passes

    @property
    def alpha(self) -> float:
        """Per-token acceptance rate as a probability."""
        return self.alpha_pct / 100.0


@dataclass(frozen=True)
class LiveSettings:
    """What the user asked for on the live page.

    The number fields hold the text typed into their boxes when it is not a number in range
    (:func:`app.live.params.from_text`), so a refusal can name what was typed.
    """

    pair: str = "bundled"  # app.live.pairs.BUNDLED
    target: str = ""  # custom hub id or local folder (pair == "custom")
    draft: str = ""
    drafter: str = defaults.DEFAULT_DRAFTER
    prompt: str = "The quick brown fox jumps over the lazy dog. The quick brown fox"
    k: int | str = defaults.DEFAULT_K  # the page starts at this machine's measured best K (app.live.controls)
    temperature: float | str = 0.0
    max_new_tokens: int | str = defaults.DEFAULT_MAX_NEW_TOKENS
    seed: int | str = defaults.SEED_MIN
    policy: str = "fixed"  # how K moves from loop to loop (specsim.core.kpolicy.LIVE_POLICIES)
    top_k: int | str | None = None  # sampled runs: keep the k most likely tokens (None: every token)
    top_p: float | str | None = None  # sampled runs: keep the smallest nucleus holding this mass (None: all of it)
    min_p: float | str | None = None  # sampled runs: keep tokens at least this share of the top one's p (None: all)
    tree_nodes: int | str = defaults.DEFAULT_TREE_NODES  # policy "tree": the guesses each loop's tree holds
    tree_depth: int | str = defaults.DEFAULT_TREE_DEPTH  # policy "tree": its deepest level


@dataclass(frozen=True)
class UnchangedSettings:
    """The why-unchanged page: the draft's weight for each of the five tokens, and the seed of its sampled steps."""

    weights: tuple[int, ...] = (10, 40, 15, 5, 30)
    seed: int = 0


@dataclass(frozen=True)
class VerifySettings:
    """The is-verification-free page's batch-size model: the batch size, R of a hypothetical accelerator, and the
    context each sequence's KV cache holds."""

    batch: int = 1
    gpu_ridge: int = GPU_RIDGE  # tokens per pass before it is compute-bound (specsim.core.defaults.GPU_RIDGE)
    context: int = BATCH_CONTEXT  # tokens already cached per sequence (specsim.core.defaults.BATCH_CONTEXT)


@dataclass(frozen=True)
class VariantsSettings:
    """The variants page: tokens generated per variant, and the Medusa pass inspected."""

    max_new: int = 24
    step: int = 1
