"""specsim.variants.tree_rules: a token tree's two multi-candidate acceptance rules, each exact for its own candidates
(SpecInfer's for independent draws from q, EAGLE-2's for the draft's distinct top-k), and either mixed up is biased."""

from __future__ import annotations

import numpy as np
import pytest


def _pairs(n: int = 40, vocab: int = 5):
    rng = np.random.default_rng(55)
    return [(rng.dirichlet(np.ones(vocab)), rng.dirichlet(np.ones(vocab))) for _ in range(n)]


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_eagle2_rule_on_distinct_top_k_keeps_the_target_distribution_exactly(k):
    from specsim.variants import tree_rules

    for p, q in _pairs():
        assert np.allclose(tree_rules.eagle2(p, q, k), p, atol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_specinfer_rule_on_iid_draws_from_q_keeps_the_target_distribution_exactly(n):
    from specsim.variants import tree_rules

    for p, q in _pairs(12, 4):
        assert np.allclose(tree_rules.specinfer(p, q, n), p, atol=1e-12)


def test_specinfer_rule_on_distinct_top_k_candidates_does_not_keep_the_target_distribution():
    """The mistake the hood used to teach for EAGLE-2: min(1, p/q) plus the residual on the draft's top-k tokens."""
    from specsim.variants import tree_rules

    biased = [np.abs(tree_rules.specinfer_rule_on_top_k(p, q, 2) - p).max() for p, q in _pairs()]
    assert max(biased) > 0.05 and sum(b > 1e-6 for b in biased) > len(biased) // 2
    ex = tree_rules.specinfer_rule_on_top_k(tree_rules.EXAMPLE_P, tree_rules.EXAMPLE_Q, tree_rules.EXAMPLE_CANDIDATES)
    assert not tree_rules.is_target(ex, tree_rules.EXAMPLE_P)
    # k = 1 is the one-slot rule on a token that was chosen, not drawn: biased too
    assert max(np.abs(tree_rules.specinfer_rule_on_top_k(p, q, 1) - p).max() for p, q in _pairs()) > 0.05


def test_a_wrong_rule_injected_fails_the_exact_check():
    """The check can fail: EAGLE-2's rule without the renormalisation after a refusal is not p."""
    from specsim.variants import tree_rules

    p, q = tree_rules.EXAMPLE_P, tree_rules.EXAMPLE_Q
    cands = tree_rules.top_k(q, 2)
    out, reach = np.zeros(len(p)), 1.0
    for x in cands:
        out[x] += reach * p[x]
        reach *= 1 - p[x]
    out += reach * np.asarray(p)  # sampling the untouched p at the end
    assert not tree_rules.is_target(out, p)
