"""The position-invariant target: a position's logits are bitwise the same alone or inside a pass of n tokens."""

from __future__ import annotations

import pytest
import torch
from transformers import DynamicCache

from specsim.drafters import crop_cache
from specsim.invariant import MAX_INVARIANT_QUERIES, ChunkedLinear, invariant_attention
from specsim.models import format_prompt
from specsim.prompts import builtin_prompts

pytestmark = pytest.mark.usefixtures("one_torch_thread")

PROMPTS = builtin_prompts(20)
NS = range(2, MAX_INVARIANT_QUERIES + 1)


def _mismatches(target, texts, ns=NS) -> tuple[int, int]:
    """(positions whose logits differ, positions compared) between one-token passes and n-token passes."""
    model, steps = target.model, max(ns)
    bad = total = 0
    with torch.inference_mode():
        for text in texts:
            ids = format_prompt(target.tokenizer, text)
            cache = DynamicCache()
            model(input_ids=torch.tensor([ids[:-1]]), past_key_values=cache, use_cache=True)
            base = len(ids) - 1
            context, alone = list(ids), []
            for _ in range(steps):  # plain greedy decoding, one position per pass
                logits = model(input_ids=torch.tensor([[context[-1]]]), past_key_values=cache,
                               use_cache=True).logits[0, -1]
                alone.append(logits)
                context.append(int(torch.argmax(logits)))
            for n in ns:  # the same positions again, n at a time, as a verification pass computes them
                crop_cache(cache, base)
                logits = model(input_ids=torch.tensor([context[base:base + n]]), past_key_values=cache,
                               use_cache=True).logits[0]
                bad += sum(not torch.equal(logits[j], alone[j]) for j in range(n))
                total += n
    return bad, total


def test_every_position_is_bitwise_equal_alone_and_in_a_pass(bf16_targets):
    invariant, _ = bf16_targets
    assert invariant.invariant
    bad, total = _mismatches(invariant, PROMPTS)
    assert total == len(PROMPTS) * sum(NS) and bad == 0, f"{bad} of {total} positions differ"


def test_without_the_invariant_path_positions_differ(bf16_targets):
    """The same check has teeth: the stock bfloat16 kernels (SDPA, oneDNN) do not pass it."""
    _, stock = bf16_targets
    assert not stock.invariant
    bad, total = _mismatches(stock, PROMPTS[:4])
    assert bad > 0, f"all {total} positions matched without the invariant path"


def test_the_default_dtype_is_explained(default_target):
    reason = default_target.dtype_reason
    assert str(default_target.dtype).removeprefix("torch.") in reason
    assert ("guaranteed" in reason) if default_target.invariant else ("not guaranteed" in reason)


def test_chunked_linear_computes_the_same_product():
    linear = torch.nn.Linear(1536, 40, bias=True)
    x = torch.randn(7, 1536)
    torch.testing.assert_close(ChunkedLinear(linear, 768)(x), linear(x), rtol=1e-5, atol=1e-5)


def test_invariant_attention_is_causal_attention():
    """Against a plain float32 reference: GQA, a KV cache of earlier positions, and a padding mask."""
    torch.manual_seed(0)
    batch, heads, kv_heads, n, past, dim = 2, 6, 2, 5, 7, 16
    module = torch.nn.Module()
    module.num_key_value_groups = heads // kv_heads
    q = torch.randn(batch, heads, n, dim)
    k, v = torch.randn(batch, kv_heads, past + n, dim), torch.randn(batch, kv_heads, past + n, dim)
    allowed = torch.ones(batch, 1, n, past + n, dtype=torch.bool).tril(past)
    allowed[1, :, :, :3] = False  # the second sequence is left-padded by three positions
    for mask in (None, allowed):
        out, _ = invariant_attention(module, q, k, v, mask, scaling=dim ** -0.5)
        keys, values = k.repeat_interleave(heads // kv_heads, 1), v.repeat_interleave(heads // kv_heads, 1)
        reference = torch.nn.functional.scaled_dot_product_attention(
            q, keys, values, attn_mask=allowed if mask is not None else allowed[:1].expand_as(allowed))
        torch.testing.assert_close(out, reference.transpose(1, 2), rtol=1e-5, atol=1e-5)
