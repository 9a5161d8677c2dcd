"""Speculative decoding, and plain decoding as its K = 0 case, each recording a :class:`Trace`.

One speculative iteration (Leviathan et al., 2023, algorithm 1; Chen et al., 2023):

1. the drafter proposes K tokens x_1..x_K, with q_i(x_i) for each (K: fixed, or adapted by a
   :class:`~specsim.core.kpolicy.KPolicy` from how the previous drafts fared);
2. ONE target pass over [last kept token, x_1..x_K] gives p_1..p_{K+1} at once;
3. slot i is kept with probability min(1, p_i(x_i) / q_i(x_i)) (greedy: iff x_i = argmax p_i);
4. at the first rejected slot the target draws its own token from norm(max(0, p_i - q_i))
   (greedy: argmax p_i); if all K are kept it draws a bonus token from p_{K+1};
5. both KV caches are cropped back to the kept tokens.

:class:`SpeculativeStep` is exactly that iteration; :func:`decode_loop`, just below it, runs it until
end-of-text or the token budget (the same loop runs lookahead and Medusa-tree decoding). Plain
decoding, the baseline, is that loop with a drafter that proposes nothing (:class:`NoDrafter`).
Before the loop, the prefill reads the whole prompt and its last row chooses the first new token, the
same way in every decoder, so plain and speculative decoding start from the same token. Cache
convention: the target's cache always holds the context except its last token, which is the first
input of the next verification pass. Each iteration records what both caches held
(:class:`~specsim.core.trace.CacheLengths`).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from transformers import DynamicCache

from specsim.core.acceptance import verify
from specsim.core.clock import now
from specsim.core.defaults import TOP_N
from specsim.core.drafters import Drafter, NoDrafter, crop_cache, hidden_request, target_features
from specsim.core.kpolicy import KPolicy
from specsim.core.loop_parts import (
    PLAIN,
    Checked,
    Step,
    check_request,
    choose_first,
    cut_at_stop,
    eos_token_ids,
    finish_trace,
    prefill,
    run_settings,
)
from specsim.core.model_drafters import draft_cache_length
from specsim.core.models import LoadedModel
from specsim.core.sampling import SamplingConfig, top_tokens, warp
from specsim.core.trace import CacheLengths, Iteration, Settings, Trace
from specsim.core.trace_build import TokenNamer, build_iteration

__all__ = ["GREEDY", "SpeculativeStep", "decode_loop", "speculative_generate", "plain_generate", "eos_token_ids",
           "prefill"]


class SpeculativeStep:
    """Steps 1-5 with a drafter: the step :func:`decode_loop` runs for speculative decoding."""

    def __init__(self, target: LoadedModel, drafter: Drafter, policy: KPolicy, sampling: SamplingConfig,
                 generator: torch.Generator | None):
        self.target, self.drafter, self.policy = target, drafter, policy
        self.sampling, self.generator = sampling, generator
        self.k = policy.k  # the next draft's K; an adaptive policy moves it after every check
        self.needs_prompt_hidden = hidden_request(drafter)  # a feature-level (EAGLE-style) drafter reads them
        self.feature_layers = getattr(drafter, "feature_layers", None)  # EAGLE-3 style: these layers side by side
        self.eos = eos_token_ids(target)  # an accepted end-of-text ends the check (see verify)
        self.cache = DynamicCache()
        self.hidden: torch.Tensor | None = None  # the target's last hidden states in the latest pass
        self.lengths: tuple = ()  # the caches' lengths in the latest check: target before and after, draft too

    def start(self, context: list[int], cache: DynamicCache, prompt_hidden: torch.Tensor | None) -> None:
        self.cache = cache
        vocab_size = self.target.model.get_output_embeddings().weight.shape[0]
        self.drafter.start(context, vocab_size, target_hidden=prompt_hidden)

    def check(self, context: list[int], budget: int) -> Checked:
        # 1. Draft: K proposals, never more than the budget can use (K+1 tokens per loop at most).
        k, draft_before = self.k, draft_cache_length(self.drafter)
        proposal = self.drafter.propose(context, min(k, budget - 1), self.sampling, self.generator,
                                        stop_below=self.policy.stop_below)
        draft_tokens = proposal.tokens
        # 2. Verify all proposals in one target pass; it writes K+1 entries to the target's cache.
        target_before, verify_start = self.cache.get_seq_length(), now(self.target.device)
        input_ids = torch.tensor([[context[-1], *draft_tokens]], dtype=torch.long, device=self.target.device)
        out = self.target.model(input_ids=input_ids, past_key_values=self.cache, use_cache=True,
                                output_hidden_states=self.needs_prompt_hidden)
        target_probs = warp(out.logits[0], self.sampling)  # row i: the target's p where draft token i sits
        # 3-4. Accept a prefix, then the +1 token (correction, resample or bonus).
        verdict = verify(draft_tokens, proposal, target_probs, self.sampling, self.generator, self.eos)
        self.hidden = (target_features(out.hidden_states, self.feature_layers)[0]
                       if self.drafter.needs_target_hidden else None)
        verify_time = now(self.target.device) - verify_start
        self.lengths = (target_before, self.cache.get_seq_length(), draft_before, draft_cache_length(self.drafter))
        self.k = self.policy.next_k(k, proposed=len(draft_tokens), kept=verdict.n_accepted)  # the next draft's K
        return Checked(proposal, target_probs, verdict, verify_time, k_planned=k)

    def accept(self, context: list[int], emitted: list[int]) -> CacheLengths:
        # 5. Crop: the cache keeps the new context minus its last token; the drafter rolls back too.
        crop_cache(self.cache, len(context) - 1)
        self.drafter.observe(context, None if self.hidden is None else self.hidden[: len(emitted)])
        target_before, target_written, draft_before, draft_drafted = self.lengths
        draft_kept = draft_cache_length(self.drafter)  # the draft reads the rest of the context next time
        return CacheLengths(target_before, target_written, self.cache.get_seq_length(), draft_before, draft_drafted,
                            draft_kept, None if draft_kept is None else len(context) - draft_kept)


def decode_loop(
    target: LoadedModel, step: Step, prompt_ids: list[int], settings: Settings,
    on_iteration: Callable[[Iteration], None] | None = None, should_stop: Callable[[], bool] | None = None,
) -> Trace:
    """Run ``step`` until end-of-text, the token budget or ``should_stop()``; record every iteration."""
    check_request(prompt_ids, settings.k, settings.max_new_tokens, plain=settings.drafter == PLAIN)
    eos, namer = eos_token_ids(target), TokenNamer(target.tokenizer)
    context, generated, iterations = list(prompt_ids), [], []
    stop_reason: str | None = None
    with torch.inference_mode():
        # 0. Prefill: one pass over the whole prompt; its last row chooses the first new token.
        filled = prefill(target, context, keep_hidden=step.needs_prompt_hidden)
        first, first_probs = choose_first(filled.logits, step.sampling, step.generator)
        emitted, stop_reason = cut_at_stop([first], settings.max_new_tokens, eos)
        context += emitted
        generated += emitted
        step.start(context, filled.cache, filled.hidden)  # the cache holds the prompt: the context minus token 1
        start, prefill_time = filled.start, now(target.device) - filled.start
        while stop_reason is None:
            if should_stop is not None and should_stop():
                stop_reason = "cancelled"
                break
            budget, context_len = settings.max_new_tokens - len(generated), len(context)
            checked = step.check(context, budget)  # propose, then verify every guess in one target pass
            kept = checked.proposal.tokens[: checked.verdict.n_accepted] + [checked.verdict.extra]
            emitted, stop_reason = cut_at_stop(kept, budget, eos)
            context += emitted
            generated += emitted
            caches = step.accept(context, emitted)  # crop the caches back to the kept tokens
            iterations.append(build_iteration(namer, len(iterations), context_len, checked, emitted, stop_reason,
                                              TOP_N, caches))
            if on_iteration is not None:
                on_iteration(iterations[-1])
        end = now(target.device)
    first_token = (namer.tops([(first, float(first_probs[first]))])[0], namer.tops(top_tokens(first_probs, TOP_N)))
    return finish_trace(target, settings, prompt_ids, generated, (start, prefill_time, end), stop_reason, iterations,
                        first_token)


GREEDY = SamplingConfig()
"""Greedy decoding: the target's top token every time (the default of both entry points)."""


def speculative_generate(
    target: LoadedModel, drafter: Drafter, prompt_ids: list[int], policy: KPolicy, max_new_tokens: int,
    sampling: SamplingConfig = GREEDY, seed: int = 0,
    on_iteration: Callable[[Iteration], None] | None = None, should_stop: Callable[[], bool] | None = None,
) -> Trace:
    """Generate with speculative decoding; the output has the target's distribution (greedy: its tokens).

    ``policy`` says how many guesses each iteration drafts: ``KPolicy(4)`` is four every time; a heuristic
    schedule adapts K, and a confidence stop ends a draft at an unsure guess (:class:`~specsim.core.kpolicy.KPolicy`).
    ``sampling`` and ``seed`` say how tokens are chosen. The run request (:class:`specsim.request.RunRequest`)
    carries all three: ``request.kpolicy``, ``request.sampling`` and ``request.seed``.
    """
    generator = torch.Generator(device=target.device).manual_seed(seed)
    step = SpeculativeStep(target, drafter, policy, sampling, generator)
    settings = run_settings(target, policy.k, max_new_tokens, sampling, seed, drafter.kind, drafter.name, policy)
    return decode_loop(target, step, prompt_ids, settings, on_iteration, should_stop)


def plain_generate(
    target: LoadedModel, prompt_ids: list[int], max_new_tokens: int, sampling: SamplingConfig = GREEDY,
    seed: int = 0, on_iteration: Callable[[Iteration], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Trace:
    """The baseline: the same loop with a drafter that proposes nothing, so one target pass per new token."""
    generator = torch.Generator(device=target.device).manual_seed(seed)
    step = SpeculativeStep(target, NoDrafter(), KPolicy(0), sampling, generator)
    settings = run_settings(target, 0, max_new_tokens, sampling, seed, NoDrafter.kind, NoDrafter.name)
    return decode_loop(target, step, prompt_ids, settings, on_iteration, should_stop)
