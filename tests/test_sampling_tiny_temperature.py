"""softmax(logits / T) for tiny T > 0 (issue 12, defect 2): finite, and tending to the argmax."""

from __future__ import annotations

import pytest
import torch

from specsim.core.engine import plain_generate, speculative_generate
from specsim.core.kpolicy import KPolicy
from specsim.core.sampling import SamplingConfig, warp
from specsim.core.tiny import tiny_loaded
from tests.test_engine_greedy import make_drafter


@pytest.mark.parametrize("t", [1e-3, 1e-40, 1e-300, 5e-324])
def test_tiny_temperatures_give_the_argmax_without_nan(t):
    logits = torch.randn(3, 50, generator=torch.Generator().manual_seed(0)) * 4
    probs = warp(logits, SamplingConfig(t))
    assert torch.isfinite(probs).all() and torch.allclose(probs.sum(-1), torch.ones(3))
    if t < 1e-30:
        assert torch.equal(probs, torch.nn.functional.one_hot(logits.argmax(-1), 50).float())


def test_tied_maxima_share_the_mass():
    probs = warp(torch.tensor([1.0, 3.0, 3.0, -2.0]), SamplingConfig(1e-200))
    assert probs.tolist() == [0.0, 0.5, 0.5, 0.0]


def test_ordinary_temperatures_are_unchanged():
    logits = torch.randn(4, 100, generator=torch.Generator().manual_seed(1)) * 3
    for t in (0.3, 0.7, 1.0, 2.0):
        assert torch.allclose(warp(logits, SamplingConfig(t)), torch.softmax(logits / t, -1), atol=1e-6)


@pytest.mark.parametrize("kind", ["tiny", "prompt_lookup"])
def test_sampling_at_a_tiny_temperature_writes_the_greedy_text(kind, one_torch_thread):
    target = tiny_loaded(96, 11, logit_scale=3.0)
    prompt = [3, 8, 1, 8, 3, 8, 1]
    greedy = plain_generate(target, prompt, 12).generated_ids
    drafter = make_drafter(kind, target)
    for t in (1e-40, 1e-300):
        assert plain_generate(target, prompt, 12, sampling=SamplingConfig(t), seed=4).generated_ids == greedy
        spec = speculative_generate(target, drafter, prompt, KPolicy(3), 12, sampling=SamplingConfig(t), seed=4)
        assert spec.generated_ids == greedy
