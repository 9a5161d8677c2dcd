"""What the decoding loop (:func:`specsim.core.engine.decode_loop`) needs around a step, defined once.

A decoder supplies a :class:`Step`: speculative decoding with any drafter (:mod:`specsim.core.engine`),
lookahead decoding and Medusa with a candidate tree (:mod:`specsim.variants`). This module holds the
plumbing every decoder shares: checking the request, the prefill, the token budget and end-of-text,
the run's settings and the :class:`~specsim.core.trace.Trace` it ends with.

The prefill reads the whole prompt and its last row chooses the first new token, as serving stacks do
(their "time to first token"); the loop makes every later token. Cache convention: the target's cache
always holds the context except its last token, which is the first input of the next verification pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import torch
from transformers import DynamicCache

from specsim.core.acceptance import Verdict
from specsim.core.clock import now
from specsim.core.drafters import NoDrafter, Proposal, target_features
from specsim.core.kpolicy import KPolicy
from specsim.core.models import LoadedModel
from specsim.core.sampling import SamplingConfig, sample, warp
from specsim.core.trace import CacheLengths, Iteration, Settings, TokenProb, Trace

PLAIN = NoDrafter.kind  # the drafter kind of plain decoding: K = 0, nothing proposed


@dataclass
class Checked:
    """One step's guesses after the target's verification pass."""

    proposal: Proposal  # the guessed tokens on the path that was checked (target vocabulary ids)
    target_probs: torch.Tensor  # row i: the target's p where guess i sits; the last row: after the last guess
    verdict: Verdict  # how many guesses were kept, and the target's own +1 token
    verify_time: float  # seconds of the verification pass
    k_planned: int | None = None  # the K the step's policy chose this time (None: a step without a K policy)
    tree: CheckedTree | None = None  # a tree step's whole tree (the proposal is the path it checked)


@dataclass
class CheckedTree:
    """A tree step's tree after its verification pass, as :class:`~specsim.core.trace.TreeRecord` records it."""

    tokens: list[int]
    parents: list[int]
    q: list[float]
    score: list[float]
    status: list[str]  # per node: "root", "kept", "refused", "passed", "untried" or "unchecked" (trace.TreeNode)
    target_top: list[tuple[int, float]]  # per node: the target's most likely next token and its p
    shape: tuple[int, int, int]  # (guesses, depth, width) asked for


class Step(Protocol):
    """What one decoder does in one iteration; the loop does the rest."""

    needs_prompt_hidden: bool | list[int]  # True (or layer indices): the prefill also returns the prompt's
    # hidden states for start(), see specsim.core.drafters.hidden_request
    sampling: SamplingConfig  # how the step chooses +1 tokens; the prefill's first token is chosen the same way
    generator: torch.Generator | None

    def start(self, context: list[int], cache: DynamicCache, prompt_hidden: torch.Tensor | None) -> None:
        """Forget the previous run; ``context`` is the prompt and the prefill's token, and ``cache`` is the
        target's, filled with the context minus its last token (``prompt_hidden``: those positions' states)."""

    def check(self, context: list[int], budget: int) -> Checked:
        """Propose at most ``budget - 1`` guesses and verify them in one target pass."""

    def accept(self, context: list[int], emitted: list[int]) -> CacheLengths | None:
        """``context`` now ends with ``emitted``: crop the caches back to it, learn from what was kept.

        Returns what the KV caches held during this iteration, or None when the step does not record it."""


def eos_token_ids(target: LoadedModel) -> set[int]:
    """Every id that ends generation: the tokenizer's EOS and the generation config's."""
    ids: set[int] = set()
    for value in (getattr(target.tokenizer, "eos_token_id", None), target.model.generation_config.eos_token_id):
        if isinstance(value, int):
            ids.add(value)
        elif value is not None:
            ids.update(int(v) for v in value)
    return ids


def check_request(prompt_ids: Sequence[int], k: int, max_new_tokens: int, plain: bool = False) -> None:
    """Refuse a run that cannot start, with a message that names the bad value (plain decoding has K = 0)."""
    if len(prompt_ids) == 0:
        raise ValueError("the prompt is empty")
    if k < 1 and not (plain and k == 0):
        raise ValueError(f"k must be at least 1, got {k}")
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be at least 1, got {max_new_tokens}")


@dataclass
class Prefilled:
    """The prompt's prefill: one target pass over the whole prompt, whose last row chooses the first new token."""

    cache: DynamicCache  # the target's cache: every prompt token (the context minus its last token, the first one)
    start: float  # when the pass started (clock.now); the loop's prefill time runs from here to its first loop
    logits: torch.Tensor  # the last prompt position's logits: where the first new token comes from
    hidden: torch.Tensor | None  # the target's last hidden states of the prompt's positions, when asked for


def prefill(target: LoadedModel, context: Sequence[int], keep_hidden: bool | Sequence[int] = False) -> Prefilled:
    """One target pass over the whole prompt, as serving stacks make it: it fills the cache and chooses token 1.

    The hidden states come back when ``keep_hidden`` asks (a drafter that reads them gets them without a
    second pass); a list of layer indices returns those layers' hidden states side by side (EAGLE-3 style).
    """
    start = now(target.device)
    cache = DynamicCache()
    input_ids = torch.tensor([list(context)], dtype=torch.long, device=target.device)
    out = target.model(input_ids=input_ids, past_key_values=cache, use_cache=True, logits_to_keep=1,
                       output_hidden_states=keep_hidden)
    hidden = None
    if keep_hidden:
        hidden = target_features(out.hidden_states, None if keep_hidden is True else keep_hidden)[0]
    return Prefilled(cache, start, out.logits[0, -1], hidden)


def choose_first(logits: torch.Tensor, sampling: SamplingConfig, generator: torch.Generator | None,
                 ) -> tuple[int, torch.Tensor]:
    """The first new token from the prefill's last row, by the rule every +1 token follows (greedy: argmax);
    returns it with the warped distribution it came from."""
    probs = warp(logits.unsqueeze(0), sampling)[0]
    return (int(torch.argmax(probs)) if sampling.greedy else sample(probs, generator)), probs


def cut_at_stop(tokens: list[int], budget: int, eos: set[int]) -> tuple[list[int], str | None]:
    """Cut a run of new tokens at the first EOS (kept) or at the token budget; say which ended the run."""
    for i, token in enumerate(tokens[:budget]):
        if token in eos:
            return tokens[: i + 1], "eos"
    if len(tokens) >= budget:
        return tokens[:budget], "max_new_tokens"
    return tokens, None


def run_settings(target: LoadedModel, k: int, max_new_tokens: int, sampling: SamplingConfig, seed: int,
                 kind: str, draft: str, policy: KPolicy | None = None,
                 tree: tuple[int, int, int] | None = None) -> Settings:
    """What a run was asked to do, with the target's name, dtype and device, for its trace."""
    policy = policy or KPolicy(k)
    return Settings(
        k=k, max_new_tokens=max_new_tokens, temperature=sampling.temperature, top_p=sampling.top_p,
        top_k=sampling.top_k, min_p=sampling.min_p, seed=seed,
        drafter=kind, target=target.name, draft=draft, dtype=str(target.dtype).removeprefix("torch."),
        device=str(target.device), invariant=target.invariant, k_schedule=policy.schedule,
        stop_below=policy.stop_below, tree=tree,
    )


def finish_trace(target: LoadedModel, settings: Settings, prompt_ids: Sequence[int], generated: list[int],
                 times: tuple[float, float, float], stop_reason: str | None, iterations: Sequence[Iteration],
                 first: tuple[TokenProb, tuple[TokenProb, ...]] | None = None) -> Trace:
    """The trace of a finished run; ``times`` is (start, prefill seconds, end), ``first`` the prefill's token
    and the target's top tokens there."""
    start, prefill_time, end = times
    return Trace(
        mode="plain" if settings.drafter == PLAIN else "speculative", settings=settings,
        prompt=target.tokenizer.decode(prompt_ids),
        prompt_ids=tuple(prompt_ids), generated_ids=tuple(generated),
        text=target.tokenizer.decode(generated, skip_special_tokens=True), total_time_s=end - start,
        prefill_time_s=prefill_time, iterations=tuple(iterations),
        stop_reason=stop_reason or "max_new_tokens",
        first=None if first is None else first[0], first_target_top=() if first is None else first[1],
    )
