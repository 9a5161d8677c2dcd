"""α = 1 − TV(p, q): Σ min(p, q) is the chance the engine keeps a slot's guess (issue 38).

Three levels: the identity against the engine's own rule min(1, p/q) on fixed vectors; the per-slot value
the engine records against the two models' logits; and the engine's acceptance frequency over many seeded
runs against the recorded value, with a wrong rule injected to show the frequency check can fail.
"""

from __future__ import annotations

import math

import pytest
import torch

import specsim.core.acceptance as verify_rule
from specsim.core.engine import speculative_generate
from specsim.core.kpolicy import KPolicy
from specsim.core.model_drafters import ModelDrafter
from specsim.core.sampling import SamplingConfig, acceptance_probability, accepted_mass, residual_distribution
from specsim.core.tiny import tiny_llama, tiny_loaded
from specsim.lesson.overlap import (
    accepted_mass_at_temperature,
    accepted_mass_by_temperature,
    next_token_logits,
    total_variation,
)

VOCAB = 12
PROMPT = [1, 4, 7]
Z_FAIL = 4.0

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def distributions(seed: int, vocab: int = 40) -> list[tuple[torch.Tensor, torch.Tensor]]:
    gen = torch.Generator().manual_seed(seed)
    p = torch.softmax(torch.randn(vocab, generator=gen) * 2, dim=-1)
    q = torch.softmax(torch.randn(vocab, generator=gen) * 2, dim=-1)
    sparse = q.clone()
    sparse[: vocab // 2] = 0.0  # a draft that cannot propose half the tokens
    sparse /= sparse.sum()
    point = torch.zeros(vocab)
    point[3] = 1.0  # prompt lookup's q
    return [(p, q), (p, sparse), (p, point), (p, p.clone())]


@pytest.mark.parametrize("seed", range(4))
def test_accepted_mass_is_the_rule_averaged_over_the_drafts_guess(seed):
    for p, q in distributions(seed):
        by_rule = sum(float(q[x]) * acceptance_probability(float(p[x]), float(q[x]))
                      for x in range(len(q)) if q[x] > 0)  # E_{x~q}[min(1, p(x)/q(x))], the engine's rule
        mass = float(accepted_mass(p, q))
        assert mass == pytest.approx(by_rule, abs=1e-6)
        assert mass == pytest.approx(1.0 - float(total_variation(p, q)), abs=1e-6)
        _, rejection = residual_distribution(p, q)
        assert mass == pytest.approx(1.0 - rejection, abs=1e-6)  # a rejection's probability is the residual's mass


@pytest.fixture(scope="module")
def pair():
    return tiny_loaded(VOCAB, seed=1, logit_scale=8.0), tiny_llama(VOCAB, seed=2, logit_scale=8.0)


def test_each_slot_records_the_overlap_of_the_two_models(pair):
    """The recorded value of slots 1 and 2 against Σ min(p, q) computed here from each model's own logits."""
    target, draft = pair
    trace = speculative_generate(target, ModelDrafter(draft), PROMPT, KPolicy(2), 6,
                                 sampling=SamplingConfig(0.7, top_p=0.9), seed=2)
    first = trace.iterations[0]
    x1 = first.slots[0].token_id
    start = [*PROMPT, trace.first.token_id]  # the prompt and the token its prefill drew
    for slot, context in zip(first.slots, (start, [*start, x1]), strict=True):
        expected = accepted_mass_at_temperature(next_token_logits(target.model, context),
                                                next_token_logits(draft, context), 0.7, top_p=0.9)
        assert slot.accepted_mass == pytest.approx(expected, abs=1e-5)
    greedy = speculative_generate(target, ModelDrafter(draft), PROMPT, KPolicy(2), 6)
    assert greedy.mean_accepted_mass is None and all(s.accepted_mass is None for it in greedy.iterations
                                                     for s in it.slots)


def test_a_draft_with_a_reduced_vocabulary(pair):
    """A draft whose 8 outputs map into the target's 12 ids: q is 0 elsewhere, in the helper as in the engine."""
    target, _ = pair
    mapping = torch.tensor([11, 0, 5, 3, 9, 2, 7, 1])
    draft = tiny_llama(VOCAB, seed=3, logit_scale=3.0, head_size=len(mapping))
    trace = speculative_generate(target, ModelDrafter(draft, vocab_map=mapping), PROMPT, KPolicy(1), 3,
                                 sampling=SamplingConfig(1.3), seed=0)
    start = [*PROMPT, trace.first.token_id]  # the prompt and the token its prefill drew
    expected = accepted_mass_at_temperature(next_token_logits(target.model, start), next_token_logits(draft, start),
                                            1.3, vocab_map=mapping)
    assert trace.iterations[0].slots[0].accepted_mass == pytest.approx(expected, abs=1e-5)


def first_slot_outcomes(target, draft, n: int) -> tuple[int, list[float]]:
    """Over n seeded runs of one K = 1 check at temperature 1: how often slot 1 was kept, and each run's recorded
    mass (it depends on the token the prefill drew, which varies with the seed)."""
    kept, masses = 0, []
    drafter = ModelDrafter(draft)
    for seed in range(n):
        seen = []
        trace = speculative_generate(target, drafter, PROMPT, KPolicy(1), 3, sampling=SamplingConfig(1.0), seed=seed,
                                     on_iteration=seen.append, should_stop=lambda seen=seen: bool(seen))
        slot = trace.iterations[0].slots[0]
        kept += slot.status == "accepted"
        masses.append(slot.accepted_mass)
    return kept, masses


def binomial_z(hits: int, probs: list[float]) -> float:
    """How far ``hits`` is from its mean, in standard deviations, when draw i is kept with ``probs[i]``."""
    return abs(hits - sum(probs)) / math.sqrt(sum(p * (1 - p) for p in probs))


N_RUNS = 400


def test_the_engine_keeps_slot_one_as_often_as_its_accepted_mass_says(pair):
    target, draft = pair
    kept, masses = first_slot_outcomes(target, draft, N_RUNS)
    assert 0.2 < sum(masses) / N_RUNS < 0.8  # a slot that is kept sometimes, not always
    assert binomial_z(kept, masses) < Z_FAIL


def test_the_frequency_check_catches_a_wrong_rule(pair, monkeypatch):
    """min(1, q/p), the ratio upside down, keeps the guess at another rate: the same check fails."""
    monkeypatch.setattr(verify_rule, "acceptance_probability", lambda p, q: acceptance_probability(q, p))
    target, draft = pair
    kept, masses = first_slot_outcomes(target, draft, N_RUNS // 2)  # z near 10 with half the runs
    assert binomial_z(kept, masses) > Z_FAIL


def test_the_runs_mean_accepted_mass_is_what_alpha_measures(pair):
    """Pooled over runs, kept slots ≈ Σ of the checked slots' accepted mass (each is a Bernoulli(β) draw)."""
    target, draft = pair
    kept = 0
    masses: list[float] = []
    for seed in range(120):
        trace = speculative_generate(target, ModelDrafter(draft), PROMPT, KPolicy(3), 8, sampling=SamplingConfig(1.0),
                                     seed=seed)
        kept += trace.n_accepted
        masses += [s.accepted_mass for it in trace.iterations for s in it.slots if s.status != "unchecked"]
        assert trace.mean_accepted_mass == pytest.approx(
            sum(s.accepted_mass for it in trace.iterations for s in it.slots if s.status != "unchecked")
            / trace.n_checked)
    spread = math.sqrt(sum(b * (1 - b) for b in masses))
    assert abs(kept - sum(masses)) / spread < Z_FAIL


def test_temperature_moves_the_overlap_between_its_limits(pair):
    target, draft = pair
    p_logits, q_logits = next_token_logits(target.model, PROMPT), next_token_logits(draft, PROMPT)
    at_one = float(accepted_mass(torch.softmax(p_logits, -1), torch.softmax(q_logits, -1)))
    greedy = float(int(p_logits.argmax()) == int(q_logits.argmax()))
    low, zero, one, high = accepted_mass_by_temperature(p_logits, q_logits, [1e-3, 0.0, 1.0, 1e4])
    assert one == pytest.approx(at_one, abs=1e-6)
    assert zero == greedy and low == pytest.approx(greedy, abs=1e-3)  # T -> 0: the greedy rule
    assert high == pytest.approx(1.0, abs=1e-3)  # T -> infinity: both uniform
    assert accepted_mass_by_temperature(p_logits, p_logits, [0.0, 0.3, 1.0, 3.0]) == pytest.approx([1.0] * 4)
