"""Under the hood (issue 38): the mechanics read off real runs, and the page that shows them (AppTest)."""

from __future__ import annotations

import itertools
import math

import pytest

from app import state
from specsim.core.trace import acceptance_given_reached
from specsim.lesson import hood, recorded
from specsim.measure import analytics
from tests.conftest import ROOT, open_page

RUNS = {r.name: recorded.load(r.path) for r in recorded.RECIPES}


@pytest.mark.parametrize("name", list(RUNS))
def test_each_row_of_the_pass_judges_the_next_guess_and_the_decisive_row_gives_the_plus_one(name):
    trace = RUNS[name].spec
    for step, it in enumerate(trace.iterations):
        rows = hood.verification_rows(trace, step)
        assert len(rows) == it.k + 1
        assert [r.position for r in rows] == list(range(it.context_len - 1, it.context_len + it.k))
        for r in rows[1:]:  # row i's input is guess i
            assert r.input_text == it.slots[r.index - 1].text
        for r in rows[:-1]:  # row i judges guess i + 1, with that guess's p and q
            slot = it.slots[r.index]
            assert r.judges == r.index + 1 and r.proposed.token_id == slot.token_id
            assert r.proposed.prob == slot.q and r.p_of_proposed == slot.p
        decisive = rows[hood.decisive_row(it)]
        assert "+1 token" in decisive.outcome
        kept = [r for r in rows if r.outcome == "kept"]
        assert len(kept) == it.n_accepted
        if step:  # the pass opens on the token the previous iteration ended with
            prev = trace.iterations[step - 1]
            assert rows[0].input_text == prev.extra.text or prev.emitted[-1] != prev.extra.token_id


@pytest.mark.parametrize("name", list(RUNS))
def test_the_last_row_shows_scores_only_when_they_were_recorded(name):
    """The last row's scores are the +1 token's only when every guess was kept. After a refusal the trace's
    extra_target_top belongs to the refused row: the last row showed them as its own (the lecturer's review found
    row 4 of a pass repeating row 0's top token and probability)."""
    trace = RUNS[name].spec
    refused = 0
    for step, it in enumerate(trace.iterations):
        last = hood.verification_rows(trace, step)[-1]
        if it.n_accepted == it.k:
            assert last.target_top == it.extra_target_top
        else:
            refused += 1
            assert last.target_top == ()
    assert refused or name == "win_run"


def test_the_mask_lets_each_row_see_the_cache_and_the_new_inputs_up_to_its_own():
    trace = RUNS["prose_run"].spec
    it = next(i for i in trace.iterations if i.k >= 3)
    labels, grid, hidden = hood.causal_mask(it, context_shown=4)
    assert hidden == it.context_len - 1 - 4 and len(labels) == 4 + it.k + 1
    for i, row in enumerate(grid):
        assert all(row[:4])  # the cached context
        assert row[4:] == [j <= i for j in range(it.k + 1)]  # no row reads a later guess
    from app.hood import figures

    fig = figures.mask_figure(labels, grid, hidden, hood.verification_rows(trace, trace.iterations.index(it)))
    # the columns are names, some of them numbers ("59") and some not ("63 (new)"): a category axis shows every one;
    # a numeric axis (plotly's guess from the numbers) dropped the new inputs' columns
    assert fig.layout.xaxis.type == "category" and list(fig.data[0].x) == labels


def test_derived_cache_lengths_follow_the_engine_convention():
    """Old recordings carry no cache lengths: the derived ones use the rule the engine records (tested against
    the real DynamicCache in tests/test_cache_lengths.py)."""
    for run in RUNS.values():
        for it in run.spec.iterations:
            story = hood.cache_story(it)
            c = story.lengths
            assert c.target_written - c.target_before == it.k + 1
            assert c.target_kept == c.target_before + 1 + it.n_accepted
            if it.caches is not None:
                assert story.recorded and c == it.caches


def test_overlap_and_position_model_agree_with_the_trace():
    trace = RUNS["prose_run"].spec
    overlaps = hood.slot_overlaps(trace)
    assert len(overlaps) == trace.n_checked
    assert sum(o.kept for o in overlaps) == trace.n_accepted
    # greedy: the chance is the 0/1 rule, so its mean is the measured alpha exactly
    assert hood.mean_chance(trace) == pytest.approx(trace.acceptance_rate)
    model = hood.position_model(trace)
    k = trace.settings.k
    assert model.by_position == pytest.approx(acceptance_given_reached([trace], k), nan_ok=True)
    assert model.geometric_tokens_per_loop == pytest.approx(float(analytics.tokens_per_loop(model.alpha, k)))
    assert model.error == pytest.approx(model.geometric_tokens_per_loop / trace.tokens_per_pass - 1)
    drafted = [it.k for it in trace.iterations]
    assert model.short_loops == sum(d < k for d in drafted)
    assert model.geometric_at_drafted_k == pytest.approx(
        sum(sum(model.alpha ** i for i in range(d + 1)) for d in drafted) / len(drafted))


def test_compute_per_token_is_positions_per_pass_over_tokens_per_loop():
    trace = RUNS["prose_run"].spec
    c = hood.compute_per_token(trace)
    passes = len(trace.iterations)
    assert c.target_tokens_per_emitted == pytest.approx(sum(i.k + 1 for i in trace.iterations) / passes
                                                        / trace.tokens_per_pass)
    assert c.target_tokens_per_emitted > 1  # speculation computes more per token than plain decoding
    assert not math.isnan(c.prefill_s)
    # a lecturer's reading: "4.79 ÷ 1.96 = 2.45×" divides two rounded means into a third; the page divides the
    # run's totals, which give the ratio exactly
    assert c.positions == sum(i.k + 1 for i in trace.iterations)
    assert c.tokens == sum(len(i.emitted) for i in trace.iterations)
    assert c.positions / c.tokens == pytest.approx(c.target_tokens_per_emitted)


def _page():
    at = open_page(None)
    at.switch_page(str(ROOT / "pages" / "hood.py")).run()
    assert not at.exception, at.exception
    return at


@pytest.fixture(scope="module")
def hood_page():
    """The page as it opens, shared by the tests that only read it."""
    return _page()


def test_the_page_dissects_each_recording_and_follows_the_iteration():
    at = _page()
    text = " ".join(m.value for m in at.markdown)
    assert "One pass, K + 1 answers" in " ".join(h.value for h in at.subheader)
    assert "1 − TV(p, q)" in text and "KV cache" in text
    charts = {c.proto.id for c in at.get("plotly_chart")}
    assert len(charts) >= 5
    for name in RUNS:
        at.radio(key=state.widget_key(state.HOOD_RUN)).set_value(name).run()
        assert not at.exception
        trace = RUNS[name].spec
        n = len(trace.iterations)
        at.slider(key=state.widget_key(state.HOOD_STEP)).set_value(n).run()
        it = trace.iterations[n - 1]
        table = at.dataframe[0].value
        assert len(table) == it.k + 1
        page = " ".join(m.value for m in at.markdown)
        assert f"{it.k + 1} positions in all" in page
        model = hood.position_model(trace)
        assert f"{model.geometric_tokens_per_loop:.2f}" in page and f"{model.tokens_per_loop:.2f}" in page
        short = f"{model.short_loops} of the run's {n} loops drafted fewer than {trace.settings.k} guesses"
        assert (short in page and f"{model.geometric_at_drafted_k:.2f}" in page) == (model.short_loops > 0)


def test_the_page_prefers_the_learners_own_live_run():
    spec = RUNS["win_run"].spec
    at = open_page(None)
    at.session_state[state.LIVE_TRACE] = spec
    at.session_state[state.LIVE_PLAIN] = RUNS["win_run"].plain
    at.switch_page(str(ROOT / "pages" / "hood.py")).run()
    assert not at.exception
    assert at.radio(key=state.widget_key(state.HOOD_RUN)).value == state.HOOD_LIVE



@pytest.mark.parametrize("name", list(RUNS))
def test_the_page_opens_on_an_iteration_that_drafted_and_refused(name):
    trace = RUNS[name].spec
    step = hood.teaching_step(trace)
    it = trace.iterations[step]
    refused = [i for i, loop in enumerate(trace.iterations) if loop.k >= 2 and loop.n_accepted < loop.k]
    # the prose recording refuses guesses; the winning one may keep every guess: then its first drafted pair
    assert refused or name == "win_run"
    assert it.k >= 2 and (it.n_accepted < it.k if refused else all(i.k < 2 for i in trace.iterations[:step]))
    assert all(not (i.k >= 2 and i.n_accepted < i.k) for i in trace.iterations[:step])
    at = _page()
    at.radio(key=state.widget_key(state.HOOD_RUN)).set_value(name).run()
    assert at.slider(key=state.widget_key(state.HOOD_STEP)).value == step + 1
    line = next(m.value for m in at.markdown if m.value.startswith("Row "))
    assert "\\*" not in line and "**" in line  # the +1 token in bold, not escaped asterisks


def test_the_three_k_policies_run_for_real_and_keep_plain_decodings_tokens():
    """The button runs plain decoding and each policy on the bundled target and its default draft (greedy):
    every policy writes plain decoding's tokens, the schedules differ in what they draft, and the table and the
    sentence show the runs' own counts."""
    from specsim.lesson import kpolicy_runs

    at = _page()
    at.button(key=state.HOOD_POLICIES_BUTTON).click().run(timeout=600)
    assert not at.exception, at.exception
    plain, runs = at.session_state[state.HOOD_POLICIES]
    assert [run.name for run in runs] == list(kpolicy_runs.POLICIES)
    assert all(run.identical for run in runs)
    fixed, schedule, confident = runs
    assert {it.k_planned for it in fixed.trace.iterations} == {4} and max(fixed.drafted) == 4  # the budget may cut
    # the last iterations short
    assert schedule.drafted != fixed.drafted and max(confident.drafted) <= 8
    for run in runs:  # K follows its own rule, iteration by iteration
        for before, after in itertools.pairwise(run.trace.iterations):
            if run.policy.schedule == "heuristic":
                assert after.k_planned == run.policy.next_k(before.k_planned, before.k, before.n_accepted)
    table = at.dataframe[-1].value
    assert list(table["target passes"]) == [run.trace.target_passes for run in runs]
    assert set(table["same tokens as plain decoding"]) == {"✓"}
    sentence = next(m.value for m in at.markdown if m.value.startswith("Plain decoding took"))
    assert f"{plain.target_passes} target passes for these {plain.n_decoded} tokens" in sentence



def test_each_rate_by_position_shows_the_loops_it_rests_on_and_a_thin_one_its_interval():
    """Issue 60, item 4: r₄ = 0.00 from two loops is noise; each rⱼ stands beside the loops that reached slot j."""
    from specsim.core.trace import checks_by_position
    from specsim.measure.proportion import wilson_interval

    trace = RUNS["prose_run"].spec
    model = hood.position_model(trace)
    kept, reached = checks_by_position([trace], model.k)
    assert (list(model.kept), list(model.reached)) == (kept, reached)
    text = hood.rates_sentence(model)
    subscript = "₁₂₃₄₅₆₇₈₉"
    for j, (hit, tried) in enumerate(zip(kept, reached, strict=True), start=1):
        assert f"r{subscript[j - 1]} = {hit / tried:.2f} ({hit} of {tried} loops)" in text
    thinnest = min(range(model.k), key=lambda i: (reached[i], -i))
    assert reached[thinnest] < hood.RATE_MIN_LOOPS
    low, high = wilson_interval(kept[thinnest], reached[thinnest])
    assert f"rests on {reached[thinnest]} loops, and its 95 % interval runs from {low:.2f} to {high:.2f}" in text


def test_the_page_says_a_separate_draft_does_not_compound_and_names_the_two_position_measures_apart():
    """Issue 60, item 4: a separate draft's rⱼ is conditioned on the target's own text; compounding belongs to
    heads that feed back their own features (EAGLE) or guess blind (Medusa). The hood's rⱼ and the live page's
    slot survival carry distinct names."""
    from app.hood import figures as hood_figs
    from app.live import figures as live_figs
    from specsim.lesson import replay

    at = _page()
    text = " ".join(m.value for m in at.markdown)
    assert "the draft's own errors compound" not in text
    assert hood.POSITION_INTRO in text and "nothing of its earlier mistakes carries over" in hood.POSITION_INTRO
    assert "(EAGLE)" in hood.POSITION_INTRO and "(Medusa)" in hood.POSITION_INTRO
    trace = RUNS[at.radio(key=state.widget_key(state.HOOD_RUN)).value].spec
    assert hood.rates_sentence(hood.position_model(trace)) in text
    hood_title = hood_figs.position_figure(hood.position_model(trace)).layout.title.text
    stats = replay.run_stats(trace)
    live_title = live_figs.kept_share_figure(stats.kept_share, stats.alpha).layout.title.text
    assert "Conditional acceptance rᵢ" in hood_title and live_title.startswith("Slot survival")
    assert "conditional acceptance rᵢ" in hood.POSITION_INTRO and "slot survival" in hood.POSITION_INTRO


def test_the_long_context_batch_says_when_its_cache_no_longer_fits_one_gpu():
    """A lecturer's review: B = 256 at 4,096 tokens keeps speculation paying, but its cache (137 GB) fits no single
    GPU; Serving and the interview said so, the hood did not."""
    from app.hood.view import long_context_sentence
    from specsim.lesson import roofline

    text = long_context_sentence(4)
    assert f"the cache alone is {roofline.kv_cache_gb(256, 4096):,.0f} GB" in text and "spread over several" in text


def test_under_the_hood_opens_on_the_prose_recording(hood_page):
    """It opened on the echo recording, where nothing is refused, no cache is cropped and no residual drawn."""
    assert hood.OPENING_RECORDING == "prose_run"
    assert hood_page.radio(key=state.widget_key(state.HOOD_RUN)).value == "prose_run"


def test_the_hood_mask_caption_says_in_exact_arithmetic(hood_page):
    caption = " ".join(c.value for c in hood_page.caption)
    assert "So the distribution at row i is exactly what plain decoding would compute" not in caption
    assert "in exact arithmetic" in caption


def test_the_hood_calls_the_runs_tokens_per_loop_its_tau(hood_page):
    text = " ".join(m.value for m in hood_page.markdown)
    assert "(its τ; papers and vLLM call it the mean acceptance length, and count the +1 in it)" in text


def test_the_hood_teaches_both_tree_rules_with_a_computed_example(hood_page):
    from specsim.variants import tree_rules

    text = " ".join(m.value for m in hood_page.markdown)
    assert "(SpecInfer; EAGLE-2): try the candidates at a node one after another, each accepted with min(1" not in text
    for fact in ("Candidates drawn independently from the draft's q", "SpecInfer, Miao et al., 2023",
                 "The draft's distinct top-k tokens", "EAGLE-2, Li et al., 2024",
                 "with probability p(x); after a refusal set p(x) = 0 and renormalise", "Mixing them up"):
        assert fact in text, fact
    p, q, k = tree_rules.EXAMPLE_P, tree_rules.EXAMPLE_Q, tree_rules.EXAMPLE_CANDIDATES
    wrong = tree_rules.specinfer_rule_on_top_k(p, q, k)
    assert ", ".join(f"{n} {x:.2f}" for n, x in zip("ABCD", wrong, strict=True)) + "), not p" in text


def test_acceptance_by_position_can_rise_or_fall_and_the_hood_shows_the_measured_rates():
    """The prose recording's rates fall (0.58 / 0.54 / 0.29 / 0.00): the pages no longer say real drafts are "kept more
    often deeper into the draft", nor "Part of that is not about α" where the short loops explain none of it; the
    hood shows each measured rate."""
    from tests.conftest import open_tab

    prose = recorded.load(next(r.path for r in recorded.RECIPES if r.name == "prose_run")).spec
    rates = hood.position_model(prose).by_position
    assert any(b < a for a, b in zip(rates, rates[1:], strict=False) if not (math.isnan(a) or math.isnan(b)))
    at = open_page("hood.py")
    at.radio(key=state.widget_key(state.HOOD_RUN)).set_value("prose_run").run()
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "kept more often deeper" not in text and "Part of that is not about α" not in text
    assert "can rise" in text and "noisier" in text and "On this run they fall rather than rise" in text
    subscript = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
    for j, r in enumerate(rates, start=1):
        if not math.isnan(r):
            assert f"r{str(j).translate(subscript)} = {r:.2f} (" in text
    calc = open_tab(open_page("calculator.py"), "Choosing K")
    calc_text = " ".join(m.value for m in calc.markdown)
    assert "kept more often deeper" not in calc_text and "can rise along the draft" in calc_text


@pytest.mark.parametrize("name", list(RUNS))
def test_every_colour_of_the_rows_chart_has_its_legend_entry(name):
    """A new learner's reading: the judged guess's bars take their verdict's colour (green, red, grey), and the
    legend showed one colour for all of them. Each verdict drawn now has its own entry, in its colour."""
    from app.hood import figures

    trace = RUNS[name].spec
    step = hood.teaching_step(trace)
    rows = hood.verification_rows(trace, step)
    fig = figures.rows_figure(rows)
    judged = next(t for t in fig.data if t.name == "the guess this row judges: p")
    drawn = {colour for colour, r in zip(judged.marker.color, rows, strict=True) if r.proposed is not None}
    legend = {t.marker.color: t.name for t in fig.data if t.showlegend is not False and t.offsetgroup == "guess"}
    assert set(legend) == drawn and all(name.startswith("the guess this row judges: p, ") for name in legend.values())
    it = trace.iterations[step]
    if it.n_accepted < it.k:
        assert any(n.endswith("refused") for n in legend.values())
