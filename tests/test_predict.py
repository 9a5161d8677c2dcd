"""Predict, then see (app.predict): a page hides its answer until the learner has guessed, then says how close.

Pages are opened with the sidebar's "Show answers without guessing" off (``answers=False``); every other page test
opens them with it on.
"""

from __future__ import annotations

import numpy as np
import pytest

from app import predict
from app.calculator.text import best_k_close, best_k_verdict
from app.settings import CalcSettings, UnchangedSettings
from app.unchanged import pq
from specsim.lesson import unchanged
from specsim.measure import analytics
from tests.conftest import open_page

FORM_SUBMIT = "Check my guess"


def submit(at):
    next(b for b in at.button if b.label == FORM_SUBMIT).click().run()
    return at


def box(at, qid: str, field: str):
    return at.number_input(key=f"predict_box_{qid}_{field}")


# ---- the comparison, without Streamlit -------------------------------------------------------------
def test_judge_and_gap_words():
    assert predict.judge({"a": 1.05}, {"a": 1.0}, {"a": 0.1})
    assert not predict.judge({"a": 1.2}, {"a": 1.0}, {"a": 0.1})
    assert predict.gap_words(1.2, 1.0) == "20 % high"
    assert predict.gap_words(0.9, 1.0) == "10 % low"
    assert predict.gap_words(1.0, 1.0) == "spot on"


@pytest.mark.parametrize(("alpha_pct", "c", "v"), [(70, 0.13, 1.0), (50, 0.05, 1.0), (90, 0.02, 1.3), (40, 0.3, 1.0)])
def test_the_best_k_verdict_names_the_closed_forms_best(alpha_pct, c, v):
    s = CalcSettings(k=4, alpha_pct=alpha_pct, draft_cost=c, verify_cost=v)
    best = analytics.optimal_k(s.alpha, c, v)
    best_speed = analytics.speedup(s.alpha, best, c, v)
    wrong = best + 3
    text = best_k_verdict(s, {"k": wrong, "speedup": 2 * best_speed})
    assert f"the best is K = {best}" in text
    assert f"{analytics.speedup(s.alpha, wrong, c, v):.2f}×" in text
    assert "100 % above" in text
    assert best_k_verdict(s, {"k": best, "speedup": best_speed}).startswith(f"You guessed K = {best}: that is the best")
    assert best_k_close(s, {"k": best, "speedup": best_speed})
    assert not best_k_close(s, {"k": best, "speedup": 2 * best_speed})


# ---- the calculator ----------------------------------------------------------------------------------
def test_the_calculator_hides_the_best_k_until_a_guess_then_compares_and_keeps_the_guess():
    at = open_page("calculator.py", answers=False)
    assert not at.exception
    assert not any("The best K for these settings" in i.value for i in at.info)
    assert not at.metric  # the speedup at the sliders' K would give the answer away (the default K is the best)
    assert any(m.value.startswith("**Predict first.**") for m in at.markdown)
    submit(at)  # nothing typed: a message, no answer
    assert not at.exception
    assert any("Type a guess first" in w.value for w in at.warning)
    assert not any("The best K for these settings" in i.value for i in at.info)

    box(at, "calc_best_k", "k").set_value(9)
    box(at, "calc_best_k", "speedup").set_value(3.0)
    submit(at)
    best = analytics.optimal_k(0.70, 0.13)
    assert any(f"the best is K = {best}" in i.value for i in at.info)  # not close: an info box, not a success
    assert any("The best K for these settings" in i.value for i in at.info)

    at.slider[1].set_value(50).run()  # another α: a new question
    assert not any("The best K for these settings" in i.value for i in at.info)
    at.slider[1].set_value(70).run()  # back: the guess made there is remembered
    assert any(f"the best is K = {best}" in i.value for i in at.info)
    assert any("Predictions: 1 made, 0 close." in c.value for c in at.sidebar.caption)


def test_the_switch_shows_answers_without_guessing():
    at = open_page("calculator.py", answers=False)
    at.sidebar.toggle[0].set_value(True).run()
    assert any("The best K for these settings" in i.value for i in at.info)
    assert not any(m.value.startswith("**Predict first.**") for m in at.markdown)


# ---- why the output is unchanged -------------------------------------------------------------------
def test_the_overlap_shows_after_a_guess_of_it():
    at = open_page("unchanged.py", answers=False)
    assert not at.exception
    assert not at.metric  # Σ min(p, q) is not on screen yet
    mass = unchanged.accepted_mass(np.array(pq.TARGET_P), unchanged.normalise(UnchangedSettings().weights))
    box(at, "pq_mass", "mass").set_value(round(mass - 0.2, 2))
    submit(at)
    assert not at.exception
    assert at.metric[0].value == f"{mass:.3f}"
    assert any(f"Σ min(p, q) = {mass:.3f}" in i.value and "too low" in i.value for i in at.info)


# ---- live decoding ---------------------------------------------------------------------------------
def test_the_live_page_asks_for_alpha_and_tau_before_the_recording_plays():
    at = open_page("live.py", answers=False)
    assert not at.exception
    assert "The whole run" not in [h.value for h in at.subheader]
    assert not [m for m in at.metric if m.label == "measured acceptance α"]
    # a new learner's reading: nothing of the run showed before the guess; its loops play, its numbers wait
    assert "Step through the run" in [h.value for h in at.subheader]
    assert any("show here once you have guessed above" in c.value for c in at.caption)
    from app.live.run_guess import BEFORE_STEPPING

    assert any(BEFORE_STEPPING in m.value for m in at.markdown)  # and the question says to guess before stepping
    assert any("What share of the guesses" in m.value for m in at.markdown)
    box(at, "live_run", "alpha").set_value(90)
    box(at, "live_run", "tau").set_value(4.0)
    submit(at)
    assert not at.exception
    assert "The whole run" in [h.value for h in at.subheader]
    shown_alpha = next(m.value for m in at.metric if m.label == "measured acceptance α")
    assert any(f"The run measured α = {shown_alpha}" in i.value for i in at.info)


def test_a_guess_on_the_flat_top_of_the_curve_is_called_fine():
    """At the lesson's settings K = 3 gives 1.822× and K = 4 1.824×: the verdict said "100 % of the best"."""
    s = CalcSettings()
    best = analytics.optimal_k(s.alpha, s.draft_cost, s.verify_cost)
    near = best - 1
    assert analytics.speedup(s.alpha, near, s.draft_cost) >= 0.995 * analytics.speedup(s.alpha, best, s.draft_cost)
    text = best_k_verdict(s, {"k": near, "speedup": 1.8})
    assert "within 0.5 % of it" in text and "% of the best." not in text


def test_the_live_question_gives_what_earlier_pages_measured():
    """A review: the live page's question gave nothing to reason from. It now recalls the calculator's τ and, for the
    default draft, the agreement Why the output is unchanged measured."""
    from app.live import run_guess as view
    from specsim.lesson import recorded
    from specsim.lesson.unchanged import measured_overlap

    prose = next(recorded.load(r.path) for r in recorded.RECIPES if r.name == "prose_run")
    question = view.run_question(prose.spec)
    assert "τ = 1 + α + α² + … + α^K" in question
    assert f"{measured_overlap().greedy:.0%} of the positions" in question
    # a learner's second reading: the caveats made the question hard to read while guessing; they are the answer's
    assert view.AGREEMENT_GAP not in question and "a little less" not in question
    answer = view.run_verdict(prose.spec, {"alpha": 40, "tau": 1.8})
    assert answer.endswith(view.AGREEMENT_GAP) and "a little less, since it never checks the position" in answer


def test_the_live_question_names_the_bundled_draft_by_what_it_is():
    """A learner's second reading: the question named the draft by its folder, "standalone-L2-W384-v8k", twice."""
    from app.live import run_guess
    from specsim.lesson import recorded

    prose = next(recorded.load(r.path) for r in recorded.RECIPES if r.name == "prose_run")
    question = run_guess.run_question(prose.spec)
    assert "the bundled draft model (two layers, trained here; it also copies repeated text)" in question
    assert "standalone-L2" not in question
