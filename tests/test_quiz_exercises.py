"""Issue 61, item 6: worked exercises below the knowledge check, with checked answers, a hint on a wrong one and the
worked solution on a right one. The answers are computed here from the library's functions, never typed."""

from __future__ import annotations

import numpy as np
import pytest

from app import state
from app.quiz import exercises as view
from specsim.lesson import exercises, unchanged
from specsim.measure import analytics
from tests.conftest import open_page

# ---- the maths -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(12))
def test_each_exercise_is_computed_by_the_library(seed):
    ex = exercises.draw(seed)
    p = ex.prefix
    assert p.answer == pytest.approx(sum(p.alpha ** i for i in range(1, p.k + 1)))
    assert p.answer == pytest.approx(float(analytics.expected_accepted_prefix(p.alpha, p.k)))
    r = ex.residual
    res = np.array(r.answer)
    kept = np.minimum(r.p, r.q)
    assert res.sum() == pytest.approx(1.0)
    assert kept + (1 - kept.sum()) * res == pytest.approx(np.array(r.p))  # kept draws plus replacements give p
    assert res == pytest.approx(unchanged.residual(r.p, r.q))
    k = ex.k_choice
    speed = {kk: tau / (kk * k.c + v) for kk, tau, v in zip(k.ks, k.taus, k.vs, strict=True)}
    assert k.answer == max(speed, key=speed.get)
    assert exercises.draw(seed) == ex  # the same seed, the same numbers


def test_the_better_k_is_not_always_the_shorter():
    winners = [exercises.draw(seed).k_choice for seed in range(60)]
    shorter = sum(k.answer == k.ks[0] for k in winners) / len(winners)
    assert 0.25 <= shorter <= 0.75, shorter


@pytest.mark.parametrize("text", ["abc", "", "1.2.3", "nan", "two"])
def test_text_that_is_not_a_number_gives_a_message(text):
    value, problem = exercises.read_number(text)
    assert value is None and problem


def test_numbers_are_read_with_a_decimal_comma_or_a_percent():
    assert exercises.read_number(" 1,25 ") == (1.25, None)
    assert exercises.read_number("40%") == (0.4, None)


def test_the_hints_name_a_step_and_never_the_answer():
    for seed in range(12):
        ex = exercises.draw(seed)
        p = ex.prefix
        for wrong in (p.alpha * p.k, p.answer + 1, p.answer + 0.5):
            assert f"{p.answer:.2f}" not in view.prefix_hint(p, wrong)
        r = ex.residual
        for wrong in (r.excess, r.p):
            hint = view.residual_hint(r, wrong)
            assert not any(f"{a:.2f}" in hint for a in r.answer if a > 0)
        k = ex.k_choice
        other = next(kk for kk in k.ks if kk != k.answer)
        assert f"K = {k.answer}" not in view.k_choice_hint(k, other)


# ---- the page --------------------------------------------------------------------------------------------------


def _exercises(at) -> exercises.Exercises:
    return exercises.draw(at.session_state[state.EX_SEED])


def _answer(at, name: str, text: str, token: str | None = None):
    at.text_input(key=view.input_key(name, token)).input(text).run()
    at.button(key=f"{state.EX_CHECK_BUTTON}{name}").click().run()
    assert not at.exception
    return at


def test_a_wrong_answer_gets_a_hint_and_a_right_one_the_worked_solution():
    at = open_page("quiz.py")
    assert not at.exception
    ex = _exercises(at)
    p = ex.prefix
    assert f"K = {p.k}" in "".join(m.value for m in at.markdown) and f"α = {p.alpha:.0%}" in "".join(
        m.value for m in at.markdown)
    at = _answer(at, view.PREFIX, f"{p.alpha * p.k:.3f}")  # α·K: the prefix rule forgotten
    assert [w.value for w in at.warning] == [view.prefix_hint(p, p.alpha * p.k)]
    assert view.prefix_solution(p) not in [m.value for m in at.markdown]
    at = _answer(at, view.PREFIX, f"{p.answer:.2f}")
    assert "Right." in [s.value for s in at.success]
    assert view.prefix_solution(p) in [m.value for m in at.markdown]
    assert not at.warning


def test_the_residual_and_the_k_choice_are_checked_on_the_page():
    at = open_page("quiz.py")
    ex = _exercises(at)
    for token, value in zip(exercises.TOKENS, ex.residual.excess, strict=True):  # not rescaled yet
        at.text_input(key=view.input_key(view.RESIDUAL, token)).input(f"{value:.2f}").run()
    at.button(key=f"{state.EX_CHECK_BUTTON}{view.RESIDUAL}").click().run()
    assert view.residual_hint(ex.residual, ex.residual.excess) in [w.value for w in at.warning]
    for token, value in zip(exercises.TOKENS, ex.residual.answer, strict=True):
        at.text_input(key=view.input_key(view.RESIDUAL, token)).input(f"{value:.3f}").run()
    at.button(key=f"{state.EX_CHECK_BUTTON}{view.RESIDUAL}").click().run()
    assert view.residual_solution(ex.residual) in [m.value for m in at.markdown]
    k = ex.k_choice
    other = next(kk for kk in k.ks if kk != k.answer)
    at = _answer(at, view.K_CHOICE, str(other))
    assert view.k_choice_hint(k, other) in [w.value for w in at.warning]
    at = _answer(at, view.K_CHOICE, str(k.answer))
    assert view.k_choice_solution(k) in [m.value for m in at.markdown]


def test_text_in_a_number_box_gives_a_clear_message_not_a_traceback():
    at = open_page("quiz.py")
    at = _answer(at, view.PREFIX, "about two")
    assert not at.exception
    assert [e.value for e in at.error] == [exercises.read_number("about two")[1]]
    ex = _exercises(at)
    at = _answer(at, view.K_CHOICE, "99")
    assert any(f"{ex.k_choice.ks[0]} or {ex.k_choice.ks[1]}" in e.value for e in at.error)


def test_the_numbers_survive_a_rerun_and_change_only_with_new_numbers():
    at = open_page("quiz.py")
    seed = at.session_state[state.EX_SEED]
    at = _answer(at, view.PREFIX, "0.1")
    assert at.session_state[state.EX_SEED] == seed and at.warning
    at.button(key=state.EX_NEW_BUTTON).click().run()
    assert not at.exception
    assert at.session_state[state.EX_SEED] != seed
    assert not at.warning and at.text_input(key=view.input_key(view.PREFIX)).value == ""
