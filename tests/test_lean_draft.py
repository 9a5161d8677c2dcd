"""The standalone draft's written-out forward pass (specsim.core.draft_forward) against the Llama module it reads."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import torch
from transformers import DynamicCache, LlamaConfig

from specsim.core import fused
from specsim.core.draft_forward import ONE_CALL_ROWS, LeanCache, LeanLlama
from specsim.core.draft_nets import StandaloneDraft, load_draft
from specsim.core.model_drafters import ModelDrafter
from specsim.core.sampling import SamplingConfig
from specsim.core.trained_drafters import LeanStandaloneDrafter, make_drafter

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def tiny_draft(kv_heads: int = 2, seed: int = 0) -> StandaloneDraft:
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=41, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=kv_heads, head_dim=16,
                         tie_word_embeddings=True, rope_parameters={"rope_type": "default", "rope_theta": 5000.0})
    draft = StandaloneDraft(config, torch.arange(40) * 3 + 1, target_vocab=150)
    draft.llama.tie_weights()
    with torch.no_grad():  # norms away from 1 so a forgotten norm weight shows
        for name, p in draft.named_parameters():
            if "norm" in name:
                p.uniform_(0.5, 1.5)
    return draft.eval()


@pytest.mark.parametrize("kv_heads", [4, 2], ids=["mha", "gqa"])
def test_lean_forward_equals_the_llama_module_through_chunks_crops_and_growth(kv_heads):
    draft = tiny_draft(kv_heads)
    lean = LeanLlama(draft)
    rng = random.Random(kv_heads)
    ids = [rng.randrange(150) for _ in range(40)]  # most are outside id_map: the UNK row
    hf_cache, cache = DynamicCache(), LeanCache(2, kv_heads, 16, torch.float32, "cpu", capacity=4)
    position = 0
    with torch.inference_mode():
        for chunk, crop in ((7, 0), (1, 0), (1, 2), (3, 0), (1, 1), (9, 4), (1, 0), (5, 0)):
            fed = ids[position : position + chunk]
            expected = draft(input_ids=torch.tensor([fed]), past_key_values=hf_cache, use_cache=True).logits[0, -1]
            got = lean.forward(fed, cache)
            torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
            assert cache.get_seq_length() == hf_cache.get_seq_length() == position + chunk
            position += chunk - crop
            if crop:
                hf_cache.crop(-crop)
                cache.crop(-crop)
    assert cache.keys.shape[2] >= position > 4  # it grew past its first capacity


@pytest.mark.parametrize("kv_heads", [4, 2], ids=["mha", "gqa"])
def test_the_one_call_pass_equals_the_python_steps_through_chunks_crops_and_growth(kv_heads):
    """bfloat16 where the fused kernel runs: the whole pass as one C++ call against the written-out steps."""
    if fused.linear_kernel() is None:
        pytest.skip(f"no fused linear kernel here: {fused.status()}")
    draft = tiny_draft(kv_heads).to(torch.bfloat16)
    one, steps = LeanLlama(draft, torch.bfloat16), LeanLlama(draft, torch.bfloat16, one_call=False)
    assert one.one_call is not None and steps.one_call is None
    rng = random.Random(kv_heads)
    ids = [rng.randrange(150) for _ in range(100)]
    caches = [LeanCache(2, kv_heads, 16, torch.float32, "cpu", capacity=4) for _ in range(2)]
    position = 0
    # a prefill longer than ONE_CALL_ROWS takes the Python steps in both; the call then reads the cache they wrote
    for chunk, crop in ((ONE_CALL_ROWS + 5, 0), (7, 0), (1, 0), (1, 2), (3, 0), (1, 1), (9, 4), (1, 0), (5, 0)):
        fed = ids[position : position + chunk]
        got, expected = (lean.forward(fed, cache) for lean, cache in zip((one, steps), caches, strict=True))
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
        assert caches[0].length == caches[1].length == position + chunk
        torch.testing.assert_close(caches[0].keys[:, :, : position + chunk],
                                   caches[1].keys[:, :, : position + chunk], rtol=1e-5, atol=1e-5)
        position += chunk - crop
        for cache in caches:
            cache.crop(position)
    assert caches[0].keys.shape[2] >= position > 4  # it grew past its first capacity


def _int8_here() -> None:
    from specsim.core.draft_forward import int8_available

    if not int8_available():
        pytest.skip(f"no int8 route here: {fused.status()}")


@pytest.mark.parametrize("rows", [1, 2, 3, 4, 5, 9, 17])
def test_the_int8_kernel_gives_x_times_the_scaled_int8_weights_whatever_the_row_count(rows):
    """rows_linear_q8 against float64 arithmetic on the dequantized matrix, and each row alone gives its row of the
    whole product bitwise (the draft's one call and its Python steps read the same matrices)."""
    from specsim.core.draft_forward import Int8Matrix

    _int8_here()
    generator = torch.Generator().manual_seed(rows)
    matrix = Int8Matrix.of(torch.randn(8 * 29 + 3, 96, generator=generator).to(torch.bfloat16))
    x = torch.randn(rows, 96, generator=generator)
    got = fused.kernel().rows_linear_q8(x, matrix.q, matrix.scale)
    exact = x.double() @ (matrix.q.double() * matrix.scale.double()[:, None]).T
    torch.testing.assert_close(got.double(), exact, rtol=1e-5, atol=1e-5)
    alone = torch.cat([fused.kernel().rows_linear_q8(x[i:i + 1], matrix.q, matrix.scale) for i in range(rows)])
    assert torch.equal(alone, got)


def test_int8_rounds_each_weight_to_its_rows_grid_and_keeps_the_largest_exactly():
    from specsim.core.draft_forward import Int8Matrix

    weight = torch.randn(40, 64) * torch.linspace(0.01, 3.0, 40)[:, None]  # rows of very different ranges
    matrix = Int8Matrix.of(weight)
    assert matrix.q.dtype == torch.int8 and int(matrix.q.abs().max()) == 127
    back = matrix.q.float() * matrix.scale[:, None]
    assert torch.all((back - weight).abs() <= matrix.scale[:, None] / 2 + 1e-6)  # half a step of its own row
    largest = weight.abs().argmax(dim=1)
    torch.testing.assert_close(back.gather(1, largest[:, None]), weight.gather(1, largest[:, None]))


@pytest.mark.parametrize("kv_heads", [4, 2], ids=["mha", "gqa"])
def test_the_int8_draft_reads_int8_by_default_and_stays_close_to_its_bfloat16_self(kv_heads, monkeypatch):
    """Where the kernel reads int8 the lean draft does unless SPECSIM_DRAFT_INT8=0; its logits stay within the
    rounding's reach of the bfloat16 draft's, and its one call equals its Python steps."""
    _int8_here()
    draft = tiny_draft(kv_heads).to(torch.bfloat16)
    int8, steps = LeanLlama(draft, torch.bfloat16), LeanLlama(draft, torch.bfloat16, one_call=False)
    monkeypatch.setenv("SPECSIM_DRAFT_INT8", "0")
    plain = LeanLlama(draft, torch.bfloat16)
    assert int8.int8 and steps.int8 and not plain.int8
    assert int8.one_call is not None and plain.one_call is not None
    ids = [random.Random(kv_heads).randrange(150) for _ in range(12)]
    caches = [LeanCache(2, kv_heads, 16, torch.float32, "cpu") for _ in range(3)]
    for chunk in (ids[:6], ids[6:7], ids[7:10], ids[10:]):
        a, b, c = (lean.forward(chunk, cache) for lean, cache in zip((int8, steps, plain), caches, strict=True))
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)
        assert not torch.equal(a, c)  # int8 really ran
        torch.testing.assert_close(a, c, rtol=0, atol=0.05 * float(c.abs().max()))


def test_int8_is_refused_with_a_reason_where_the_kernel_cannot_read_it():
    draft = tiny_draft()  # float32: no fused kernel path
    with pytest.raises(ValueError, match="int8"):
        LeanLlama(draft, torch.float32, int8=True)
    assert not LeanLlama(draft, torch.float32).int8


def test_lean_cache_crops_like_a_transformers_cache():
    cache = LeanCache(1, 1, 2, torch.float32, "cpu", capacity=8)
    cache.length = 6
    cache.crop(-2)
    assert cache.get_seq_length() == 4
    cache.crop(10)
    assert cache.get_seq_length() == 4
    cache.crop(3)
    assert cache.get_seq_length() == 3
    cache.crop(-9)
    assert cache.get_seq_length() == 0


def test_lean_forward_refuses_what_it_does_not_implement():
    draft = tiny_draft()
    draft.config.attention_bias = True
    with pytest.raises(ValueError, match="biases"):
        LeanLlama(draft)


def test_the_shipped_standalone_draft_proposes_what_its_llama_module_proposes(bundled_target):
    from specsim.core.defaults import DEFAULT_DRAFT
    from specsim.core.models import format_prompt

    draft, id_map = load_draft(ROOT / DEFAULT_DRAFT, dtype=torch.float32)
    lean = LeanStandaloneDrafter(draft, "lean")
    stock = ModelDrafter(draft, "stock", vocab_map=id_map)
    vocab = bundled_target.model.get_output_embeddings().weight.shape[0]
    greedy = SamplingConfig(0.0, None)
    context = format_prompt(bundled_target.tokenizer, "Explain why the sky is blue in two sentences.")
    with torch.inference_mode():  # as the engine calls drafters (no autograd graph behind q)
        for drafter in (lean, stock):
            drafter.start(context, vocab)
        for _ in range(4):
            a, b = (d.propose(context, 4, greedy, None) for d in (lean, stock))
            assert a.tokens == b.tokens
            assert a.q == pytest.approx(b.q, rel=1e-4, abs=1e-6)
            context = context + a.tokens[:2] + [a.tokens[0]]  # keep two, then a token of the target's own
            for drafter in (lean, stock):
                drafter.observe(context)


def test_a_shipped_standalone_folder_loads_as_the_lean_drafter(bundled_target):
    from specsim.core.defaults import DEFAULT_DRAFT

    drafter = make_drafter(ROOT / DEFAULT_DRAFT, bundled_target.model, dtype=bundled_target.dtype)
    assert isinstance(drafter, LeanStandaloneDrafter) and drafter.kind == "draft_model"
    assert drafter.lean.dtype == bundled_target.dtype
