"""The home page through AppTest: the idea, the loop, the key insight, the published figures, the links."""

from __future__ import annotations

from specsim.core.published import CHEN_2023
from tests.conftest import ROOT, open_page


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
    assert len(fig.data[0].x) == len(fig.data[1].x) == 5 and fig.data[1].text[-1] == "the +1<br>token"


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
    assert "**At small batch, decoding is limited by memory, not arithmetic.**" in text
    assert "in their distributed setup, where every layer pays fixed costs" in text
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
