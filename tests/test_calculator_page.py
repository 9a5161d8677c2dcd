"""The calculator page through AppTest: defaults, each slider, the URL in both directions, and what each tab says."""

from __future__ import annotations

import pytest

from app.calculator.text import heatmap_sentence
from app.settings import CalcSettings
from specsim.measure import analytics
from tests.conftest import ROOT, app_in_a_new_process, open_page, open_tab

K, ALPHA, C = 0, 1, 2  # slider order on the page


def shown(at) -> list[str]:
    return [m.value for m in at.metric]


def expected(k: int, alpha_pct: int, c: float, v: float = 1.0) -> list[str]:
    a = alpha_pct / 100
    return [
        f"{analytics.expected_accepted_prefix(a, k):.2f}",
        f"{analytics.tokens_per_loop(a, k):.2f}",
        f"{analytics.cost_per_loop(k, c, v):.2f}",
        f"{analytics.speedup(a, k, c, v):.2f}×",
    ]


def sentence(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("Every loop"))


def test_defaults_show_the_lesson_example():
    at = open_page("calculator.py")
    assert not at.exception
    assert [s.value for s in at.slider] == [4, 70, 0.13]
    assert at.number_input[0].value == 1.0
    assert shown(at) == ["1.77", "2.77", "1.52", "1.82×"]
    assert all(part in sentence(at) for part in ("1.52 target passes", "2.77 tokens", "1.82× faster"))
    assert not at.warning
    assert at.query_params == {}  # a bare address already opens the lesson's example: nothing to write


@pytest.mark.parametrize(
    ("index", "value"), [(K, 9), (K, 1), (K, 16), (ALPHA, 45), (ALPHA, 0), (ALPHA, 100), (C, 0.3), (C, 0.0), (C, 1.0)]
)
def test_moving_a_slider_changes_the_numbers_as_the_formulas_say_and_updates_the_url(index, value):
    at = open_page("calculator.py")
    at.slider[index].set_value(value).run()
    assert not at.exception
    setting = [4, 70, 0.13]
    setting[index] = value
    assert shown(at) == expected(*setting)
    assert at.query_params == {"k": str(setting[K]), "alpha": str(setting[ALPHA]), "c": f"{setting[C]:.2f}"}
    best = analytics.optimal_k(setting[ALPHA] / 100, setting[C])
    assert any(f"**{best}**" in i.value for i in at.info)


def test_the_verification_factor_enters_the_cost_and_the_url():
    at = open_page("calculator.py")
    at.number_input[0].set_value(1.25).run()
    assert shown(at) == expected(4, 70, 0.13, 1.25)
    assert at.query_params["v"] == "1.25"
    at.number_input[0].set_value(1.0).run()
    assert "v" not in at.query_params


def test_a_link_sets_the_sliders_and_the_numbers_follow():
    at = open_page("calculator.py", query={"k": "6", "alpha": "55", "c": "0.2"})
    assert not at.exception and not at.warning
    assert [s.value for s in at.slider] == [6, 55, 0.2]
    assert shown(at) == expected(6, 55, 0.2)
    assert at.query_params == {"k": "6", "alpha": "55", "c": "0.20"}
    at.slider[K].set_value(8).run()  # moving on from a link keeps the others
    assert shown(at) == expected(8, 55, 0.2)
    assert at.query_params == {"k": "8", "alpha": "55", "c": "0.20"}


def test_a_calibrated_link_carries_v():
    at = open_page("calculator.py", query={"k": "3", "alpha": "62", "c": "0.08", "v": "1.4"})
    assert at.number_input[0].value == 1.4
    assert shown(at) == expected(3, 62, 0.08, 1.4)


@pytest.mark.parametrize(
    ("query", "bad"),
    [({"k": "abc"}, ["k"]), ({"k": "99", "alpha": "55"}, ["k"]), ({"alpha": "-5", "c": "nan"}, ["alpha", "c"]),
     ({"k": "<script>alert(1)</script>", "alpha": "[x](javascript:alert(1))", "c": "1e309", "v": "0"},
      ["k", "alpha", "c", "v"])],
)
def test_bad_parameters_fall_back_to_defaults_with_a_notice_naming_each(query, bad):
    at = open_page("calculator.py", query=query)
    assert not at.exception
    warnings = [w.value for w in at.warning]
    assert len(warnings) == len(bad)
    for name, text in zip(bad, warnings, strict=True):
        assert f"`{name}`" in text
    good_k = int(query["k"]) if "k" in query and "k" not in bad else 4
    good_alpha = int(query["alpha"]) if "alpha" in query and "alpha" not in bad else 70
    assert [s.value for s in at.slider] == [good_k, good_alpha, 0.13]
    assert shown(at) == expected(good_k, good_alpha, 0.13)
    assert at.query_params == {"k": str(good_k), "alpha": str(good_alpha), "c": "0.13"}  # the URL is repaired


def test_a_rounded_parameter_gets_a_note_not_a_warning():
    at = open_page("calculator.py", query={"alpha": "63.5"})
    assert not at.warning
    assert any("`alpha`" in i.value for i in at.info)
    assert at.slider[ALPHA].value == 64


def test_settings_survive_a_visit_to_another_page():
    at = open_page("calculator.py")
    at.slider[K].set_value(7).run()
    at.switch_page(str(ROOT / "pages" / "home.py")).run()
    at.switch_page(str(ROOT / "pages" / "calculator.py")).run()
    assert not at.exception
    assert at.slider[K].value == 7
    assert shown(at) == expected(7, 70, 0.13)


def test_derivation_plugs_in_the_current_settings():
    from app import state
    from app.calculator.derivation_figures import kept_share_figure

    at = open_tab(open_page("calculator.py"), "The formulas")
    assert "Where the formulas come from" in [h.value for h in at.subheader]
    k, a = at.session_state[state.CALC_K], at.session_state[state.CALC_ALPHA_PCT] / 100
    latex = " ".join(el.value for el in at.latex)
    assert f"= {analytics.expected_accepted_prefix(a, k):.2f}" in latex
    assert f"= {analytics.tokens_per_loop(a, k):.2f}" in latex
    assert "independently" in " ".join(m.value for m in at.markdown)
    share = kept_share_figure(a, k).data[-2].y  # the bold line of the chosen α
    assert list(share) == sorted(share, reverse=True) and share[0] == pytest.approx(a)


# ---- issue 23 --------------------------------------------------------------------------------------------
@pytest.fixture
def url_writes(monkeypatch):
    """How many times a script run told the browser about a new query string (each one is a history entry)."""
    from streamlit.runtime.state.query_params import QueryParams

    sent = [0]
    original = QueryParams._send_query_param_msg

    def counting(self):
        sent[0] += 1
        return original(self)

    monkeypatch.setattr(QueryParams, "_send_query_param_msg", counting)
    return sent


def test_arriving_from_another_page_writes_the_url_once_and_a_rerun_not_at_all(url_writes):
    """Issue 23 (1): every `st.query_params[name] =` pushed a browser history entry, so leaving /live for the
    calculator took four Back presses; the calculator now writes its three parameters in one update."""
    at = open_page("live.py", query={"k": "3", "prompt": "hello"})
    url_writes[0] = 0
    at.query_params.clear()  # as the browser does on a page switch
    at.switch_page(str(ROOT / "pages" / "calculator.py")).run()
    assert not at.exception
    # issue 39 (8): at the lesson's example the calculator writes nothing, so the page switch is the one history
    # entry and one Back returns to /live
    assert url_writes[0] == 0 and not at.query_params
    at.run()  # nothing changed: nothing written
    assert url_writes[0] == 0
    at.slider[K].set_value(9).run()
    assert url_writes[0] == 1 and dict(at.query_params) == {"k": "9", "alpha": "70", "c": "0.13"}
    at.switch_page(str(ROOT / "pages" / "live.py")).run()
    at.query_params.clear()
    url_writes[0] = 0
    at.switch_page(str(ROOT / "pages" / "calculator.py")).run()  # back with K = 9 kept: one update of all three
    assert url_writes[0] == 1 and dict(at.query_params) == {"k": "9", "alpha": "70", "c": "0.13"}


def test_a_stale_url_in_a_later_run_does_not_snap_the_sliders_back():
    """Issue 23 (2): a rerun sent by a quick second key press can carry the address from before the first
    press was written; the calculator then reset every slider to that old URL. The URL is read when the page
    is opened; after that the sliders win."""
    at = open_page("calculator.py")
    at.slider[K].set_value(9).run()
    assert at.query_params["k"] == "9"
    at.query_params["k"] = "4"  # the rerun of the next key press still carries the old address
    at.slider[ALPHA].set_value(60).run()
    assert not at.exception
    assert [s.value for s in at.slider] == [9, 60, 0.13]
    assert shown(at) == expected(9, 60, 0.13)
    assert at.query_params["k"] == "9" and at.query_params["alpha"] == "60"


def test_a_link_is_read_again_when_the_page_is_opened_again():
    at = open_page("calculator.py")
    at.slider[K].set_value(9).run()
    at.switch_page(str(ROOT / "pages" / "home.py")).run()
    at.query_params["k"] = "3"  # a link to the calculator, followed from another page
    at.switch_page(str(ROOT / "pages" / "calculator.py")).run()
    assert at.slider[K].value == 3 and shown(at) == expected(3, 70, 0.13)


@pytest.mark.parametrize(("typed", "used"), [(0.5, 1.0), (10.5, 10.0), (-3.0, 1.0)])
def test_a_typed_v_out_of_range_is_replaced_by_the_value_used_and_says_why(typed, used):
    """Issue 23 (4): the browser kept 0.5 in the box (a red outline, the reason in a tooltip) while every
    number used 1.00. Now the box shows the value used and a message says why."""
    at = open_page("calculator.py")
    at.number_input[0].set_value(typed).run()
    assert not at.exception
    assert at.number_input[0].value == used
    assert shown(at) == expected(4, 70, 0.13, used)
    notes = [w.value for w in at.warning]
    assert len(notes) == 1 and f"{typed:g}" in notes[0] and f"{used:.2f}" in notes[0] and "from 1 to 10" in notes[0]
    assert at.query_params.get("v") == (None if used == 1.0 else f"{used:.2f}")
    at.number_input[0].set_value(1.5).run()  # a good value right after: the note goes
    assert not at.warning and shown(at) == expected(4, 70, 0.13, 1.5)


def test_a_wrong_case_parameter_is_read_and_the_url_is_written_in_lower_case():
    """Issue 23 (a): `K=9` was silently ignored."""
    at = open_page("calculator.py", query={"K": "9", "Alpha": "55"})
    assert not at.exception and not at.warning
    assert [s.value for s in at.slider] == [9, 55, 0.13]
    assert at.query_params == {"k": "9", "alpha": "55", "c": "0.13"}


def test_only_the_open_tab_is_drawn_and_each_tab_draws_its_own_charts():
    """A key press redraws the open tab only; every tab still draws when opened, and the choice survives a
    slider move and a visit to another page."""
    from app import state

    at = open_page("calculator.py")
    charts = {}
    for label in state.CALC_TABS:
        open_tab(at, label)
        assert not at.exception
        charts[label] = len(at.get("plotly_chart"))
    assert charts == {"One loop": 2, "Choosing K": 4, "When v grows with K": 1, "Where it pays off": 1,
                      "The formulas": 1, "Backwards from a paper": 0}
    open_tab(at, "Where it pays off")
    at.slider[K].set_value(9).run()
    assert len(at.get("plotly_chart")) == 1 and any("Blue is faster" in m.value for m in at.markdown)
    at.switch_page(str(ROOT / "pages" / "home.py")).run()
    at.switch_page(str(ROOT / "pages" / "calculator.py")).run()
    assert at.session_state[state.widget_key(state.CALC_TAB)] == "Where it pays off"
    assert len(at.get("plotly_chart")) == 1


def test_a_page_writes_its_own_parameters_drops_other_pages_and_keeps_unknown_ones():
    """Back from the calculator to the live page once arrived with the calculator's α and c in the run's query;
    each page now drops the other pages' parameters when it writes its own, and keeps any no page owns."""
    at = open_page("calculator.py")
    for key, value in {"alpha": "55", "order": "01234.-----.0", "kq": "x", "prompt": "hi", "utm": "mail"}.items():
        at.query_params[key] = value
    at.slider[K].set_value(6).run()
    assert not at.exception
    assert at.query_params == {"k": "6", "alpha": "70", "c": "0.13", "utm": "mail"}


def test_choosing_k_offers_acceptance_measured_by_position():
    """Issue 38 (4): the Choosing-K tab computes tokens per loop from acceptance at each draft position, here the
    prose recording's, beside one α for every slot, and says by how much the geometric model is off."""
    from app import recording, state
    from specsim.core.trace import acceptance_given_reached
    from specsim.measure import analytics

    at = open_page("calculator.py")
    open_tab(at, "Choosing K")
    radio = at.radio(key=state.widget_key(state.CALC_POSITION_SOURCE))
    prose = next(o for o in radio.options if "Free prose" in o)
    radio.set_value(prose).run()
    assert not at.exception
    trace = recording.shipped_runs()["prose_run"].spec
    rates = acceptance_given_reached([trace], trace.k_max)
    k = at.slider[K].value
    t_pos = analytics.tokens_per_loop_by_position(rates, k)
    t_one = float(analytics.tokens_per_loop(trace.acceptance_rate, k))
    text = next(m.value for m in at.markdown if m.value.startswith("Measured on the recording"))
    assert " / ".join(f"{r:.2f}" for r in rates) in text
    assert f"**{t_pos:.2f}** tokens per loop" in text and f"gives {t_one:.2f}" in text
    at.slider[K].set_value(7).run()  # past the recording's K = 4: the last rate carries on, and it says so
    text = next(m.value for m in at.markdown if m.value.startswith("Measured on the recording"))
    assert f"**{analytics.tokens_per_loop_by_position(rates, 7):.2f}** tokens per loop" in text
    assert "take the last rate" in text


def test_the_calculator_opens_without_importing_torch():
    """The calculator is closed forms: its default tab imports neither torch nor transformers (on a fresh server
    they held up the first visit by 1.6 s). Only the tabs that read this machine's profile import them."""
    printed = app_in_a_new_process(
        "import sys\n"
        "# ---- the app\n"
        "at.switch_page('../pages/calculator.py')\n"
        "at.run()\n"
        "assert not at.exception, at.exception\n"
        "assert at.title[0].value == 'Speedup calculator', at.title\n"
        "print('heavy:', sorted(name for name in ('torch', 'transformers') if name in sys.modules))\n", timeout=60)
    assert "heavy: []" in printed, printed


def test_the_by_position_box_says_a_separate_draft_does_not_compound():
    """Issue 60, item 4: rⱼ of a separate draft is conditioned on kept guesses, so its context is the target's own
    text; compounding is what heads that feed back their own features or guess blind do."""
    at = open_page("calculator.py")
    open_tab(at, "Choosing K")
    text = next(m.value for m in at.markdown if m.value.startswith("**When α is not the same at every slot.**"))
    assert "the draft's own errors compound" not in text
    assert "nothing compounds" in text and "(EAGLE)" in text and "(Medusa)" in text


def test_a_drafter_that_guesses_all_k_in_one_pass_is_priced_by_one_pass_not_k():
    """Issue 60: Medusa's heads and PARD write K guesses in one pass; the K·c model does not price them."""
    from app import state
    from app.calculator import one_pass
    from specsim.measure import analytics

    at = open_page("calculator.py")
    open_tab(at, "Choosing K")
    at.slider(key=state.widget_key(state.CALC_ONE_PASS_COST)).set_value(0.2).run()
    assert not at.exception
    a, c, v = at.session_state[state.CALC_ALPHA_PCT] / 100, at.session_state[state.CALC_DRAFT_COST], \
        at.session_state[state.CALC_VERIFY_COST]
    text = next(m.value for m in at.markdown if "writes all K guesses in one pass of cost" in m.value)
    once = float(analytics.tokens_per_loop(a, 4)) / (0.2 + v)
    assert f"reaches {once:.2f}× at K = 4" in text and "K sequential passes" in text
    fig = one_pass.one_pass_figure(a, c, 0.2, v)
    chained, single = list(fig.data[0].y), list(fig.data[1].y)
    assert chained[0] == pytest.approx(float(analytics.speedup(a, 1, c, v)))
    assert single[3] == pytest.approx(once)
    assert single == sorted(single)  # one α for every slot and one v: a longer one-pass draft is never worse
    assert all(s >= ch for s, ch in zip(single, chained, strict=True)) is (0.2 <= c)


@pytest.mark.parametrize("k,alpha,refused", [(1, "85", False), (1, "20", True), (4, "70", True), (2, "99", False)])
def test_the_loop_caption_describes_the_loop_it_draws(k, alpha, refused):
    """A learner's review of the link from Variants (K = 1, α = 85 %): the caption said "writes its 1 guesses", "all 1
    with chance 85%", and spoke of a first ✗ and of grey guesses that the drawing did not have."""
    at = open_page("calculator.py", query={"k": str(k), "alpha": alpha})
    assert not at.exception
    captions = " ".join(c.value for c in at.caption)
    assert "its 1 guesses" not in captions and "all 1 with" not in captions
    assert ("The first ✗ is not a loss" in captions) == refused
    assert ("Here every guess is kept" in captions) == (not refused)
    assert "grey" not in captions or (k > 1 and refused)


@pytest.mark.parametrize("c,v,expect", [(0.0, 1.0, "stays white"), (0.13, 1.0, "red"), (0.0, 1.4, "red")])
def test_heatmap_sentence_follows_the_costs(c, v, expect):
    text = heatmap_sentence(CalcSettings(k=4, alpha_pct=70, draft_cost=c, verify_cost=v))
    assert expect in text
    if c == 0.0 and v == 1.0:
        assert "slower" not in text


def test_no_setting_of_the_calculator_can_make_a_useless_draft_faster_than_plain():
    """v below 1 (a pass over K + 1 tokens cheaper than a one-token pass) is refused: at α = 0 the best the
    calculator can show is 1×."""
    from app.calculator import params as calc_params
    from specsim.measure import analytics

    v_param = calc_params.BY_NAME["v"].number
    assert v_param.lo >= 1.0
    assert analytics.speedup(0.0, 1, 0.0, v_param.lo) <= 1.0
    assert calc_params.parse_query({"v": "0.5"}).settings.verify_cost >= 1.0


def test_the_calibrate_box_points_to_the_page_that_measures_v():
    """An early review: the box said v costs "a little more"; it says where v is measured instead."""
    at = open_page("calculator.py")
    text = " ".join(e.value for e in [*at.markdown, *at.caption])
    assert "a little more" not in text and "Is verification free here?" in text
    assert "surviv" not in text.lower()  # "survive" once meant two different things here and in the quiz


# ---- what each tab says --------------------------------------------------------------------------------------


def test_calculator_loop_caption_says_the_grey_scores_are_discarded():
    at = open_page("calculator.py")
    text = " ".join(c.value for c in at.caption)
    assert "never checked" not in text and "scores are discarded" in text
    intro = " ".join(m.value for m in at.markdown)
    assert "Four numbers decide" in intro and "Three numbers decide" not in intro


def test_the_roofline_is_defined_where_its_r_is_first_offered():
    from app import state
    from app.calculator import v_curve

    at = open_tab(open_page("calculator.py"), state.CALC_TABS[2])
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "v(n) = max(1, n / R)" in text and "ridge point R" in text
    assert any("roofline, R =" in name for name in v_curve.MODELS)


def test_the_calculators_position_box_opens_on_the_prose_recording_at_its_own_c():
    """It opened on the echo recording (r = 1.00 everywhere) priced at the slider's c = 0.13: "best K is 16"."""
    from app import recording
    from app.calculator import by_position
    from specsim.measure import costmodel

    at = open_tab(open_page("calculator.py"), "Choosing K")
    assert not at.exception
    run = recording.shipped_runs()["prose_run"]
    model = costmodel.cost_model([run.spec], [run.plain])
    line = next(m.value for m in at.markdown if m.value.startswith("Measured on"))
    assert line.startswith(f"Measured on {by_position.recording_label('prose_run', run)}")
    assert f"this run's own measured c = {model.draft_cost:.2f} and v = {model.verify_cost:.2f}" in line
    rates, _, own = by_position.sources()[by_position.recording_label("prose_run", run)]
    speeds = {k: analytics.speedup_by_position(rates, k, *own) for k in range(analytics.K_MIN, analytics.K_MAX + 1)}
    best = analytics.best_k(speeds)
    assert f"the best K is **{best}** ({speeds[best]:.2f}×) by position" in line
    assert best < analytics.K_MAX


def test_the_calculators_formulas_name_tau_beside_alpha():
    """The mean acceptance length τ, as production and papers report it, is named beside α and tokens per loop."""
    from app import state

    at = open_tab(open_page("calculator.py"), "The formulas")
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    a, k = at.session_state[state.CALC_ALPHA_PCT] / 100, at.session_state[state.CALC_K]
    assert "**3. Tokens per loop, τ.**" in text
    assert f"here α = {a:.2f} and τ = {float(analytics.tokens_per_loop(a, k)):.2f} tokens per loop" in text
    assert "mean acceptance length τ" in text and "some papers count only the kept guesses, E[j]" in text
    assert any(r"\tau = E[j] + 1" in x.value for x in at.get("latex"))


def test_tau_is_defined_once_where_the_calculator_opens():
    """A new learner's reading: τ was glossed three ways (the live page's "kept guesses plus the +1", Variants'
    "tokens per target pass", the hood's "mean acceptance length"), and the calculator, which the live page credits
    for it, never named it. The calculator's opening now defines it, with the speedup it divides."""
    at = open_page("calculator.py")
    opening = next(m.value for m in at.markdown if m.value.startswith("Four numbers decide"))
    assert "**τ**, the tokens one loop writes on average (the guesses kept plus the target's own +1 token)" in opening
    assert "**speedup**, τ over what a loop costs in target passes: K·c for the draft plus v for the check" in opening
