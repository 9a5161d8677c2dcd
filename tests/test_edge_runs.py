"""Every page that replays a run, on runs the recordings do not cover (issue 51).

The traces are real: :mod:`tests.edge_runs` records them with the engine on tiny models. Each is opened on the live
page (the player, why this speed, be the draft, the whole run), then under the hood, then in the calculator through
the live page's link and on the verify page. No page may raise, and each number a page prints about the run is
checked against the trace and :mod:`specsim.measure.costmodel`, computed here from the trace, not read back from the
page's
own helpers.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

import pytest

from app import state
from specsim.lesson import explain, replay
from specsim.measure import analytics, fairtime
from specsim.measure.costmodel import cost_model
from tests import edge_runs
from tests.conftest import ROOT, open_page

pytestmark = pytest.mark.timeout(300)


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _texts(at) -> str:
    return "\n".join(e.value for kind in ("markdown", "caption", "info", "success", "warning", "error")
                     for e in getattr(at, kind))


def _mean_positions(spec) -> float:
    return sum(it.k + 1 for it in spec.iterations) / len(spec.iterations)


def _tokens_per_loop(spec) -> float:
    """Counted here: the loops' tokens (every token but the prefill's) over the loops."""
    return sum(len(it.emitted) for it in spec.iterations) / len(spec.iterations)


def _alpha(spec) -> float:
    checked = [s for it in spec.iterations for s in it.slots if s.status != "unchecked"]
    return sum(s.status == "accepted" for s in checked) / len(checked) if checked else 0.0


def _k_max(spec) -> int:
    """The run's largest K: the setting, or more where an adaptive policy planned or drafted more."""
    return max([spec.settings.k, *(it.k for it in spec.iterations),
                *(it.k_planned for it in spec.iterations if it.k_planned is not None)])


@pytest.mark.parametrize("name", edge_runs.NAMES)
def test_every_page_replays_the_edge_run_and_prints_the_traces_numbers(name):
    spec, plain = edge_runs.run(name)
    assert spec is not None and max((it.k for it in spec.iterations), default=0) <= 16  # K never leaves 1..16

    # ---- the live page ----
    at = open_page("live.py")
    at.session_state[state.LIVE_TRACE] = spec
    at.session_state[state.LIVE_PLAIN] = plain
    at.run()
    assert not at.exception, at.exception
    live = _metrics(at)
    live_text = _texts(at)
    if not spec.iterations:
        assert "This run has no iterations to replay." in live_text
    else:
        assert live["measured acceptance α"] == f"{100 * _alpha(spec):.1f} %"
        assert live["tokens per loop, τ"] == f"{_tokens_per_loop(spec):.2f}"
        model = cost_model([spec], [plain])
        assert live["cost model"] == f"{model.speedup:.2f}×"
        assert live["speedup vs plain decoding"] == f"{fairtime.fair_speedup([(spec, plain)]).headline:.2f}×"
        assert explain.budget_sentence(model) in live_text  # why this speed reads the same cost model
        if replay.is_greedy(spec):
            assert replay.identity_guarantee(spec.settings, max(it.k for it in spec.iterations) + 1) in live_text
        if spec.settings.k_schedule != "fixed" or spec.settings.stop_below:
            shown = ", ".join(str(it.k) for it in spec.iterations[:40])
            assert f"Guesses drafted per iteration: {shown}" in live_text
        closed = f"{float(analytics.tokens_per_loop(_alpha(spec), _k_max(spec))):.2f}"
        assert f"K = {_k_max(spec)} gives E[j] + 1 = {closed} tokens per loop" in live_text
        link = re.search(r"\[Open the calculator at this run's α, K, c and v\]\(([^)]+)\)", live_text)
        assert link is not None

    # ---- under the hood: the page prefers the learner's own run ----
    at.switch_page(str(ROOT / "pages" / "hood.py")).run()
    assert not at.exception, at.exception
    assert at.radio(key=state.widget_key(state.HOOD_RUN)).value == state.HOOD_LIVE
    hood_text = _texts(at)
    if not spec.iterations:
        assert "This run has no iterations to take apart" in hood_text
    else:
        hood_metrics = _metrics(at)
        positions, t = _mean_positions(spec), _tokens_per_loop(spec)
        draft_passes = 0 if spec.settings.drafter == "prompt_lookup" else sum(
            not s.copied for it in spec.iterations for s in it.slots)
        assert hood_metrics["Target positions computed per token written"] == f"{positions / t:.2f}"
        assert hood_metrics["Draft passes per token written"] == f"{draft_passes / (spec.n_generated - 1):.2f}"
        # the compute sentence's arithmetic holds as printed
        loops = len(spec.iterations)
        total_positions, total_tokens = round(positions * loops), round(t * loops)
        assert f"{total_positions:,} positions ÷ {total_tokens:,} tokens = {total_positions / total_tokens:.2f}×" \
            in hood_text
        assert f"{positions:.2f} positions per pass on average" in hood_text
        if replay.is_greedy(spec) and any(it.slots for it in spec.iterations):
            assert f"measured α {_alpha(spec):.2f}" in hood_text  # the same α as the live page's, to its digits
        step = at.slider(key=state.widget_key(state.HOOD_STEP)).value - 1 if len(spec.iterations) > 1 else 0
        it = spec.iterations[step]
        # the calculator's tokens per loop for this run: the same K and α as the live page's sentence
        assert f"K = {_k_max(spec)}, the calculator's tokens per loop is {closed}" in hood_text
        if it.k == 0:
            assert "there was no guess to check" in hood_text and "every guess was kept" not in hood_text

    # ---- the calculator, opened by the live page's link; the verify page ----
    if spec.iterations:
        query = dict(parse_qsl(urlsplit(link.group(1)).query))
        calc = open_page("calculator.py", query=query)
        assert not calc.exception, calc.exception
        assert not calc.warning, [w.value for w in calc.warning]  # the link's every value is in range
    at.switch_page(str(ROOT / "pages" / "verify.py")).run()
    assert not at.exception, at.exception


def test_prompt_lookup_runs_no_draft_pass_and_its_recording_says_so():
    """Issue 51: the prompt-lookup recording showed 0.75 draft passes per token written."""
    from specsim.lesson import hood, recorded

    win = recorded.load(next(r.path for r in recorded.RECIPES if r.drafter == "prompt_lookup"))
    assert win.spec.n_proposed > 0 and win.spec.draft_passes == 0
    assert hood.compute_per_token(win.spec).draft_passes_per_emitted == 0
    model = cost_model([win.spec], [win.plain])
    assert model.copies and "copied guesses" in model.drafting_words() and "draft passes" not in \
        model.drafting_words()
    lookup, _ = edge_runs.run("prompt lookup, loops with nothing to copy")
    assert all(s.copied for it in lookup.iterations for s in it.slots)  # the drafter marks its copies now


@pytest.mark.parametrize("recording", ["win_run", "prose_run"])
def test_the_compute_sentence_divides_what_it_says(recording):
    """Issue 51: "K + 1 = 5 positions to write 4.00 tokens … 1.00×" (5 ÷ 4.00 is 1.25): the page now names the
    average positions per pass it divides, and the quotient it prints is that division."""
    from specsim.lesson import hood, recorded

    spec = recorded.load(next(r.path for r in recorded.RECIPES if r.name == recording)).spec
    c = hood.compute_per_token(spec)
    assert c.positions_per_pass == pytest.approx(_mean_positions(spec))
    assert f"{c.target_tokens_per_emitted:.2f}" == f"{_mean_positions(spec) / _tokens_per_loop(spec):.2f}"
    assert c.longest_pass == max(it.k for it in spec.iterations) + 1
