"""What one target pass costs as a function of how many new tokens it carries: v(n).

The lesson's third fact: checking K + 1 tokens costs about one pass, because decoding a token is
memory-bound (the weights are read once whatever the number of tokens). v(n) = time of a pass over
n new tokens / time of a one-token pass measures how true that is on this machine: flat (v near 1)
while the pass is memory-bound, then a slope once arithmetic dominates.

Timing on a shared machine (STYLE.md): warm-up passes first, the n values interleaved round-robin
so a burst of load hits them alike, and the median of the repeats.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from transformers import DynamicCache

from specsim.drafters import crop_cache
from specsim.engine import plain_generate
from specsim.models import LoadedModel, format_prompt

CONTEXT_TEXT = "Explain, in a few sentences, why the sky looks blue during the day but red at sunset."
"""About 45 tokens through the chat template: the context every measured pass appends to."""


@dataclass(frozen=True)
class PassCosts:
    """Median seconds of one target pass over n new tokens, for each measured n."""

    seconds: dict[int, float]
    dtype: str
    repeats: int

    def v(self, n: int) -> float:
        """Cost of a pass over n new tokens, in one-token passes."""
        return self.seconds[n] / self.seconds[1]


def measure_pass_costs(target: LoadedModel, ns: Sequence[int] = tuple(range(1, 18)), repeats: int = 7,
                       warmup: int = 2, context_text: str = CONTEXT_TEXT) -> PassCosts:
    """Time target passes over n new tokens after the same context; n = 1 is always measured."""
    ns = sorted({1, *ns})
    ids = format_prompt(target.tokenizer, context_text)
    device = target.device
    samples: dict[int, list[float]] = {n: [] for n in ns}
    with torch.inference_mode():
        cache = DynamicCache()
        target.model(input_ids=torch.tensor([ids], device=device), past_key_values=cache, use_cache=True)
        for round_ in range(warmup + repeats):
            for n in ns:  # round-robin: every n sees the same slice of machine load
                crop_cache(cache, len(ids))
                new = torch.tensor([(ids * (n // len(ids) + 1))[:n]], device=device)
                start = _clock(device)
                target.model(input_ids=new, past_key_values=cache, use_cache=True)
                if round_ >= warmup:
                    samples[n].append(_clock(device) - start)
    return PassCosts({n: statistics.median(s) for n, s in samples.items()},
                     str(target.dtype).removeprefix("torch."), repeats)


def _clock(device: str) -> float:
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter()


def plain_tokens_per_s(target: LoadedModel, max_new_tokens: int = 32, repeats: int = 3,
                       context_text: str = CONTEXT_TEXT) -> float:
    """Plain greedy decoding speed (decode only, after one warm-up run): median over the repeats."""
    ids = format_prompt(target.tokenizer, context_text)
    plain_generate(target, ids, 4)
    rates = []
    for _ in range(repeats):
        trace = plain_generate(target, ids, max_new_tokens)
        rates.append(trace.n_generated / trace.decode_time_s)
    return statistics.median(rates)


def format_pass_costs(costs: Sequence[PassCosts]) -> str:
    """One row per dtype: ms of a pass over n new tokens, and v(n) beneath it."""
    ns = sorted(costs[0].seconds)
    head = ["n new tokens", *map(str, ns)]
    rows = [head]
    for c in costs:
        rows.append([f"{c.dtype} ms", *(f"{c.seconds[n] * 1e3:.1f}" for n in ns)])
        rows.append([f"{c.dtype} v(n)", *(f"{c.v(n):.2f}" for n in ns)])
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return "\n".join("  ".join(cell.rjust(w) for cell, w in zip(r, widths, strict=True)) for r in rows)
