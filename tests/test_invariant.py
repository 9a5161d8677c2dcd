"""The position-invariant target: a position's logits are bitwise the same alone or inside a pass of n tokens."""

from __future__ import annotations

import os

import pytest
import torch
from transformers import DynamicCache

import specsim.core.invariant as invariant_module
from specsim.core import fused
from specsim.core.drafters import crop_cache
from specsim.core.invariant import (
    MAX_INVARIANT_QUERIES,
    ChunkedLinear,
    KernelLinear,
    invariant_attention,
)
from specsim.core.models import format_prompt
from specsim.core.prompt_sets import builtin_prompts, load_heldout

pytestmark = pytest.mark.usefixtures("one_torch_thread")

PROMPTS = builtin_prompts() + load_heldout()[::3]  # 8 built-in and 14 held-out prompts, every domain
NS = range(2, MAX_INVARIANT_QUERIES + 1)


def _mismatches(target, texts, ns=NS, first_only: bool = False) -> tuple[int, int]:
    """(positions whose logits differ, positions compared) between one-token passes and n-token passes;
    ``first_only`` returns at the first prompt with a difference (enough to show a path is not invariant)."""
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
            if first_only and bad:
                break
    return bad, total


SWITCHED_OFF = os.environ.get("SPECSIM_NO_FUSED") == "1"
"""``make test`` runs part of this file again with the kernels switched off, to test the fallback path."""


def _needs_kernel():
    """The fused kernel, built: a failed build fails the test; only ``SPECSIM_NO_FUSED=1`` skips it."""
    if fused.kernel() is None:
        if SWITCHED_OFF:
            pytest.skip("the fused kernels are switched off (SPECSIM_NO_FUSED=1): this run tests the fallback")
        pytest.fail(f"the fused kernel did not build here: {fused.status()}")


@pytest.fixture(params=["fused", "python"])
def attention_path(request, monkeypatch):
    """Run a test with the fused C++ kernel and again with the Python loop over rows."""
    if request.param == "fused":
        _needs_kernel()
    monkeypatch.setattr(fused, "ENABLED", request.param == "fused")
    return request.param


def test_every_position_is_bitwise_equal_alone_and_in_a_pass(bf16_targets, attention_path):
    invariant, _ = bf16_targets
    assert invariant.invariant and len(PROMPTS) >= 20
    # the default path gets every other prompt (11, every domain; all 22 took 46 s of a 10-minute suite), the
    # Python loop over rows three
    texts = PROMPTS[::2] if attention_path == "fused" else PROMPTS[:3]
    bad, total = _mismatches(invariant, texts)
    assert total == len(texts) * sum(NS) and bad == 0, f"{bad} of {total} positions differ"


def _needs_linear_kernel():
    if fused.linear_kernel() is None:
        pytest.skip(f"no row-invariant linear kernel on this machine: {fused.status()}")


@pytest.mark.parametrize("shape", [(576, 576), (576, 192), (576, 1536), (1536, 576), (576, 49152), (384, 77)])
def test_linear_kernel_rows_do_not_depend_on_the_row_count_or_threads(shape):
    """Every projection shape of the bundled target: a row alone, among m = 2..17 rows, with 1 or 2 threads.
    (384, 77): a draft's width, and an output count no block shape divides (the kernel's last, partial block)."""
    _needs_linear_kernel()
    gen = torch.Generator().manual_seed(2)
    weight = (torch.randn(shape[1], shape[0], generator=gen) * 0.05).bfloat16()
    x = torch.randn(MAX_INVARIANT_QUERIES, shape[0], generator=gen).bfloat16()
    alone = torch.cat([fused.rows_linear(x[i:i + 1], weight) for i in range(len(x))])
    before = torch.get_num_threads()
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            for m in range(1, len(x) + 1):
                assert torch.equal(fused.rows_linear(x[:m], weight), alone[:m]), (threads, m)
    finally:
        torch.set_num_threads(before)
    torch.testing.assert_close(alone, x.float() @ weight.float().T, rtol=1e-4, atol=1e-4)


def test_kernel_linear_serves_decode_passes_and_leaves_prefill_to_the_stock_path():
    _needs_linear_kernel()
    linear = torch.nn.Linear(576, 64, bias=True).to(torch.bfloat16)
    wrapped = KernelLinear(linear, linear)
    x = torch.randn(2, MAX_INVARIANT_QUERIES + 3, 576).bfloat16()
    with torch.inference_mode():
        small = wrapped(x[:1, :5])
        torch.testing.assert_close(small.float(), linear(x[:1, :5]).float(), rtol=2e-2, atol=2e-2)
        expected = (fused.rows_linear(x[0, :5], linear.weight) + linear.bias.float()).bfloat16()
        assert torch.equal(small[0], expected)  # through the kernel, bias added in float32
        prefill = wrapped(x)  # 40 rows: a prompt's prefill, through the kernel only where it is the faster path
        if fused.prefill_rows() >= x.shape[0] * x.shape[1]:
            expected = (fused.rows_linear(x.reshape(-1, 576), linear.weight) + linear.bias.float()).bfloat16()
            assert torch.equal(prefill, expected.reshape(2, -1, 64))
        else:
            assert torch.equal(prefill, linear(x))
        torch.testing.assert_close(prefill.float(), linear(x).float(), rtol=2e-2, atol=2e-2)
        big = torch.randn(max(fused.PREFILL_ROWS.values()) + 1, 576).bfloat16()
        assert torch.equal(wrapped(big), linear(big))  # beyond that, the stock path everywhere


def test_the_default_target_runs_its_linears_through_the_kernel_where_there_is_one(bf16_targets):
    invariant, _ = bf16_targets
    # the layers that run through the kernel; the "decode passes: …" line says which pass path runs, and on a host
    # without the linear kernel (no AMX: the AVX2 route) it names the kernel to say why it does not
    kernel_layers = [c for c in invariant.invariant_changes
                     if "fused linear kernel" in c and not c.startswith("decode passes:")]
    if fused.linear_kernel() is None:
        assert not kernel_layers
        assert "decode passes: the fused linear kernel does not run here" in invariant.invariant_changes
    else:  # 7 projections in each of 30 layers, and the output head
        assert len(kernel_layers) == 7 * 30 + 1 and "lm_head" in kernel_layers[0]


def test_fused_kernel_rows_do_not_depend_on_their_neighbours():
    """Kernel level: causal rows among n, and tree rows with gaps in their visible keys, against each row alone."""
    _needs_kernel()
    gen = torch.Generator().manual_seed(1)
    b, h, g, d, length = 1, 3, 3, 64, 40
    keys, values = torch.randn(b, h, length, d, generator=gen), torch.randn(b, h, length, d, generator=gen)
    for n in (1, 2, 5, 17):
        q = torch.randn(b, h, g, n, d, generator=gen)
        out = fused.attend(q, keys.transpose(-1, -2).contiguous(), values, None)
        for i in range(n):
            seen = length - n + i + 1
            alone = fused.attend(q[:, :, :, i:i + 1].contiguous(),
                                           keys[:, :, :seen].transpose(-1, -2).contiguous(),
                                           values[:, :, :seen].contiguous(), None)
            assert torch.equal(alone[:, :, :, 0], out[:, :, :, i])
    # a tree: row i sees the shared prefix and its own ancestors, scattered among the other nodes
    n, prefix = 6, length - 6
    parents = [-1, 0, 0, 1, 2, 3]
    allowed = torch.zeros(b, n, length, dtype=torch.bool)
    allowed[:, :, :prefix] = True
    for i in range(n):
        node = i
        while node >= 0:
            allowed[:, i, prefix + node] = True
            node = parents[node]
    q = torch.randn(b, h, g, n, d, generator=gen)
    out = fused.attend(q, keys.transpose(-1, -2).contiguous(), values, allowed)
    for i in range(n):
        visible = allowed[0, i].nonzero().squeeze(-1)  # the same keys, packed together, as a chain decodes them
        alone = fused.attend(q[:, :, :, i:i + 1].contiguous(),
                                       keys[:, :, visible].transpose(-1, -2).contiguous(),
                                       values[:, :, visible].contiguous(), None)
        assert torch.equal(alone[:, :, :, 0], out[:, :, :, i])


def test_the_probe_leaves_the_thread_count_alone(monkeypatch):
    """A server's users share one thread count: probing a model must never change it (issue 20)."""
    from specsim.core import invariant

    calls = []
    monkeypatch.setattr(torch, "set_num_threads", lambda n: calls.append(n))
    monkeypatch.setattr(invariant, "_VERDICTS", {})
    from specsim.core.tiny import tiny_llama

    model = tiny_llama(64, seed=0).to(torch.bfloat16)
    invariant.make_position_invariant(model)  # probes every linear shape of the model
    assert calls == []


def test_without_the_invariant_path_positions_differ(bf16_targets):
    """The same check has teeth: the stock bfloat16 kernels (SDPA, oneDNN) do not pass it."""
    _, stock = bf16_targets
    assert not stock.invariant
    bad, total = _mismatches(stock, PROMPTS[:4], first_only=True)
    assert bad > 0, f"all {total} positions matched without the invariant path"


def test_the_default_dtype_is_explained(default_target):
    reason = default_target.dtype_reason
    assert str(default_target.dtype).removeprefix("torch.") in reason
    assert ("guaranteed" in reason) if default_target.invariant else ("not guaranteed" in reason)


def test_chunked_linear_computes_the_same_product():
    linear = torch.nn.Linear(1536, 40, bias=True)
    x = torch.randn(7, 1536)
    torch.testing.assert_close(ChunkedLinear(linear, 768)(x), linear(x), rtol=1e-5, atol=1e-5)


def test_invariant_attention_is_causal_attention(attention_path):
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


def test_the_identity_panel_says_guarantee_only_for_the_invariant_path():
    from specsim.core.trace import Settings
    from specsim.lesson.replay import identity_guarantee

    assert identity_guarantee(Settings(4, 8, dtype="bfloat16", invariant=True)).startswith("Guaranteed")
    fp32 = identity_guarantee(Settings(4, 8, dtype="float32"))
    assert fp32.startswith("Usual but not guaranteed") and "float32" in fp32
    assert "GPU" in identity_guarantee(Settings(4, 8, dtype="bfloat16", device="cuda"))


def test_a_long_pass_on_top_of_a_cache_stays_causal(bf16_targets, monkeypatch):
    """Passes longer than the invariant path's limit take SDPA, with a real mask when the cache is not empty, and
    say that they left the invariant path."""
    invariant, stock = bf16_targets
    ids = format_prompt(invariant.tokenizer, PROMPTS[0])
    first, rest = ids[:8], (ids[8:] * 3)[:MAX_INVARIANT_QUERIES + 5]
    outs = []
    monkeypatch.setattr(invariant_module, "_WARNED", set())  # the warning comes once per size and process
    with torch.inference_mode(), pytest.warns(UserWarning, match=f"over {len(rest)} new tokens exceeds"):
        for target in (invariant, stock):
            cache = DynamicCache()
            target.model(input_ids=torch.tensor([first]), past_key_values=cache, use_cache=True)
            outs.append(target.model(input_ids=torch.tensor([rest]), past_key_values=cache, use_cache=True).logits)
    agree = (outs[0].argmax(-1) == outs[1].argmax(-1)).float().mean()
    assert agree >= 0.9  # two bfloat16 kernel paths may split a near-tie; a missing mask would not come close


def test_without_the_kernel_the_reason_says_which_path_runs(default_target, monkeypatch):
    """No compiler: the invariant path falls back to the Python loop, and the one-line reason says so."""
    if not default_target.invariant:
        pytest.skip("the default target here does not use the invariant path")
    assert ("Python loop over rows" if SWITCHED_OFF else "fused C++ attention kernel") in default_target.dtype_reason
    monkeypatch.setattr(fused, "ENABLED", False)
    assert "Python loop over rows" in default_target.dtype_reason


def test_a_run_larger_than_the_invariant_passes_is_not_called_guaranteed():
    from specsim.core.trace import Settings
    from specsim.lesson.replay import identity_guarantee

    assert identity_guarantee(Settings(16, 8, dtype="bfloat16", invariant=True)).startswith("Guaranteed")
    assert identity_guarantee(Settings(MAX_INVARIANT_QUERIES, 8, dtype="bfloat16", invariant=True)).startswith("Not")


def test_the_identity_sentence_reads_the_pass_the_run_made_not_the_k_setting():
    """Issue 51: an adaptive schedule from K = 16 once drafted 18 guesses; the sentence said "at most K + 1 = 17"."""
    from specsim.core.trace import Settings
    from specsim.lesson.replay import identity_guarantee

    settings = Settings(16, 64, dtype="bfloat16", invariant=True, k_schedule="heuristic")
    longer = identity_guarantee(settings, MAX_INVARIANT_QUERIES + 2)
    assert longer.startswith("Not guaranteed") and f"longest carried {MAX_INVARIANT_QUERIES + 2}" in longer
    within = identity_guarantee(settings, 5)
    assert within.startswith("Guaranteed") and "longest carried 5" in within and "K + 1 = 17" not in within
