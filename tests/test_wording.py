"""Wording the issue-14 review found wrong, each checked where it is produced (pure builders and assets)."""

from __future__ import annotations

import json
import re

import pytest

from app.calculator.text import heatmap_sentence
from app.live import tokens
from app.live.figures import residual_figure
from app.settings import CalcSettings
from specsim.core.paths import ASSETS
from specsim.lesson import replay
from tests.live_traces import hand_trace


def test_greedy_hover_never_shows_the_sampling_ratio():
    # hand_trace slot t+3 of iteration 0: p = 0.1, q = 0.5, rejected; a p > q rejection would read "= 1.0000"
    chips = replay.chips_at(hand_trace(greedy=True), 0)
    for chip in chips:
        if chip.role in ("accepted", "rejected"):
            title = tokens.chip_title(chip)
            assert "min(1, p/q)" not in title
            assert ("→ kept" in title) == (chip.role == "accepted")
            assert ("→ rejected" in title) == (chip.role == "rejected")


def test_sampling_hover_keeps_the_ratio():
    chips = replay.chips_at(hand_trace(greedy=False), 0)
    rejected = next(c for c in chips if c.role == "rejected")
    assert "min(1, p/q) = 0.2000" in tokens.chip_title(rejected) and not rejected.greedy


def test_narration_names_the_normalised_residual():
    spec = hand_trace(greedy=False)
    text = replay.narrate(spec, 0)
    assert "norm(max(0, p − q))" in text and "sum to 1" in text


def test_residual_title_separates_average_and_this_guess():
    it = hand_trace(greedy=False).iterations[0]
    title = residual_figure(it).layout.title.text
    assert "is the chance of rejection" not in title
    assert f"{it.residual.mass:.3f}" in title and "averaged over q" in title
    own = 1 - it.slots[it.n_accepted].accept_prob
    assert f"1 − min(1, p/q) = {own:.3f}" in title


@pytest.mark.parametrize("c,v,expect", [(0.0, 1.0, "stays white"), (0.13, 1.0, "red"), (0.0, 1.4, "red")])
def test_heatmap_sentence_follows_the_costs(c, v, expect):
    text = heatmap_sentence(CalcSettings(k=4, alpha_pct=70, draft_cost=c, verify_cost=v))
    assert expect in text
    if c == 0.0 and v == 1.0:
        assert "slower" not in text


def test_calibrate_text_does_not_say_a_little_more():
    source = (ASSETS.parent / "app" / "calculator" / "controls.py").read_text(encoding="utf-8")
    assert "a little more" not in source and "Is verification free here?" in source


def _quiz():
    return {q["id"]: q for q in json.loads((ASSETS / "quiz" / "knowledge.json").read_text("utf-8"))["questions"]}


def _all_text(q) -> str:
    return " ".join([q["prompt"], q["explanation"], *q["options"]])


def test_survive_is_not_used_for_two_different_things():
    quiz = json.dumps(json.loads((ASSETS / "quiz" / "knowledge.json").read_text("utf-8")), ensure_ascii=False)
    calc = (ASSETS.parent / "pages" / "calculator.py").read_text(encoding="utf-8")
    assert not re.search(r"surviv", quiz + calc, re.IGNORECASE)


def test_quiz_wording():
    q = _quiz()
    assert "batch" not in _all_text(q["one-pass"])
    assert "the last kept token included" in q["one-pass"]["options"][q["one-pass"]["answer"]]
    # the tokenizer question says why the ids must line up, without "ideally"
    assert "ideally" not in _all_text(q["tokenizer"]) and "token id" in q["tokenizer"]["explanation"]


def test_no_setting_of_the_calculator_can_make_a_useless_draft_faster_than_plain():
    """v below 1 (a pass over K + 1 tokens cheaper than a one-token pass) is refused: at α = 0 the best the
    calculator can show is 1×."""
    from app.calculator import params as calc_params
    from specsim.measure import analytics

    v_param = calc_params.BY_NAME["v"].number
    assert v_param.lo >= 1.0
    assert analytics.speedup(0.0, 1, 0.0, v_param.lo) <= 1.0
    assert calc_params.parse_query({"v": "0.5"}).settings.verify_cost >= 1.0
