"""Small hand-built traces for the live page's tests: every case spelled out, numbers known by hand."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from specsim.core.trace import Iteration, Residual, Settings, Slot, TokenProb, Trace

# token id -> text; ids are arbitrary but distinct
VOCAB = {10: " the", 11: " cat", 12: " sat", 13: " on", 14: " a", 15: "\n", 16: " mat", 17: " <b>", 18: ".", 19: " it",
         20: " was", 21: " red", 22: " and"}


def tp(tid: int, prob: float) -> TokenProb:
    return TokenProb(tid, VOCAB[tid], prob)


def slot(pos: int, tid: int, status: str, p: float, q: float, greedy: bool, t: float = 0.002) -> Slot:
    accept = (1.0 if status == "accepted" else 0.0) if greedy else min(1.0, p / q)
    # sampling: kept when the uniform draw is below min(1, p/q); unchecked slots were never drawn for
    draw = None if greedy or status == "unchecked" else (accept / 2 if status == "accepted" else 0.73)
    return Slot(pos, tid, VOCAB[tid], q, p, accept, status,
                draft_top=(tp(tid, q), tp(22, max(0.0, 1 - q) / 2)),
                target_top=(tp(tid, p), tp(14, 0.3), tp(19, 0.1)), draft_time_s=t, draw=draw)


def iteration(index, ctx, slots, extra, kind, emitted, stop=None, greedy=True, residual=None, verify=0.01):
    n_acc = sum(s.status == "accepted" for s in slots)
    return Iteration(index, ctx, tuple(slots), n_acc, tp(extra, 0.6), kind, (tp(extra, 0.6), tp(21, 0.2)),
                     residual, verify, tuple(emitted), stop)


def hand_trace(greedy: bool = True) -> Trace:
    """K=3, four iterations: 2 kept then a rejection; rejection at once; all kept + bonus; cut by the budget.

    Generated: (10, 11, 14) + (15,) + (17, 18, 19, 20) + (10, 11) = 10 tokens.
    Checked proposals: 3 + 1 + 3 + 3 = 10, kept 2 + 0 + 3 + 3 = 8, so alpha = 0.8.
    """
    g = greedy
    res = None if g else Residual(0.4, (tp(14, 0.7), tp(19, 0.3)))
    its = (
        iteration(0, 4, [slot(1, 10, "accepted", 0.9, 0.8, g), slot(2, 11, "accepted", 0.5, 0.5, g),
                         slot(3, 12, "rejected", 0.1, 0.5, g)], 14, "correction" if g else "resample",
                  (10, 11, 14), greedy=g, residual=res),
        iteration(1, 7, [slot(1, 13, "rejected", 0.05, 0.9, g), slot(2, 16, "unchecked", 0.0, 0.7, g),
                         slot(3, 18, "unchecked", 0.0, 0.6, g)], 15, "correction" if g else "resample",
                  (15,), greedy=g, residual=None if g else Residual(0.85, (tp(15, 0.9), tp(14, 0.1)))),
        iteration(2, 8, [slot(1, 17, "accepted", 0.7, 0.6, g), slot(2, 18, "accepted", 0.8, 0.9, g),
                         slot(3, 19, "accepted", 0.9, 0.9, g)], 20, "bonus", (17, 18, 19, 20), greedy=g),
        iteration(3, 12, [slot(1, 10, "accepted", 0.9, 0.9, g), slot(2, 11, "accepted", 0.9, 0.9, g),
                          slot(3, 12, "accepted", 0.9, 0.9, g)], 13, "bonus", (10, 11), stop="max_new_tokens",
                  greedy=g),
    )
    generated = tuple(t for it in its for t in it.emitted)
    text = "".join(VOCAB[t] for t in generated)
    settings = Settings(k=3, max_new_tokens=10, temperature=0.0 if g else 0.8, seed=1, drafter="draft_model",
                        target="target", draft="draft")
    # decode time: drafts 12 x 2 ms + verifies 4 x 10 ms = 64 ms of passes, plus 16 ms between them
    return Trace("speculative", settings, "Hi <you>", (1, 2, 3, 4), generated, text, total_time_s=0.1,
                 prefill_time_s=0.02, iterations=its, stop_reason="max_new_tokens")


def hand_plain(generated: tuple[int, ...] | None = None, pass_s: float = 0.008) -> Trace:
    """Plain decoding of the same prompt; by default the same ten tokens at ``pass_s`` per pass."""
    generated = generated if generated is not None else hand_trace().generated_ids
    decode = pass_s * len(generated) * 1.25
    return Trace("plain", Settings(k=0, max_new_tokens=10, drafter="plain"), "Hi <you>", (1, 2, 3, 4),
                 tuple(generated), "".join(VOCAB[t] for t in generated), total_time_s=0.02 + decode,
                 prefill_time_s=0.02, iterations=plain_steps(generated, [pass_s] * len(generated)))


def plain_steps(tokens: Sequence[int], times: Sequence[float], context_len: int = 4) -> tuple[Iteration, ...]:
    """Plain decoding's iterations: nothing proposed, the target's one token, one pass of ``times[i]`` each."""
    return tuple(Iteration(i, context_len + i, (), 0, TokenProb(t, VOCAB.get(t, "x"), 1.0), "bonus", (), None, s, (t,))
                 for i, (t, s) in enumerate(zip(tokens, times, strict=True)))


def with_pass_times(plain: Trace, times: Sequence[float]) -> Trace:
    """The same plain run with its passes retimed (as many passes as times; token 10 where there were fewer)."""
    tokens = list(plain.generated_ids[: len(times)]) + [10] * max(0, len(times) - plain.n_generated)
    return dataclasses.replace(plain, iterations=plain_steps(tokens, times), generated_ids=tuple(tokens),
                               total_time_s=plain.prefill_time_s + sum(times))


def one_torch_thread():
    """Run model-driven tests on one intra-op thread, then restore the previous setting.

    On this shared two-core machine a second thread makes every forward pass ~10x slower
    (measured: 4.2 s vs 0.14 s for one token) because OpenMP workers spin against other processes.
    """
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def prefilled(trace: Trace, token: int = 21) -> Trace:
    """``trace`` as the engine records it now: the prefill chose ``token`` before the first iteration, so every
    iteration's context is one token longer. With the default, 11 tokens: ' red', then the trace's ten."""
    its = tuple(dataclasses.replace(it, context_len=it.context_len + 1) for it in trace.iterations)
    return dataclasses.replace(trace, generated_ids=(token, *trace.generated_ids), text=VOCAB[token] + trace.text,
                               iterations=its, first=tp(token, 0.55), first_target_top=(tp(token, 0.55), tp(14, 0.2)))
