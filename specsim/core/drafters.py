"""Drafters: cheap guessers that propose the next K tokens for the target to check.

Every drafter follows one protocol (:class:`Drafter`):

1. ``start(prompt_ids, vocab_size, target_hidden)`` forgets the previous run and reads the prompt;
   ``prompt_ids`` is the context when the loop starts: the prompt and the token its prefill chose;
   ``target_hidden`` holds the target's last hidden states of the prompt (the context minus that token) when
   the drafter asked for them (``needs_target_hidden``), else None;
2. ``propose(context, k, sampling, generator, stop_below)`` returns up to k tokens with the probability q
   the drafter gave each (and, when sampling, its whole distribution q over the target's vocabulary,
   which the residual norm(max(0, p - q)) needs); a drafter that guesses one token at a time ends its draft
   after a guess with q below ``stop_below`` (the confidence stop of :mod:`specsim.core.kpolicy`);
3. ``observe(context, target_hidden)`` tells it what the target kept, so it can roll its KV cache
   back. ``target_hidden`` is for a feature-level (EAGLE-style) drafter: the target's last hidden
   states (after its final norm, as transformers returns them) at the newly verified positions,
   i.e. at the previous context's last token and at each kept proposal, one row per emitted
   token. Drafters that do not read it set ``needs_target_hidden = False`` and get None. A drafter
   with ``feature_layers`` (EAGLE-3 style) gets, instead of the last hidden states alone, the hidden
   states after each of those layers side by side (:func:`target_features`).

Kinds: :class:`~specsim.core.model_drafters.ModelDrafter` (a second, smaller causal LM, possibly with a reduced
output vocabulary), :class:`~specsim.core.model_drafters.EarlyExitDrafter` (the target's own first layers and head)
and :class:`PromptLookupDrafter` (copies a continuation of an n-gram seen earlier in the context), and
:class:`NoDrafter`, which proposes nothing and so turns the speculative loop into plain decoding.

This module holds the protocol, the pieces drafters share (:class:`Proposal`, :func:`propose_by_passes`, the
one-pass-at-a-time loop a model drafter proposes through, :func:`crop_cache`, :func:`target_features`) and the
drafters without a model (prompt lookup, none); the drafters that run a model are in
:mod:`specsim.core.model_drafters`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import torch
from transformers import DynamicCache

from specsim.core.clock import now
from specsim.core.defaults import TOP_N
from specsim.core.sampling import SamplingConfig, sample, top_tokens, warp


@dataclass
class Proposal:
    """What a drafter proposes in one iteration (all ids are target vocabulary ids)."""

    tokens: list[int] = field(default_factory=list)
    q: list[float] = field(default_factory=list)  # q(token) under the distribution the token was drawn from
    q_probs: list[torch.Tensor] | None = None  # full q over the target vocab per slot (sampling mode only)
    top: list[list[tuple[int, float]]] = field(default_factory=list)  # the draft's top alternatives per slot
    pass_times: list[float] = field(default_factory=list)  # wall-clock seconds of the pass behind each token
    overhead_s: float = 0.0  # drafting time not tied to one token (e.g. a failed n-gram search)
    copied: list[bool] = field(default_factory=list)  # per slot: copied from the context, not drafted (see
    # propose_by_passes); empty when nothing was copied


@runtime_checkable
class Drafter(Protocol):
    kind: str  # "draft_model", "early_exit", "prompt_lookup", ... (the method's key, specsim.methods)
    name: str  # for display
    needs_target_hidden: bool  # True: start() and observe() get the target's hidden states; False: None

    def start(
        self, prompt_ids: Sequence[int], vocab_size: int, target_hidden: torch.Tensor | None = None
    ) -> None: ...

    def propose(
        self, context: Sequence[int], k: int, sampling: SamplingConfig, generator: torch.Generator | None,
        stop_below: float = 0.0,
    ) -> Proposal: ...

    def observe(self, context: Sequence[int], target_hidden: torch.Tensor | None = None) -> None: ...


def target_features(hidden_states: Sequence[torch.Tensor], layers: Sequence[int] | None = None) -> torch.Tensor:
    """The features a feature-level drafter reads from a target pass run with ``output_hidden_states``.

    ``hidden_states[i]`` is the output of layer i (0: the embeddings; the last entry is after the final
    norm). Without ``layers``: the last hidden states (EAGLE). With them: those entries concatenated along
    the last axis, low to high (EAGLE-3 fuses a low, a middle and a high layer).
    """
    if not layers:
        return hidden_states[-1]
    return torch.cat([hidden_states[i] for i in layers], dim=-1)


def hidden_request(drafter) -> bool | list[int]:
    """What to pass as ``output_hidden_states`` in a target pass so ``drafter`` gets its features."""
    layers = getattr(drafter, "feature_layers", None)
    return list(layers) if layers else bool(drafter.needs_target_hidden)


def crop_cache(cache: DynamicCache, length: int) -> None:
    """Keep only the first ``length`` positions of a KV cache (never recompute)."""
    extra = cache.get_seq_length() - length
    if extra > 0:
        cache.crop(-extra)


DraftPass = Callable[[list[int]], tuple[torch.Tensor, torch.Tensor] | None]
"""One draft pass over the proposals it has not read yet (an empty list on the loop's first pass, which reads
the newly kept context instead); returns the logits over the draft's vocabulary after them and its map to
target ids (``vocab_map[draft_id] = target_id``), or None to stop early."""

Copier = Callable[[list[int]], int | None]
"""The token that followed the latest earlier occurrence of the context's last few tokens, the proposals so
far included, or None when they do not repeat (:meth:`PromptLookupDrafter.next_copy`)."""


def propose_by_passes(draft_pass: DraftPass, k: int, vocab_size: int, sampling: SamplingConfig,
                      generator: torch.Generator | None, device: torch.device | str,
                      copy: Copier | None = None, stop_below: float = 0.0) -> Proposal:
    """Up to k proposals, one draft pass each, with q, the draft's top alternatives and each pass's time.

    Greedy: the draft's argmax. Sampling: a draw from the draft's warped distribution, whose whole q
    (zero outside the draft's vocabulary, ``vocab_size`` = the target's) the residual needs. The draft ends
    early after a guess whose q is below ``stop_below`` (the confidence stop; that guess is still proposed).

    With ``copy``, a slot where the text repeats itself (the last few tokens occurred earlier, as when an
    answer quotes its prompt) takes the token that followed them last time instead, with q = 1 on it, and
    skips the draft's pass: the draft reads the copied token in its next pass. A small draft copies badly
    (docs/distill.md), so this is where it loses most. Which slots copy depends only on the text so far,
    so q is still the distribution each proposal was drawn from and the output is unchanged.
    """
    proposal = Proposal(q_probs=None if sampling.greedy else [])
    unread: list[int] = []  # proposals the draft has not read yet
    for _ in range(k):
        start = now(device)
        token = copy(proposal.tokens) if copy is not None else None
        copied = token is not None
        if copied:  # q is all on the copied token
            proposal.q.append(1.0)
            proposal.top.append([(token, 1.0)])
            if not sampling.greedy:
                proposal.q_probs.append(torch.nn.functional.one_hot(torch.tensor(token, device=device),
                                                                    vocab_size).float())
        else:
            step = draft_pass(unread)
            if step is None:
                break
            unread = []
            logits, vocab_map = step
            probs = warp(logits[: len(vocab_map)], sampling)  # over the draft's (mapped) vocabulary
            if sampling.greedy:
                index = int(torch.argmax(probs))
            else:
                index = sample(probs, generator)
                q_full = torch.zeros(vocab_size, device=probs.device).index_copy_(0, vocab_map, probs)
                proposal.q_probs.append(q_full)
            token = int(vocab_map[index])
            proposal.q.append(float(probs[index]))
            proposal.top.append([(int(vocab_map[i]), p) for i, p in top_tokens(probs, TOP_N)])
        unread.append(token)
        proposal.tokens.append(token)
        if copy is not None:
            proposal.copied.append(copied)
        proposal.pass_times.append(now(device) - start)
        if proposal.q[-1] < stop_below:  # the draft is unsure of this guess: check the draft so far
            break
    return proposal


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class PromptLookupDrafter:
    """Propose the tokens that followed the latest earlier occurrence of the context's last n-gram.

    No second model: the proposal is a deterministic function of the context, so q is a point mass
    (q = 1 on the proposed token, 0 elsewhere). Speculative sampling stays exact with such a q: the
    token is kept with probability min(1, p(x)/1) = p(x), and a rejection draws from
    norm(max(0, p - q)), which is p with x removed and renormalised; together that is p again.

    ``special_ids`` (the tokenizer's special tokens, e.g. the chat template's ``<|im_start|>``) are never
    matched or copied: the template repeats the same few tokens in every prompt, so on a short prompt the
    newline after ``assistant`` would otherwise match the one after ``system`` and propose the template's
    next ``<|im_start|>``. The output is unchanged either way: the target verifies every proposal.
    """

    kind = "prompt_lookup"
    needs_target_hidden = False

    def __init__(self, max_ngram: int = 3, min_ngram: int = 1, special_ids: Iterable[int] = ()):
        if not 1 <= min_ngram <= max_ngram:
            raise ValueError("need 1 <= min_ngram <= max_ngram")
        self.max_ngram, self.min_ngram = max_ngram, min_ngram
        self.special_ids = frozenset(int(i) for i in special_ids)
        self.name = f"prompt lookup ({min_ngram}..{max_ngram}-gram)"
        self.vocab_size = 0

    def start(self, prompt_ids: Sequence[int], vocab_size: int, target_hidden: torch.Tensor | None = None) -> None:
        self.vocab_size = vocab_size

    def observe(self, context: Sequence[int], target_hidden: torch.Tensor | None = None) -> None:
        pass  # no state

    def continuation(self, context: Sequence[int], k: int) -> list[int]:
        """Up to k tokens that followed the most recent earlier match of the longest matching n-gram, cut before
        the first special token (a match followed at once by one is passed over for an earlier one)."""
        ids, special = list(context), self.special_ids
        if len(ids) < 2:
            return []
        ends, at = [], -1  # where an earlier match can end (its last token is the text's), latest first:
        while True:  # one scan of the text (list.index runs in C), however many n are tried
            try:
                at = ids.index(ids[-1], at + 1, len(ids) - 1)
            except ValueError:
                break
            ends.append(at)
        ends.reverse()
        for n in range(min(self.max_ngram, len(ids) - 1), self.min_ngram - 1, -1):
            tail = ids[-n:]
            if special.intersection(tail):  # an n-gram with a template token in it is not text to look up
                continue
            for end in ends:  # latest earlier occurrence first
                start = end - n + 1
                if start >= 0 and ids[start : end + 1] == tail:
                    follow = ids[end + 1 : end + 1 + k]
                    cut = next((i for i, t in enumerate(follow) if t in special), len(follow))
                    if cut:
                        return follow[:cut]
        return []

    def next_copy(self, context: Sequence[int], proposed: Sequence[int] = ()) -> int | None:
        """The one token :meth:`continuation` copies after ``context`` plus ``proposed``, or None."""
        follow = self.continuation([*context, *proposed], 1)
        return follow[0] if follow else None

    def propose(
        self, context: Sequence[int], k: int, sampling: SamplingConfig, generator: torch.Generator | None,
        stop_below: float = 0.0,
    ) -> Proposal:
        """Copy the continuation; q = 1 on every copied token, so the confidence stop never ends it."""
        start = now()
        tokens = self.continuation(context, k) if k > 0 else []
        proposal = Proposal(tokens=tokens, q=[1.0] * len(tokens), top=[[(t, 1.0)] for t in tokens],
                            copied=[True] * len(tokens))  # copied from the text: no draft pass
        if not sampling.greedy:
            proposal.q_probs = [torch.nn.functional.one_hot(torch.tensor(t), self.vocab_size).float() for t in tokens]
        elapsed = now() - start
        if tokens:  # one search produced them all; charge it to the first token
            proposal.pass_times = [elapsed] + [0.0] * (len(tokens) - 1)
        else:
            proposal.overhead_s = elapsed
        return proposal


class NoDrafter:
    """Proposes nothing: with it, one speculative iteration is one plain decoding step.

    The target's pass then covers only the last kept token, nothing is there to accept, and the +1 token
    is the target's own next token (its argmax, or a draw from p). So plain decoding is the K = 0 case
    of the same loop, and its trace has the same shape: one iteration, with no slots, per new token.
    """

    kind = "plain"
    name = ""
    needs_target_hidden = False

    def start(self, prompt_ids: Sequence[int], vocab_size: int, target_hidden: torch.Tensor | None = None) -> None:
        pass  # no state

    def propose(
        self, context: Sequence[int], k: int, sampling: SamplingConfig, generator: torch.Generator | None,
        stop_below: float = 0.0,
    ) -> Proposal:
        return Proposal()

    def observe(self, context: Sequence[int], target_hidden: torch.Tensor | None = None) -> None:
        pass
