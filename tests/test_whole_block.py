"""A whole K = 3 block leaves the output distribution unchanged (issue 38), through the check the *Why the output
is unchanged* page runs (specsim.lesson.blockcheck): over many seeded runs at temperature 1 with a draft unlike the
target, the first two tokens the loop emits (after the prefill's) follow the target's own joint distribution,
computed exactly from its logits over a six-token vocabulary (χ², scipy, 5 % level). A wrong acceptance rule
fails the same check."""

from __future__ import annotations

from collections import Counter

import pytest
import torch

import specsim.core.acceptance as verify_rule
from specsim.lesson import blockcheck

N_RUNS = 1500
LEVEL = 0.05

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def pair():
    return blockcheck.tiny_pair()


def test_the_exact_joint_is_a_distribution_of_the_targets_own_sampling(pair):
    target, _ = pair
    joint = blockcheck.exact_joint(target)
    assert len(joint) == blockcheck.VOCAB ** 2 and sum(joint.values()) == pytest.approx(1.0)
    second = Counter()
    for (b, _c), prob in joint.items():
        second[b] += prob
    with torch.inference_mode():  # P(x2) by one sum over the prefill's token x1, computed here on its own
        prompt = list(blockcheck.PROMPT)
        p1 = torch.softmax(target.model(torch.tensor([prompt])).logits[0, -1].double(), dim=-1)
        p2 = sum(p1[a] * torch.softmax(target.model(torch.tensor([[*prompt, a]])).logits[0, -1].double(), dim=-1)
                 for a in range(blockcheck.VOCAB))
    assert [second[b] for b in range(blockcheck.VOCAB)] == pytest.approx(p2.tolist())


def test_the_first_two_tokens_follow_the_targets_joint_distribution(pair):
    target, draft = pair
    pairs, blocks = blockcheck.first_two_tokens(target, draft, N_RUNS)
    # every way a block can end happened often: rejected at slot 1, 2 or 3, or fully kept
    assert all(blocks[kept] >= 50 for kept in range(blockcheck.K + 1)), blocks
    assert blockcheck.pooled_chi_square(pairs, blockcheck.exact_joint(target)).p_value > LEVEL


def always_accept(p: float, q: float) -> float:
    return 1.0


def resample_from_p(p: torch.Tensor, q: torch.Tensor) -> tuple[torch.Tensor, float]:
    return p, 1.0


@pytest.mark.parametrize("wrong", [always_accept, resample_from_p], ids=lambda f: f.__name__)
def test_a_wrong_rule_fails_the_same_check(pair, monkeypatch, wrong):
    name = "acceptance_probability" if wrong is always_accept else "residual_distribution"
    monkeypatch.setattr(verify_rule, name, wrong)
    target, draft = pair
    pairs, _ = blockcheck.first_two_tokens(target, draft, N_RUNS // 3)
    assert blockcheck.pooled_chi_square(pairs, blockcheck.exact_joint(target)).p_value < LEVEL


def test_a_sample_outside_the_support_is_impossible():
    result = blockcheck.pooled_chi_square(Counter({(0, 0): 3, (9, 9): 1}), {(0, 0): 0.5, (0, 1): 0.5})
    assert result.p_value == 0.0


# ---- issue 55, item 3: top-k and top-p warp p and q alike before the ratio ---------------------------------------
def _warped():
    from specsim.core.sampling import SamplingConfig

    return SamplingConfig(temperature=0.8, top_p=0.9, top_k=3)


def test_with_top_k_and_top_p_the_loop_follows_the_warped_targets_joint(pair):
    """The engine warps p and q alike (temperature, top-k, top-p) before min(1, p/q), and a rejected slot draws
    from the warped p: the loop's first two tokens follow the warped target's joint distribution, and never a token
    the warp cut away."""
    target, draft = pair
    warped = _warped()
    pairs, blocks = blockcheck.first_two_tokens(target, draft, N_RUNS, sampling=warped)
    joint = blockcheck.exact_joint(target, warped)
    assert sum(v == 0.0 for v in joint.values()) > blockcheck.VOCAB  # the warp cut many pairs away
    assert all(joint[cell] > 0 for cell in pairs)  # and none of them was written
    assert blocks[0] and blocks[blockcheck.K]  # rejections and fully kept blocks both happened
    assert blockcheck.pooled_chi_square(pairs, joint).p_value > LEVEL


def test_a_check_against_the_unwarped_target_fails_the_same_check(pair, monkeypatch):
    """The check has the power to see a target that is not warped: p left at temperature 0.8 alone, without the
    top-k and top-p cuts, in the loop's ratio and residual (the draft still warps q). Any q keeps the output on the
    p the ratio uses, so the loop then writes what the uncut target would, and the cut joint refuses it."""
    from specsim.core import engine, sampling

    real = sampling.warp
    monkeypatch.setattr(engine, "warp", lambda logits, config: real(logits, sampling.SamplingConfig(
        config.temperature)))
    target, draft = pair
    warped = _warped()
    pairs, _ = blockcheck.first_two_tokens(target, draft, N_RUNS // 3, sampling=warped)
    assert blockcheck.pooled_chi_square(pairs, blockcheck.exact_joint(target, warped)).p_value < LEVEL
