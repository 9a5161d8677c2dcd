"""The bad-input campaign on the pages, in process (AppTest): links, form fields and model ids.

Every case checks four things: the message the user sees, no exception, that what the user entered
alongside (or answered before) is still there, and that a normal action right after succeeds.
"""

from __future__ import annotations

import pytest

from app import state
from specsim.measure import analytics
from tests.bad_inputs import CALCULATOR_URL, CAMPAIGN, LIVE_FORM, LIVE_MODELS, LIVE_URL, Bad
from tests.conftest import open_page

PROMPT = "one two three one two three one two"  # repeats itself, so prompt lookup drafts well
GOOD_FORM = {"prompt": PROMPT, "k": "2", "temperature": "0", "max_new_tokens": "2", "seed": "0"}  # as boxes hold them
FORM_KEYS = {"prompt": state.LIVE_PROMPT, "k": state.LIVE_K, "temperature": state.LIVE_TEMPERATURE,
             "max_new_tokens": state.LIVE_MAX_NEW, "seed": state.LIVE_SEED}


def test_the_campaign_has_at_least_fifty_distinct_bad_inputs():
    ids = [b.id for b in CAMPAIGN]
    assert len(ids) == len(set(ids))
    assert len(CAMPAIGN) >= 50


def _messages(at) -> list[str]:
    return [e.value for e in (*at.error, *at.warning)]


def _assert_told(at, case: Bad) -> None:
    assert not at.exception, at.exception
    assert any(case.expect in m for m in _messages(at)), _messages(at)


# ---- calculator links ----------------------------------------------------------------------------
def _metrics(at) -> list[str]:
    return [m.value for m in at.metric]


def _expected(k: int, alpha_pct: int, c: float) -> list[str]:
    a = alpha_pct / 100
    return [f"{analytics.expected_accepted_prefix(a, k):.2f}", f"{analytics.tokens_per_loop(a, k):.2f}",
            f"{analytics.cost_per_loop(k, c):.2f}", f"{analytics.speedup(a, k, c):.2f}×"]


@pytest.mark.parametrize("case", CALCULATOR_URL, ids=lambda b: b.id)
def test_calculator_link(case: Bad):
    companion = {"c": "0.2"} if "c" not in case.value else {"alpha": "55"}  # a good value in the same link
    at = open_page("calculator.py", query={**companion, **case.value})
    _assert_told(at, case)
    sliders = {s.label.split(":")[0]: s.value for s in at.slider}
    if "c" in companion:
        assert sliders["c"] == 0.2, "the good parameter of the same link is kept"
    else:
        assert sliders["α"] == 55
    at.slider[0].set_value(7).run()  # a normal action right after
    assert not at.exception
    k, alpha, c = (s.value for s in at.slider)
    assert k == 7 and _metrics(at) == _expected(k, alpha, c)
    assert at.query_params["k"] == "7"


# ---- live page links ---------------------------------------------------------------------------------
@pytest.mark.parametrize("case", LIVE_URL, ids=lambda b: b.id)
def test_live_link(case: Bad):
    companion = {"prompt": "hello there"} if "prompt" not in case.value else {"k": "3"}
    at = open_page("live.py", query={**companion, **case.value})
    _assert_told(at, case)
    if "prompt" in companion:
        assert at.text_area(key=state.widget_key(state.LIVE_PROMPT)).value == "hello there"
    else:
        assert at.text_input(key=state.widget_key(state.LIVE_K)).value == "3"
    at.text_input(key=state.widget_key(state.LIVE_MAX_NEW)).set_value("5").run()  # a normal action right after
    assert not at.exception
    assert at.query_params["n"] == "5"
    assert at.session_state[state.LIVE_MAX_NEW] == "5"


# ---- live page form -----------------------------------------------------------------------------------
def _fill(at, values: dict) -> None:
    for name, value in values.items():
        key = state.widget_key(FORM_KEYS[name])
        widget = at.text_area(key=key) if name == "prompt" else at.text_input(key=key)
        widget.set_value(value)


def _good_live_page():
    at = open_page("live.py", timeout=600)
    at.radio(key=state.widget_key(state.LIVE_DRAFTER)).set_value("prompt_lookup")
    _fill(at, GOOD_FORM)
    return at.run()


@pytest.mark.parametrize("case", LIVE_FORM, ids=lambda b: b.id)
def test_live_form(case: Bad):
    at = _good_live_page()
    _fill(at, case.value)
    at.button(key="live_run").click().run()
    _assert_told(at, case)
    assert at.session_state[state.LIVE_TRACE] is None
    for name, key in FORM_KEYS.items():  # nothing typed is lost: the bad value stays for the user to fix
        assert at.session_state[key] == case.value.get(name, GOOD_FORM[name])
    name = next(iter(case.value))
    if case is not next(c for c in LIVE_FORM if next(iter(c.value)) == name):
        return  # the fix runs the same path whatever was refused: one real run per field checks it
    _fill(at, {name: GOOD_FORM[name]})
    at.button(key="live_run").click().run()  # fixed: the run goes through
    assert not at.exception and not at.error
    trace = at.session_state[state.LIVE_TRACE]
    assert trace is not None and 1 <= trace.n_generated <= int(GOOD_FORM["max_new_tokens"])


def test_a_non_latin_prompt_runs_and_matches_plain_decoding():
    at = _good_live_page()
    _fill(at, {"prompt": "速い茶色の狐 — быстрая лиса — الثعلب 🦊"})
    at.button(key="live_run").click().run()
    assert not at.exception and not at.error
    spec, plain = at.session_state[state.LIVE_TRACE], at.session_state[state.LIVE_PLAIN]
    assert spec.generated_ids == plain.generated_ids
    assert any("Identical" in s.value for s in at.success)


# ---- live page, custom model pairs ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, str]:
    from app.live.pairs import MODEL_DIRS_ENV
    from tests.local_models import tiny_pair

    root = tmp_path_factory.mktemp("models")
    target, draft = tiny_pair(root, same_tokenizer=True)
    _, other = tiny_pair(root, same_tokenizer=False)
    (root / "junk").mkdir()
    (root / "junk" / "config.json").write_text("{not json")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(MODEL_DIRS_ENV, str(root))  # a folder the server is told to load models from
        yield {"tmp": str(root), "target": str(target), "draft": str(draft), "other_draft": str(other)}


def test_a_server_path_gets_one_message_whether_it_exists_or_not(folders):
    """Issue 23 (9): `target=/etc/passwd` told the user whether the file existed and how it parsed."""
    seen = set()
    for target in ("/etc/passwd", "/etc", "/no/such/folder", "/etc/hostname", "/proc/self/environ"):
        at = _good_live_page()
        _custom(at, target, folders["draft"])
        at.button(key="live_run").click().run()
        assert not at.exception
        seen.add(tuple(e.value for e in at.error))
    assert len(seen) == 1, seen
    (message,) = seen.pop()
    assert "Hugging Face cache:" not in message and "passwd" not in message and "exist" not in message


def _custom(at, target: str, draft: str) -> None:
    at.selectbox(key=state.widget_key(state.LIVE_PAIR)).set_value("custom").run()
    at.text_input(key=state.widget_key(state.LIVE_CUSTOM_TARGET)).set_value(target)
    at.text_input(key=state.widget_key(state.LIVE_CUSTOM_DRAFT)).set_value(draft)
    at.radio(key=state.widget_key(state.LIVE_DRAFTER)).set_value("draft_model")


@pytest.mark.parametrize("case", LIVE_MODELS, ids=lambda b: b.id)
def test_live_custom_models(case: Bad, folders):
    at = _good_live_page()
    _custom(at, case.value["target"].format(**folders), case.value["draft"].format(**folders))
    at.button(key="live_run").click().run()
    _assert_told(at, case)
    assert at.session_state[state.LIVE_TRACE] is None
    assert at.session_state[state.LIVE_PROMPT] == PROMPT
    _custom(at, folders["target"], folders["draft"])  # a working local pair right after
    at.button(key="live_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    trace = at.session_state[state.LIVE_TRACE]
    assert trace is not None and trace.n_generated >= 1


def test_live_settings_survive_a_visit_to_another_page():
    """Found by the browser campaign: the form's widgets forgot their values on a page switch."""
    from tests.conftest import ROOT

    at = open_page("live.py")
    at.text_area(key=state.widget_key(state.LIVE_PROMPT)).set_value("north south east west").run()
    at.text_input(key=state.widget_key(state.LIVE_K)).set_value("7").run()
    at.radio(key=state.widget_key(state.LIVE_DRAFTER)).set_value("prompt_lookup").run()
    at.switch_page(str(ROOT / "pages" / "calculator.py")).run()
    at.switch_page(str(ROOT / "pages" / "live.py")).run()
    assert not at.exception
    assert at.text_area(key=state.widget_key(state.LIVE_PROMPT)).value == "north south east west"
    assert at.text_input(key=state.widget_key(state.LIVE_K)).value == "7"
    assert at.radio(key=state.widget_key(state.LIVE_DRAFTER)).value == "prompt_lookup"
