"""Why the output is unchanged after a learner's review: nothing below the guess of Σ min(p, q) shows its answer
before the guess, and the temperature measurement says it is a teacher-forced proxy."""

from __future__ import annotations

import numpy as np

from app.settings import UnchangedSettings
from app.unchanged import pq, warp
from specsim.lesson import unchanged
from tests.conftest import open_page
from tests.page_text import page_text
from tests.test_predict import box, submit

GUESS_FIRST = "Make your guess above to see this"


def test_no_text_shows_the_kept_mass_before_the_guess_and_both_show_after():
    mass = unchanged.accepted_mass(np.array(pq.TARGET_P), unchanged.normalise(UnchangedSettings().weights))
    at = open_page("unchanged.py", answers=False)
    assert not at.exception
    before = page_text(at)
    assert f"{mass:.3f}" not in before and f"{mass:.2f}" not in before
    assert GUESS_FIRST in before  # the toy temperature chart, whose legend reads the value at T = 1, waits too
    charts_before = len(at.get("plotly_chart"))
    box(at, "pq_mass", "mass").set_value(round(mass - 0.2, 2))
    submit(at)
    assert not at.exception
    after = page_text(at)
    assert f"against {mass:.3f} with neither cut" in after and GUESS_FIRST not in after
    assert len(at.get("plotly_chart")) > charts_before


def test_the_cut_sentence_hides_an_uncut_alpha_until_the_guess():
    p, q = np.array(pq.TARGET_P), unchanged.normalise(UnchangedSettings().weights)
    mass = f"{unchanged.accepted_mass(p, q):.3f}"
    assert mass in warp.cut_sentence(p, q, 3, 0.9)
    for k, top_p in ((3, 0.9), (len(p), 1.0)):  # a real cut, and one that leaves p and q as they are
        assert mass not in warp.cut_sentence(p, q, k, top_p, show_uncut=False)


def test_the_temperature_measurement_says_it_is_a_teacher_forced_proxy():
    text = page_text(open_page("unchanged.py"))
    assert "It is a proxy: at every T it scores the same text, the target's greedy answers" in text
    assert "teacher-forced), not text sampled at that T" in text
