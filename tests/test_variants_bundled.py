"""Every variant on the bundled target (SmolLM2-135M-Instruct, float32): greedy output unchanged.

Plain decoding is the reference; a from-scratch argmax loop (no cache) double-checks it once.
"""

from __future__ import annotations

import pytest
import torch

from specsim import methods
from specsim.core.kpolicy import KPolicy
from specsim.core.models import format_prompt
from specsim.measure import compare_variants as cmp
from specsim.variants.lookahead import jacobi_demo
from specsim.variants.medusa import ASSET, MedusaHeads

PROMPTS = [cmp.DEMO_PROMPTS[label] for label in cmp.DEMO_PROMPTS]


@pytest.fixture(scope="module")
def heads():
    return MedusaHeads.load()


def test_shipped_heads_load_and_stay_small(heads, bundled_target):
    assert ASSET.stat().st_size <= 25 * 2**20
    assert heads.n_heads >= 2 and heads.blocks[0].in_features == bundled_target.model.config.hidden_size
    assert int(heads.vocab_ids.max()) < bundled_target.model.config.vocab_size
    assert heads.meta["total_seconds"] > 0  # the recipe recorded what training cost


def test_own_decoding_loops_keep_greedy_output_on_the_code_prompt(bundled_target, heads):
    """The loops written here (lookahead, Medusa tree) and the Medusa drafter, on the real model."""
    comparison = cmp.compare(bundled_target, PROMPTS[0], 12, ("lookahead", "medusa", "medusa_tree", "early_exit"),
                             heads, rounds=2, warmup_tokens=2)
    assert not comparison.errors
    assert all(r.identical for r in comparison.results)
    assert comparison.by_key("medusa_tree").tokens_per_pass >= 1.0
    for result in comparison.results[1:]:  # a speedup never exceeds tokens per target pass
        assert len(result.pairs) == 2 and result.fair is not None
        assert result.speedup <= result.tokens_per_pass + 1e-9


@pytest.mark.slow
def test_every_variant_keeps_greedy_output_on_the_code_prompt(bundled_target, heads):
    comparison = cmp.compare(bundled_target, PROMPTS[0], 16, medusa_heads=heads)
    assert not comparison.errors
    assert [r.key for r in comparison.results] == ["plain", *methods.VARIANTS]
    assert all(r.identical for r in comparison.results)
    ids = format_prompt(bundled_target.tokenizer, PROMPTS[0])
    with torch.inference_mode():  # plain decoding itself against a cache-free argmax loop
        seq = list(ids)
        for _ in range(16):
            seq.append(int(bundled_target.model(input_ids=torch.tensor([seq])).logits[0, -1].argmax()))
    assert list(comparison.by_key("plain").trace.generated_ids) == seq[len(ids):]
    lookup = comparison.by_key("prompt_lookup")
    assert lookup.tokens_per_pass > 1.0  # the answer copies the prompt's code


def test_jacobi_on_the_bundled_target_reaches_greedy(bundled_target):
    ids = format_prompt(bundled_target.tokenizer, PROMPTS[2])
    iterates = jacobi_demo(bundled_target, ids, window=5)
    plain = cmp.run_variant("plain", bundled_target, ids, 5)[0]
    assert iterates[-1] == list(plain.generated_ids)
    assert all(row[:i] == iterates[-1][:i] for i, row in enumerate(iterates))


@pytest.mark.slow
@pytest.mark.parametrize("prompt", PROMPTS[1:] + cmp.heldout_prompts(3))
def test_every_variant_keeps_greedy_output_on_more_prompts(bundled_target, heads, prompt):
    comparison = cmp.compare(bundled_target, prompt, 24, medusa_heads=heads)
    assert not comparison.errors
    assert all(r.identical for r in comparison.results), [r.key for r in comparison.results if not r.identical]


def test_tiny_training_budget_trains_heads_that_keep_greedy_output(bundled_target, tmp_path):
    """In the default run (about 12 s): the training recipe itself, end to end on the real target."""
    from specsim.core.engine import plain_generate, speculative_generate
    from specsim.variants.medusa import MedusaDrafter
    from specsim.variants.train_medusa import BUDGETS, train

    heads = train(bundled_target, BUDGETS["tiny"], seed=1, progress=False)
    heads.save(tmp_path / "tiny.pt")
    loaded = MedusaHeads.load(tmp_path / "tiny.pt")
    assert loaded.n_heads == BUDGETS["tiny"].n_heads and loaded.meta["data"] == "generated"
    ids = format_prompt(bundled_target.tokenizer, PROMPTS[2])
    chain = speculative_generate(bundled_target, MedusaDrafter(loaded, bundled_target.model), ids, KPolicy(3), 12)
    assert chain.generated_ids == plain_generate(bundled_target, ids, 12).generated_ids
