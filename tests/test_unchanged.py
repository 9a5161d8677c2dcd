"""The proof that speculative sampling keeps the target's distribution, checked exactly and by sampling."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from specsim.lesson import unchanged as u

P = np.array([0.45, 0.25, 0.15, 0.10, 0.05])


def random_pairs(n=30, size=6, seed=3):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        p, q = rng.dirichlet(np.ones(size) * 0.7), rng.dirichlet(np.ones(size) * 0.7)
        yield p, q


@pytest.mark.parametrize("p,q", list(random_pairs()))
def test_kept_plus_resampled_is_exactly_p(p, q):
    kept, resampled = u.output_distribution(p, q)
    np.testing.assert_allclose(kept + resampled, p, atol=1e-12)
    # the identity the proof rests on
    assert np.maximum(0, p - q).sum() == pytest.approx(1 - u.accepted_mass(p, q))


def test_a_wrong_rule_is_caught():
    """Resampling from p instead of the residual double-counts the kept mass: the output is not p."""
    p, q = P, np.array([0.05, 0.10, 0.15, 0.25, 0.45])
    kept = np.minimum(p, q)
    wrong = kept + (1 - kept.sum()) * p
    assert not np.allclose(wrong, p)


def test_q_equal_p_accepts_everything():
    assert u.accepted_mass(P, P) == pytest.approx(1.0)
    assert u.residual(P, P) is None
    np.testing.assert_allclose(u.acceptance_chance(P, P), 1.0)


def test_greedy_is_the_one_hot_limit():
    p = np.array([0.0, 1.0, 0.0])
    same, other = np.array([0.0, 1.0, 0.0]), np.array([1.0, 0.0, 0.0])
    assert u.acceptance_chance(p, same)[1] == 1.0 and u.acceptance_chance(p, other)[0] == 0.0
    np.testing.assert_array_equal(u.residual(p, other), p)  # a rejection lands on the target's argmax


def test_token_the_draft_never_proposes():
    chance = u.acceptance_chance(P, [0.5, 0.5, 0, 0, 0])
    assert math.isnan(chance[2]) and chance[0] == pytest.approx(0.9)


def test_sampled_outputs_follow_p_and_a_biased_sampler_fails():
    q = np.array([0.05, 0.10, 0.15, 0.25, 0.45])
    draws = u.speculative_draws(P, q, 10_000, seed=7)
    counts = np.bincount(draws, minlength=len(P))
    good = u.chi_square(counts, P)
    assert good.dof == 4 and good.p_value > 0.001
    # the draft's own samples, never corrected: the test must reject them
    raw = np.bincount(np.random.default_rng(7).choice(5, 10_000, p=q), minlength=5)
    assert u.chi_square(raw, P).p_value < 1e-6


def test_chi_square_p_values_match_known_quantiles():
    # chi-square survival at the 5 % critical values for 1 and 4 degrees of freedom, through chi_square itself
    for dof, critical in ((1, 3.841459), (4, 9.487729)):
        probs = np.full(dof + 1, 1.0 / (dof + 1))
        n = 1000 * (dof + 1)
        # observed counts whose statistic is exactly the critical value: shift one cell up, one down
        d = math.sqrt(critical * 1000 / 2)
        counts = np.full(dof + 1, 1000.0)
        counts[0] += d
        counts[1] -= d
        result = u.chi_square(counts, probs)
        assert counts.sum() == pytest.approx(n)
        assert result.statistic == pytest.approx(critical) and result.p_value == pytest.approx(0.05, abs=1e-6)


def test_the_page_uses_the_engines_rule():
    """One acceptance rule: the page's numbers come from specsim.core.sampling, edge cases included."""
    from specsim.core import sampling

    p, q = np.array([0.5, 0.3, 0.2, 0.0]), np.array([0.25, 0.25, 0.0, 0.5])
    chance = u.acceptance_chance(p, q)
    assert chance[:2].tolist() == [sampling.acceptance_probability(a, b) for a, b in ((0.5, 0.25), (0.3, 0.25))]
    assert math.isnan(chance[2])  # q = 0: never proposed
    r = u.residual(p, q)
    expected, mass = sampling.residual_distribution(torch.tensor(p), torch.tensor(q))
    assert mass > 0 and np.allclose(r, expected.numpy())
    assert u.residual(p, p) is None  # no mass where p exceeds q: a rejection never happens


def test_normalise_refuses_bad_weights():
    with pytest.raises(ValueError):
        u.normalise([0, 0])
    with pytest.raises(ValueError):
        u.normalise([1, -1])
    np.testing.assert_allclose(u.normalise([1, 3]), [0.25, 0.75])


def test_figures_draw_the_computed_parts():
    from app.unchanged import figures as figs

    labels = ["a", "b", "c", "d", "e"]
    q = np.array([0.05, 0.10, 0.15, 0.25, 0.45])
    parts = figs.output_parts_figure(labels, P, q)
    kept, after = parts.data[0].y, parts.data[1].y
    np.testing.assert_allclose(np.asarray(kept) + np.asarray(after), P, atol=1e-12)
    bars = figs.pq_figure(labels, P, q)
    assert f"{u.accepted_mass(P, q):.3f}" in bars.layout.title.text
    rows = figs.acceptance_rows(labels, P, q)
    assert rows[4]["kept with chance min(1, p/q)"] == f"{0.05 / 0.45:.3f}"


@pytest.mark.parametrize(("p", "q"), [((0.45, 0.25, 0.15, 0.10, 0.05), (0.05, 0.85, 0.05, 0.03, 0.02)),
                                      ((0.5, 0.5, 0.0), (0.0, 0.2, 0.8)), ((0.2, 0.3, 0.5), (0.2, 0.3, 0.5))])
def test_the_chance_kept_is_one_minus_total_variation(p, q):
    tv = u.total_variation(p, q)
    assert tv == pytest.approx(0.5 * sum(abs(a - b) for a, b in zip(p, q, strict=True)))
    assert u.accepted_mass(p, q) == pytest.approx(1 - tv, abs=1e-6)


def test_temperature_one_is_the_sliders_and_zero_is_the_greedy_rule():
    p = np.array([0.45, 0.25, 0.15, 0.10, 0.05])
    for weights in [(5, 85, 5, 3, 2), (50, 30, 20, 0, 0), (45, 25, 15, 10, 5)]:
        q = u.normalise(weights)
        greedy, one = u.overlap_by_temperature(p, q, [0.0, 1.0])
        assert one == pytest.approx(u.accepted_mass(p, q), abs=1e-6)
        assert greedy == float(np.argmax(q) == np.argmax(p))
    hot = u.overlap_by_temperature(p, np.array([0.5, 0.5, 0, 0, 0]), [1000.0])[0]
    assert hot == pytest.approx(0.4, abs=1e-3)  # p flat over five tokens, q over the two it can propose


def test_temperature_moves_the_overlap_towards_the_greedy_verdict():
    p = np.array([0.45, 0.25, 0.15, 0.10, 0.05])
    disagree = u.normalise((5, 85, 5, 3, 2))  # top tokens differ: greedy keeps nothing
    agree = u.normalise((50, 30, 20, 0, 0))  # same top token, but two tokens never proposed
    cold, one, hot = u.overlap_by_temperature(p, disagree, [0.05, 1.0, 10.0])
    assert cold < 1e-3 < one < hot
    assert one == pytest.approx(u.accepted_mass(p, disagree), abs=1e-6)
    cold, one, hot = u.overlap_by_temperature(p, agree, [0.05, 1.0, 10.0])
    assert cold > 0.999 and one > hot  # flattening p moves mass onto tokens q can never cover


def test_the_pages_numpy_rule_is_the_engines_torch_rule_on_random_distributions():
    """The page computes in numpy (a class replica never loads torch); each function must equal the engine's own."""
    from specsim.core import sampling
    from specsim.lesson import overlap

    rng = np.random.default_rng(7)
    for trial in range(200):
        n = int(rng.integers(2, 9))
        p, q = rng.dirichlet(np.full(n, 0.5)), rng.dirichlet(np.full(n, 0.5))
        if trial % 5 == 0:
            q[rng.integers(n)] = 0.0  # a token the draft never proposes
            q /= q.sum()
        tp, tq = torch.tensor(p), torch.tensor(q)
        want = [sampling.acceptance_probability(a, b) if b > 0 else math.nan for a, b in zip(p, q, strict=True)]
        np.testing.assert_allclose(u.acceptance_chance(p, q), want, rtol=0, atol=1e-12)
        assert u.accepted_mass(p, q) == pytest.approx(float(sampling.accepted_mass(tp, tq)), abs=1e-12)
        assert u.total_variation(p, q) == pytest.approx(float(overlap.total_variation(tp, tq)), abs=1e-12)
        dist, mass = sampling.residual_distribution(tp, tq)
        mine = u.residual(p, q)
        assert (mine is None) == (mass == 0.0)
        if mine is not None:
            np.testing.assert_allclose(mine, dist.numpy(), rtol=0, atol=1e-12)
        temperatures = [0.0, 0.05, 0.3, 1.0, 1.7, 4.0]
        engine = overlap.accepted_mass_by_temperature(tp.log(), tq.log(), temperatures)
        np.testing.assert_allclose(u.overlap_by_temperature(p, q, temperatures), engine, rtol=0, atol=2e-6)


def test_the_chi_square_tail_is_scipys():
    from scipy import stats

    for dof in (1, 2, 3, 4, 7, 10, 31, 60, 99):
        for x in (0.0, 0.01, 0.5, 1.0, 3.84, dof, 2.5 * dof, 200.0):
            assert u.chi2_sf(x, dof) == pytest.approx(float(stats.chi2.sf(x, dof)), rel=1e-9, abs=1e-300)


def test_the_pages_top_k_and_top_p_cut_is_the_engines_warp():
    """Issue 55, item 3: the page's numpy cut equals specsim.core.sampling.warp (temperature, then top-k, then
    top-p)."""
    from specsim.core import sampling

    rng = np.random.default_rng(3)
    for trial in range(200):
        n = int(rng.integers(2, 9))
        p = rng.dirichlet(np.full(n, 0.7))
        t, k, top = (0.6, 1.0, 1.4)[trial % 3], int(rng.integers(1, n + 1)), (0.3, 0.7, 0.9, 1.0)[trial % 4]
        engine = sampling.warp(torch.tensor(np.log(p)), sampling.SamplingConfig(t, top, k)).double().numpy()
        mine = u.warped(p, t, k, top)
        assert np.array_equal(mine > 0, engine > 0), (p, t, k, top)
        np.testing.assert_allclose(mine, engine, rtol=0, atol=1e-6)


def test_the_page_and_the_engine_run_one_accepted_mass_and_one_residual(monkeypatch):
    """Issue 63, item 6: the page that teaches the rule ran numpy copies of the engine's functions. Both now call
    specsim.core.rules, with numpy arrays and with tensors; a copy in either would not reach these counters."""
    from specsim.core import rules, sampling

    calls = []
    for name in ("accepted_mass", "residual"):
        real = getattr(rules, name)
        monkeypatch.setattr(rules, name, lambda *a, real=real, name=name: calls.append(name) or real(*a))
    p, q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
    assert u.accepted_mass(p, q) == pytest.approx(0.7)
    assert u.residual(p, q) == pytest.approx([1.0, 0.0, 0.0])
    tp, tq = torch.tensor(p, dtype=torch.float32), torch.tensor(q, dtype=torch.float32)
    assert float(sampling.accepted_mass(tp, tq)) == pytest.approx(0.7)
    assert sampling.residual_distribution(tp, tq)[1] == pytest.approx(0.3)
    assert calls == ["accepted_mass", "residual", "accepted_mass", "residual"]


def test_the_measured_pair_keeps_fewer_guesses_at_t1_than_greedy():
    """The committed measurement (scripts/measure_overlap.py): a real pair, its α highest at low T, not at high T."""
    import importlib.util

    from tests.conftest import ROOT

    m = u.measured_overlap()
    assert m.positions > 1000 and m.prompts >= 40
    assert all(0.0 <= x <= 1.0 for x in m.accepted_mass)
    assert m.greedy > m.at(1.0) > m.at(2.0)  # the toy's rise does not carry over
    assert m.highest[0] < 1.0
    assert all(len(curve) == len(m.temperatures) for curve in m.domains.values()) and len(m.domains) >= 5
    spec = importlib.util.spec_from_file_location("measure_overlap", ROOT / "scripts" / "measure_overlap.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert m.temperatures == script.TEMPERATURES  # the file is the script's output, not typed
