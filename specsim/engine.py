"""Speculative decoding, and plain decoding as its baseline, each recording a :class:`Trace`.

One speculative iteration (Leviathan et al., 2023, algorithm 1; Chen et al., 2023):

1. the drafter proposes K tokens x_1..x_K, with q_i(x_i) for each;
2. ONE target pass over [last kept token, x_1..x_K] gives p_1..p_{K+1} at once;
3. slot i is kept with probability min(1, p_i(x_i) / q_i(x_i)) (greedy: iff x_i = argmax p_i);
4. at the first rejected slot the target draws its own token from norm(max(0, p_i - q_i))
   (greedy: argmax p_i); if all K are kept it draws a bonus token from p_{K+1};
5. both KV caches are cropped back to the kept tokens.

Cache convention: the target's cache always holds the context except its last token, which is
the first input of the next verification pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
from transformers import DynamicCache

from specsim.drafters import Drafter, Proposal, _now, crop_cache
from specsim.models import LoadedModel
from specsim.sampling import SamplingConfig, acceptance_probability, residual_distribution, sample, uniform, warp
from specsim.trace import Iteration, Pass, Settings, Trace
from specsim.trace_build import TokenNamer, build_iteration

TOP_N = 5


def eos_token_ids(target: LoadedModel) -> set[int]:
    """Every id that ends generation: the tokenizer's EOS and the generation config's."""
    ids: set[int] = set()
    for value in (getattr(target.tokenizer, "eos_token_id", None), target.model.generation_config.eos_token_id):
        if isinstance(value, int):
            ids.add(value)
        elif value is not None:
            ids.update(int(v) for v in value)
    return ids


def _check(prompt_ids: Sequence[int], k: int, max_new_tokens: int) -> None:
    if len(prompt_ids) == 0:
        raise ValueError("the prompt is empty")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be at least 1, got {max_new_tokens}")


def prefill(target: LoadedModel, context: Sequence[int],
            keep_hidden: bool = False) -> tuple[DynamicCache, float, float, torch.Tensor | None]:
    """The target's cache for the context minus its last token (the next pass's first input).

    Returns (cache, start time, seconds the prefill took, the target's last hidden states of those
    positions when ``keep_hidden``: a drafter that reads them gets them without a second pass).
    """
    start = _now(target.device)
    cache = DynamicCache()
    hidden = None
    if len(context) > 1:
        input_ids = torch.tensor([list(context[:-1])], dtype=torch.long, device=target.device)
        out = target.model(input_ids=input_ids, past_key_values=cache, use_cache=True, logits_to_keep=1,
                           output_hidden_states=keep_hidden)
        hidden = out.hidden_states[-1][0] if keep_hidden else None
    return cache, start, _now(target.device) - start, hidden


def _emit(tokens: list[int], budget: int, eos: set[int]) -> tuple[list[int], str | None]:
    """Cut a run of new tokens at the first EOS (kept) or at the token budget."""
    for i, token in enumerate(tokens[:budget]):
        if token in eos:
            return tokens[: i + 1], "eos"
    if len(tokens) >= budget:
        return tokens[:budget], "max_new_tokens"
    return tokens, None


@dataclass
class Verdict:
    """The outcome of checking one proposal run (steps 3-4)."""

    n_accepted: int = 0
    extra: int = -1  # the target's own +1 token
    extra_kind: str = "bonus"  # "correction" (greedy), "resample" (sampling) or "bonus"
    accept_probs: list[float] = field(default_factory=list)  # min(1, p/q) per slot (greedy: 1 or 0)
    draws: list[float | None] = field(default_factory=list)  # the uniform numbers drawn (greedy: None)
    residual: torch.Tensor | None = None  # norm(max(0, p - q)) at the rejected slot (sampling)
    residual_mass: float = 0.0


def verify(
    draft_tokens: list[int], proposal: Proposal, target_probs: torch.Tensor, sampling: SamplingConfig,
    generator: torch.Generator | None,
) -> Verdict:
    """Steps 3-4: keep the longest accepted prefix of the proposals, then choose the +1 token.

    ``target_probs[i]`` is the target's distribution at draft slot i; row K is the bonus position.
    """
    verdict = Verdict()
    for i, token in enumerate(draft_tokens):
        if sampling.greedy:
            verdict.accept_probs.append(1.0 if int(torch.argmax(target_probs[i])) == token else 0.0)
        else:
            verdict.accept_probs.append(acceptance_probability(float(target_probs[i, token]), proposal.q[i]))
    for accept_prob in verdict.accept_probs:
        draw = None if sampling.greedy else uniform(generator)
        verdict.draws.append(draw)
        if not (accept_prob == 1.0 if draw is None else draw < accept_prob):
            break  # the first rejection ends the run; later slots stay unchecked
        verdict.n_accepted += 1

    p = target_probs[verdict.n_accepted]
    if verdict.n_accepted == len(draft_tokens):  # every proposal kept: a bonus token from p
        verdict.extra = int(torch.argmax(p)) if sampling.greedy else sample(p, generator)
    elif sampling.greedy:  # the target's own choice replaces the rejected proposal
        verdict.extra, verdict.extra_kind = int(torch.argmax(p)), "correction"
    else:  # resample from what p has and q lacks: norm(max(0, p - q))
        q = proposal.q_probs[verdict.n_accepted].to(p.device)
        verdict.residual, verdict.residual_mass = residual_distribution(p, q)
        verdict.extra, verdict.extra_kind = sample(verdict.residual, generator), "resample"
    return verdict


def speculative_generate(
    target: LoadedModel,
    drafter: Drafter,
    prompt_ids: list[int],
    k: int,
    max_new_tokens: int,
    temperature: float = 0.0,
    top_p: float | None = None,
    seed: int = 0,
    on_iteration: Callable[[Iteration], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Trace:
    """Generate with speculative decoding; the output has the target's distribution (greedy: its tokens)."""
    _check(prompt_ids, k, max_new_tokens)
    sampling = SamplingConfig(temperature, top_p)
    generator = torch.Generator(device=target.device).manual_seed(seed)
    eos = eos_token_ids(target)
    namer = TokenNamer(target.tokenizer)
    model, device = target.model, target.device
    iterations: list[Iteration] = []
    generated: list[int] = []
    context = list(prompt_ids)
    stop_reason: str | None = None
    with torch.inference_mode():
        needs_hidden = getattr(drafter, "needs_target_hidden", False)
        target_cache, start, _, prompt_hidden = prefill(target, context, keep_hidden=needs_hidden)
        vocab_size = model.get_output_embeddings().weight.shape[0]
        if needs_hidden:  # a feature-level drafter (EAGLE-style) reads the prompt's hidden states too
            drafter.start(context, vocab_size, target_hidden=prompt_hidden)
        else:
            drafter.start(context, vocab_size)
        prefill_time = _now(device) - start
        while stop_reason is None:
            if should_stop is not None and should_stop():
                stop_reason = "cancelled"
                break
            budget = max_new_tokens - len(generated)
            # 1. Draft: never more proposals than the budget can use (K+1 tokens per loop at most).
            proposal = drafter.propose(context, min(k, budget - 1), sampling, generator)
            draft_tokens = proposal.tokens
            # 2. Verify all proposals in one target pass.
            verify_start = _now(device)
            input_ids = torch.tensor([[context[-1], *draft_tokens]], dtype=torch.long, device=device)
            out = model(input_ids=input_ids, past_key_values=target_cache, use_cache=True,
                        output_hidden_states=drafter.needs_target_hidden)
            target_probs = warp(out.logits[0], sampling)  # row i: the target's p where draft token i sits
            # 3-4. Accept a prefix, then the +1 token (correction, resample or bonus).
            verdict = verify(draft_tokens, proposal, target_probs, sampling, generator)
            emitted, stop_reason = _emit(draft_tokens[: verdict.n_accepted] + [verdict.extra], budget, eos)
            # 5. Crop: the cache keeps the new context minus its last token.
            crop_cache(target_cache, len(context) + len(emitted) - 1)
            verify_time = _now(device) - verify_start
            context_len = len(context)
            context += emitted
            generated += emitted
            hidden = out.hidden_states[-1][0, : len(emitted)] if drafter.needs_target_hidden else None
            drafter.observe(context, hidden)

            iteration = build_iteration(namer, len(iterations), context_len, proposal, target_probs, verdict,
                                        verify_time, emitted, stop_reason, TOP_N)
            iterations.append(iteration)
            if on_iteration is not None:
                on_iteration(iteration)
        total_time = _now(device) - start
    settings = _settings(target, k, max_new_tokens, sampling, seed, drafter.kind, drafter.name)
    return Trace(
        mode="speculative", settings=settings, prompt=target.tokenizer.decode(prompt_ids),
        prompt_ids=tuple(prompt_ids), generated_ids=tuple(generated),
        text=target.tokenizer.decode(generated, skip_special_tokens=True), total_time_s=total_time,
        prefill_time_s=prefill_time, iterations=tuple(iterations), stop_reason=stop_reason or "max_new_tokens",
    )


def plain_generate(
    target: LoadedModel,
    prompt_ids: list[int],
    max_new_tokens: int,
    temperature: float = 0.0,
    top_p: float | None = None,
    seed: int = 0,
    on_pass: Callable[[Pass], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Trace:
    """The baseline: one target pass per new token, with the same sampling rules and trace."""
    _check(prompt_ids, 1, max_new_tokens)
    sampling = SamplingConfig(temperature, top_p)
    generator = torch.Generator(device=target.device).manual_seed(seed)
    eos = eos_token_ids(target)
    namer = TokenNamer(target.tokenizer)
    passes: list[Pass] = []
    context = list(prompt_ids)
    generated: list[int] = []
    stop_reason: str | None = None
    with torch.inference_mode():
        cache, start, prefill_time, _ = prefill(target, context)
        while stop_reason is None:
            if should_stop is not None and should_stop():
                stop_reason = "cancelled"
                break
            pass_start = _now(target.device)
            input_ids = torch.tensor([[context[-1]]], dtype=torch.long, device=target.device)
            logits = target.model(input_ids=input_ids, past_key_values=cache, use_cache=True).logits[0, -1]
            probs = warp(logits, sampling)
            token = int(torch.argmax(probs)) if sampling.greedy else sample(probs, generator)
            pass_time = _now(target.device) - pass_start
            context.append(token)
            generated.append(token)
            if token in eos:
                stop_reason = "eos"
            elif len(generated) >= max_new_tokens:
                stop_reason = "max_new_tokens"
            passes.append(Pass(token, namer(token), pass_time))
            if on_pass is not None:
                on_pass(passes[-1])
        total_time = _now(target.device) - start
    settings = _settings(target, 0, max_new_tokens, sampling, seed, "plain", "")
    return Trace(
        mode="plain", settings=settings, prompt=target.tokenizer.decode(prompt_ids), prompt_ids=tuple(prompt_ids),
        generated_ids=tuple(generated), text=target.tokenizer.decode(generated, skip_special_tokens=True),
        total_time_s=total_time, prefill_time_s=prefill_time, passes=tuple(passes),
        stop_reason=stop_reason or "max_new_tokens",
    )


def _settings(target: LoadedModel, k: int, max_new_tokens: int, sampling: SamplingConfig, seed: int,
              kind: str, draft: str) -> Settings:
    return Settings(
        k=k, max_new_tokens=max_new_tokens, temperature=sampling.temperature, top_p=sampling.top_p, seed=seed,
        drafter=kind, target=target.name, draft=draft, dtype=str(target.dtype).removeprefix("torch."),
        device=str(target.device), invariant=target.invariant,
    )

