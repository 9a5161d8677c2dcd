"""What the variants' runs record for the pages: plain data, no torch.

The variants page's comparison runs on a class worker and reaches a replica pickled (:mod:`specsim.classroom.tasks`);
its
classes live here, apart from the torch code that fills them (:mod:`specsim.variants.lookahead`,
:mod:`specsim.variants.medusa_tree`), so reading a result never imports torch (issue 52: a replica loads no model).
"""

from __future__ import annotations

from dataclasses import dataclass

from specsim.core.trace import Trace


@dataclass(frozen=True)
class JacobiStep:
    """One lookahead pass: the window before and after its Jacobi iteration, and what was kept."""

    index: int
    context_len: int  # the window guesses positions context_len, context_len + 1, ...
    window_before: tuple[int, ...]
    window_after: tuple[int, ...]  # the pass's argmax at each window slot (slot 1 is always right)
    candidates: tuple[tuple[int, ...], ...]  # pool n-grams verified in the same pass
    winner: str  # "jacobi", "n-gram i" or "none" (only the target's own token was kept)
    n_accepted: int  # guessed tokens kept (the +1 token not counted)
    emitted: tuple[int, ...]
    pool_size: int
    pass_tokens: int  # tokens the target read in this pass (the tree's size)
    time_s: float


@dataclass(frozen=True)
class LookaheadRun:
    trace: Trace
    steps: tuple[JacobiStep, ...]
    window: int
    ngram: int
    max_candidates: int


@dataclass(frozen=True)
class TreeStep:
    """One Medusa pass: the candidate tree and the branch the target accepted."""

    index: int
    context_len: int
    tokens: tuple[int, ...]  # node 0 is the root (the context's last token)
    parents: tuple[int, ...]
    labels: tuple[str, ...]  # "head d #r": head d's r-th choice
    accepted_nodes: tuple[int, ...]  # the kept path below the root
    extra: int  # the target's own token after the kept path
    emitted: tuple[int, ...]
    time_s: float


@dataclass(frozen=True)
class MedusaTreeRun:
    trace: Trace
    steps: tuple[TreeStep, ...]
    choices: tuple[tuple[int, ...], ...]
