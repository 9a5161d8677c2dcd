"""A whole block leaves the output distribution unchanged: checked by running the engine many times.

The one-slot proof (:mod:`specsim.lesson.unchanged`) extends to a block of K guesses and the +1 token by induction
over the positions written. This module checks the first two positions empirically: two small random models
over six tokens (a target, and a draft unlike it), many seeded runs of :func:`specsim.core.engine.speculative_generate`
at K = 3 and temperature 1. The prefill draws the first token x₁ from the target alone; the first two tokens
the loop writes after it, x₂ and x₃, are counted against the target's own exact joint distribution
P(x₂, x₃) = Σ over x₁ of p(x₁ | prompt)·p(x₂ | prompt, x₁)·p(x₃ | prompt, x₁, x₂), computed from its logits.
Both tokens usually come out of one block (kept, kept; kept, then a replacement), and sometimes from two (a
replacement, then the next block's first slot), so every way a block ends is exercised.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from itertools import product

import numpy as np

from specsim.core.kpolicy import KPolicy
from specsim.lesson.unchanged import ChiSquare, chi_square

VOCAB, K = 6, 3
PROMPT = (1, 4, 2)
TARGET_SEED, DRAFT_SEED = 1, 2
SHARPNESS = 6.0  # logit scale: peaked enough that the draft is often right, never always
MIN_EXPECTED = 5.0  # cells expected fewer times than this are pooled into one, as the χ² textbook asks


@dataclass(frozen=True)
class BlockCheck:
    """The outcome of ``runs`` seeded runs: the first two tokens' counts against the exact joint."""

    runs: int
    counts: Counter  # (x2, x3) -> runs whose loop wrote it first
    expected: dict  # (x2, x3) -> the target's exact P(x2, x3)
    block_ends: Counter  # guesses kept in the first block (0 … K) -> runs
    test: ChiSquare

    def top_pairs(self, n: int = 8) -> list[tuple[tuple[int, int], int, float]]:
        """The n likeliest pairs: (pair, times written, times expected)."""
        likeliest = sorted(self.expected, key=self.expected.get, reverse=True)[:n]
        return [(pair, self.counts.get(pair, 0), self.runs * self.expected[pair]) for pair in likeliest]


def tiny_pair():
    """The target and the draft: small random Llamas, built in a moment (see :mod:`specsim.core.tiny`)."""
    from specsim.core.tiny import tiny_llama, tiny_loaded

    small = dict(hidden=16, layers=1)
    return (tiny_loaded(VOCAB, seed=TARGET_SEED, logit_scale=SHARPNESS, **small),
            tiny_llama(VOCAB, seed=DRAFT_SEED, logit_scale=SHARPNESS, **small))


def exact_joint(target, sampling=None) -> dict[tuple[int, int], float]:
    """P(x2, x3): the second and third tokens of the target sampling alone (``sampling``, a
    :class:`specsim.core.sampling.SamplingConfig`; default temperature 1, every token), the first (the prefill's draw)
    summed out: Σ over x1 of p(x1 | prompt)·p(x2 | prompt, x1)·p(x3 | prompt, x1, x2), each p warped by the engine's
    own :func:`specsim.core.sampling.warp` (temperature, then top-k, then top-p)."""
    import torch

    from specsim.core.sampling import SamplingConfig, warp

    sampling = sampling or SamplingConfig(1.0)

    def next_probs(contexts: list[list[int]]) -> torch.Tensor:
        with torch.inference_mode():
            return warp(target.model(torch.tensor(contexts)).logits[:, -1], sampling).double()

    first = next_probs([list(PROMPT)])[0]
    second = next_probs([[*PROMPT, a] for a in range(VOCAB)])
    third = next_probs([[*PROMPT, a, b] for a, b in product(range(VOCAB), repeat=2)]).reshape(VOCAB, VOCAB, VOCAB)
    return {(b, c): float(sum(first[a] * second[a, b] * third[a, b, c] for a in range(VOCAB)))
            for b, c in product(range(VOCAB), repeat=2)}


def first_two_tokens(target, draft, runs: int, on_run: Callable[[int], None] | None = None,
                     sampling=None) -> tuple[Counter, Counter]:
    """The first two tokens the loop wrote in ``runs`` seeded runs (seeds 0 … runs − 1), after the prefill's token,
    and how each first block ended; ``sampling`` as for :func:`exact_joint`."""
    from specsim.core.engine import speculative_generate
    from specsim.core.model_drafters import ModelDrafter
    from specsim.core.sampling import SamplingConfig

    sampling = sampling or SamplingConfig(1.0)

    pairs, blocks = Counter(), Counter()
    drafter = ModelDrafter(draft)
    for seed in range(runs):
        seen = []
        trace = speculative_generate(target, drafter, list(PROMPT), KPolicy(K), K + 2,
                                     sampling=sampling,
                                     seed=seed, on_iteration=seen.append,
                                     should_stop=lambda seen=seen: sum(len(it.emitted) for it in seen) >= 2)
        pairs[tuple(trace.generated_ids[1:3])] += 1
        blocks[trace.iterations[0].n_accepted] += 1
        if on_run is not None:
            on_run(seed + 1)
    return pairs, blocks


def pooled_chi_square(counts: Counter, probs: dict, min_expected: float = MIN_EXPECTED) -> ChiSquare:
    """Pearson's χ² of ``counts`` against ``probs``, the cells expected fewer than ``min_expected`` times pooled.
    A cell outside the support of ``probs`` makes the fit impossible (statistic inf, p-value 0)."""
    n = sum(counts.values())
    if any(cell not in probs for cell in counts):
        return ChiSquare(float("inf"), 0, 0.0)
    big = [cell for cell, prob in probs.items() if n * prob >= min_expected]
    small = [cell for cell in probs if cell not in big]
    observed = [counts.get(cell, 0) for cell in big] + ([sum(counts.get(c, 0) for c in small)] if small else [])
    expected = [probs[cell] for cell in big] + ([sum(probs[c] for c in small)] if small else [])
    return chi_square(np.array(observed, dtype=float), np.array(expected, dtype=float) / sum(expected))


def run(runs: int, on_run: Callable[[int], None] | None = None, sampling=None) -> BlockCheck:
    """Build the pair, run the engine ``runs`` times, and test the first two tokens against the exact joint
    (``sampling`` as for :func:`exact_joint`: the same warp on both sides)."""
    target, draft = tiny_pair()
    counts, blocks = first_two_tokens(target, draft, runs, on_run, sampling)
    expected = exact_joint(target, sampling)
    return BlockCheck(runs, counts, expected, blocks, pooled_chi_square(counts, expected))
