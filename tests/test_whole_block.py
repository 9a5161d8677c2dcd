"""A whole K = 3 block leaves the output distribution unchanged (issue 38): over many seeded runs at
temperature 1 with a draft unlike the target, the first two emitted tokens follow the target's own joint
distribution, computed exactly from its logits over a six-token vocabulary (χ², scipy, 5 % level). Both
tokens usually come out of one block: kept, kept; kept, then resampled; or resampled, then the next block."""

from __future__ import annotations

from collections import Counter
from itertools import product

import pytest
import torch
from scipy import stats

import specsim.verify as verify_rule
from specsim.drafters import ModelDrafter
from specsim.engine import speculative_generate
from tests.stats import chi_square_z
from tests.tiny_models import tiny_llama, tiny_loaded

VOCAB, K = 6, 3
PROMPT = [1, 4, 2]
N_RUNS = 1500
LEVEL = 0.05

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def pair():
    small = dict(hidden=16, layers=1)
    return tiny_loaded(VOCAB, seed=1, logit_scale=6.0, **small), tiny_llama(VOCAB, seed=2, logit_scale=6.0, **small)


def exact_joint(target) -> dict[tuple[int, int], float]:
    """P(x1, x2) = p(x1 | prompt) p(x2 | prompt, x1) of the target sampling alone at temperature 1."""
    with torch.inference_mode():
        first = torch.softmax(target.model(torch.tensor([PROMPT])).logits[0, -1].double(), dim=-1)
        second = torch.softmax(target.model(torch.tensor([[*PROMPT, a] for a in range(VOCAB)])).logits[:, -1].double(),
                               dim=-1)
    return {(a, b): float(first[a] * second[a, b]) for a, b in product(range(VOCAB), repeat=2)}


def first_pairs(target, draft, n: int) -> tuple[Counter, Counter]:
    """The first two tokens of n seeded runs, and how the first block ended (kept proposals) in each."""
    pairs, blocks = Counter(), Counter()
    drafter = ModelDrafter(draft)
    for seed in range(n):
        seen = []
        trace = speculative_generate(target, drafter, PROMPT, K, K + 1, temperature=1.0, seed=seed,
                                     on_iteration=seen.append,
                                     should_stop=lambda seen=seen: sum(len(it.emitted) for it in seen) >= 2)
        pairs[trace.generated_ids[:2]] += 1
        blocks[trace.iterations[0].n_accepted] += 1
    return pairs, blocks


def chi_square_p(counts: Counter, probs: dict, n: int) -> float:
    """Pearson's χ² p-value (tests.stats: cells expected fewer than 5 times pooled, scipy's χ² tail)."""
    return float(stats.norm.sf(chi_square_z(counts, probs, n)))


def test_the_first_two_tokens_follow_the_targets_joint_distribution(pair):
    target, draft = pair
    pairs, blocks = first_pairs(target, draft, N_RUNS)
    # every way a block can end happened often: rejected at slot 1, 2 or 3, or fully kept
    assert all(blocks[kept] >= 50 for kept in range(K + 1)), blocks
    assert chi_square_p(pairs, exact_joint(target), N_RUNS) > LEVEL


def always_accept(p: float, q: float) -> float:
    return 1.0


def resample_from_p(p: torch.Tensor, q: torch.Tensor) -> tuple[torch.Tensor, float]:
    return p, 1.0


@pytest.mark.parametrize("wrong", [always_accept, resample_from_p], ids=lambda f: f.__name__)
def test_a_wrong_rule_fails_the_same_check(pair, monkeypatch, wrong):
    name = "acceptance_probability" if wrong is always_accept else "residual_distribution"
    monkeypatch.setattr(verify_rule, name, wrong)
    target, draft = pair
    pairs, _ = first_pairs(target, draft, N_RUNS // 3)
    assert chi_square_p(pairs, exact_joint(target), N_RUNS // 3) < LEVEL
