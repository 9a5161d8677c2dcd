"""Every measure button's section shows a recorded result before it is pressed (issue 61 item 5): Is verification
free here? (v(n)), Variants (the held-out comparison) and In practice (acceptance by domain). Each recording reads
back into the objects the page draws from, and a missing one leaves the page as it was: a message and the button."""

from __future__ import annotations

import json

import pytest

from specsim.core import paths
from specsim.lesson import domains
from specsim.measure import passcost
from tests.conftest import open_page


def test_a_verify_curve_survives_its_json():
    costs = passcost.PassCosts(seconds={1: 0.01, 2: 0.0105, 4: 0.014}, dtype="bfloat16", repeats=3,
                               ratios={1: 1.0, 2: 1.04, 4: 1.41})
    curve = passcost.VerifyCurve.of(costs, context=45, device="cpu", threads=2)
    back = passcost.VerifyCurve.from_dict(json.loads(json.dumps(curve.to_dict())))
    assert back == curve
    assert back.v == (1.0, 1.04, 1.41) and back.v_at(3) == curve.v_at(3)


def test_the_shipped_recordings_load():
    recorded = passcost.load_recorded(paths.VERIFY_CURVE_RECORDED)
    assert recorded is not None and recorded.machine and recorded.when
    assert recorded.curve.ns[0] == 1 and recorded.curve.v[0] == 1.0
    mine = domains.load_recorded(paths.DOMAINS_RECORDED)
    assert mine is not None and [r.domain for r in mine.results] == list(domains.domain_prompts())
    assert all(0 <= r.alpha <= 1 and r.checked > 0 for r in mine.results)
    assert mine.max_new_tokens == domains.TOKENS_PER_PROMPT
    saved = json.loads(paths.HELDOUT_RESULTS.read_text(encoding="utf-8"))
    assert saved["rows"][0]["key"] == "plain" and saved["machine"] and saved["when"]


def test_domain_results_survive_their_json(tmp_path):
    results = [domains.DomainResult("code", 2, 30, 40, 48, 20, 0.75, 2.4, 3),
               domains.DomainResult("prose", 2, 10, 40, 48, 38, 0.25, 1.26)]
    path = tmp_path / "d.json"
    path.write_text(domains.to_json(results, "Some CPU", "2026-12-06", 4, 24), encoding="utf-8")
    back = domains.load_recorded(path)
    assert back.results == results and (back.machine, back.k, back.max_new_tokens) == ("Some CPU", 4, 24)
    path.write_text("{not json", encoding="utf-8")
    assert domains.load_recorded(path) is None
    assert passcost.load_recorded(tmp_path / "missing.json") is None


def test_verify_shows_the_recorded_curve_before_the_button_and_the_prompt_without_one(monkeypatch, tmp_path):
    recorded = passcost.load_recorded(paths.VERIFY_CURVE_RECORDED)
    at = open_page("verify.py")
    assert not at.exception
    assert any(f"recorded on {recorded.machine}" in i.value for i in at.info)
    slope = [m.value for m in at.markdown if m.value.startswith("**Slope:**")]
    assert len(slope) == 1 and f"{recorded.curve.slope():.3f} of a one-token pass" in slope[0]
    # a learner's reading: the fit's 1 + slope·K and the point's v differ in the second decimal; the page names both
    k = next(w.value for w in at.slider if w.label == "K for the calculator")
    shown = next(m.value for m in at.markdown if "a verification pass covers" in m.value)
    v, fit = recorded.curve.v_at(k + 1), 1 + recorded.curve.slope() * k
    assert f"**v = {v:.2f}** measured on the recorded curve" in shown
    if "This curve has no such corner" in slope[0]:  # the straight line is the page's model of this curve
        slope_text = f"(the fitted slope, v ≈ 1 + {recorded.curve.slope():.3f}·K, gives {fit:.2f})"
        assert (slope_text in shown) == (f"{fit:.2f}" != f"{v:.2f}")
    monkeypatch.setattr(paths, "VERIFY_CURVE_RECORDED", tmp_path / "none.json")
    at = open_page("verify.py")
    assert any("Press the button" in i.value for i in at.info)
    assert not any(m.value.startswith("**Slope:**") for m in at.markdown)


def test_in_practice_shows_the_recorded_domains_before_the_button(monkeypatch, tmp_path):
    mine = domains.load_recorded(paths.DOMAINS_RECORDED)
    at = open_page("practice.py")
    assert not at.exception
    assert any(f"recorded on {mine.machine}" in i.value for i in at.info)
    assert any(domains.ranking_sentence(mine.results, mine.max_new_tokens) in m.value for m in at.markdown)
    monkeypatch.setattr(paths, "DOMAINS_RECORDED", tmp_path / "none.json")
    at = open_page("practice.py")
    assert any(i.value.startswith("Press the button") for i in at.info)


@pytest.mark.parametrize("present", [True, False])
def test_variants_shows_the_recorded_comparison_before_the_button(monkeypatch, tmp_path, present):
    from app.variants import compare

    if not present:
        monkeypatch.setattr(compare, "HELDOUT_RESULTS", tmp_path / "none.json")
    at = open_page("variants.py")
    assert not at.exception
    recorded = [m.value for m in at.markdown if m.value.startswith("**Until you run the prompt above")]
    if present:
        saved = json.loads(paths.HELDOUT_RESULTS.read_text(encoding="utf-8"))
        assert recorded and saved["machine"] in recorded[0]
        table = at.dataframe[-1].value
        assert list(table["variant"]) == [r["variant"] for r in saved["rows"]]
        assert list(table["speedup vs plain"]) == [f"{r['speedup']:.2f}x" for r in saved["rows"]]
    else:
        assert not recorded
