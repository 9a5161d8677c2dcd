"""The batching roofline (specsim.lesson.roofline, specsim.lesson.moe) and the pages that read it: the Verify page's
batch-size caveat and serving section, the hood's cost section and interview Q3."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from app.serving import moe as moe_view
from app.serving import view as serving
from specsim.core import defaults, published
from specsim.lesson import moe, roofline
from specsim.lesson import serving as stacks
from specsim.measure import analytics
from tests.conftest import ROOT, open_page

BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def _markdown(at) -> str:
    return " ".join(m.value for m in at.markdown)


@pytest.fixture(scope="module")
def serving_page():
    at = open_page("serving.py")
    assert not at.exception and not at.error
    return at


# ---- the model: a step is the sum of its kernels' rooflines ------------------------------------------------------


def _llama_step_by_hand(n: int, batch: int, ridge: float, context: int) -> float:
    """Llama 3.1 8B's step from bytes and FLOPs, written out apart from the module, in units of reading the weights:
    GEMMs read 2 bytes a weight and do 2 FLOPs a weight a token; attention reads 2 bytes per cached value (32 layers ×
    k and v × 8 heads × 128) and does 4·d FLOPs per cached token per layer for each new token. A ridge of R tokens
    (2 FLOPs per 2-byte weight) means R FLOPs take as long as reading one byte."""
    params = 32 * (2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14_336) + 2 * 128_256 * 4096
    weights_bytes, flops_per_token = 2 * params, 2 * params
    cache_bytes = batch * context * 32 * 2 * 8 * 128 * 2
    attention_flops = batch * n * context * 32 * 4 * 4096
    gemm = max(weights_bytes, batch * n * flops_per_token / ridge)
    attention = max(cache_bytes, attention_flops / ridge)
    return (gemm + attention) / weights_bytes


@pytest.mark.parametrize("context", [0, 512, 4096, 32_768])
@pytest.mark.parametrize("batch", [1, 16, 64, 256])
def test_a_step_is_the_sum_of_the_gemm_and_attention_rooflines(batch, context):
    for n in (1, 5, 17, 100):
        assert roofline.step_cost(n, batch, 256, context) == pytest.approx(
            _llama_step_by_hand(n, batch, 256, context), rel=1e-9)


def test_cache_reads_do_not_hide_the_gemms_arithmetic():
    """One max over the whole step let the cache reads hide the GEMMs' arithmetic: at 4,096 tokens it gave v = 1.00
    and 1.82× at B = 256. Summed per kernel, the GEMMs' fivefold arithmetic shows through."""
    k, r, ctx = 4, 256, 4096
    v64, v256 = roofline.kv_verify_cost(64, k, r, ctx), roofline.kv_verify_cost(256, k, r, ctx)
    assert 1.05 < v64 < 1.10 and 1.38 < v256 < 1.46
    assert roofline.kv_speedup(0.7, k, 0.13, 256, r, ctx) < 1.5 < roofline.kv_speedup(0.7, k, 0.13, 64, r, ctx)
    # a long context still keeps v near 1 (MagicDec's regime), but never at 1 once B·(K + 1) > R
    assert [roofline.kv_verify_cost(b, k, r, 32_768) for b in (64, 256)] == pytest.approx([1.014, 1.058], abs=0.005)
    for ctx in defaults.BATCH_CONTEXTS:
        assert roofline.kv_verify_cost(256, k, r, ctx) > 1.0
        assert roofline.kv_verify_cost(r // (k + 1), k, r, ctx) == pytest.approx(1.0)


@pytest.mark.parametrize("ridge", [8, 64, 256])
def test_the_kv_model_at_context_zero_is_the_weights_only_roofline(ridge):
    for b in (1, 4, 64, 256):
        for n in (1, 5, 17):
            assert roofline.step_cost(n, b, ridge, 0) == pytest.approx(roofline.roofline_pass_cost(b * n, ridge))
        assert roofline.kv_verify_cost(b, 4, ridge, 0) == pytest.approx(roofline.batched_verify_cost(b, 4, ridge))


def test_the_gemms_turn_compute_bound_at_b_times_k_plus_1_equal_r_at_every_context():
    k, r = 4, 256
    assert roofline.memory_bound_batches(k, r) == pytest.approx(r / (k + 1))
    for ctx in defaults.BATCH_CONTEXTS:
        assert roofline.step_kernels(k + 1, 51, r, ctx).gemm_memory_bound
        assert not roofline.step_kernels(k + 1, 52, r, ctx).gemm_memory_bound
    assert roofline.memory_bound_batches(16, 16) == 0  # K + 1 = 17 tokens already pass R = 16


def test_attention_stays_memory_bound_for_a_verifications_few_tokens():
    """Llama 3.1 8B's grouped-query attention does 4 FLOPs per cache byte per new token (32 query heads share 8 KV
    heads: 4·d FLOPs per 2·(d/4)·2 bytes), so R = 256 allows 64 new tokens a sequence before it turns compute-bound."""
    assert roofline.attention_memory_bound_tokens(256) == pytest.approx(64)
    assert roofline.step_kernels(17, 256, 256, 4096).attention_memory_bound
    assert not roofline.step_kernels(65, 1, 256, 4096).attention_memory_bound


def test_llama_shape_gives_its_published_size_and_cache():
    m = roofline.LLAMA_31_8B
    assert m.params / 1e9 == pytest.approx(8.03, abs=0.01)  # "8B": 8.03 billion parameters on its model card
    assert m.kv_bytes_per_token == 128 * 1024  # 32 layers · (k, v) · 8 KV heads · 128 · 2 bytes


# ---- a mixture of experts -----------------------------------------------------------------------------------------


def test_distinct_experts_touched_matches_simulated_routing():
    m = moe.DEEPSEEK_V3
    rng = np.random.default_rng(60)
    for tokens in (1, 2, 5, 17, 80):
        touched = [len({int(e) for _ in range(tokens) for e in rng.choice(m.experts, m.active, replace=False)})
                   for _ in range(400)]
        assert np.mean(touched) == pytest.approx(m.experts_touched(tokens), rel=0.03)


def test_deepseek_v3_shape_matches_its_weights_readme():
    m = moe.DEEPSEEK_V3
    assert m.active_params / 1e9 == pytest.approx(36.6, rel=0.03)  # 36.6B activated per its README_WEIGHTS.md
    assert m.experts_touched(1) == pytest.approx(m.active)


def test_a_moe_target_makes_verification_dear_at_batch_1_and_nearly_free_at_serving_scale():
    m, r = moe.DEEPSEEK_V3, 256
    for k in (1, 2, 4, 8):
        assert roofline.batched_verify_cost(1, k, r) == 1.0  # dense: free
        assert m.verify_cost(1, k, r) > 1.4  # the K + 1 tokens read other experts
        assert m.verify_cost(1, k, r) == pytest.approx(m.read_ratio(k), rel=1e-9)  # at B = 1 all of it is bytes
        assert m.verify_cost(256, k, r) < 1.25  # every expert is read anyway
    assert [m.verify_cost(1, k, r) for k in range(1, 9)] == sorted(m.verify_cost(1, k, r) for k in range(1, 9))


def test_the_moe_text_and_chart_read_the_model():
    m, k, r = moe.DEEPSEEK_V3, 4, 256
    text = moe_view.moe_text(k, r)
    assert f"v = {m.verify_cost(1, k, r):.2f} where a dense model's is 1.00" in text
    assert f"{m.read_ratio(k):.1f}× the bytes" in text and f"v = {m.verify_cost(256, k, r):.2f}" in text
    fig = moe_view.moe_figure(r)
    assert list(fig.data[1].y) == pytest.approx([m.verify_cost(1, kk, r) for kk in moe_view.KS])


# ---- serving: K under load, the vLLM schedule, mixed acceptance, the draft's cache ---------------------------------


def test_load_shortens_k_and_then_switches_speculation_off_without_a_long_context():
    rows = serving.load_rows(0.7, 0.13, 256, 0, BATCHES)
    ks = [k for _, k, _ in rows]
    assert ks == sorted(ks, reverse=True) and ks[0] > 1 and ks[-1] == 0  # never longer under more load
    for b, k, s in rows:
        best = max(range(1, 17), key=lambda kk: roofline.kv_speedup(0.7, kk, 0.13, b, 256, 0))
        assert (k, s) == ((best, roofline.kv_speedup(0.7, best, 0.13, b, 256, 0)) if k else (0, 1.0))
    text = serving.load_text(rows, 0.7, 0.13, 256, 0)
    off = next(b for b, k, _ in rows if k == 0)
    assert f"From B = {off} no K beats plain decoding" in text
    fig = serving.load_figure(rows)
    assert list(fig.data[0].y) == ks
    # a new learner's reading: the speedup axis took ticks 0.46 apart from the K axis's grid; it now steps by 0.5
    # and each point carries its speedup
    assert fig.layout.yaxis2.dtick == 0.5 and list(fig.data[1].text) == [f"{s:.2f}×" for _, _, s in rows]


def test_a_long_context_keeps_speculation_paying_at_every_batch_size():
    rows = serving.load_rows(0.7, 0.13, 256, 32_768, BATCHES)
    assert all(k > 0 and s > 1 for _, k, s in rows)
    assert "some K still pays here" in serving.load_text(rows, 0.7, 0.13, 256, 32_768)


def test_the_switch_off_is_vllms_dynamic_schedule_at_every_batch_size_not_the_removed_setting():
    rows = serving.load_rows(0.7, 0.13, 256, 0, BATCHES)
    text = serving.schedule_text(rows)
    assert "disable_by_batch_size" in text and "stopped working" in text  # named only as removed
    assert "SGLang" in text and "fixed when the server starts" in text
    snippet = serving.schedule_snippet(0.7, 0.13, 256, 4096, 256, 4)
    assert snippet.release == stacks.VLLM_RELEASE and "/v0.25.0/" in snippet.source
    assert "num_speculative_tokens_per_batch_size" in snippet.code and "disable_by_batch_size" not in snippet.code
    assert '"method": "eagle"' in snippet.code and "c held fixed" in snippet.note
    schedule = stacks.dynamic_schedule(serving.best_k_every_batch(0.7, 0.13, 256, 4096, 256))
    for b in range(1, 257):  # every batch size in exactly one range, with the model's own best K there
        best = roofline.best_k_under_load(0.7, 0.13, b, 256, 4096)[0]
        assert [k for lo, hi, k in schedule if lo <= b <= hi] == [best]
    assert all(f"[{lo}, {hi}, {k}]" in snippet.code for lo, hi, k in schedule)
    # not only at the chart's powers of two: K changes between 32 and 64 here
    assert any(lo not in BATCHES for lo, _, _ in schedule)


def test_the_schedule_merges_neighbours_with_the_same_k():
    assert stacks.dynamic_schedule([(1, 4), (2, 4), (4, 3), (8, 0), (16, 0)]) == [(1, 3, 4), (4, 7, 3), (8, 16, 0)]


@pytest.mark.parametrize("alpha", [0.3, 0.7, 0.9])
def test_a_spread_of_acceptance_writes_the_mean_tau(alpha):
    low, high = max(0.05, alpha - 0.25), min(0.95, alpha + 0.25)
    mixed = roofline.mixed_batch_speedup([low, high], 4, 0.13, 32, 256, 4096)
    cost = 4 * 0.13 + roofline.kv_verify_cost(32, 4, 256, 4096)
    mean_tau = (analytics.tokens_per_loop(low, 4) + analytics.tokens_per_loop(high, 4)) / 2
    assert mixed == pytest.approx(mean_tau / cost)
    assert mixed >= roofline.mixed_batch_speedup([(low + high) / 2], 4, 0.13, 32, 256, 4096)  # τ is convex in α
    text = serving.mixed_text(alpha, 4, 0.13, 32, 256, 4096)
    assert f"{mixed:.2f}× plain decoding" in text


def test_a_batch_of_one_is_never_split_in_half():
    text = serving.mixed_text(0.7, 4, 0.13, 1, 256, 4096)
    assert "B = 1 with half" not in text and "B = 2 with half its requests" in text
    assert f"{roofline.mixed_batch_speedup([0.45, 0.95], 4, 0.13, 2, 256, 4096):.2f}×" in text


def test_the_drafts_cache_is_a_quarter_of_the_targets_for_llama_32_1b_beside_31_8b():
    draft, target = roofline.LLAMA_32_1B, roofline.LLAMA_31_8B
    assert draft.kv_bytes_per_token == 2 * 16 * 8 * 64 * 2 and target.kv_bytes_per_token == 2 * 32 * 8 * 128 * 2
    share = roofline.draft_cache_share()
    assert share == draft.kv_bytes_per_token / target.kv_bytes_per_token
    text = serving.draft_cache_text(32, 4096)
    assert f"{share:.0%} on top of the target's cache" in text
    assert f"{roofline.kv_cache_gb(32, 4096, draft):,.1f} GB beside {roofline.kv_cache_gb(32, 4096):,.1f} GB" in text


# ---- the pages read the model --------------------------------------------------------------------------------------


def test_no_batch_is_memory_bound_when_k_plus_1_passes_r():
    from app.batching import gemm_bound_clause

    assert gemm_bound_clause(16, 16) == "no batch size: one sequence's K + 1 = 17 tokens already pass R = 16"
    assert gemm_bound_clause(4, 256) == "B ≤ 51"


def test_serving_page_teaches_both_regimes_with_a_context_slider(serving_page):
    from app import state

    at = serving_page
    slider = at.select_slider(key=state.VERIFY_CONTEXT)
    assert slider.value == defaults.BATCH_CONTEXT and tuple(slider.options) == tuple(
        str(c) for c in defaults.BATCH_CONTEXTS)
    at.select_slider(key=state.VERIFY_BATCH).set_value(256).run()
    text = _markdown(at)
    k, a, c = at.session_state[state.CALC_K], at.session_state[state.CALC_ALPHA_PCT] / 100, at.session_state[
        state.CALC_DRAFT_COST]
    r, ctx = at.session_state[state.VERIFY_GPU_R], defaults.BATCH_CONTEXT
    assert f"**weights only**, v = {roofline.batched_verify_cost(256, k, r):.2f}" in text
    assert (f"**at context {ctx:,}**, v = {roofline.kv_verify_cost(256, k, r, ctx):.2f} and "
            f"{roofline.kv_speedup(a, k, c, 256, r, ctx):.2f}×") in text
    assert f"{roofline.kv_cache_gb(256, ctx):,.1f} GB" in text
    assert f"against {float(analytics.speedup(a, k, c, 1.0)):.2f}× with free verification" in text
    assert "the **sum** of their rooflines" in text and published.MAGICDEC_SPEEDUP.figure in text
    assert "memory-bound at every batch size" not in text
    chart = next(x for x in at.get("plotly_chart") if x.proto.id.endswith(state.VERIFY_BATCH_CHART))
    names = [t["name"] for t in json.loads(chart.proto.spec)["data"]]
    assert f"weights only, R = {r}" in names and any(f"context {ctx:,}" in n for n in names)
    assert "num_speculative_tokens_per_batch_size" in " ".join(x.value for x in at.code)
    at.select_slider(key=state.VERIFY_CONTEXT).set_value(0).run()
    assert "**at context" not in _markdown(at)


def test_magicdec_is_cited_by_its_own_authors_not_as_chen_2023():
    for figure in (published.MAGICDEC_SPEEDUP, published.MAGICDEC_LLAMA2_SPEEDUP):
        assert figure.source == "Chen, Tiwari, Sadhukhan et al., 2024" == published.MAGICDEC


def test_magicdec_is_named_once_wherever_it_is_cited(serving_page):
    hood = open_page("hood.py")
    from specsim.lesson import interview

    answers = " ".join(q.answer for q in interview.load())
    for text in (_markdown(serving_page), _markdown(hood), answers):
        assert "MagicDec" in text and "(MagicDec)" not in text and "MagicDec (MagicDec" not in text
        assert text.count(published.MAGICDEC) == text.count(f"MagicDec ({published.MAGICDEC}") + text.count(
            f"MagicDec: {published.MAGICDEC}")


def test_the_hood_gives_the_long_context_v_from_the_summed_model():
    text = _markdown(open_page("hood.py"))
    assert "That counts only the weights." in text
    k = 4
    assert (f"v = {roofline.kv_verify_cost(64, k, defaults.GPU_RIDGE, defaults.BATCH_CONTEXT):.2f} at B = 64 and "
            f"{roofline.kv_verify_cost(256, k, defaults.GPU_RIDGE, defaults.BATCH_CONTEXT):.2f} at B = 256") in text
    assert "memory-bound at every batch size" not in text


def test_interview_q3_works_the_kv_regime_beside_the_weights_only_one():
    from specsim.lesson import interview

    raw = {q["id"]: q for q in json.loads((ROOT / "assets" / "interview" / "questions.json").read_text(
        encoding="utf-8"))["questions"]}["batching"]["answer"]
    assert "{batch_kv_v}" in raw and "{magicdec.figure}" in raw  # named, never typed
    answer = {q.id: q for q in interview.load()}["batching"].answer
    a, k, c = interview.LESSON["alpha"], interview.LESSON["k"], interview.LESSON["c"]
    b, big, r, ctx = interview.BATCHING["batch"], interview.BATCHING["batch_big"], roofline.GPU_RIDGE, \
        defaults.BATCH_CONTEXT
    assert (f"v = {roofline.kv_verify_cost(b, k, r, ctx):.2f} and "
            f"{roofline.kv_speedup(a, k, c, b, r, ctx):.2f}× at B = {b}") in answer
    assert (f"v = {roofline.kv_verify_cost(big, k, r, ctx):.2f} and "
            f"{roofline.kv_speedup(a, k, c, big, r, ctx):.2f}× at B = {big}") in answer
    assert f"{roofline.kv_cache_gb(b, ctx):.0f} GB of cache" in answer
    assert "sum of the two rooflines" in answer and "cannot hide" in answer
    assert not math.isclose(roofline.kv_verify_cost(big, k, r, ctx), 1.0, abs_tol=0.05)


def test_the_dynamic_speculation_snippet_runs_as_vllm_documents_it():
    """A lecturer's review: vLLM's Dynamic SD page runs its EAGLE examples with VLLM_USE_V2_MODEL_RUNNER=0, and the
    V0 engine (which disable_by_batch_size needed) was gone entirely by v0.11.0, not v0.10."""
    code = serving.schedule_snippet(0.7, 0.13, 256, 4096, 256, 4).code
    assert code.index('os.environ["VLLM_USE_V2_MODEL_RUNNER"] = "0"') < code.index("from vllm import LLM")
    compile(code, "snippet", "exec")  # it parses as Python
    text = serving.schedule_text(serving.load_rows(0.7, 0.13, 256, 0, BATCHES))
    assert "v0.10 " not in text and "gone entirely by v0.11.0" in text


def test_one_gpu_ridge_point_everywhere():
    from app.calculator import v_curve
    from tests.page_text import page_text

    assert roofline.A100.ridge_tokens < roofline.GPU_RIDGE < roofline.H100.ridge_tokens
    gpu = [r for name, r in v_curve.MODELS.items() if "GPU" in name]
    assert gpu == [float(roofline.GPU_RIDGE)]
    assert "a few hundred" not in page_text(open_page("verify.py"))


# ---- the batch chart: the B label sits at B on the log axis, and the lines are in the legend ---------------------


@pytest.mark.parametrize("current", [1, 4, 64, 256])
def test_batch_chart_labels_the_current_batch_where_it_is_and_in_the_legend(current):
    from app.serving.figures import batch_figure

    batches = (1, 2, 4, 8, 16, 32, 64, 128, 256)
    fig = batch_figure(batches, {"R = 256": [roofline.batched_speedup(0.7, 4, 0.13, b, 256) for b in batches]},
                       current)
    assert fig.layout.xaxis.type == "log"
    label = next(a for a in fig.layout.annotations if a.text == f"B = {current}")
    assert label.x == pytest.approx(math.log10(current))  # plotly places log-axis annotations at log10(x)
    named = {t.name: t for t in fig.data if t.showlegend is not False}
    line = next(t for name, t in named.items() if name.endswith(f"B = {current}"))
    assert set(line.x) == {current}
    assert "plain decoding (1×)" in named
    assert fig.layout.title.text.startswith("Model: speedup as")  # no K given, none named
    assert batch_figure(batches, {"R": [1.0] * len(batches)}, current, 4).layout.title.text.startswith(
        "Model: speedup at K = 4 as the batch grows")


@pytest.mark.parametrize("ridge", [16, 64, 256, 512])
def test_the_cache_paragraph_divides_r_by_the_query_heads_per_key_and_that_is_the_bound(ridge):
    """A learner's reading: "4 query heads per cached key and value: fewer share them, less" read backwards. The
    paragraph now says R ÷ 4, and that is the attention kernel's bound the model computes."""
    from app import batching

    model = roofline.LLAMA_31_8B
    share = model.heads // model.kv_heads
    bound = roofline.attention_memory_bound_tokens(ridge, model)
    assert bound == pytest.approx(ridge / share)
    text = batching.kv_paragraph(model, ridge)
    assert f"fewer than about {bound:.0f} new tokens (R = {ridge} ÷ {share}" in text
    assert "attention stays memory-bound for more tokens" in text
