"""Settings measured on the machine: the best K from the closed form with v(K + 1), the cached profile, the page's K."""

from __future__ import annotations

import pytest

from specsim.core import defaults
from specsim.measure import analytics, machine, profile_timing


def _profile(**changes) -> machine.Profile:
    v = {n: 1.0 + 0.05 * (n - 1) for n in range(1, defaults.K_MAX + 2)}
    values = analytics.speedup_by_k(0.7, 0.13, v)
    k = analytics.best_k(values)
    fields = dict(key=machine.profile_key(), machine="a CPU", threads=2,
                  one_token_ms={"bfloat16, position-invariant": 36.0, "bfloat16, stock kernels": 34.0,
                                "float32, stock kernels": 30.0},
                  chosen="bfloat16, position-invariant", v=v, draft_alpha=0.7, draft_cost=0.13, best_k=k,
                  speedup_by_k=values, v_spread={n: 0.03 for n in v}, draft_cost_spread=0.02, rounds=9,
                  tokens_per_loop_by_k={kk: float(analytics.tokens_per_loop(0.7, kk)) for kk in values},
                  alpha_by_position=[0.45, 0.53, 0.6], prompts=6)
    fields.update(changes)
    return machine.Profile(**fields)


def test_best_k_uses_the_verification_cost_of_its_own_pass_size():
    flat = {n: 1.0 for n in range(1, 18)}
    assert analytics.optimal_k(0.7, 0.13, flat) == analytics.optimal_k(0.7, 0.13, 1.0)
    # a steep v(n) makes long drafts dear: the best K falls
    steep = {n: 1.0 + 0.25 * (n - 1) for n in range(1, 18)}
    values = analytics.speedup_by_k(0.7, 0.13, steep)
    k = analytics.optimal_k(0.7, 0.13, steep)
    assert k < analytics.optimal_k(0.7, 0.13, 1.0)
    brute = max(range(1, 17), key=lambda kk: float(analytics.speedup(0.7, kk, 0.13, steep[kk + 1])))
    assert k == brute and values[k] == pytest.approx(float(analytics.speedup(0.7, k, 0.13, steep[k + 1])))
    # a reading of v below 1 is noise: it never makes a pass cheaper than a one-token pass
    assert analytics.speedup_by_k(0.3, 0.05, {n: 0.5 for n in range(1, 18)})[2] == pytest.approx(
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
    values = analytics.speedup_by_k(p.draft_alpha, p.draft_cost, p.v)
    k_best = analytics.best_k(values)
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


# ---- the profile measured right the first time (issue 39) ----------------------------------------------------


def test_median_interval_is_distribution_free_and_narrows_with_more_samples():
    import random

    rng = random.Random(1)
    few = [1 + rng.gauss(0, 0.1) for _ in range(9)]
    many = few + [1 + rng.gauss(0, 0.1) for _ in range(200)]
    med, spread = profile_timing.median_interval(few)
    assert med == pytest.approx(sorted(few)[4]) and spread > profile_timing.median_interval(many)[1]
    assert profile_timing.median_interval([1.0, 2.0])[1] == float("inf")  # too few to say
    # exact: 11 equal samples have no spread; one wild sample moves the median interval little
    assert profile_timing.median_interval([2.0] * 11) == (2.0, 0.0)
    assert profile_timing.median_interval([2.0] * 10 + [100.0])[1] == 0.0


def test_v_is_fitted_monotone_and_never_below_one():
    from specsim.measure.passcost import VerifyCurve, monotone_v

    raw = {1: 1.0, 2: 1.21, 3: 1.27, 4: 1.45, 5: 1.25, 6: 1.28, 7: 0.97, 8: 1.72, 9: 1.33}
    fit = monotone_v(raw)
    ns = sorted(fit)
    assert all(fit[a] <= fit[b] for a, b in zip(ns, ns[1:], strict=False)) and min(fit.values()) >= 1.0
    assert fit[9] >= fit[8] >= 1.33
    # Issue 39 (5): the verify page offered "v = 0.94 measured" and the calculator refused it
    curve = VerifyCurve(ns=(1, 2, 3, 4), seconds=(0.030, 0.0282, 0.031, 0.033), context=45, repeats=5)
    assert curve.v[1] < 1 and curve.v_at(2) >= 1.0
    assert [curve.v_at(n) for n in (1, 2, 3, 4)] == sorted(curve.v_at(n) for n in (1, 2, 3, 4))


def test_the_k_comes_from_real_runs_through_the_cost_model():
    """Two Ks' runs of a hand trace: the prediction is the cost model's with v from the fitted curve."""
    from dataclasses import replace

    from specsim.measure.costmodel import cost_model
    from tests.live_traces import hand_plain, hand_trace

    spec, plain = hand_trace(), hand_plain()
    runs = {spec.settings.k: [spec]}
    v = {n: 1.0 + 0.1 * (n - 1) for n in range(1, 18)}
    predicted = profile_timing.predicted_speedups(runs, [plain], v)
    k = spec.settings.k
    assert predicted[k] == pytest.approx(replace(cost_model([spec], [plain]), verify_cost=v[k + 1]).speedup)
    assert analytics.best_k({1: 1.2, 2: 1.3, 3: 1.3, 4: 1.1}) == 2  # a tie goes to the smaller K
    c, spread = profile_timing.draft_cost_interval(runs, [plain])
    assert c == pytest.approx(cost_model([spec], [plain]).draft_cost)


def test_the_k_sentence_quotes_the_figures_the_choice_was_made_from():
    p = _profile()
    text = p.k_sentence()
    assert f"{p.prompts} held-out prompts" in text and f"{p.draft_alpha:.0%}" in text
    assert "0.45 / 0.53 / 0.60" in text and f"{p.tokens_per_loop_by_k[p.best_k]:.2f} tokens per loop" in text
    assert f"{p.speedup_by_k[p.best_k]:.2f}×" in text and "closed form" not in text
    noisy = _profile(noisy="v(5) still ±9% after 40 rounds").k_sentence()
    assert "noisy" in noisy and "neighbouring Ks" in noisy
    table = machine.format_profile(p)
    assert "95 % ± share" in table and "tokens/loop" in table and "predicted" in table


def test_the_profile_prompts_are_held_out_and_not_the_benchs_check():
    from specsim.measure.bench import heldout_prompts

    check = {item["prompt"] for item in heldout_prompts(8)}
    mine = profile_timing.profile_prompts()
    assert len(mine) == profile_timing.PROFILE_PROMPTS and not check & set(mine)


def test_v_timing_stops_when_every_interval_is_within_the_goal(monkeypatch):
    """A machine whose passes cost exactly n/2 one-token passes settles at the minimum number of rounds."""
    from specsim.measure import passcost

    def rounds(target, ns, rng, **_):
        while True:
            yield {n: 0.01 * max(1.0, n / 2) for n in ns}

    monkeypatch.setattr(passcost, "time_pass_rounds", rounds)

    class Target:
        device = "cpu"

    timing = profile_timing.time_v(Target(), (1, 2, 3, 4, 6), log=lambda _: None)
    assert timing.rounds == profile_timing.V_MIN_ROUNDS and not timing.noisy
    assert timing.v == {1: 1.0, 2: 1.0, 3: 1.5, 4: 2.0, 6: 3.0}


def test_v_timing_says_it_is_noisy_at_the_time_cap(monkeypatch):
    import itertools

    from specsim.measure import passcost

    wild = itertools.cycle([1.0, 3.0, 0.5, 2.0])

    def rounds(target, ns, rng, **_):
        while True:
            yield {n: 0.01 * (1.0 if n == 1 else next(wild)) for n in ns}

    monkeypatch.setattr(passcost, "time_pass_rounds", rounds)

    class Target:
        device = "cpu"

    timing = profile_timing.time_v(Target(), (1, 2, 3), log=lambda _: None, cap_s=0.0)
    assert timing.noisy and "rounds" in timing.noisy


def test_the_bench_prints_the_profiles_k_beside_the_measured_best():
    from specsim.measure.bench import chosen_k_report

    rows = [{"drafter": "draft_model", "K": k, "fair": f}
            for k, f in ((1, "1.20"), (2, "1.38"), (3, "1.35*"), (4, "1.22"))]
    rows.append({"drafter": "prompt_lookup", "K": 2, "fair": "3.00"})  # another drafter's rows do not count
    assert chosen_k_report(rows, None) is None
    text = chosen_k_report(rows, _profile(best_k=3))
    assert "chose K = 3" in text and "best here K = 2 at 1.38x" in text and "within 2.2% of the best" in text
    assert "more than 3 %" in chosen_k_report(rows, _profile(best_k=4))
    assert "the same K" in chosen_k_report(rows, _profile(best_k=2))
    assert "was not run" in chosen_k_report(rows, _profile(best_k=6))


def test_position_rates_stop_where_too_few_checks_reached():
    from tests.live_traces import hand_trace

    spec = hand_trace()
    assert profile_timing.position_rates({spec.settings.k: [spec]}) == []  # a hand trace is far below 20 checks a slot
    many = {spec.settings.k: [spec] * 30}
    rates = profile_timing.position_rates(many)
    from specsim.core.trace import acceptance_given_reached

    full = acceptance_given_reached([spec] * 30, spec.settings.k)
    assert rates and rates == [round(r, 3) for r in full[: len(rates)]]


# ---- the device the app runs on (issue 39: on a GPU machine the profile timed the CPU) ----------------------


class _Chosen(Exception):
    pass


def _paths_measured(monkeypatch, device: str) -> tuple[list, object]:
    """Run machine.measure up to its choice of path: which paths it loaded, and the target it went on to time."""
    from types import SimpleNamespace

    loaded = []

    def load(device, dtype, invariant=None):
        loaded.append((device, dtype, invariant))
        return SimpleNamespace(device=device, dtype=dtype, invariant=bool(invariant))

    def one_token(target, **_):  # float32 is the fastest path here, as it was on the H200
        return SimpleNamespace(seconds={1: 0.020 if target.dtype == "float32" else 0.030})

    def stop(target, *_, **__):
        raise _Chosen(target)

    monkeypatch.setattr("specsim.core.models.load_bundled_target", load)
    monkeypatch.setattr("specsim.measure.passcost.measure_pass_costs", one_token)
    monkeypatch.setattr(machine, "time_v", stop)
    with pytest.raises(_Chosen) as chosen:
        machine.measure(log=lambda *_: None, device=device)
    return loaded, chosen.value.args[0]


def test_on_a_gpu_the_profile_times_the_gpus_paths_and_the_one_the_app_runs(monkeypatch):
    loaded, target = _paths_measured(monkeypatch, "cuda")
    assert loaded == [("cuda", "bfloat16", False), ("cuda", "float32", False)]
    assert (target.device, target.dtype) == ("cuda", "bfloat16")  # the app's path there, though float32 was faster


def test_on_the_cpu_the_profile_still_picks_the_fastest_guaranteed_path(monkeypatch):
    loaded, target = _paths_measured(monkeypatch, "cpu")
    assert [d for d, *_ in loaded] == ["cpu"] * 3
    assert (target.dtype, target.invariant) == ("bfloat16", True)


def test_a_gpus_profile_is_keyed_by_the_gpu_and_says_nothing_is_guaranteed(monkeypatch):
    monkeypatch.setattr("torch.cuda.get_device_name", lambda *_: "NVIDIA H200")
    cpu_key, gpu_key = machine.profile_key(device="cpu"), machine.profile_key(device="cuda")
    assert " | NVIDIA H200 | " in gpu_key and cpu_key != gpu_key and "H200" not in cpu_key  # the CPU stays in it
    profile = _profile(device="cuda", machine="NVIDIA H200", chosen="bfloat16, stock kernels",
                       one_token_ms={"bfloat16, stock kernels": 19.1, "float32, stock kernels": 17.8})
    sentence = profile.path_sentence()
    assert "on the GPU (NVIDIA H200)" in sentence and "no path guarantees greedy identity" in sentence
    assert "float32, stock kernels at 0.93× its time" in sentence
    assert "the fastest path here that guarantees" in _profile().path_sentence()
    assert machine.Profile.from_json(profile.to_json()) == profile


def test_asking_the_profile_for_cuda_without_a_gpu_is_a_message(capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(SystemExit) as stopped:
        machine.main(["--device", "cuda"])
    assert stopped.value.code == 2
    assert "argument --device: must be cpu, or cuda on a machine with a CUDA GPU" in capsys.readouterr().err


def test_a_predictions_interval_comes_from_cs_and_vs_and_the_sentence_names_the_tie():
    from specsim.measure.profile_timing import speedup_noise

    v, spread = {2: 1.1, 3: 1.2}, {2: 0.04, 3: 0.02}
    noise = speedup_noise(0.05, 0.10, v, spread, (1, 2))
    assert noise[1] == pytest.approx((1 * 0.05 * 0.10 + 1.1 * 0.04) / (0.05 + 1.1))
    assert noise[2] == pytest.approx((2 * 0.05 * 0.10 + 1.2 * 0.02) / (0.10 + 1.2))
    tied = _profile(best_k=1, within_noise=[1, 2, 3], speedup_noise={1: 0.02, 2: 0.025, 3: 0.03})
    sentence = tied.k_sentence()
    assert sentence.startswith("K starts at 1, the smallest of the Ks")
    assert "(K = 1, 2, 3, each known to within ±3%, none predicted more than 2% below the best)" in sentence
    assert "the best K for the default drafter" in _profile().k_sentence()  # no tie recorded: the argmax, as before
    assert machine.Profile.from_json(tied.to_json()) == tied


def test_the_profile_chooses_among_chains_and_trees_the_narrowest_pass_within_its_noise():
    """Issue 64, item 4: a tree clearly ahead is chosen; settings the measurement cannot tell apart go to the one
    whose verification pass reads the fewest tokens, a chain on a tie of widths."""
    clear = {"K=1": 1.30, "K=2": 1.35, "tree 8": 1.60, "tree 12": 1.50}
    assert machine.choose_setting(clear, {key: 0.02 for key in clear}) == ("tree 8", ["tree 8"])
    noisy = {"K=2": 1.40, "K=4": 1.48, "tree 4": 1.48, "tree 8": 1.50}
    chosen, tied = machine.choose_setting(noisy, {key: 0.03 for key in noisy})
    assert tied == ["K=4", "tree 4", "tree 8"] and chosen == "K=4"  # K = 4 reads 5 tokens, as a tree of 4 does
    # every interval reaches the best one's, but a tie may cost at most 2 % of the best prediction
    wide = {"K=1": 1.23, "K=2": 1.27, "K=3": 1.29, "tree 8": 1.27, "tree 16": 1.06}
    assert machine.choose_setting(wide, dict.fromkeys(wide, 0.07)) == ("K=2", ["K=2", "K=3", "tree 8"])
    assert machine.choose_setting({"K=3": 1.2, "tree 3": 1.2}, {}) == ("K=3", ["K=3", "tree 3"])
    assert machine.choose_setting({"K=1": 1.0, "tree 16": 1.9}, {"K=1": 0.5, "tree 16": 0.5})[0] == "tree 16"


def test_tree_noise_is_the_chains_formula_with_the_trees_draft_passes_and_pass_width():
    from specsim.measure.costmodel import cost_model
    from tests.live_traces import hand_plain, hand_trace

    spec, plain = hand_trace(), hand_plain()
    v, spread = {n: 1.0 + 0.1 * (n - 1) for n in range(1, 18)}, {n: 0.04 for n in range(1, 18)}
    model = cost_model([spec], [plain])
    got = profile_timing.tree_noise({4: [spec]}, [plain], 0.1, v, spread)[4]
    drafting = model.k * model.draft_cost
    assert got == pytest.approx((drafting * 0.1 + v[5] * 0.04) / (drafting + v[5]))


def _tree_profile(best_setting: str, tied: list[str]) -> machine.Profile:
    return _profile(speedup_by_tree={4: 1.31, 8: 1.62, 12: 1.55}, tree_noise={4: 0.03, 8: 0.03, 12: 0.03},
                    tokens_per_loop_by_tree={4: 1.9, 8: 2.2, 12: 2.3}, tree_depths={4: 3, 8: 4, 12: 5},
                    best_setting=best_setting, settings_within_noise=tied)


def test_the_k_sentence_says_which_setting_won_among_chains_and_trees_and_how_to_run_a_tree():
    from app.live.params import POLICIES, TREE

    tree = _tree_profile("tree 8", ["tree 12", "tree 8"])
    text = tree.k_sentence()
    assert "Token trees were timed beside the chains (4 guesses 1.31×, 8 guesses 1.62×, 12 guesses 1.55×)" in text
    assert "the best setting here is a tree of 8 guesses, 4 levels deep (1.62× predicted" in text
    assert f'pick the K policy "{POLICIES[TREE]}"' in text  # the live page's own name for it
    assert "cannot tell it from a tree of 12 guesses" in text
    assert machine.Profile.from_json(tree.to_json()) == tree
    assert "chosen among chains and trees: a tree of 8 guesses" in machine.format_profile(tree)
    chain = _tree_profile("K=2", ["K=2"]).k_sentence()
    assert "the choice here is a chain, K = 2: the trees' wider passes cost more" in chain
    assert "Token trees" not in _profile().k_sentence()  # a profile measured before trees says nothing of them


def test_the_tree_bench_says_where_the_profiles_choice_stands_among_the_measured_settings():
    from specsim.measure import treebench

    rows = [{"setting": "chain K=1", "speedup": 1.30}, {"setting": "chain K=2", "speedup": 1.52},
            {"setting": "tree 8 (depth 4, width 3)", "speedup": 1.49},
            {"setting": "tree 12 (depth 5, width 3)", "speedup": 1.41}]
    assert treebench.choice_report(rows, "K=2").endswith("chain K=2 at 1.52x: the best setting here.")
    assert "within 2.0% of the best" in treebench.choice_report(rows, "tree 8")
    assert "7.2% below the best, more than 3 %" in treebench.choice_report(rows, "tree 12")
    assert "it was not run here" in treebench.choice_report(rows, "tree 16")
    assert [s.nodes for s in treebench.TREE_SHAPES] == [n for n, _ in profile_timing.PROFILE_TREES]


def test_where_a_chain_is_chosen_the_live_pages_k_is_that_chain():
    """A tree ahead of every chain ties with K = 3 only; among the chains alone K = 2 would tie with K = 3. The page
    must open on the K the sentence names."""
    by_k, by_tree = {2: 1.30, 3: 1.31}, {8: 1.335}
    k_noise, t_noise = {2: 0.03, 3: 0.03}, {8: 0.03}
    assert analytics.cheapest_k(by_k, k_noise) == 2
    assert machine.choose(by_k, k_noise, by_tree, t_noise) == (3, [3], "K=3", ["K=3", "tree 8"])
    clear = machine.choose(by_k, k_noise, {8: 1.60}, t_noise)
    assert clear == (2, [2, 3], "tree 8", ["tree 8"])  # a tree chosen: the page's chain K is the chains' own
