"""Errors a review of the app against the lesson found, one test per fix, each checked where the text or figure
is produced (pure builders, assets, and the pages through AppTest)."""

from __future__ import annotations

import pytest

from app import calc_text
from app.urlstate import CalcSettings
from specsim import analytics
from tests.conftest import open_page

# ---- a useless draft costs K·c + (v − 1), the drafting time alone only at v = 1 ----------------------


@pytest.mark.parametrize(("k", "c", "v"), [(4, 0.13, 1.0), (2, 0.05, 1.0), (4, 0.13, 1.4), (8, 0.3, 2.0)])
def test_useless_draft_sentence_computes_which_case_applies(k, c, v):
    s = CalcSettings(k=k, draft_cost=c, verify_cost=v)
    text = calc_text.useless_draft_sentence(s)
    loss = analytics.useless_draft_loss(k, c, v)
    assert loss == pytest.approx(k * c + (v - 1))
    assert f"{loss:.2f} target passes per loop" in text
    assert f"{analytics.speedup(0.0, k, c, v):.2f}×" in text
    if v == 1.0:
        assert "only the drafting time" in text
    else:
        assert "K·c + (v − 1)" in text and f"v − 1 = {v - 1:.2f}" in text
        assert "nothing else" not in text and "only the drafting time" not in text


def test_home_key_insight_states_the_general_cost_of_a_useless_draft():
    at = open_page()
    insight = next(s.value for s in at.success if "Key insight" in s.value)
    assert "K·c + (v − 1)" in insight and "v = 1" in insight
    assert "drafting time and nothing more" not in insight
