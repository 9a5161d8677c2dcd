"""Query-parameter parsing for the calculator: good links load, bad and hostile ones fall back with a notice."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app import state
from app.calculator.params import NAMES, CalcSettings, parse_query, to_query

DEFAULT = CalcSettings()


def test_defaults_come_from_the_state_module():
    assert (DEFAULT.k, DEFAULT.alpha_pct, DEFAULT.draft_cost, DEFAULT.verify_cost) == (
        state.DEFAULTS[state.CALC_K], state.DEFAULTS[state.CALC_ALPHA_PCT],
        state.DEFAULTS[state.CALC_DRAFT_COST], state.DEFAULTS[state.CALC_VERIFY_COST],
    )
    assert DEFAULT.alpha == DEFAULT.alpha_pct / 100


def test_a_good_link_loads_every_parameter():
    result = parse_query({"k": "6", "alpha": "55", "c": "0.2", "v": "1.35"})
    assert result.settings == CalcSettings(k=6, alpha_pct=55, draft_cost=0.2, verify_cost=1.35)
    assert result.rejected == () and result.problems == () and result.adjustments == ()


def test_missing_parameters_take_defaults_silently_and_unknown_ones_are_ignored():
    result = parse_query({"k": "9", "utm_source": "mail", "embed": "true"})
    assert result.settings == CalcSettings(k=9)
    assert result.problems == ()
    assert parse_query({}).settings == DEFAULT


@pytest.mark.parametrize("raw", ["1", "16", " 7 ", "+3", "6.0", "016"])
def test_k_accepts_whole_numbers_in_range(raw):
    assert parse_query({"k": raw}).settings.k == int(float(raw))


@pytest.mark.parametrize("edges", [{"alpha": "0"}, {"alpha": "100"}, {"c": "0"}, {"c": "1"}, {"v": "1"}, {"v": "10"}])
def test_range_ends_are_accepted(edges):
    assert parse_query(edges).rejected == ()


BAD = {
    "k": ["0", "17", "6.5", "-3", "abc", "", "1e1", "0x10", "٣", "inf", "nan", "9" * 40],
    "alpha": ["-1", "101", "1e2", "seventy", "nan", "70%"],
    "c": ["-0.01", "1.01", "nan", "inf", "-inf", "1e-2", "0,13", "1e309"],
    "v": ["0.49", "10.01", "0", "nan", "1e3", "Infinity"],
}


@pytest.mark.parametrize(("name", "raw"), [(n, r) for n, values in BAD.items() for r in values])
def test_a_bad_value_falls_back_to_its_default_with_a_notice_naming_it(name, raw):
    good = {"k": "6", "alpha": "55", "c": "0.2", "v": "1.2"}
    result = parse_query({**good, name: raw})
    assert result.rejected == (name,)
    assert len(result.problems) == 1 and f"`{name}`" in result.problems[0]
    expected = parse_query(good).settings
    field = {"k": "k", "alpha": "alpha_pct", "c": "draft_cost", "v": "verify_cost"}[name]
    assert getattr(result.settings, field) == getattr(DEFAULT, field)
    for other, other_field in (("k", "k"), ("alpha", "alpha_pct"), ("c", "draft_cost"), ("v", "verify_cost")):
        if other != name:
            assert getattr(result.settings, other_field) == getattr(expected, other_field)


@pytest.mark.parametrize(
    "hostile",
    [
        "<script>alert(1)</script>",
        "[click](javascript:alert(1))",
        "**bold** `code` $x$",
        "<img src=x onerror=alert(1)>",
        "A" * 100_000,
        "\n\n# heading",
        "4;rm -rf /",
    ],
)
def test_hostile_values_are_rejected_and_not_echoed(hostile):
    result = parse_query({"k": hostile, "alpha": hostile, "c": hostile, "v": hostile})
    assert result.settings == DEFAULT
    assert set(result.rejected) == set(NAMES)
    for problem in result.problems:
        assert len(problem) < 200
        shown = problem.split("` = `")[1].split("`")[0]
        assert all(ch.isalnum() and ch.isascii() or ch in ".+-?…" for ch in shown), shown


def test_several_values_for_one_name_use_the_last_like_the_browser():
    assert parse_query({"k": ["3", "5"]}).settings.k == 5
    assert parse_query({"k": []}).rejected == ("k",)


@pytest.mark.parametrize(
    ("query", "field", "value"),
    [({"alpha": "63.4"}, "alpha_pct", 63), ({"alpha": "54.5"}, "alpha_pct", 55), ({"c": "0.1235"}, "draft_cost", 0.124),
     ({"c": "0.1234"}, "draft_cost", 0.123), ({"v": "1.005"}, "verify_cost", 1.01)],
)
def test_values_off_the_slider_step_are_rounded_half_up_with_a_note(query, field, value):
    result = parse_query(query)
    assert getattr(result.settings, field) == pytest.approx(value)
    assert result.rejected == ()
    assert len(result.adjustments) == 1 and f"`{next(iter(query))}`" in result.adjustments[0]


def test_to_query_writes_v_only_when_it_is_not_the_default():
    assert to_query(DEFAULT) == {"k": "4", "alpha": "70", "c": "0.13"}
    assert to_query(CalcSettings(k=6, alpha_pct=55, draft_cost=0.2, verify_cost=1.25)) == {
        "k": "6", "alpha": "55", "c": "0.20", "v": "1.25"}


grid_settings = st.builds(
    CalcSettings,
    k=st.integers(1, 16),
    alpha_pct=st.integers(0, 100),
    draft_cost=st.integers(0, 100).map(lambda x: x / 100),
    verify_cost=st.integers(100, 1000).map(lambda x: x / 100),
)


@settings(max_examples=300, deadline=None)
@given(s=grid_settings)
def test_every_setting_on_the_sliders_round_trips_through_the_url(s):
    result = parse_query(to_query(s))
    assert result.settings == s
    assert result.problems == () and result.adjustments == ()


@settings(max_examples=300, deadline=None)
@given(query=st.dictionaries(st.sampled_from(NAMES + ("x",)), st.text(max_size=30)))
def test_any_text_gives_settings_in_range_and_never_raises(query):
    s = parse_query(query).settings
    assert 1 <= s.k <= 16 and isinstance(s.k, int)
    assert 0 <= s.alpha_pct <= 100 and isinstance(s.alpha_pct, int)
    assert 0.0 <= s.draft_cost <= 1.0
    assert 1.0 <= s.verify_cost <= 10.0


def _readme_rows() -> dict[str, list[str]]:
    """The README's table of calculator URL parameters: name -> its cells."""
    from tests.conftest import ROOT

    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| parameter | meaning | accepted"))
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0].strip("`")] = cells
    return rows


def test_the_readme_states_the_ranges_the_calculator_accepts():
    """Issue 23 (5): the README said v accepts 0.50–10.00; the calculator accepts 1–10."""
    from app.calculator.params import PARAMS

    rows = _readme_rows()
    assert set(rows) == set(NAMES)
    for param in PARAMS:
        number = param.number
        accepted = rows[param.name][2]
        ends = accepted.split(",")[0].removeprefix("whole number ").split("–")
        assert [float(e) for e in ends] == [number.lo, number.hi], (param.name, accepted)
        if number.decimals:
            assert ends == [f"{number.lo:.{number.decimals}f}", f"{number.hi:.{number.decimals}f}"]
            assert f"rounded to {10 ** -number.decimals:.{number.decimals}f}" in accepted
        default = getattr(DEFAULT, param.field)
        assert rows[param.name][3].split(" ")[0] == number.format(default)


def test_wrong_case_names_are_read_as_ours_and_an_exact_name_wins():
    """Issue 23 (a): `K=9` was ignored without a word."""
    from app.calculator.params import ours

    assert parse_query({"K": "9", "ALPHA": "55", "C": "0.2", "V": "1.5"}).settings == CalcSettings(9, 55, 0.2, 1.5)
    assert ours({"K": "9", "Alpha": ["3", "5"], "other": "x"}) == {"k": "9", "alpha": "5"}
    assert ours({"K": "9", "k": "6"}) == {"k": "6"}
    assert parse_query({"K": "99"}).problems and "`k`" in parse_query({"K": "99"}).problems[0]
