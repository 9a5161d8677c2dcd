"""The one-call decode pass (issue 54, specsim.core.target_pass): bitwise the forward it replaces, on every pass
size, along whole decodings, after a cropped cache, for the early-exit draft; every other call keeps transformers'
forward."""

from __future__ import annotations

import copy

import pytest
import torch

from specsim.core import target_pass
from specsim.core.defaults import DEFAULT_DRAFT, MAX_INVARIANT_QUERIES
from specsim.core.kpolicy import KPolicy


@pytest.fixture(scope="module")
def target(default_target):
    reason = target_pass.why_not(default_target.model)
    if reason is not None:
        pytest.skip(f"the one-call pass does not run on this machine: {reason}")
    return default_target


def _prefilled(target, text: str = "Explain, in two sentences, why the sky is blue."):
    from transformers import DynamicCache

    from specsim.core.models import format_prompt

    ids = format_prompt(target.tokenizer, text)
    cache = DynamicCache()
    with torch.inference_mode():
        target.model(input_ids=torch.tensor([ids[:-1]]), past_key_values=cache, use_cache=True)
    return ids, cache


def _both(target, input_ids, cache, **kwargs):
    """The same call on each path, each on its own copy of the cache: (one call, previous), caches after."""
    results = []
    for enabled in (True, False):
        own = copy.deepcopy(cache)
        target_pass.ENABLED = enabled
        try:
            with torch.inference_mode():
                out = target.model(input_ids=input_ids, past_key_values=own, use_cache=True, **kwargs)
        finally:
            target_pass.ENABLED = True
        results.append((out, own))
    return results


def _same_cache(a, b) -> bool:
    return all(torch.equal(x.keys, y.keys) and torch.equal(x.values, y.values) for x, y in zip(a.layers, b.layers,
                                                                                               strict=True))


def test_the_bundled_target_takes_the_one_call_pass(target):
    assert type(target.model).forward is target_pass._forward
    assert any("one C++ call" in change for change in target.invariant_changes)


@pytest.mark.parametrize("n", range(1, MAX_INVARIANT_QUERIES + 1))
def test_every_pass_size_gives_the_forwards_logits_and_cache_bitwise(target, n):
    ids, cache = _prefilled(target)
    new = torch.tensor([[ids[-1], *range(200, 200 + n - 1)]])
    (fast, fast_cache), (slow, slow_cache) = _both(target, new, cache)
    assert fast.logits.dtype == slow.logits.dtype and torch.equal(fast.logits, slow.logits)
    assert _same_cache(fast_cache, slow_cache)
    (fast, _), (slow, _) = _both(target, new, cache, logits_to_keep=1)
    assert fast.logits.shape[1] == 1 and torch.equal(fast.logits, slow.logits)


def test_a_cropped_cache_holds_views_and_the_pass_still_matches(target):
    from specsim.core.drafters import crop_cache

    ids, cache = _prefilled(target)
    with torch.inference_mode():
        target.model(input_ids=torch.tensor([[ids[-1], 11, 12, 13]]), past_key_values=cache, use_cache=True)
    crop_cache(cache, len(ids) + 1)  # a rejection: keep one of the four
    assert not cache.layers[0].keys.is_contiguous()
    (fast, fast_cache), (slow, slow_cache) = _both(target, torch.tensor([[14, 15]]), cache)
    assert torch.equal(fast.logits, slow.logits) and _same_cache(fast_cache, slow_cache)


def _tree(root: int):
    """A token tree of 8 nodes and 4 depths: siblings, a chain below one of them, leaves at every depth."""
    from specsim.core.token_tree import TokenTree

    parents = [-1, 0, 0, 0, 1, 1, 2, 4]
    return TokenTree([root, 11, 12, 13, 14, 15, 16, 17], parents, ["root", *["guess"] * 7])


@pytest.mark.parametrize("cropped", [False, True], ids=["fresh cache", "cropped cache"])
def test_a_token_trees_pass_takes_the_one_call_and_gives_the_forwards_logits_and_cache_bitwise(target, cropped):
    """A tree's pass (each node at the root's position plus its depth, seeing the context and its ancestors) runs
    in the one call, and its logits and cache entries are bitwise transformers' forward on the same mask and
    positions; the same after a rejection left the cache as views."""
    from specsim.core.drafters import crop_cache

    ids, cache = _prefilled(target)
    if cropped:
        with torch.inference_mode():
            target.model(input_ids=torch.tensor([[ids[-1], 11, 12, 13]]), past_key_values=cache, use_cache=True)
        crop_cache(cache, len(ids))
    tree, past = _tree(ids[-1] if not cropped else 21), cache.get_seq_length()
    placed = {"attention_mask": tree.attention_mask(past), "position_ids": tree.position_ids(past)}
    new = torch.tensor([tree.tokens])
    assert target_pass.covers(target.model, new, cache, {"use_cache": True, **placed})
    assert placed["position_ids"][0].tolist() == [past + tree.depth(i) for i in range(len(tree))]
    (fast, fast_cache), (slow, slow_cache) = _both(target, new, cache, **placed)
    assert fast.logits.shape == (1, len(tree), slow.logits.shape[-1])
    assert torch.equal(fast.logits, slow.logits) and _same_cache(fast_cache, slow_cache)
    # not a causal pass in disguise: the same tokens laid out as a chain give other logits past the first sibling
    (chain, _), _ = _both(target, new, cache)
    assert torch.equal(chain.logits[0, :2], fast.logits[0, :2])
    assert not torch.equal(chain.logits[0, 2], fast.logits[0, 2])


def test_a_tree_run_verifies_every_tree_in_the_one_call_and_writes_the_previous_paths_tokens(target, monkeypatch):
    """The live page's trees, drafted by the default draft: every tree the target checks (the last loop's may be its
    root alone) goes through the one call with the tree's positions and mask, and the run writes what the same run
    on transformers' forward writes, which is plain decoding's."""
    from specsim.core.engine import plain_generate
    from specsim.core.models import format_prompt
    from specsim.core.prompt_sets import heldout_prompts
    from specsim.core.trees import TreeShape, tree_generate
    from specsim.methods import build_drafter

    drafter = build_drafter("draft_model", target, DEFAULT_DRAFT)
    ids = format_prompt(target.tokenizer, heldout_prompts(1)[0]["prompt"])
    trees, real = [], target_pass.one_call

    def spy(model, input_ids, cache, keep, positions=target_pass._NONE, allowed=target_pass._NONE):
        if positions.numel():
            trees.append(input_ids.shape[1])
        return real(model, input_ids, cache, keep, positions, allowed)

    monkeypatch.setattr(target_pass, "one_call", spy)
    trace = tree_generate(target, drafter, ids, TreeShape.live(8, 4), 24)
    checked = [it.tree.width_read for it in trace.iterations]
    assert max(checked) == 9 and trees == checked
    target_pass.ENABLED = False
    try:
        before = tree_generate(target, drafter, ids, TreeShape.live(8, 4), 24).generated_ids
    finally:
        target_pass.ENABLED = True
    assert trace.generated_ids == before == plain_generate(target, ids, 24).generated_ids


def test_a_mask_or_positions_it_does_not_take_keep_transformers_forward(target):
    """Padding (a float or 2-D mask), positions without a mask, a mask without positions: the forward's calls."""
    ids, cache = _prefilled(target)
    tree, past = _tree(ids[-1]), cache.get_seq_length()
    new = torch.tensor([tree.tokens])
    mask, positions = tree.attention_mask(past), tree.position_ids(past)
    for extra in ({"attention_mask": mask}, {"position_ids": positions},
                  {"attention_mask": mask.float(), "position_ids": positions},
                  {"attention_mask": torch.ones(1, past + len(tree), dtype=torch.bool), "position_ids": positions},
                  {"attention_mask": mask, "position_ids": positions.int()}):
        assert not target_pass.covers(target.model, new, cache, extra), extra


def test_plain_and_speculative_decoding_write_the_previous_paths_tokens(target):
    from specsim.core.engine import plain_generate, speculative_generate
    from specsim.core.models import format_prompt
    from specsim.core.prompt_sets import heldout_prompts
    from specsim.methods import build_drafter

    drafter = build_drafter("draft_model", target, DEFAULT_DRAFT)
    for held in heldout_prompts(2):
        ids = format_prompt(target.tokenizer, held["prompt"])
        target_pass.ENABLED = False
        try:
            before = plain_generate(target, ids, 32).generated_ids
        finally:
            target_pass.ENABLED = True
        assert plain_generate(target, ids, 32).generated_ids == before
        assert speculative_generate(target, drafter, ids, KPolicy(4), 32).generated_ids == before


def test_a_call_it_does_not_cover_keeps_transformers_forward(target):
    ids, cache = _prefilled(target)
    new = torch.tensor([[ids[-1]]])
    assert target_pass.covers(target.model, new, cache, {"use_cache": True})
    for extra in ({"output_hidden_states": True}, {"attention_mask": torch.ones(1, len(ids))},
                  {"position_ids": torch.tensor([[len(ids) - 1]])}):
        assert not target_pass.covers(target.model, new, cache, extra), extra
    assert not target_pass.covers(target.model, torch.tensor([ids]), cache, {})  # a prefill-sized pass
    with torch.inference_mode():
        out = target.model(input_ids=new, past_key_values=copy.deepcopy(cache), use_cache=True,
                           output_hidden_states=True)
    assert out.hidden_states is not None and len(out.hidden_states) == len(target.model.model.layers) + 1
    (fast, _), (slow, _) = _both(target, new, cache)
    assert torch.equal(out.logits, slow.logits) and torch.equal(fast.logits, slow.logits)


def test_the_early_exit_draft_built_from_the_target_takes_it_too(target):
    from transformers import DynamicCache

    from specsim.core.model_drafters import EarlyExitDrafter

    shallow = EarlyExitDrafter(target.model, 6).model
    assert type(shallow).forward is target_pass._forward and len(shallow.model.layers) == 6
    ids, _ = _prefilled(target)
    cache = DynamicCache()
    with torch.inference_mode():
        shallow(input_ids=torch.tensor([ids[:-1]]), past_key_values=cache, use_cache=True)
    outs = []
    for enabled in (True, False):
        target_pass.ENABLED = enabled
        try:
            with torch.inference_mode():
                outs.append(shallow(input_ids=torch.tensor([[ids[-1], 5]]), past_key_values=copy.deepcopy(cache),
                                    use_cache=True).logits)
        finally:
            target_pass.ENABLED = True
    assert torch.equal(*outs)


def test_the_rotary_table_rows_are_what_the_rotary_module_gives_each_position(target):
    model = target.model
    cos, sin = target_pass.rotary_tables(model, 1500)
    assert cos.shape[0] >= 1500
    probe = model.model.embed_tokens.weight[:1].unsqueeze(0)
    for start, n in ((0, 1), (37, 1), (120, 5), (1499, 1), (700, 17)):
        c, s = model.model.rotary_emb(probe, position_ids=torch.arange(start, start + n).unsqueeze(0))
        assert torch.equal(c[0], cos[start:start + n]) and torch.equal(s[0], sin[start:start + n])


def test_packing_keeps_every_weight_and_lays_each_stack_side_by_side(target):
    layer = target.model.model.layers[0]
    qkv, gate_up = layer.__dict__["_specsim_stacked"]
    attention, mlp = layer.self_attn, layer.mlp
    assert qkv.data_ptr() == attention.q_proj.weight.data_ptr()
    assert torch.equal(qkv, torch.cat([attention.q_proj.weight, attention.k_proj.weight, attention.v_proj.weight]))
    assert torch.equal(gate_up, torch.cat([mlp.gate_proj.weight, mlp.up_proj.weight]))
    names = set(target.model.state_dict())
    assert {"model.layers.0.self_attn.q_proj.weight", "model.layers.0.mlp.up_proj.weight"} <= names


def test_it_does_not_fit_a_float32_model_and_says_why(bundled_target):
    reason = target_pass.why_not(bundled_target.model)
    assert reason is not None and type(bundled_target.model).forward is not target_pass._forward


def test_the_path_benchmark_times_both_paths_and_finds_the_same_tokens(target):
    from specsim.core.models import format_prompt
    from specsim.measure import pathbench
    from specsim.methods import build_drafter

    prompts = [format_prompt(target.tokenizer, "Name three primary colours.")]
    drafter = build_drafter("draft_model", target, DEFAULT_DRAFT)
    rows = pathbench.compare_paths(target, drafter, prompts, k=3, max_new_tokens=6, pass_rounds_count=2)
    assert [row.path for row in rows] == list(pathbench.PATHS)
    assert all(row.same_plain and row.same_spec and row.pass_ms > 0 for row in rows)
    assert sorted(rows[0].v) == list(range(2, 10)) and rows[0].plain_speedup == 1.0
    table = pathbench.format_paths(rows, 3)
    assert "one call" in table and "same tokens: the one-call path's plain decoding wrote" in table


@pytest.mark.parametrize("shape", [(576, 960), (576, 576), (576, 3072), (1536, 576), (576, 49152)])
def test_tile_packed_weights_give_rows_linears_values_for_every_row_count_and_thread_count(shape):
    """The AMX route reads the one-call pass's weights packed in its tile order: the same products, bitwise."""
    from specsim.core import fused

    if fused.linear_kernel() is None or fused.kernel().linear_path() != "amx":
        pytest.skip(f"no AMX route here: {fused.status()}")
    gen = torch.Generator().manual_seed(3)
    weight = (torch.randn(shape[1], shape[0], generator=gen) * 0.05).bfloat16()
    tiles = fused.pack_tiles(weight)
    assert tiles.shape == (shape[1] // 16, shape[0] // 32, 16, 32)
    x = torch.randn(MAX_INVARIANT_QUERIES, shape[0], generator=gen).bfloat16()
    before = torch.get_num_threads()
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            for m in (1, 2, 5, MAX_INVARIANT_QUERIES):
                assert torch.equal(fused.kernel().rows_linear_packed(x[:m], tiles), fused.rows_linear(x[:m], weight))
    finally:
        torch.set_num_threads(before)
    with pytest.raises(ValueError):
        fused.pack_tiles(weight[:, :40])
