"""AppTest for the why-the-output-is-unchanged page: numbers follow the sliders and presets."""

from __future__ import annotations

import json

import numpy as np

from app import state
from app.unchanged import pq
from specsim.lesson import unchanged
from tests.conftest import open_page


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _expected(weights) -> str:
    return f"{unchanged.accepted_mass(pq.TARGET_P, unchanged.normalise(weights)):.3f}"


def test_page_opens_with_the_default_draft():
    at = open_page("unchanged.py")
    assert not at.exception and not at.error
    weights = state.DEFAULTS[state.PQ_WEIGHTS]
    assert _metrics(at)["chance a guess is kept, Σ min(p, q)"] == _expected(weights)
    assert "The proof in three lines" in [h.value for h in at.subheader]
    assert any("χ²" in m.value and "4 degrees of freedom" in m.value for m in at.markdown)


def test_presets_and_sliders_change_q():
    at = open_page("unchanged.py")
    at.button(key="pq_preset_draft agrees (q = p)").click().run()
    assert _metrics(at)["chance a guess is kept, Σ min(p, q)"] == "1.000"
    assert _metrics(at)["chance of a rejection, 1 − Σ min(p, q)"] == "0.000"
    at.slider(key=state.pq_slider_key(1)).set_value(90).run()
    weights = (45, 90, 15, 10, 5)
    assert at.session_state[state.PQ_WEIGHTS] == weights
    assert _metrics(at)["chance a guess is kept, Σ min(p, q)"] == _expected(weights)
    table = at.dataframe[0].value
    q = unchanged.normalise(weights)
    assert list(table["draft q"]) == [round(float(x), 3) for x in q]


def test_a_draft_that_proposes_nothing_is_refused_with_a_message():
    at = open_page("unchanged.py")
    for i in range(len(pq.LABELS)):
        at.slider(key=state.pq_slider_key(i)).set_value(0)
    at.run()
    assert not at.exception
    assert any("positive weight" in e.value for e in at.error)


def test_sampled_check_uses_the_seed():
    at = open_page("unchanged.py")
    first = next(m.value for m in at.markdown if "χ²" in m.value)
    box = at.text_input(key=state.widget_key(state.PQ_SEED_TEXT))
    box.set_value("5").run()
    second = next(m.value for m in at.markdown if "χ²" in m.value)
    assert first != second
    draws = unchanged.speculative_draws(pq.TARGET_P, unchanged.normalise(at.session_state[state.PQ_WEIGHTS]),
                                        10_000, seed=5)
    stat = unchanged.chi_square(np.bincount(draws, minlength=5), pq.TARGET_P).statistic
    assert f"χ² = {stat:.2f}" in second
    # Issue 39 (7): -5 or 2**31 stayed in the box, in red, while the χ² used the previous seed without a word
    for bad in ("-5", "2147483648", "seven", "1.5"):
        box.set_value(bad).run()
        assert not at.exception
        told = " ".join(e.value for e in at.error)
        assert f"not '{bad}'" in told and "still use seed 5" in told
        assert next(m.value for m in at.markdown if "χ²" in m.value) == second


def test_the_overlap_is_tied_to_total_variation_and_temperature():
    at = open_page("unchanged.py")
    at.button(key="pq_preset_draft too sure of one token").click().run()
    q = unchanged.normalise(at.session_state[state.PQ_WEIGHTS])
    tv = unchanged.total_variation(pq.TARGET_P, q)
    sentence = next(m.value for m in at.markdown if "total variation distance" in m.value)
    assert f"TV(p, q) = ½ Σ |p − q| = {tv:.3f}" in sentence
    assert f"{1 - tv:.3f} = Σ min(p, q)" in sentence
    headings = [h.value for h in at.subheader]
    assert "Temperature moves α" in headings and "From one guess to the whole block" in headings
    chart = next(c for c in at.get("plotly_chart") if c.proto.id.endswith(state.PQ_TEMPERATURE_CHART))
    names = [trace["name"] for trace in json.loads(chart.proto.spec)["data"]]
    assert "greedy (T → 0): 0" in names  # the two top tokens differ: greedy keeps nothing
    assert f"T = 1, the bars above: {unchanged.accepted_mass(pq.TARGET_P, q):.3f}" in names


def test_the_whole_block_check_runs_the_engine_and_reports_its_chi_square():
    from app.unchanged.block import RUNS
    from specsim.lesson import blockcheck

    at = open_page("unchanged.py")
    assert at.session_state[state.PQ_BLOCK_CHECK] is None
    at.button(key=state.PQ_BLOCK_BUTTON).click().run(timeout=300)
    assert not at.exception
    result = at.session_state[state.PQ_BLOCK_CHECK]
    assert result.runs == RUNS == sum(result.counts.values()) == sum(result.block_ends.values())
    assert set(result.block_ends) == set(range(blockcheck.K + 1))  # every way a block can end
    assert result.test.p_value > 0.01  # the engine's rule keeps the target's joint distribution
    sentence = next(m.value for m in at.markdown if m.value.startswith(f"{RUNS} runs: χ²"))
    assert f"χ² = {result.test.statistic:.2f} on {result.test.dof} degrees of freedom" in sentence
    assert "consistent with the target's own joint distribution" in sentence
    table = at.dataframe[-1].value
    assert list(table["written"]) == [written for _, written, _ in result.top_pairs()]


def test_top_k_and_top_p_cut_both_alike_and_the_page_says_what_comes_out():
    """Issue 55, item 3: the page teaches the cut on p and q alike, with figures from the engine's warp."""
    import numpy as np

    from app.unchanged import pq, warp
    from specsim.lesson import unchanged
    from tests.conftest import open_page

    at = open_page("unchanged.py")
    assert not at.exception
    assert any("the target must be cut, the draft may be" in h.value for h in at.subheader)
    p = np.array(pq.TARGET_P)
    q = unchanged.normalise(at.session_state["pq_weights"])
    shown = warp.cut_sentence(p, q, warp.TOP_K, warp.TOP_P)
    assert any(m.value == shown for m in at.markdown)
    alpha = unchanged.accepted_mass(unchanged.warped(p, 1.0, warp.TOP_K, warp.TOP_P),
                                    unchanged.warped(q, 1.0, warp.TOP_K, warp.TOP_P))
    assert f"α = Σ min(p′, q′) = {alpha:.3f}" in shown
    at.slider(key="pq_top_k").set_value(1).run()
    one = warp.cut_sentence(p, q, 1, warp.TOP_P)
    assert any(m.value == one for m in at.markdown) and "keeps 1 of the 5 tokens" in one
    # with the draft too sure of another token, its cut q keeps a token the cut p lacks: always rejected
    too_sure = unchanged.normalise(pq.PRESETS["draft too sure of one token"])
    assert "always rejected" in warp.cut_sentence(p, too_sure, 1, 1.0)


def test_only_the_target_must_be_cut_and_the_drafts_cut_is_a_choice_with_a_computed_effect():
    """Issue 60, item 3: the proof holds for any q, so only p must be cut; cutting q too only moves α."""
    from app.unchanged import warp

    at = open_page("unchanged.py")
    text = " ".join(m.value for m in at.markdown)
    assert "Cutting only one side would break the rule" not in text
    assert "Only the target must be cut" in text and "is a choice, not part of the rule" in text
    p = np.array(pq.TARGET_P)
    for weights in pq.PRESETS.values():
        q = unchanged.normalise(weights)
        for k, top_p in ((3, 0.9), (2, 0.5), (1, 1.0)):
            sentence = warp.cut_sentence(p, q, k, top_p)
            p_cut = unchanged.warped(p, 1.0, k, top_p)
            uncut = unchanged.accepted_mass(p_cut, q)
            cut = unchanged.accepted_mass(p_cut, unchanged.warped(q, 1.0, k, top_p))
            assert "Only the target must be cut" in sentence
            if abs(cut - uncut) >= 5e-4:
                verb = "raises" if cut > uncut else "lowers"
                assert f"cutting it {verb} α here, from Σ min(p′, q) = {uncut:.3f} to {cut:.3f}" in sentence
            else:
                assert "leaves α where it is" in sentence


def test_block_verification_is_named_beside_the_token_wise_rule_with_its_claim_as_data():
    """Issue 60: token-wise rejection is not the only lossless rule a learner meets; block verification (Sun et al.,
    2024) is lossless and never worse in expected tokens per loop, its figures from specsim.core.published."""
    from app.unchanged import block
    from specsim.core import published as pub

    text = block.block_verification_text()
    assert f"Block verification ({pub.BLOCK_VERIFICATION_CITATION})" in text
    assert "Sun et al., 2024" in pub.BLOCK_VERIFICATION_CITATION
    assert "follows the target just as exactly" in text and "never lower than token-wise verification's" in text
    assert f"{pub.BLOCK_VERIFICATION_TOKENS.figure} more tokens per loop" in text
    assert f"{pub.BLOCK_VERIFICATION_SPEEDUP.figure} faster" in text
    at = open_page("unchanged.py")
    assert not at.exception
    assert text in [m.value for m in at.markdown]


def test_the_measured_temperature_curve_says_it_was_read_on_greedy_answers():
    """Issue 60: α against temperature was measured at the positions of the target's greedy answers, the same text at
    every T; the sentence and the chart both say so."""
    m = unchanged.measured_overlap()
    at = open_page("unchanged.py")
    sentence = next(x.value for x in at.markdown if "Measured on this app's own pair" in x.value)
    assert "the target's greedy answers" in sentence and "not text sampled at that T" in sentence
    measured = " ".join(x.value for e in at.expander if e.label == "How this was measured" for x in e.markdown)
    assert (f"over {m.positions:,} positions of the target's greedy answers to {m.prompts} held-out prompts, the same "
            "text read at every T" in measured)  # the counts sit under "How this was measured" (a review)
    assert f"{m.positions:,}" not in sentence
    chart = next(c for c in at.get("plotly_chart") if c.proto.id.endswith(state.PQ_MEASURED_CHART))
    spec = json.loads(chart.proto.spec)
    assert "greedy answers" in spec["layout"]["title"]["text"]
    assert f"all {m.positions:,} positions of greedy answers" in [t["name"] for t in spec["data"]]


def test_why_unchanged_shows_the_measured_curve_beside_the_toy_and_corrects_the_sentence():
    """The sentence "High T flattens both, and the overlap rises" held for the toy only: a real pair keeps fewer
    guesses at T = 1 than greedy, and the page shows its measured curve beside the toy's."""
    at = open_page("unchanged.py")
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "High T flattens both, and the overlap rises" not in text
    m = unchanged.measured_overlap()
    assert "Real pairs usually go the other way" in text
    assert (f"α = {m.greedy:.3f} greedy, {m.at(1.0):.3f} at T = 1 and {m.at(2.0):.3f} at T = 2" in text)
    assert f"{m.positions:,} positions of the target's greedy answers to {m.prompts} held-out prompts" in text
    assert "T = 1 keeps fewer guesses than greedy here" in text
    chart = next(c for c in at.get("plotly_chart") if c.proto.id.endswith(state.PQ_MEASURED_CHART))
    names = [trace["name"] for trace in json.loads(chart.proto.spec)["data"]]
    assert f"greedy (T = 0): {m.greedy:.3f}" in names and f"T = 1: {m.at(1.0):.3f}" in names
    assert any(c.proto.id.endswith(state.PQ_TEMPERATURE_CHART) for c in at.get("plotly_chart"))  # the toy stays
