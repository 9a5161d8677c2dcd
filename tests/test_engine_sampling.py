"""Speculative sampling keeps the target's distribution exactly, and a wrong rule is caught.

Two levels: the acceptance rule on fixed p and q vectors (many draws, cheap), and whole runs of
``speculative_generate`` with tiny random models whose exact output distribution we enumerate.
Each statistical check uses fixed seeds, so it is deterministic; each is shown to fail for a
deliberately wrong rule injected through the engine's rule functions.
"""

from __future__ import annotations

from collections import Counter
from itertools import product

import pytest
import torch

import specsim.core.acceptance as verify_rule
import specsim.core.engine as engine
from specsim.core.drafters import PromptLookupDrafter, Proposal
from specsim.core.kpolicy import KPolicy
from specsim.core.model_drafters import ModelDrafter
from specsim.core.sampling import SamplingConfig, residual_distribution
from specsim.core.tiny import tiny_llama, tiny_loaded
from tests.stats import chi_square_z

Z_FAIL = 4.0  # chi-square z above this: the sample does not come from the claimed distribution
VOCAB = 8
PROMPT = [1, 3, 5]


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def always_accept(p: float, q: float) -> float:
    return 1.0


def resample_from_p(p: torch.Tensor, q: torch.Tensor) -> tuple[torch.Tensor, float]:
    return p, 1.0


# ---- the rule itself on fixed distributions -------------------------------------------------------

P = torch.tensor([0.05, 0.40, 0.05, 0.30, 0.02, 0.08, 0.05, 0.05])
Q = torch.tensor([0.30, 0.05, 0.25, 0.10, 0.10, 0.05, 0.10, 0.05])


def first_token_counts(n: int, q: torch.Tensor = Q) -> Counter:
    """The first emitted token of one K=1 verification, n times, with the draft sampling from q."""
    generator = torch.Generator().manual_seed(0)
    sampling = SamplingConfig(temperature=1.0)
    target_probs = torch.stack([P, P])
    counts: Counter = Counter()
    for _ in range(n):
        x = int(torch.multinomial(q, 1, generator=generator))
        proposal = Proposal(tokens=[x], q=[float(q[x])], q_probs=[q])
        verdict = verify_rule.verify([x], proposal, target_probs, sampling, generator)
        counts[x if verdict.n_accepted else verdict.extra] += 1
    return counts


def test_rule_reproduces_p():
    n = 5000
    z = chi_square_z(first_token_counts(n), dict(enumerate(P.tolist())), n)
    assert z < Z_FAIL


@pytest.mark.parametrize("wrong", ["always_accept", "resample_from_p"])
def test_rule_check_catches_a_wrong_rule(monkeypatch, wrong):
    if wrong == "always_accept":
        monkeypatch.setattr(verify_rule, "acceptance_probability", always_accept)
    else:
        monkeypatch.setattr(verify_rule, "residual_distribution", resample_from_p)
    n = 5000
    assert chi_square_z(first_token_counts(n), dict(enumerate(P.tolist())), n) > Z_FAIL


def test_point_mass_draft_is_exact():
    """Prompt lookup's q is a point mass; min(1, p/1) and norm(max(0, p - q)) still give p."""
    n = 5000
    q = torch.zeros(VOCAB)
    q[3] = 1.0
    z = chi_square_z(first_token_counts(n, q), dict(enumerate(P.tolist())), n)
    assert z < Z_FAIL


def test_residual_of_equal_distributions_is_not_nan():
    residual, mass = residual_distribution(P, P.clone())
    assert mass == 0.0 and torch.isfinite(residual).all() and torch.allclose(residual, P)


# ---- whole runs with tiny models ----------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny_pair():
    target = tiny_loaded(VOCAB, seed=1, logit_scale=20.0)
    draft = tiny_llama(VOCAB, seed=2, logit_scale=20.0)
    return target, draft


def exact_distributions(target, temperature: float) -> tuple[dict, dict, dict]:
    """By enumeration: P(x1), P(x1, x2) and P(x3) of the target's own sampling from PROMPT."""
    with torch.inference_mode():
        def probs(prefixes: list[list[int]]) -> torch.Tensor:
            logits = target.model(torch.tensor([PROMPT + p for p in prefixes])).logits[:, -1]
            return torch.softmax(logits.double() / temperature, dim=-1)

        p1 = probs([[]])[0]
        pairs = [list(c) for c in product(range(VOCAB), repeat=2)]
        p2 = probs([[a] for a in range(VOCAB)])
        p3 = probs(pairs)
    first = {a: float(p1[a]) for a in range(VOCAB)}
    joint = {(a, b): float(p1[a] * p2[a, b]) for a, b in pairs}
    third = {c: float(sum(joint[tuple(pair)] * p3[i, c] for i, pair in enumerate(pairs))) for c in range(VOCAB)}
    return first, joint, third


def run_many(target, drafter, n: int, k: int, temperature: float) -> list[tuple[int, ...]]:
    return [
        engine.speculative_generate(target, drafter, PROMPT, KPolicy(k), 3, sampling=SamplingConfig(temperature),
                                    seed=s).generated_ids
        for s in range(n)
    ]


def worst_z(samples: list[tuple[int, ...]], exact: tuple[dict, dict, dict]) -> float:
    first, joint, third = exact
    n = len(samples)
    return max(
        chi_square_z(Counter(s[0] for s in samples), first, n),
        chi_square_z(Counter(s[:2] for s in samples), joint, n),
        chi_square_z(Counter(s[2] for s in samples), third, n),
    )


def test_model_drafter_sampling_matches_target(tiny_pair):
    target, draft = tiny_pair
    samples = run_many(target, ModelDrafter(draft), 800, k=2, temperature=1.0)
    assert worst_z(samples, exact_distributions(target, 1.0)) < Z_FAIL


def test_prompt_lookup_sampling_matches_target(tiny_pair):
    target, _ = tiny_pair
    samples = run_many(target, PromptLookupDrafter(max_ngram=1), 400, k=2, temperature=0.7)
    assert worst_z(samples, exact_distributions(target, 0.7)) < Z_FAIL


@pytest.mark.parametrize("wrong", ["always_accept", "resample_from_p"])
def test_whole_run_check_catches_a_wrong_rule(tiny_pair, monkeypatch, wrong):
    target, draft = tiny_pair
    if wrong == "always_accept":
        monkeypatch.setattr(verify_rule, "acceptance_probability", always_accept)
    else:
        monkeypatch.setattr(verify_rule, "residual_distribution", resample_from_p)
    samples = run_many(target, ModelDrafter(draft), 500, k=2, temperature=1.0)
    assert worst_z(samples, exact_distributions(target, 1.0)) > Z_FAIL


def test_sampling_with_top_p_and_equal_models_has_no_nan(tiny_pair):
    """p == q (the draft is the target): every proposal is kept, the residual is never 0/0."""
    target, _ = tiny_pair
    trace = engine.speculative_generate(target, ModelDrafter(target.model), PROMPT, KPolicy(4), 12,
                                        sampling=SamplingConfig(0.8, top_p=0.9), seed=3)
    assert len(trace.generated_ids) == 12
    assert trace.acceptance_rate == 1.0
    values = [v for it in trace.iterations for s in it.slots for v in (s.p, s.q, s.accept_prob)]
    assert all(v == v for v in values)  # no NaN


def test_top_rows_is_top_tokens_of_each_row():
    """The trace's top-n of every verification row comes from one call; it must be each row's own top-n."""
    from specsim.core.sampling import top_rows, top_tokens

    gen = torch.Generator().manual_seed(3)
    probs = torch.softmax(torch.randn(5, 300, generator=gen) * 3, dim=-1)
    assert top_rows(probs, 5) == [top_tokens(row, 5) for row in probs]
    assert top_rows(probs[:, :3], 5) == [top_tokens(row, 5) for row in probs[:, :3]]  # fewer tokens than n


def test_top_lists_put_the_argmax_first_when_probabilities_tie():
    """bfloat16 logits tie often; the trace's top-1 must be the token greedy decoding writes (argmax)."""
    from specsim.core.sampling import top_rows, top_tokens

    gen = torch.Generator().manual_seed(4)
    logits = (torch.randn(64, 49152, generator=gen) * 2).bfloat16().float()
    logits[:, 40000] = logits[:, 7] = logits.max(dim=-1).values  # a tie at the top, the later id first in memory
    probs = torch.softmax(logits, dim=-1)
    rows = top_rows(probs, 5)
    assert [row[0][0] for row in rows] == probs.argmax(dim=-1).tolist() == [7] * 64
    for row in rows:
        assert row == sorted(row, key=lambda pair: (-pair[1], pair[0]))
    assert top_tokens(probs[3], 5) == rows[3]


def test_the_warp_is_transformers_own_warpers_in_their_order():
    """Issue 55, item 3: specsim's warp keeps transformers' order and rules (TemperatureLogitsWarper, TopKLogitsWarper,
    TopPLogitsWarper, then MinPLogitsWarper, as ``GenerationMixin._get_logits_processor`` lists them), on random
    logits. Issue 63, item 2 added min-p, from the same cut the pages' numpy arrays go through."""
    import torch
    from transformers.generation.logits_process import (
        MinPLogitsWarper,
        TemperatureLogitsWarper,
        TopKLogitsWarper,
        TopPLogitsWarper,
    )

    from specsim.core.sampling import SamplingConfig, warp
    from specsim.lesson.unchanged import warped

    generator = torch.Generator().manual_seed(0)
    for trial in range(120):
        logits = torch.randn(1, 40, generator=generator) * (1 + trial % 4)
        t, k, p = (0.5, 1.0, 1.3)[trial % 3], (1, 5, 12, 40)[trial % 4], (0.3, 0.8, 0.95, 1.0)[trial % 4]
        m = (None, 0.02, 0.1, 0.3, 0.7, 1.0)[trial % 6]
        scores = logits.clone()
        for processor in (TemperatureLogitsWarper(t), TopKLogitsWarper(k), TopPLogitsWarper(p),
                          *([] if m is None else [MinPLogitsWarper(m)])):
            scores = processor(None, scores)
        theirs = torch.softmax(scores, dim=-1)
        ours = warp(logits, SamplingConfig(t, p, k, m))
        assert torch.equal(ours > 0, theirs > 0), (t, k, p, m)  # the same tokens survive
        assert torch.allclose(ours, theirs, atol=1e-6)
        assert int((warp(logits, SamplingConfig(t, p, k)) > 0).sum()) >= int((ours > 0).sum())  # min-p only cuts
        page = warped(torch.softmax(logits[0].double(), -1).numpy(), t, k, p, m)  # the pages' numpy arrays
        assert (page > 0).tolist() == (ours[0] > 0).tolist() and abs(page - ours[0].numpy()).max() < 1e-5
