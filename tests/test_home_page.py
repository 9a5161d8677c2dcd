"""The home page through AppTest: the idea, the loop, the key insight, the published figures, the links."""

from __future__ import annotations

import pytest

from app.calculator import text as calc_text
from app.settings import CalcSettings
from specsim.core import published
from specsim.core.published import CHEN_2023
from specsim.measure import analytics
from tests.conftest import ROOT, open_page


@pytest.fixture(scope="module")
def home_page():
    """The page as it opens, shared by the tests that only read it."""
    at = open_page()
    assert not at.exception
    return at


def test_home_teaches_the_loop_and_the_key_insight():
    at = open_page()
    assert not at.exception
    text = "\n".join(m.value for m in at.markdown)
    for step in ("**Draft.**", "**Verify.**", "**Accept.**", "**Add one.**"):
        assert step in text
    for fact in ("parallel", "easy", "memory"):
        assert fact in text
    assert any("j + 1, never zero" in s.value for s in at.success)
    assert [h.value for h in at.subheader][:3] == ["One pass checks every guess", "The loop, in four steps",
                                                   "Three facts that make it work"]


def test_home_quotes_the_papers_and_computes_the_draft_cost_from_them():
    at = open_page()
    text = "\n".join(m.value for m in at.markdown)
    assert "Chinchilla 70B" in text and "T5-XXL" in text
    assert f"{CHEN_2023.draft_ms_per_token} ms against {CHEN_2023.target_ms_per_token} ms" in text
    assert f"{CHEN_2023.target_ms_per_token / CHEN_2023.draft_ms_per_token:.1f}× quicker" in text
    assert f"= {CHEN_2023.draft_ms_per_token / CHEN_2023.target_ms_per_token:.2f} of a target pass" in text


def test_home_shows_that_one_pass_predicts_at_every_position_before_the_loop():
    """Issue 61: the mechanism (a prediction at every input position) is on the first page, with a picture."""
    from app.home.figures import one_pass_figure

    at = open_page()
    text = "\n".join(m.value for m in at.markdown)
    assert text.index("predicts, at *every* position") < text.index("**Draft.**")
    fig = one_pass_figure(4)
    read = [x for t in fig.data if t.y[0] == 0 for x in t.x]
    predicted = [x for t in fig.data if t.y[0] == 1 for x in t.x]
    assert sorted(read) == sorted(predicted) == [0, 1, 2, 3, 4]
    plus_one = next(t for t in fig.data if t.name.startswith("the +1 token"))
    assert list(plus_one.x) == [4] and list(plus_one.text) == ["the +1<br>token"]
    # a new learner's reading: the legend named grey and orange only; every colour on the chart now has its entry
    colours = {t.marker.color for t in fig.data}
    assert len(colours) == len(fig.data) == 4 and all(t.showlegend is not False for t in fig.data)


def test_home_defines_the_words_the_next_pages_use():
    at = open_page()
    text = "\n".join(m.value for m in at.markdown)
    for word in ("**Prefill**", "**KV cache**", "**Memory-bound**", "**Batch**"):
        assert word in text


def test_home_draws_the_loop_and_ends_on_the_next_page():
    at = open_page()
    assert at.get("plotly_chart"), "the loop figure"
    assert at.get("page_link")[-1].proto.label == "Next: Speedup calculator"


def test_the_ideas_claims_carry_their_conditions_where_they_first_appear():
    """Issue 60: identical greedy tokens hold in exact arithmetic; memory-bound decoding at small batch; depth over
    parameters where per-layer fixed costs dominate; the +1 token after a rejection comes from the residual."""
    at = open_page()
    text = "\n".join(m.value for m in at.markdown)
    first_greedy = text.index("the same tokens under greedy decoding")
    assert text.index("in exact arithmetic", first_greedy) - first_greedy < 60
    assert "**At small batch, on a GPU, decoding a large model is limited by memory, not arithmetic.**" in text
    assert "a CPU that runs short of arithmetic, a large batch" in text  # and where that does not hold
    assert "the check looks free, but the draft pays a launch for every kernel too" in text  # launch-bound: c, not v
    assert "a draft pass costs about its share of the target's layers, not its much smaller share of the bytes" in text
    assert " c " not in text[text.index("**At small batch"):text.index("measures it.")]  # c is defined further down
    assert "in their distributed setup every layer pays fixed costs" in text
    assert "pays mostly for the bytes of weights it reads" in text
    step4 = text[text.index("**Add one.**"):text.index("One loop therefore")]
    assert "*residual*" in step4 and "after a" in step4


def test_the_home_page_does_not_link_the_ordering_quiz_under_the_list_that_answers_it():
    """Issue 61: "Try it: order the steps of one round" sat right under the numbered loop it asks for; the quiz
    comes at the end of the path (the sidebar and each page's Next link reach it)."""
    at = open_page()
    assert not at.exception
    links = [e.proto.page for e in at.get("page_link")]
    assert "sequence" not in links and not any(e.proto.label.startswith("Try it") for e in at.get("page_link"))


def test_a_setting_that_does_not_parse_is_named_on_the_page_not_raised(monkeypatch):
    """Every SPECSIM_* variable is read by one class (issue 63); a value it cannot read stops the app with a message
    that names the variable, instead of a traceback from whichever page read it first."""
    from streamlit.testing.v1 import AppTest

    from specsim.core.environment import env_name

    monkeypatch.setenv(env_name("queue_limit"), "many")
    at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=60).run()
    assert not at.exception, at.exception
    assert len(at.error) == 1 and "SPECSIM_QUEUE_LIMIT" in at.error[0].value and "'many'" in at.error[0].value
    monkeypatch.setenv(env_name("queue_limit"), "3")
    at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=60).run()
    assert not at.exception and not at.error


# ---- what the page claims, and the conditions it claims them under --------------------------------------------


def test_home_says_greedy_keeps_the_tokens_and_sampling_the_distribution(home_page):
    text = " ".join(m.value for m in home_page.markdown)
    assert "without changing a single token" not in text
    assert "The book comes out word for word as the author would have dictated it alone" not in text
    assert "the same tokens under greedy decoding (in exact arithmetic" in text
    assert "text drawn from the same distribution when sampling" in text


def test_home_verify_step_scores_k_plus_one_positions(home_page):
    steps = next(m.value for m in home_page.markdown if "**Verify.**" in m.value)
    verify = steps.split("**Verify.**")[1].split("\n")[0]
    assert "K + 1 positions" in verify and "all K proposed positions" not in verify


def test_home_caption_calls_the_grey_slots_never_checked_as_the_chart_does(home_page):
    from app.calculator.figures import iteration_figure

    caption = " ".join(c.value for c in home_page.caption)
    assert "discarded (grey)" not in caption and "never checked (grey)" in caption
    assert any(t.name == "never checked" for t in iteration_figure(4, 2).data)


def test_home_caption_says_the_pass_scored_the_grey_slots_and_discarded_them(home_page):
    """The grey slots are named as the chart's legend names them, "never checked", and the caption still says the pass
    scored them and threw the scores away."""
    caption = " ".join(c.value for c in home_page.caption)
    assert "scored" in caption and "never checked (grey)" in caption and "scores are discarded" in caption


def test_home_key_insight_computes_what_a_useless_draft_costs_without_undefined_symbols(home_page):
    insight = next(s.value for s in home_page.success if "Key insight" in s.value)
    lesson = CalcSettings()
    worst = calc_text.fmt(analytics.speedup(0.0, lesson.k, lesson.draft_cost, lesson.verify_cost))
    assert f"{worst}× plain speed" in insight and worst == "0.66"  # the lesson's own K = 4, c = 0.13
    assert "K·c" not in insight and "(v − 1)" not in insight  # c and v are not defined on the home page
    assert "small and bounded downside" not in insight and "switch it off" in insight
    # a learner's reading: "the loss is bounded" at 0.66× read as the bound, and Variants then shows early exit at
    # 0.50×; the floor is one token for a loop's cost, which is lower where the check costs more than a pass
    assert "the slowdown is bounded: at worst each loop still writes one token" in insight and "slower still" in insight


def test_home_says_chens_draft_was_shallow_because_latency_follows_depth(home_page):
    text = " ".join(m.value for m in home_page.markdown)
    assert CHEN_2023.draft_layers == 8 and CHEN_2023.target_layers == 80
    assert f"{CHEN_2023.draft_layers} layers against the target's {CHEN_2023.target_layers}" in text
    assert "the layers run one after another more than the parameter count" in text


def test_home_states_the_papers_speedups(home_page):
    text = " ".join(m.value for m in home_page.markdown)
    assert f"{published.LEVIATHAN_SPEEDUP.figure} on **T5-XXL**" in text
    assert f"the abstract rounds it to {published.CHEN_SPEEDUP.figure}" in text and "Chinchilla 70B" in text
    assert f"{published.CHEN_XSUM.speedup:.2f}× faster" in text and "more than halved" not in text  # 1.92×: 52 %
    assert published.FU_SPEEDUP.claim in text and published.MEDUSA_1_SPEEDUP.claim in text
    assert "a similar gain" not in text


def test_leviathan_is_dated_as_venue_and_preprint(home_page):
    assert published.LEVIATHAN_2023.when == "ICML 2023; arXiv 2022"
    assert any("Leviathan et al. (ICML 2023; arXiv 2022)" in m.value for m in home_page.markdown)
