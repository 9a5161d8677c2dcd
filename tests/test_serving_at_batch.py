"""Issue 55, item 5: serving many requests at once, on the Verify page: the best K under load (and where to switch
speculation off), a batch whose requests accept differently, and the draft's own KV cache."""

from __future__ import annotations

import pytest

from app.passcost import serving
from specsim.lesson import roofline
from specsim.measure import analytics
from tests.conftest import open_page

BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def test_load_shortens_k_and_then_switches_speculation_off_without_a_long_context():
    rows = serving.load_rows(0.7, 0.13, 256, 0, BATCHES)
    ks = [k for _, k, _ in rows]
    assert ks == sorted(ks, reverse=True) and ks[0] > 1 and ks[-1] == 0  # never longer under more load
    for b, k, s in rows:
        best = max(range(1, 17), key=lambda kk: roofline.kv_speedup(0.7, kk, 0.13, b, 256, 0))
        assert (k, s) == ((best, roofline.kv_speedup(0.7, best, 0.13, b, 256, 0)) if k else (0, 1.0))
    text = serving.load_text(rows, 0.7, 0.13, 256, 0)
    off = next(b for b, k, _ in rows if k == 0)
    assert f"From B = {off} no K beats plain decoding" in text and "disable_by_batch_size" in text
    fig = serving.load_figure(rows)
    assert list(fig.data[0].y) == ks


def test_a_long_context_keeps_speculation_paying_at_every_batch_size():
    rows = serving.load_rows(0.7, 0.13, 256, 32_768, BATCHES)
    assert all(k > 0 and s > 1 for _, k, s in rows)
    assert "some K still pays here" in serving.load_text(rows, 0.7, 0.13, 256, 32_768)


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


def test_the_drafts_cache_is_a_quarter_of_the_targets_for_llama_32_1b_beside_31_8b():
    draft, target = roofline.LLAMA_32_1B, roofline.LLAMA_31_8B
    assert draft.kv_bytes_per_token == 2 * 16 * 8 * 64 * 2 and target.kv_bytes_per_token == 2 * 32 * 8 * 128 * 2
    share = roofline.draft_cache_share()
    assert share == draft.kv_bytes_per_token / target.kv_bytes_per_token
    text = serving.draft_cache_text(32, 4096)
    assert f"{share:.0%} on top of the target's cache" in text
    assert f"{roofline.kv_cache_gb(32, 4096, draft):,.1f} GB beside {roofline.kv_cache_gb(32, 4096):,.1f} GB" in text


def test_the_verify_page_shows_the_section():
    at = open_page("verify_free.py")
    assert not at.exception and not at.error
    assert "Serving many requests at once" in [h.value for h in at.subheader]
    assert any("The draft has a cache too." in m.value for m in at.markdown)
