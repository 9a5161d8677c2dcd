"""The live page's settings: URL round trip, fallbacks with notices, validation, calculator link."""

import dataclasses
from urllib.parse import parse_qs, urlsplit

import pytest

from app.live import params as lp

PAIRS = ["bundled", "custom"]


def test_round_trip_through_the_url():
    settings = lp.LiveSettings(pair="bundled", drafter="prompt_lookup", prompt="a = 1\nb = a + 1 & <x>", k=7,
                               temperature=0.7, max_new_tokens=33, seed=12)
    parsed, notices = lp.parse_query(lp.to_query(settings), PAIRS)
    assert parsed == settings and notices == []


@pytest.mark.parametrize("t", [0.0001, 1e-40, 1e-300, 0.123456789, 0.7, 2.0, 0.0])
def test_a_temperature_survives_the_url_exactly(t):
    """Issue 12, defect 3: the link must give the very temperature the page ran, not a rounded one."""
    query = lp.to_query(lp.LiveSettings(temperature=t))
    assert float(query["t"]) == t
    parsed, notices = lp.parse_query(query, PAIRS)
    assert parsed.temperature == t and notices == []


def test_a_temperature_that_underflows_to_zero_is_refused_not_made_greedy():
    parsed, notices = lp.parse_query({"t": "1e-400"}, PAIRS)
    assert len(notices) == 1 and "`t`" in notices[0]


@pytest.mark.parametrize("text,seed", [("0", 0), (" 42 ", 42), ("2147483647", 2147483647), ("2147483648", None),
                                       ("9007199254740993", None), ("1e23", None), ("-1", None), ("", None),
                                       ("4.0", 4)])
def test_the_seed_box_text_becomes_a_seed_or_a_message(text, seed):
    """Issue 12, defect 4: a seed out of range is refused with the range, never replaced by another."""
    value = lp.from_text("seed", text)
    if seed is None:
        assert value == text
        problems = lp.validate(lp.LiveSettings(seed=value))
        assert problems == [f"“Seed” must be a whole number from 0 to 2147483647, not {text!r}."]
    else:
        assert value == seed and lp.validate(lp.LiveSettings(seed=value)) == []


def test_custom_ids_travel_only_with_a_custom_pair():
    assert "target" not in lp.to_query(lp.LiveSettings(target="x/y"))
    custom = lp.LiveSettings(pair="custom", target="org/big", draft="org/small")
    assert lp.parse_query(lp.to_query(custom), PAIRS)[0] == custom


@pytest.mark.parametrize("name,raw", [("k", "0"), ("k", "17"), ("k", "2.5"), ("k", "nan"), ("t", "-1"),
                                      ("t", "inf"), ("n", "100000"), ("seed", "1e3"), ("drafter", "oracle"),
                                      ("pair", "gpt-9"), ("prompt", "   "), ("prompt", "x" * 2001)])
def test_bad_values_fall_back_with_a_notice_naming_the_parameter(name, raw):
    parsed, notices = lp.parse_query({name: raw, "k": "3"} if name != "k" else {name: raw}, PAIRS)
    assert len(notices) == 1 and f"`{name}`" in notices[0]
    field = next(p.field for p in lp.PARAMS if p.name == name)
    assert getattr(parsed, field) == getattr(lp.LiveSettings(), field)


def test_missing_parameters_are_silent_defaults():
    assert lp.parse_query({}, PAIRS) == (lp.LiveSettings(), [])


def test_validation_messages():
    assert lp.validate(lp.LiveSettings()) == []
    assert "empty" in lp.validate(lp.LiveSettings(prompt=" \n\t "))[0]
    assert "2000" in lp.validate(lp.LiveSettings(prompt="x" * 2001))[0]
    assert "“K: proposals per loop” must be" in lp.validate(lp.LiveSettings(k=0))[0]
    assert "“Temperature (0 = greedy)” must be" in lp.validate(lp.LiveSettings(temperature=2.5))[0]
    assert "“Max new tokens” must be" in lp.validate(lp.LiveSettings(max_new_tokens=257))[0]
    assert "needs a target id" in lp.validate(lp.LiveSettings(pair="custom", drafter="prompt_lookup"))[0]
    assert "needs a draft id" in lp.validate(lp.LiveSettings(pair="custom", target="a", drafter="draft_model"))[0]
    assert lp.validate(lp.LiveSettings(pair="custom", target="a", drafter="early_exit")) == []


def test_calculator_link_carries_the_measured_values():
    link = lp.calculator_link(0.6789, 5, 0.1349, 1.2351)
    assert urlsplit(link.url).path == "/calculator"
    assert parse_qs(urlsplit(link.url).query) == {"k": ["5"], "alpha": ["68"], "c": ["0.135"], "v": ["1.24"]}
    assert link.notes == ()


def test_calculator_link_clamps_what_the_calculator_cannot_show():
    link = lp.calculator_link(0.5, 4, 1.7, 0.2)
    assert parse_qs(urlsplit(link.url).query)["c"] == ["1.00"] and parse_qs(urlsplit(link.url).query)["v"] == ["1.00"]
    assert len(link.notes) == 2


def test_the_calculator_reads_the_link_as_written():
    from app.calculator import params as calc_params

    link = lp.calculator_link(0.6789, 5, 0.1349, 1.2351)
    result = calc_params.parse_query({k: v[0] for k, v in parse_qs(urlsplit(link.url).query).items()})
    assert result.problems == () and result.adjustments == ()
    s = result.settings
    assert (s.k, s.alpha_pct, s.draft_cost, s.verify_cost) == (5, 68, 0.135, 1.24)


@pytest.mark.parametrize("raw,shown", [("", "(empty)"), ("   ", "(blank)"), ("\t", "(blank)")])
def test_an_empty_url_value_is_named_not_shown_as_backticks(raw, shown):
    """Issue 12: an empty code span renders as two literal backticks."""
    import html
    import re

    from markdown_it import MarkdownIt

    _, notices = lp.parse_query({"prompt": raw}, PAIRS)
    visible = html.unescape(re.sub(r"<[^>]+>", "", MarkdownIt("commonmark").render(notices[0])))
    assert "`" not in visible and f"prompt = {shown} is not" in visible


def test_the_recorded_run_names_the_temperature_it_ran():
    """Issue 12, defect 3: the line under the replay names the very temperature, not 6 rounded digits."""
    from dataclasses import replace

    from app.live.view import describe
    from tests.live_traces import hand_trace

    trace = hand_trace(greedy=False)
    trace = replace(trace, settings=replace(trace.settings, temperature=0.123456789))
    assert "temperature 0.123456789," in describe(trace)


def test_a_refused_value_is_not_written_to_the_url():
    """Issue 23 (7): a temperature of 2.0001 was refused at Run but written into the address all the same.
    A refused value keeps the address's last acceptable value, or leaves the parameter out."""
    before = lp.to_query(lp.LiveSettings(temperature=0.7, k=5))
    typed = lp.LiveSettings(temperature=2.0001, k="abc", max_new_tokens=0, seed="-1", prompt=" ")
    query = lp.to_query(typed, before)
    assert (query["t"], query["k"], query["n"], query["seed"], query["prompt"]) == (
        "0.7", "5", before["n"], before["seed"], before["prompt"])
    assert not {"t", "k", "n", "seed", "prompt"} & set(lp.to_query(typed))
    assert "t" not in lp.to_query(typed, {"t": "5"})  # an unacceptable value in the address is not kept either
    assert lp.to_query(lp.LiveSettings(temperature=2.0), before)["t"] == "2"


@pytest.mark.parametrize("field,text", [("k", "abc"), ("k", "4.5"), ("k", ""), ("max_new_tokens", "ten"),
                                        ("max_new_tokens", "1e2")])
def test_text_typed_into_a_whole_number_box_is_named_in_the_message(field, text):
    """Issue 23 (8): letters typed into K or Max new tokens became 0, and the message then named 0."""
    value = lp.from_text(field, text)
    assert value == text
    assert lp.validate(lp.LiveSettings(**{field: value})) == [
        f"“{lp.BOXES[field]}” must be {lp.NUMBERS[field].describe()}, not {text!r}."]
    assert lp.from_text(field, " 7 ") == 7


@pytest.mark.parametrize("text", ["abc", "warm", "", " ", "0.5abc", "-0.5", "e", "2.5", "nan"])
def test_text_typed_into_the_temperature_box_is_named_in_the_message(text):
    """Issue 23 (8): the temperature was a browser number box, so letters became 0 (greedy) without a word."""
    value = lp.from_text("temperature", text)
    assert value == text
    assert lp.validate(lp.LiveSettings(temperature=value)) == [
        f"“Temperature (0 = greedy)” must be {lp.NUMBERS['temperature'].describe()}, not {text!r}."]


@pytest.mark.parametrize("text,value", [("0", 0.0), ("0.7", 0.7), (" 2 ", 2.0), ("1e-300", 1e-300), (".5", 0.5)])
def test_a_number_typed_into_the_temperature_box_is_read_exactly(text, value):
    assert lp.from_text("temperature", text) == value
    assert lp.validate(lp.LiveSettings(temperature=lp.from_text("temperature", text))) == []


def test_wrong_case_names_are_read_too():
    """Issue 23 (a)."""
    settings, notices = lp.parse_query({"K": "7", "PROMPT": "hi there", "T": "0.5"}, PAIRS)
    assert (settings.k, settings.prompt, settings.temperature) == (7, "hi there", 0.5) and notices == []


@pytest.mark.parametrize("field,name", [("k", "k"), ("max_new_tokens", "n"), ("seed", "seed")])
@pytest.mark.parametrize("text", ["4.0", "4", " 4 ", "+4", "4.5", "1e1", "04", "4.", ".5", "x"])
def test_a_box_and_a_link_take_a_number_by_one_rule(field, name, text):
    """Issue 62 (13): the form refused K = "4.0" as not a whole number while a link's k=4.0 was taken as 4."""
    typed = lp.from_text(field, text)
    parsed, notices = lp.parse_query({name: text}, PAIRS)
    if isinstance(typed, str):  # the box refuses it: so does the link
        assert lp.validate(lp.LiveSettings(**{field: typed})) and notices
    else:
        assert not notices and getattr(parsed, field) == typed


def test_a_link_made_before_the_draft_model_kind_was_renamed_still_opens():
    """``drafter=model`` (the kind's name before issue 63 gave the method one key) reads as ``draft_model``."""
    parsed, notices = lp.parse_query({"drafter": "model"}, PAIRS)
    assert parsed.drafter == "draft_model" and notices == []
    assert lp.parse_query({"drafter": "modle"}, PAIRS)[1]  # a misspelling is still refused, with a notice


def test_a_tree_travels_in_the_link_only_with_the_tree_policy_and_its_boxes_are_checked_only_then():
    tree = lp.LiveSettings(drafter="draft_model", policy="tree", tree_nodes=6, tree_depth=3)
    query = lp.to_query(tree)
    assert (query["policy"], query["tree"], query["depth"]) == ("tree", "6", "3")
    assert lp.parse_query(query, PAIRS) == (tree, [])
    chain = lp.LiveSettings(drafter="draft_model", tree_nodes="abc")
    assert "tree" not in lp.to_query(chain) and "depth" not in lp.to_query(chain)
    assert lp.validate(chain) == []  # a chain's run never reads the tree's boxes
    assert lp.validate(dataclasses.replace(tree, tree_nodes="abc")) == [
        "“Tree: guesses” must be a whole number from 1 to 16, not 'abc'."]
    assert lp.validate(dataclasses.replace(tree, drafter="prompt_lookup")) == [
        "A token tree needs a drafter that runs a model (a draft model or early exit): choose one of them, or a "
        "chain's K policy."]
