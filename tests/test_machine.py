"""Settings measured on the machine: the best K from the closed form with v(K + 1), the cached profile, the page's K."""

from __future__ import annotations

import pytest

from specsim import analytics, defaults, machine


def _profile(**changes) -> machine.Profile:
    v = {n: 1.0 + 0.05 * (n - 1) for n in range(1, defaults.K_MAX + 2)}
    k, values = machine.best_k(0.7, 0.13, v)
    fields = dict(key=machine.profile_key(), machine="a CPU", threads=2,
                  one_token_ms={"bfloat16, position-invariant": 36.0, "bfloat16, stock kernels": 34.0,
                                "float32, stock kernels": 30.0},
                  chosen="bfloat16, position-invariant", v=v, draft_alpha=0.7, draft_cost=0.13, best_k=k,
                  speedup_by_k=values)
    fields.update(changes)
    return machine.Profile(**fields)


def test_best_k_uses_the_verification_cost_of_its_own_pass_size():
    flat = {n: 1.0 for n in range(1, 18)}
    assert machine.best_k(0.7, 0.13, flat)[0] == analytics.optimal_k(0.7, 0.13, 1.0)
    # a steep v(n) makes long drafts dear: the best K falls
    steep = {n: 1.0 + 0.25 * (n - 1) for n in range(1, 18)}
    k, values = machine.best_k(0.7, 0.13, steep)
    assert k < analytics.optimal_k(0.7, 0.13, 1.0)
    brute = max(range(1, 17), key=lambda kk: float(analytics.speedup(0.7, kk, 0.13, steep[kk + 1])))
    assert k == brute and values[k] == pytest.approx(float(analytics.speedup(0.7, k, 0.13, steep[k + 1])))
    # a reading of v below 1 is noise: it never makes a pass cheaper than a one-token pass
    assert machine.best_k(0.3, 0.05, {n: 0.5 for n in range(1, 18)})[1][2] == pytest.approx(
        float(analytics.speedup(0.3, 2, 0.05, 1.0)))


def test_profile_round_trips_and_names_the_runner_up():
    p = _profile()
    assert machine.Profile.from_json(p.to_json()) == p
    name, ratio = p.runner_up
    assert name == "float32, stock kernels" and ratio == pytest.approx(30 / 36)
    assert "guarantees greedy identity" in p.path_sentence() and "float32, stock kernels" in p.path_sentence()
    text = machine.format_profile(p)
    assert f"K starts at {p.best_k}, the best K" in text and "v(n)" in text


def test_the_live_page_starts_at_the_measured_k(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECSIM_CACHE", str(tmp_path))
    k, why = machine.default_k()
    assert k == defaults.DEFAULT_K and "not been measured" in why
    p = _profile(v={n: 1.0 + 0.3 * (n - 1) for n in range(1, 18)})
    k_best, values = machine.best_k(p.draft_alpha, p.draft_cost, p.v)
    p = _profile(v=p.v, best_k=k_best, speedup_by_k=values)
    machine.cache_file(p.key).write_text(p.to_json())
    k, why = machine.default_k()
    assert k == k_best != defaults.DEFAULT_K
    assert why == p.k_sentence() and f"{values[k_best]:.2f}×" in why


def test_a_damaged_cache_is_measured_again_not_a_crash(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECSIM_CACHE", str(tmp_path))
    machine.cache_file(machine.profile_key()).write_text("{not json")
    assert machine.cached() is None


def test_a_new_default_draft_is_measured_afresh(monkeypatch):
    """The profile's best K comes from the default draft's α and c: another draft must not reuse it."""
    before = machine.profile_key()
    monkeypatch.setattr(machine, "DEFAULT_DRAFT", "/somewhere/another-draft")
    after = machine.profile_key()
    assert after != before and "draft another-draft no draft.json" in after
    assert machine.cache_file(after) != machine.cache_file(before)


def test_a_draft_that_copies_differently_is_measured_afresh(monkeypatch):
    """Copying repeated text raises α, so the best K measured without it (or with other n-grams) does not hold."""
    before = machine.profile_key()
    monkeypatch.setattr(machine, "COPY_NGRAM", (3, 5))
    after = machine.profile_key()
    assert after != before and after.endswith("copy 3-5")


def test_a_draft_retrained_under_the_same_name_is_measured_afresh(monkeypatch, tmp_path):
    folder = tmp_path / "standalone-L2-W384-v8k"
    folder.mkdir()
    (folder / "draft.json").write_text('{"step": 900}')
    monkeypatch.setattr(machine, "DEFAULT_DRAFT", str(folder))
    first = machine.profile_key()
    (folder / "draft.json").write_text('{"step": 2944}')
    again = machine.profile_key()
    assert first != again and machine.cache_file(first) != machine.cache_file(again)
    assert " | draft standalone-L2-W384-v8k " in again
