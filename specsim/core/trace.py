"""The trace of one decoding run: every draft proposal, every verdict, every timing.

Generation happens once and writes a :class:`Trace`; the UI, the tests, the benchmark and the
JSON export all read it. Everything here is a frozen dataclass built from plain numbers and
strings, so a trace survives a JSON round trip unchanged.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from pydantic import TypeAdapter

from specsim.core.defaults import drafter_kind

COPYING_DRAFTERS = frozenset({"prompt_lookup"})
"""Drafters whose every guess is copied from earlier in the text: they run no draft model, so no draft pass
(traces recorded before :attr:`Slot.copied` was set for them say so only through ``Settings.drafter``)."""

ExtraKind = Literal["correction", "resample", "bonus"]
"""How the target's own +1 token was chosen.

- ``correction``: greedy mode, the target's argmax at the first rejected slot;
- ``resample``: sampling mode, drawn from norm(max(0, p - q)) at the first rejected slot;
- ``bonus``: every proposal was kept, so the token is drawn (or argmaxed) from p after the last one.
"""


@dataclass(frozen=True)
class TokenProb:
    """One candidate token and the probability a model gave it."""

    token_id: int
    text: str
    prob: float


@dataclass(frozen=True)
class Slot:
    """One draft position t+i of an iteration (``position`` counts from 1)."""

    position: int
    token_id: int
    text: str
    q: float  # the draft's probability for the proposed token
    p: float  # the target's probability for the proposed token, from the verification pass
    accept_prob: float  # min(1, p/q) when sampling; 1.0 or 0.0 in greedy mode
    status: Literal["accepted", "rejected", "unchecked"]  # unchecked: after the first rejection
    draft_top: tuple[TokenProb, ...] = ()
    target_top: tuple[TokenProb, ...] = ()
    draft_time_s: float = 0.0  # wall-clock time of the draft pass that proposed this token
    draw: float | None = None  # sampling: the uniform number compared with accept_prob (None if unchecked/greedy)
    copied: bool = False  # copied from earlier in the text (q = 1), not the draft model's guess: no draft pass
    accepted_mass: float | None = None  # sum over x of min(p(x), q(x)) = 1 - TV(p, q): the chance a guess drawn
    # from q is kept here (Leviathan et al. 2023's beta); sampling only (None in greedy mode and in old traces)


@dataclass(frozen=True)
class Residual:
    """Summary of norm(max(0, p - q)) at the first rejected slot (sampling mode only)."""

    mass: float  # sum of max(0, p - q) before normalisation; equals the rejection probability
    top: tuple[TokenProb, ...]  # the residual's most likely tokens, normalised


@dataclass(frozen=True)
class TreeNode:
    """One node of an iteration's token tree (:mod:`specsim.core.trees`)."""

    token: TokenProb  # the guessed token, with q: the draft's probability of it after its parent (the root: 1)
    parent: int  # the parent node's index (-1: the root, the context's last token)
    score: float  # the product of q from the root down to this node: the draft's estimate that it is kept
    target_top: TokenProb  # the target's most likely token after this node (greedy: the token the walk looks for)
    status: str  # "root"; "kept" (on the kept path); "refused" (where the walk stopped: not the target's token);
    # "passed" (beside the path: the target kept a sibling); "untried" (sampling: a sibling tried before it was kept);
    # "unchecked" (below a guess that was not kept: never reached)


@dataclass(frozen=True)
class TreeRecord:
    """The tree one iteration verified: its nodes (parents before children) and the shape it was drafted to."""

    nodes: tuple[TreeNode, ...]
    budget: int  # guesses asked for
    depth: int  # the deepest level asked for
    width: int  # children per expanded node

    @property
    def width_read(self) -> int:
        """Tokens the verification pass read: every guess and the root."""
        return len(self.nodes)

    def kept_path(self) -> list[int]:
        return [i for i, node in enumerate(self.nodes) if node.status == "kept"]


@dataclass(frozen=True)
class CacheLengths:
    """How many positions the target's and the draft's KV caches held at each point of one iteration.

    Convention: the target's cache holds the context except its last token, the first input of the next
    pass. The verification pass writes that token and the K proposals (K + 1 entries); the crop keeps the
    context plus the kept proposals, so the +1 token is again the one not yet written. The draft never read
    its last proposal (nor a copied one, :attr:`Slot.copied`, which had no draft pass): after a full
    acceptance it must read it as well as the +1 token before its next guess (``draft_catch_up``).
    """

    target_before: int  # before the verification pass: the context minus its last token
    target_written: int  # after the pass: target_before + 1 + the number of proposals
    target_kept: int  # after the crop: the new context minus its last token (the +1 token)
    draft_before: int | None = None  # the draft's cache before drafting (None: the drafter keeps no token cache)
    draft_drafted: int | None = None  # after drafting: every input of every draft pass
    draft_kept: int | None = None  # after the crop back to what the target kept
    draft_catch_up: int | None = None  # tokens the draft reads before its next guess: the +1 token and any other
    # kept token it has not read (after a full acceptance its own last proposal; copied proposals it skipped)


@dataclass(frozen=True)
class Iteration:
    """One draft-then-verify loop."""

    index: int
    context_len: int  # tokens in the context (prompt + generated) when drafting started
    slots: tuple[Slot, ...]
    n_accepted: int
    extra: TokenProb  # the target's own +1 token
    extra_kind: ExtraKind
    extra_target_top: tuple[TokenProb, ...]  # the target's distribution where the +1 token lands
    residual: Residual | None
    verify_time_s: float
    emitted: tuple[int, ...]  # token ids appended to the output (may be cut short by EOS or the budget)
    stop_reason: str | None = None  # "eos" or "max_new_tokens" when the run ended in this iteration
    draft_overhead_s: float = 0.0  # drafting time not tied to one slot (e.g. a prompt-lookup search that found nothing)
    k_planned: int | None = None  # the K the run's K policy chose for this iteration (specsim.core.kpolicy); the
    # drafter was asked for at most min(k_planned, budget - 1) and may propose fewer (``k``). None: not recorded
    caches: CacheLengths | None = None  # the KV caches' lengths in this iteration; None: not recorded
    tree: TreeRecord | None = None  # a tree run's whole tree (the slots are the path it checked); None: a chain

    def to_json(self) -> str:
        """One iteration as JSON (a live run's iterations travel one by one, e.g. from a worker to the page)."""
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Iteration:
        return _adapter(cls).validate_json(text)

    @property
    def draft_time_s(self) -> float:
        return sum(s.draft_time_s for s in self.slots) + self.draft_overhead_s

    @property
    def k(self) -> int:
        return len(self.slots)

    @property
    def draft_passes(self) -> int:
        """Draft-model passes this iteration spent: a chain's, one per guess the model made (a copied guess had
        none); a tree's, its recorded passes (reading the context, then one per level expanded; 0 where the token
        budget left room for the +1 alone; 1 in a trace recorded before they were counted)."""
        if self.tree is not None:
            return self.k_planned if self.k_planned is not None else 1
        return sum(1 for s in self.slots if not s.copied)

    @property
    def ended_by_text_end(self) -> bool:
        """An accepted end-of-text proposal ended the run: the slots after it were never checked or counted."""
        return 0 < self.n_accepted < self.k and self.slots[self.n_accepted].status == "unchecked"


@dataclass(frozen=True)
class Settings:
    """What a run was asked to do."""

    k: int
    max_new_tokens: int
    temperature: float = 0.0
    top_p: float | None = None
    top_k: int | None = None
    min_p: float | None = None
    seed: int = 0
    drafter: str = ""  # drafter kind, e.g. "draft_model", "prompt_lookup", "early_exit"
    target: str = ""  # model names, for display and for reproducing the run
    draft: str = ""
    dtype: str = "float32"
    device: str = "cpu"
    invariant: bool = False  # the target ran the position-invariant decode path (specsim.core.invariant)
    # how K moved between iterations: "fixed" (always k) or "heuristic" (specsim.core.kpolicy)
    k_schedule: str = "fixed"
    stop_below: float = 0.0  # confidence stop: a draft ended after a guess whose q was below this (0: never)
    tree: tuple[int, int, int] | None = None  # a token tree each iteration: (guesses, depth, width); None: a chain

    def __post_init__(self):  # a trace recorded under an old drafter kind reads as the kind's name now
        object.__setattr__(self, "drafter", drafter_kind(self.drafter))


@dataclass(frozen=True)
class Trace:
    """A complete run: the prefill's token, then one :class:`Iteration` per target pass after it.

    The prefill reads the whole prompt and its last row chooses the first new token (``first``); the
    iterations make the rest. Plain decoding has the same shape: each of its iterations proposed nothing
    (no slots) and holds the target's one new token as its +1 token. Traces recorded before the prefill
    chose a token have ``first`` None: their first iteration made the first token.
    """

    mode: Literal["speculative", "plain"]
    settings: Settings
    prompt: str
    prompt_ids: tuple[int, ...]
    generated_ids: tuple[int, ...]
    text: str  # the decoded generated text
    total_time_s: float
    prefill_time_s: float = 0.0
    iterations: tuple[Iteration, ...] = ()
    stop_reason: str = "max_new_tokens"
    first: TokenProb | None = None  # the token the prefill's last row chose (generated_ids[0]); None: old traces
    first_target_top: tuple[TokenProb, ...] = ()  # the target's distribution there
    meta: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    # ---- statistics every consumer agrees on (the bench, the CLI and the pages read these) ----------
    @property
    def n_generated(self) -> int:
        return len(self.generated_ids)

    @property
    def n_prefilled(self) -> int:
        """New tokens the prefill chose: 1, or 0 in a trace recorded before it chose one."""
        return 0 if self.first is None else 1

    @property
    def n_decoded(self) -> int:
        """New tokens the loop made after the prefill: the ones :attr:`decode_time_s` paid for."""
        return self.n_generated - self.n_prefilled

    @property
    def n_proposed(self) -> int:
        """Draft tokens proposed, checked or not."""
        return sum(it.k for it in self.iterations)

    @property
    def n_checked(self) -> int:
        """Proposals the target actually judged: the slots up to and including the first rejection."""
        return sum(1 for it in self.iterations for s in it.slots if s.status != "unchecked")

    @property
    def n_accepted(self) -> int:
        return sum(it.n_accepted for it in self.iterations)

    @property
    def k_max(self) -> int:
        """The largest K of the run: ``settings.k``, or more where an adaptive K policy raised it."""
        return max([self.settings.k, *(it.k for it in self.iterations),
                    *(it.k_planned for it in self.iterations if it.k_planned is not None)])

    @property
    def draft_passes(self) -> int:
        """Draft-model passes the run spent: one per guess the draft model made, none for a copied guess; a tree run's,
        one per level of each tree (its planned depth: specsim.core.trees reads each level in one pass)."""
        if self.settings.drafter in COPYING_DRAFTERS:
            return 0
        return sum(it.draft_passes for it in self.iterations)

    @property
    def longest_pass(self) -> int:
        """The most tokens one target pass after the prefill carried: the largest K drafted plus one, or the widest
        tree with its root (0: no pass)."""
        return max((it.k + 1 if it.tree is None else it.tree.width_read for it in self.iterations), default=0)

    @property
    def acceptance_rate(self) -> float:
        """α, measured: accepted proposals over proposals that the target actually checked."""
        return pooled_acceptance_rate([self])

    @property
    def mean_accepted_mass(self) -> float | None:
        """The α the distributions promise: the mean of Σ min(p, q) over the checked slots (α = E[β],
        Leviathan et al. 2023); :attr:`acceptance_rate` is its measurement. None when no slot recorded it
        (greedy runs, old traces)."""
        masses = [s.accepted_mass for it in self.iterations for s in it.slots
                  if s.status != "unchecked" and s.accepted_mass is not None]
        return sum(masses) / len(masses) if masses else None

    @property
    def target_passes(self) -> int:
        """Target forward passes after the prefill: one per iteration (plain decoding: one per token)."""
        return len(self.iterations)

    @property
    def pass_times(self) -> tuple[float, ...]:
        """Seconds of each target pass after the prefill, in order."""
        return tuple(it.verify_time_s for it in self.iterations)

    @property
    def tokens_per_pass(self) -> float:
        """New tokens per target pass after the prefill (a speculative loop is one pass; plain decoding makes 1.0)."""
        return pooled_tokens_per_pass([self])

    def kept_share_by_position(self) -> list[float | None]:
        """For slot t+i (i = 1..K): the share of iterations that proposed a token there and kept it.

        The measured counterpart of alpha**i (:func:`specsim.measure.analytics.expected_kept_share`): a slot
        survives only when every earlier one did. Slots after an accepted end-of-text do not count.
        None where no iteration proposed that many tokens.
        """
        out: list[float | None] = []
        for i in range(1, self.k_max + 1):
            proposed = [it for it in self.iterations if it.k >= i and not (it.ended_by_text_end and i > it.n_accepted)]
            out.append(sum(it.n_accepted >= i for it in proposed) / len(proposed) if proposed else None)
        return out

    @property
    def decode_time_s(self) -> float:
        """Time spent generating, excluding the prompt's prefill."""
        return self.total_time_s - self.prefill_time_s

    @property
    def tokens_per_s(self) -> float:
        """Decoding speed after the prefill: the loop's tokens over the loop's time."""
        return self.n_decoded / self.decode_time_s if self.decode_time_s > 0 else 0.0

    # ---- JSON ---------------------------------------------------------------------------------
    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Trace:
        return _adapter(cls).validate_json(text)


@functools.cache
def _adapter(cls: type) -> TypeAdapter:
    """pydantic's reader of a (nested) frozen dataclass from JSON: every field's type comes from the annotations,
    keys an older trace lacks take their defaults, keys a newer one adds are ignored."""
    return TypeAdapter(cls)



# ---- the same statistics pooled over several runs (e.g. one per prompt) ------------------------------
def pooled_acceptance_rate(traces: Iterable[Trace]) -> float:
    """α over several runs: all accepted proposals over all checked ones (0.0 when nothing was checked)."""
    traces = list(traces)
    checked = sum(t.n_checked for t in traces)
    return sum(t.n_accepted for t in traces) / checked if checked else 0.0


def pooled_tokens_per_pass(traces: Iterable[Trace]) -> float:
    """All new tokens after the prefill over all target passes after it."""
    traces = list(traces)
    passes = sum(t.target_passes for t in traces)
    return sum(t.n_decoded for t in traces) / passes if passes else 0.0


def acceptance_given_reached(traces: Iterable[Trace], k: int, min_checked: int = 1) -> list[float]:
    """P(draft position j kept | the target checked position j), j = 1..k, pooled over runs.

    Unlike :meth:`Trace.kept_share_by_position`, a position past the first rejection does not count
    against it: this is the draft's accuracy at each depth. NaN where fewer than ``min_checked`` checks
    reached position j.
    """
    hit, tried = checks_by_position(traces, k)
    return [h / t if t and t >= min_checked else float("nan") for h, t in zip(hit, tried, strict=True)]


def checks_by_position(traces: Iterable[Trace], k: int) -> tuple[list[int], list[int]]:
    """(guesses kept, guesses checked) at draft positions j = 1..k, pooled over runs: the counts behind
    :func:`acceptance_given_reached`. A position is checked once per loop whose check reached it."""
    hit, tried = [0] * k, [0] * k
    for trace in traces:
        for it in trace.iterations:
            for s in it.slots:
                if s.status != "unchecked" and s.position <= k:
                    tried[s.position - 1] += 1
                    hit[s.position - 1] += s.status == "accepted"
    return hit, tried
