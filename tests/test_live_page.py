"""The live page through AppTest, driven by the bundled target on a short prompt.

One run of the real models is shared by the module (fixture ``ran``); the tests then replay it.
AppTest does not fire ``st.fragment`` timers, so "play to the end" is checked by pressing Play and
then jumping, and the timer rule itself is tested in test_live_widgets.py.
"""

import math
import re
import statistics
import time
from pathlib import Path

import pytest

from app import state
from app.calculator import params as calc_params
from app.live import playback
from app.live import view as live_view
from app.live.tokens import md_plain
from app.urlcodec import half_up, number_text
from specsim.core import defaults
from specsim.lesson import replay
from specsim.measure import fairtime
from tests.conftest import ROOT, open_page
from tests.live_traces import one_torch_thread

_threads = pytest.fixture(scope="module", autouse=True)(one_torch_thread)

PROMPT = "Repeat after me: one two three four one two three four"  # prompt lookup drafts from it
N_NEW = 10


def _set_form(at, prompt=PROMPT, k=3, n=N_NEW, drafter="prompt_lookup", temperature=0.0):
    at.text_area(key=state.widget_key(state.LIVE_PROMPT)).set_value(prompt)
    at.radio(key=state.widget_key(state.LIVE_DRAFTER)).set_value(drafter)
    at.text_input(key=state.widget_key(state.LIVE_K)).set_value(str(k))
    at.text_input(key=state.widget_key(state.LIVE_MAX_NEW)).set_value(str(n))
    at.text_input(key=state.widget_key(state.LIVE_TEMPERATURE)).set_value(number_text(temperature))
    return at


@pytest.fixture(scope="module")
def ran():
    at = _set_form(open_page("live.py", timeout=600))
    at.button(key="live_run").click().run()
    assert not at.exception, at.exception
    return at


def _texts(elements):
    return [e.value for e in elements]


def test_run_records_both_traces(ran):
    spec, plain = ran.session_state[state.LIVE_TRACE], ran.session_state[state.LIVE_PLAIN]
    assert spec.mode == "speculative" and plain.mode == "plain"
    assert spec.settings.k == 3 and spec.n_generated == plain.n_generated <= N_NEW
    assert spec.settings.drafter == "prompt_lookup"
    assert not ran.error


def test_numbers_shown_are_the_traces(ran):
    spec, plain = ran.session_state[state.LIVE_TRACE], ran.session_state[state.LIVE_PLAIN]
    shown = {m.label: m.value for m in ran.metric}
    assert shown["measured acceptance α"] == live_view.fmt_pct(spec.acceptance_rate)
    assert shown["tokens per loop, τ"] == f"{spec.n_decoded / len(spec.iterations):.2f}"  # after the prefill
    fair = fairtime.fair_speedup([(spec, plain)])
    assert shown["speedup vs plain decoding"] == live_view.fmt_x(fair.headline)
    assert fair.headline <= spec.n_decoded / len(spec.iterations)  # never above tokens per target pass
    # the cost model, worked out here from the raw timings with medians: t / (K·c + v + o)
    its, k = spec.iterations, spec.settings.k
    base = statistics.median(plain.pass_times[1:])
    c = statistics.median(it.draft_time_s / it.k for it in its if it.k) / base
    by_size = {}
    for it in its:
        by_size.setdefault(it.k, []).append(it.verify_time_s)
    v = sum(max(1.0, statistics.median(by_size[it.k]) / base) for it in its) / len(its)
    o = max(0.0, spec.decode_time_s - sum(it.draft_time_s + it.verify_time_s for it in its)) / len(its) / base
    t = spec.n_decoded / len(its)  # the loops' tokens: the prefill chose the first
    k_mean = sum(it.k for it in its) / len(its)
    assert shown["cost model"] == live_view.fmt_x(t / (k_mean * c + v + o))
    a = sum(it.n_accepted for it in its) / sum(s.status != "unchecked" for it in its for s in it.slots)
    link = next(m.value for m in ran.markdown if "Open the calculator" in m.value)
    # c at the calculator's step, 0.001, as the link writes it (issue 62 (15)); rounding it to 0.01 here, and reading
    # the link by prefix, passed only when the measured c's third decimal rounded down (c = 0.005 failed)
    c_text = calc_params.BY_NAME["c"].number.format(half_up(c, 3))
    assert f"k={k}&alpha={math.floor(100 * a + 0.5)}&c={c_text}&" in link, (c, link)


def test_one_value_for_c_v_and_the_prediction(ran):
    """Every c, v and predicted speedup of the run on the page has one value (issue 21). The sentence under
    the K box is about the default draft's settings on this machine, another drafter and no run: left out."""
    from specsim.measure import machine

    settings_note = machine.default_k()[1]
    texts = [m.value for m in ran.markdown] + [str(t.value) for t in ran.table]
    texts += [m.value for m in ran.caption if m.value != settings_note]
    texts += [str(getattr(el, "proto", "")) for el in ran.get("arrow_table")]
    joined = "\n".join(texts)
    for name in ("c", "v"):
        values = set(re.findall(rf"\b{name} = (\d+\.\d+)", joined))
        assert len({round(float(x), 2) for x in values}) <= 1, (name, values)
    predicted = set(re.findall(r"predicts [^=]*= (\d+\.\d+)×", joined))
    predicted |= set(re.findall(r"gives (\d+\.\d+)×", joined)) - {f"{float(p):.2f}" for p in []}
    shown = {m.label: m.value for m in ran.metric}
    assert predicted <= {shown["cost model"].rstrip("×")}, predicted


def test_identity_shown_in_greedy_mode(ran):
    spec, plain = ran.session_state[state.LIVE_TRACE], ran.session_state[state.LIVE_PLAIN]
    assert spec.generated_ids == plain.generated_ids  # the engine's promise (float32, or the invariant bfloat16)
    dtype = spec.settings.dtype
    assert any(f"all {spec.n_generated} tokens match" in s.value and f"({dtype})" in s.value for s in ran.success)


def test_step_forward_back_and_play_to_the_end(ran):
    spec = ran.session_state[state.LIVE_TRACE]
    n = len(spec.iterations)
    assert n >= 2, "the prompt should take several iterations"
    assert md_plain(replay.narrate(spec, 0)) in _texts(ran.info)
    ran.button(key="live_forward").click().run()
    assert ran.session_state[state.LIVE_STEP] == 1
    assert md_plain(replay.narrate(spec, 1)) in _texts(ran.info)
    header = ran.text_input(key=state.LIVE_STEP_SEEN)  # the header rides with the step it reports (issue 51)
    assert f"Iteration 2 of {n}" in header.label and header.value == "1"
    ran.button(key="live_back").click().run()
    assert ran.session_state[state.LIVE_STEP] == 0
    ran.button(key="live_play").click().run()
    assert ran.session_state[state.LIVE_PLAYING] is True
    ran.slider(key=playback.slider_key(0)).set_value(n).run()
    assert ran.session_state[state.LIVE_STEP] == n - 1
    assert md_plain(replay.narrate(spec, n - 1)) in _texts(ran.info)
    assert ran.session_state[state.LIVE_PLAYING] is False  # playing stops by itself on the last iteration
    ran.button(key="live_restart").click().run()
    assert ran.session_state[state.LIVE_STEP] == 0 and ran.session_state[state.LIVE_PLAYING] is False
    # none of this ran the models again
    assert ran.session_state[state.LIVE_TRACE] is spec


def _keys_in_order(node) -> list[str]:
    """The widget keys under ``node`` in the order the page draws them."""
    keys = [node.key] if getattr(node, "key", None) else []
    for _, child in sorted(getattr(node, "children", {}).items()):
        keys += _keys_in_order(child)
    return keys


def test_back_pressed_while_playing_steps_back_from_the_step_its_button_was_drawn_on():
    """Under load a click can reach the server folded with a timer tick the browser sent after it: Streamlit keeps
    the older request's button press and the newer one's widget values, so the hidden box already reported the next
    step (Back then left the iteration on screen, 1 of 12 in a full test run). And the box can trail the header: the
    page copies the step the server set into what it sends two React effect passes after it draws the header, and a
    press on a starved CPU still carried the step before (Back went back two, 1 of 20 under load). A playing-time
    button carries the step it was drawn on, and the header is drawn before the buttons, so that step is on screen."""
    seen = 3
    for in_the_box in (seen + 1, seen - 1):  # a later tick folded in; a box that trails the header
        at = _playing_at(seen)
        order = _keys_in_order(at.main)
        assert order.index(state.LIVE_STEP_SEEN) < order.index(f"{state.LIVE_BACK_BUTTON}_{seen}"), order
        at.text_input(key=state.LIVE_STEP_SEEN).set_value(playback.seen_value(in_the_box, playing=True))
        at.button(key=f"{state.LIVE_BACK_BUTTON}_{seen}").click().run()
        assert not at.exception, at.exception
        assert at.session_state[state.LIVE_STEP] == seen - 1, in_the_box
        assert at.session_state[state.LIVE_PLAYING] is False


def _playing_at(step: int):
    """The live page with the shipped recording, playing, iteration ``step`` on screen and no tick due."""
    from specsim.lesson import recorded

    shown = next(recorded.load(r.path) for r in recorded.RECIPES if r.name == "prose_run")
    at = open_page("live.py")
    at.session_state[state.LIVE_TRACE], at.session_state[state.LIVE_PLAIN] = shown.spec, shown.plain
    assert len(shown.spec.iterations) > step + 2
    at.session_state[state.LIVE_STEP] = step
    at.session_state[state.LIVE_PLAYING] = True
    at.session_state[state.LIVE_LAST_TICK] = time.monotonic() + 3600  # no tick advances during the test
    at.run()
    return at


def test_pause_pressed_while_playing_pauses_however_often_the_press_arrives():
    """The browser can send one press twice (the click rides on the playback timer's request too). ❚❚ Pause was a
    toggle, so the second copy played again: Pause left playback running in 1 of 20 presses in a real browser."""
    seen = 3
    at = _playing_at(seen)
    box = at.text_input(key=state.LIVE_STEP_SEEN)
    sent = box.value
    assert sent == playback.seen_value(seen, playing=True)
    for copy in range(2):  # the press, then the same press again, carrying what the browser held when it sent it
        at.text_input(key=state.LIVE_STEP_SEEN).set_value(sent)
        at.button(key=state.LIVE_PLAY_BUTTON).click().run()
        assert not at.exception, at.exception
        assert at.session_state[state.LIVE_PLAYING] is False, copy
        assert at.session_state[state.LIVE_STEP] == seen, copy
    at.button(key=state.LIVE_PLAY_BUTTON).click().run()  # a new press on the paused page plays
    assert at.session_state[state.LIVE_PLAYING] is True


def _press_back_twice_while_playing():
    """Back pressed on iteration 3 while playing, then a late copy of the same press (run by AppTest as a script)."""
    import streamlit as st

    from app import state
    from app.live import playback

    n, seen = 9, 3
    st.session_state[state.LIVE_PLAYING] = True
    st.session_state[state.LIVE_STEP] = seen + 1  # the server a tick ahead of the page
    st.session_state[state.LIVE_STEP_SEEN] = playback.seen_value(seen, playing=True)
    playback._shift(n, -1, seen)  # the press, from the button drawn on iteration 3
    first = state.get(state.LIVE_STEP)
    st.session_state[state.LIVE_STEP_SEEN] = playback.seen_value(first, playing=False)  # the paused page's box
    playback._shift(n, -1, seen)  # the same press again
    again = state.get(state.LIVE_STEP)
    playback._shift(n, -1)  # a new press of the paused page's Back
    st.write(f"steps {first} {again} {state.get(state.LIVE_STEP)}")


def test_back_pressed_while_playing_counts_once_when_a_late_copy_arrives():
    """A second copy of the press can reach the server after the paused page was drawn, its box one step lower:
    stepping back from that would go back two. Streamlit
    still runs the callback of the button the paused page replaced, which AppTest cannot send, so the callback is
    called the way Streamlit calls it."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_press_back_twice_while_playing).run()
    assert not at.exception, at.exception
    assert [m.value for m in at.markdown] == ["steps 2 2 1"]


def test_the_box_reports_the_step_and_whether_the_page_played():
    for step, playing in ((0, False), (7, True), (12, False)):
        assert playback.read_seen(playback.seen_value(step, playing)) == (step, playing)
    assert playback.read_seen(None) is None and playback.read_seen("") is None


@pytest.mark.parametrize("prompt,needle", [("   \n ", "empty"), ("x" * 2001, "2000")])
def test_bad_prompt_shows_a_message_and_keeps_the_text(prompt, needle):
    at = _set_form(open_page("live.py"), prompt=prompt)
    at.button(key="live_run").click().run()
    assert not at.exception
    assert any(needle in e.value for e in at.error)
    assert at.text_area(key=state.widget_key(state.LIVE_PROMPT)).value == prompt
    assert at.session_state[state.LIVE_TRACE] is None


def test_out_of_range_k_shows_a_message():
    at = _set_form(open_page("live.py"), k=40)
    at.button(key="live_run").click().run()
    label = at.text_input(key=state.widget_key(state.LIVE_K)).label  # the message names the box as the page shows it
    assert not at.exception and any(f"“{label}” must be" in e.value for e in at.error)


def test_unavailable_model_shows_a_message(tmp_path, monkeypatch):
    from app.live.pairs import MODEL_DIRS_ENV

    monkeypatch.setenv(MODEL_DIRS_ENV, str(tmp_path))  # a folder this server loads models from
    at = _set_form(open_page("live.py"))
    at.selectbox(key=state.widget_key(state.LIVE_PAIR)).set_value("custom").run()
    # a folder with no model in it
    at.text_input(key=state.widget_key(state.LIVE_CUSTOM_TARGET)).set_value(str(tmp_path))
    at.button(key="live_run").click().run()
    assert not at.exception
    assert any("Could not load" in e.value for e in at.error)
    assert at.text_area(key=state.widget_key(state.LIVE_PROMPT)).value == PROMPT


def test_the_draft_model_drafter_runs_the_shipped_draft():
    at = _set_form(open_page("live.py"), drafter="draft_model")
    at.button(key="live_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    spec = at.session_state[state.LIVE_TRACE]
    assert spec is not None and spec.n_generated >= 1
    assert Path(defaults.DEFAULT_DRAFT).name in spec.settings.draft


def test_draft_model_without_a_bundled_draft_says_what_to_pick(monkeypatch):
    monkeypatch.setattr(defaults, "DEFAULT_DRAFT", "")  # a build that ships no draft
    at = _set_form(open_page("live.py"), drafter="draft_model")
    at.button(key="live_run").click().run()
    assert not at.exception
    assert any("No draft model is given" in e.value for e in at.error)
    assert at.session_state[state.LIVE_TRACE] is None


def test_settings_survive_a_visit_to_another_page():
    at = _set_form(open_page("live.py"), prompt="kept across pages", k=5)
    at.run()
    at.switch_page(str(ROOT / "pages" / "calculator.py")).run()
    at.switch_page(str(ROOT / "pages" / "live.py")).run()
    assert not at.exception
    assert at.text_area(key=state.widget_key(state.LIVE_PROMPT)).value == "kept across pages"
    assert at.text_input(key=state.widget_key(state.LIVE_K)).value == "5"


def test_a_bad_link_falls_back_with_a_notice():
    at = open_page("live.py", query={"k": "99", "t": "0.5", "prompt": "from a link"})
    assert not at.exception
    assert any("`k`" in w.value for w in at.warning)
    from specsim.measure import machine

    assert at.text_input(key=state.widget_key(state.LIVE_K)).value == str(machine.default_k()[0])  # the page's K
    assert at.text_input(key=state.widget_key(state.LIVE_TEMPERATURE)).value == "0.5"
    assert at.text_area(key=state.widget_key(state.LIVE_PROMPT)).value == "from a link"


def test_a_stopped_run_hands_over_its_partial_trace():
    """What the next script run does after a click stopped a generation (see app/live/run.py)."""
    from app.live.run import RunBox
    from tests.live_traces import hand_trace

    at = open_page("live.py")
    partial = hand_trace(greedy=False)
    at.session_state[state.LIVE_RUN] = RunBox(running=False, spec=partial, notice=("warning", "Cancelled: kept."))
    at.run()
    assert not at.exception
    assert at.session_state[state.LIVE_TRACE] == partial and at.session_state[state.LIVE_PLAIN] is None
    assert at.session_state[state.LIVE_RUN] is None
    assert any(w.value == "Cancelled: kept." for w in at.warning)
    assert md_plain(replay.narrate(partial, 0)) in _texts(at.info)  # sampling mode: residual chart drawn without error
    assert any("did not run to the end" in w.value for w in at.warning)


def test_a_greedy_mismatch_names_the_token_and_the_dtype():
    from tests.live_traces import VOCAB, hand_plain, hand_trace

    spec = hand_trace()
    ids = list(spec.generated_ids)
    ids[4] = 21
    at = open_page("live.py")
    at.session_state[state.LIVE_TRACE] = spec
    at.session_state[state.LIVE_PLAIN] = hand_plain(tuple(ids))
    at.run()
    assert not at.exception
    message = _visible(next(e.value for e in at.error if "differ" in e.value))  # as the page shows it
    assert "token 5" in message and repr(VOCAB[17]) in message and repr(VOCAB[21]) in message
    assert "float32" in message
    assert any(c.value.startswith("Usual but not guaranteed") for c in at.caption)  # float32: an observation


def _visible(markdown: str) -> str:
    """The text Markdown shows for ``markdown`` (CommonMark, tags dropped)."""
    import html
    import re

    from markdown_it import MarkdownIt

    return html.unescape(re.sub(r"<[^>]+>", "", MarkdownIt("commonmark").render(markdown))).strip()


def _output_boxes(at) -> dict[str, str]:
    return {t.label: t.value for t in at.text_area if t.label in ("speculative output", "plain output")}


def test_a_second_run_replaces_the_output_boxes():
    """Issue 12, defect 1: after a new run the text boxes show the new run, like the chips and the export."""
    at = _set_form(open_page("live.py", timeout=600), n=3)
    at.button(key="live_run").click().run()
    first, plain = at.session_state[state.LIVE_TRACE], at.session_state[state.LIVE_PLAIN]
    assert _output_boxes(at) == {"speculative output": first.text, "plain output": plain.text}
    at.text_area(key=state.widget_key(state.LIVE_PROMPT)).set_value("Name three colours of the rainbow.")
    at.text_input(key=state.widget_key(state.LIVE_MAX_NEW)).set_value("4")
    at.button(key="live_run").click().run()
    second, plain = at.session_state[state.LIVE_TRACE], at.session_state[state.LIVE_PLAIN]
    assert second.text != first.text
    assert _output_boxes(at) == {"speculative output": second.text, "plain output": plain.text}


def test_a_tiny_temperature_is_shown_run_and_linked_as_typed():
    """Issue 12, defects 2 and 3: 1e-300 runs (no inf/nan), and page, run and link agree on it."""
    at = _set_form(open_page("live.py", timeout=600), n=3, temperature=1e-300)
    at.button(key="live_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.session_state[state.LIVE_TRACE].settings.temperature == 1e-300
    assert at.text_input(key=state.widget_key(state.LIVE_TEMPERATURE)).value == "1e-300"  # not as 0.00
    assert at.query_params["t"] == "1e-300"
    again = open_page("live.py", query={"t": at.query_params["t"], "prompt": "hello"})
    assert again.text_input(key=state.widget_key(state.LIVE_TEMPERATURE)).value == "1e-300"
    assert not again.warning


def test_a_seed_beyond_the_range_is_refused_and_stays_as_typed():
    """Issue 12, defect 4: 9007199254740993 is neither run nor linked as seed 0. Issue 23 (7): nor is it written
    into the link; the link keeps the last seed the page could run."""
    at = _set_form(open_page("live.py", timeout=600), n=3)
    at.text_input(key=state.widget_key(state.LIVE_SEED)).set_value("42").run()
    assert at.query_params["seed"] == "42"
    at.text_input(key=state.widget_key(state.LIVE_SEED)).set_value("9007199254740993")
    at.button(key="live_run").click().run()
    assert any("“Seed” must be a whole number from 0 to 2147483647" in e.value for e in at.error)
    assert at.session_state[state.LIVE_TRACE] is None
    assert at.text_input(key=state.widget_key(state.LIVE_SEED)).value == "9007199254740993"
    assert at.query_params["seed"] == "42"


def test_a_custom_pair_with_the_bundled_target_reuses_the_loaded_model_and_names_a_damaged_draft(tmp_path,
                                                                                                   monkeypatch):
    """Issue 12: `bundled` as a custom target is the same loaded model (no second copy); a damaged
    distilled draft gets a message about its files, not advice about the prompt (defect 5)."""
    import shutil

    from app import loaders
    from app.live.pairs import MODEL_DIRS_ENV
    from specsim.core import defaults

    monkeypatch.setenv(MODEL_DIRS_ENV, str(tmp_path))

    draft = tmp_path / "draft"
    shutil.copytree(defaults.DEFAULT_DRAFT, draft)
    weights = draft / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    at = _set_form(open_page("live.py", timeout=600), n=3, drafter="draft_model")
    at.selectbox(key=state.widget_key(state.LIVE_PAIR)).set_value("custom").run()
    at.text_input(key=state.widget_key(state.LIVE_CUSTOM_TARGET)).set_value("bundled")
    at.text_input(key=state.widget_key(state.LIVE_CUSTOM_DRAFT)).set_value(str(draft))
    at.button(key="live_run").click().run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "Could not load the distilled draft" in errors[0], errors
    assert "shorter prompt" not in errors[0]
    from app.live import pairs as live_pairs
    from app.settings import LiveSettings

    settings = LiveSettings(pair="custom", target=" bundled ", drafter="prompt_lookup")
    target = loaders.load_models(live_pairs.request_for(settings))
    assert target is loaders.bundled_target()


# ---- issue 23 --------------------------------------------------------------------------------------------
def test_a_refused_temperature_is_not_written_to_the_url():
    """Issue 23 (7)."""
    at = open_page("live.py")
    at.text_input(key=state.widget_key(state.LIVE_TEMPERATURE)).set_value("0.7").run()
    assert at.query_params["t"] == "0.7"
    at.text_input(key=state.widget_key(state.LIVE_TEMPERATURE)).set_value("2.0001").run()
    assert not at.exception
    assert at.query_params["t"] == "0.7"
    at.button(key="live_run").click().run()
    assert any("“Temperature (0 = greedy)” must be a number from 0 to 2, not '2.0001'" in e.value for e in at.error)
    assert at.text_input(key=state.widget_key(state.LIVE_TEMPERATURE)).value == "2.0001"  # kept for the user
    assert at.query_params["t"] == "0.7"


@pytest.mark.parametrize(("box", "name"),
                         [(state.LIVE_K, "k"), (state.LIVE_MAX_NEW, "n"), (state.LIVE_TEMPERATURE, "t")])
def test_letters_typed_into_k_max_new_tokens_or_temperature_are_named_and_kept(box, name):
    """Issue 23 (8): the boxes were number boxes, so letters reached the page as 0 and the message named 0
    (the temperature's 0 even ran, greedy, without a word)."""
    at = open_page("live.py")
    at.text_input(key=state.widget_key(box)).set_value("abc").run()
    at.button(key="live_run").click().run()
    assert not at.exception
    errors = [e.value for e in at.error]
    label = at.text_input(key=state.widget_key(box)).label  # issue 63: the box's own label, not the URL's name
    assert any(f"“{label}” must be a" in e and "not 'abc'" in e for e in errors), errors
    assert at.text_input(key=state.widget_key(box)).value == "abc"
    assert dict(at.query_params).get(name) != "abc" and at.session_state[state.LIVE_TRACE] is None


def test_a_wrong_case_link_is_read_and_rewritten_in_lower_case():
    """Issue 23 (a)."""
    at = open_page("live.py", query={"K": "5", "Prompt": "hello there", "DRAFTER": "prompt_lookup"})
    assert not at.exception and not at.warning
    assert at.text_input(key=state.widget_key(state.LIVE_K)).value == "5"
    assert at.text_area(key=state.widget_key(state.LIVE_PROMPT)).value == "hello there"
    assert at.radio(key=state.widget_key(state.LIVE_DRAFTER)).value == "prompt_lookup"
    assert at.query_params["k"] == "5" and not {"K", "Prompt", "DRAFTER"} & set(at.query_params)


@pytest.mark.parametrize("policy", ["heuristic", "confidence"])
def test_an_adaptive_k_policy_runs_keeps_plain_decodings_tokens_and_says_what_k_did(policy):
    """Issue 38 (7): the live page runs each K policy; greedy output stays plain decoding's, the trace records
    the policy, and the page lists the guesses drafted per iteration."""
    from specsim.core.kpolicy import CONFIDENCE_STOP

    at = open_page("live.py", query={"drafter": "prompt_lookup" if policy == "heuristic" else "draft_model",
                                     "k": "2", "n": "16", "policy": policy}, timeout=600)
    assert at.selectbox(key=state.widget_key(state.LIVE_POLICY)).value == policy
    at.button(key="live_run").click().run(timeout=600)
    assert not at.exception and not at.error
    spec, plain = at.session_state[state.LIVE_TRACE], at.session_state[state.LIVE_PLAIN]
    assert spec.generated_ids == plain.generated_ids
    s = spec.settings
    assert (s.k_schedule, s.stop_below) == (("heuristic", 0.0) if policy == "heuristic" else ("fixed", CONFIDENCE_STOP))
    drafted = ", ".join(str(it.k) for it in spec.iterations)
    assert any(f"Guesses drafted per iteration: {drafted} " in c.value for c in at.caption)
    assert at.query_params["policy"] == policy


def test_tau_is_named_beside_alpha_on_the_live_page_and_in_the_glossary():
    """Issue 55, item 2: τ, the mean acceptance length papers and vLLM report, is the live page's tokens per loop."""
    from app.glossary import terms

    at = open_page("live.py")
    assert not at.exception
    labels = [m.label for m in at.metric]
    assert "tokens per loop, τ" in labels and "measured acceptance α" in labels
    tau = next(term for term in terms() if "τ" in term.term)
    assert "kept guesses plus the target's own token" in tau.meaning and "depends on K" in tau.meaning


def test_a_run_cancelled_before_its_first_loop_leaves_the_run_on_screen():
    """Issue 62 (12): cancelling before the first loop said the right thing, but replaced the finished run on screen by
    an empty one ("This run has no iterations to replay.")."""
    import dataclasses

    from app.live.run import RunBox
    from specsim.lesson import recorded

    shown = next(recorded.load(r.path) for r in recorded.RECIPES if r.name == "prose_run")
    empty = dataclasses.replace(shown.spec, iterations=[])
    at = open_page("live.py")
    at.session_state[state.LIVE_TRACE], at.session_state[state.LIVE_PLAIN] = shown.spec, shown.plain
    at.session_state[state.LIVE_RUN] = RunBox(running=False, spec=empty, plain=None,
                                              notice=("warning", "Cancelled before the first loop."))
    at.run()
    assert not at.exception
    assert at.session_state[state.LIVE_TRACE] is shown.spec
    assert any("the one that was on screen before" in w.value for w in at.warning)
    assert not any("no iterations to replay" in i.value for i in at.info)


def test_the_cost_paragraph_blames_short_drafts_only_when_the_run_fell_short_of_the_model():
    """A learner's review: the prose recording measured τ = 1.96 against the model's 1.94, and the page said "Part of
    the gap: an average loop proposed only 3.79 of its K = 4 guesses", which can only lower τ."""
    at = open_page("live.py")
    text = " ".join(m.value for m in at.markdown)
    costs = live_view.replay.run_stats(*_shown(at)).costs
    assert ("Part of the gap" in text) == (costs.tokens_per_loop < costs.closed_form_tokens_per_loop
                                           and costs.k < costs.k_max - 0.05)


def _shown(at):
    from app import recording

    shipped = recording.shipped_runs()[at.session_state[state.LIVE_RECORDING]]
    return shipped.spec, shipped.plain


def test_a_sampled_run_with_top_k_and_top_p_is_cut_and_says_p_prime(monkeypatch):
    """Issue 63, item 2: top-k and top-p were validated in the run request but no page offered them. The form's
    boxes reach the engine; the trace, the link and the chips carry the cut, and the chips name p′ and q′."""
    from app.live import tokens
    from specsim.lesson import replay

    at = _set_form(open_page("live.py", timeout=600), drafter="draft_model", temperature=1.0, n=12)
    at.text_input(key=state.widget_key(state.LIVE_TOP_K)).set_value("3")
    at.text_input(key=state.widget_key(state.LIVE_TOP_P)).set_value("0.9")
    at.button(key="live_run").click().run()
    assert not at.exception, at.exception
    spec = at.session_state[state.LIVE_TRACE]
    assert spec is not None, [e.value for e in at.error]
    assert (spec.settings.top_k, spec.settings.top_p, spec.settings.temperature) == (3, 0.9, 1.0)
    assert dict(at.query_params)["top_k"] == "3" and dict(at.query_params)["top_p"] == "0.9"
    for it in spec.iterations:  # every recorded p′ and q′ is cut: three tokens carry mass, and any more tie the third
        for slot in it.slots:  # (bfloat16 logits tie often; top-k keeps ties with the k-th, as transformers does)
            for top in (slot.target_top, slot.draft_top):
                kept = sorted((t.prob for t in top if t.prob > 0), reverse=True)
                assert all(p == kept[2] for p in kept[3:]), (it.index, kept)
    titles = [tokens.chip_title(c) for c in replay.chips_at(spec, 0) if c.role in ("accepted", "rejected")]
    assert titles and all("p′(x)" in t and "q′(x)" in t for t in titles), titles


def test_a_refused_cut_names_its_box_and_blank_is_off():
    at = _set_form(open_page("live.py"), temperature=0.8)
    at.text_input(key=state.widget_key(state.LIVE_TOP_P)).set_value("1.5").run()
    at.button(key="live_run").click().run()
    label = at.text_input(key=state.widget_key(state.LIVE_TOP_P)).label
    assert not at.exception and any(f"“{label}” must be a number from 0.01 to 1, not '1.5'" in e.value
                                    for e in at.error), [e.value for e in at.error]
    assert at.session_state[state.LIVE_TRACE] is None and "top_p" not in dict(at.query_params)
    at.text_input(key=state.widget_key(state.LIVE_TOP_P)).set_value(" ").run()
    at.button(key="live_run").click().run()
    assert not at.exception and not at.error
    assert at.session_state[state.LIVE_TRACE].settings.top_p is None


def test_min_p_goes_from_the_form_to_the_engine_and_back_in_the_link():
    """Issue 63, item 2, the newcomer's test: min-p (transformers' MinPLogitsWarper, after top-p) added from the form
    to the engine. Each recorded p′ keeps only tokens at least min-p times as likely as its top one."""
    at = _set_form(open_page("live.py", timeout=600), drafter="draft_model", temperature=1.0, n=10)
    at.text_input(key=state.widget_key(state.LIVE_MIN_P)).set_value("0.3")
    at.button(key="live_run").click().run()
    assert not at.exception, at.exception
    spec = at.session_state[state.LIVE_TRACE]
    assert spec is not None, [e.value for e in at.error]
    assert spec.settings.min_p == 0.3 and dict(at.query_params)["min_p"] == "0.3"
    for it in spec.iterations:
        for slot in it.slots:
            kept = [t.prob for t in slot.target_top if t.prob > 0]
            assert kept and min(kept) >= 0.3 * max(kept) - 1e-6, kept
    again = open_page("live.py", query={"min_p": "0.3", "t": "1"})  # the link opens with the box filled in
    assert again.text_input(key=state.widget_key(state.LIVE_MIN_P)).value == "0.3"
    at.text_input(key=state.widget_key(state.LIVE_MIN_P)).set_value("2").run()
    at.button(key="live_run").click().run()
    label = at.text_input(key=state.widget_key(state.LIVE_MIN_P)).label
    assert any(f"“{label}” must be a number from 0 to 1, not '2'" in e.value for e in at.error), \
        [e.value for e in at.error]


def test_a_tree_run_from_the_form_draws_each_loops_tree_and_writes_plain_decodings_tokens():
    """Issue 64, item 2: "a token tree" beside the chain's K policies, with its guesses and depth as boxes; the run
    request carries them to the engine, each iteration shows its tree, and the link keeps the tree's settings."""
    at = _set_form(open_page("live.py", timeout=600), drafter="draft_model", n=10)
    at.selectbox(key=state.widget_key(state.LIVE_POLICY)).set_value("tree").run()
    at.text_input(key=state.widget_key(state.LIVE_TREE)).set_value("6")
    at.text_input(key=state.widget_key(state.LIVE_TREE_DEPTH)).set_value("3")
    at.button(key="live_run").click().run()
    assert not at.exception, at.exception
    spec, plain = at.session_state[state.LIVE_TRACE], at.session_state[state.LIVE_PLAIN]
    assert spec is not None, [e.value for e in at.error]
    assert spec.settings.tree == (6, 3, 3) and spec.generated_ids == plain.generated_ids
    assert all(it.tree is not None and it.tree.width_read <= 7 for it in spec.iterations)
    query = dict(at.query_params)
    assert (query["policy"], query["tree"], query["depth"]) == ("tree", "6", "3")
    assert any(e.value.startswith("Drafted a tree of") for e in at.info), [e.value for e in at.info]
    header = at.text_input(key=state.LIVE_STEP_SEEN).label  # the iteration's header (app.live.playback)
    assert "a tree of" in header and "one pass of" in header and "K = " not in header, header
    assert any(m.value.startswith("Token tree: at each of up to 3 levels") and "the 6 best scored guesses" in m.value
               for m in at.caption)
    assert any(m.value.startswith("Be the draft plays a chain of K guesses") for m in at.caption)


def test_a_tree_with_prompt_lookup_or_a_bad_size_is_refused_naming_the_box():
    at = _set_form(open_page("live.py"))
    at.selectbox(key=state.widget_key(state.LIVE_POLICY)).set_value("tree").run()
    at.text_input(key=state.widget_key(state.LIVE_TREE)).set_value("40")
    at.button(key="live_run").click().run()
    errors = [e.value for e in at.error]
    assert not at.exception and at.session_state[state.LIVE_TRACE] is None
    assert any("A token tree needs a drafter that runs a model" in e for e in errors), errors
    assert any("“Tree: guesses” must be a whole number from 1 to 16, not '40'" in e for e in errors), errors
    assert at.text_input(key=state.widget_key(state.LIVE_TREE)).value == "40", "what was typed stays"


def test_the_slot_radios_options_read_the_same_at_every_iteration():
    """The slot radio's options are t+1, t+2, ... at every iteration; the verdicts are their captions. Streamlit keeps
    a radio's choice as the text of the option chosen: when the texts carried the verdicts (t+2 ·, then t+2 ✓ a few
    iterations on), the choice the browser sent back matched no option, the page showed none chosen and the slot
    jumped to that iteration's rejected one (tests/browser/test_teach_browser.py checks the choice in a browser)."""
    at = open_page("live.py")
    at.radio(key=state.LIVE_SLOT).set_value(2).run()
    seen = []
    for step in range(1, 5):  # the recording's slot 2 is never checked, then kept on the fourth iteration
        at.button(key="live_forward").click().run()
        assert not at.exception, at.exception
        radio = at.radio(key=state.LIVE_SLOT)
        seen.append(list(radio.options))
        assert radio.value == 2, f"iteration {step + 1}: the slot moved to t+{radio.value}"
    assert all(options == [f"t+{pos}" for pos in range(1, len(options) + 1)] for options in seen), seen
