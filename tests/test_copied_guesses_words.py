"""A hybrid drafter's loop proposes more guesses than it runs draft passes: the copied ones cost none. Where the
live page shows the draft passes of an average loop, it says so, so "3.3 draft passes" beside "proposed 3.79 tokens"
is no puzzle (a learner's review)."""

from __future__ import annotations

from app import recording
from app.live import why_figures
from specsim.lesson.explain import decider_sentence
from specsim.measure import analytics
from specsim.measure.costmodel import CostModel, cost_model


def loop(k: float, draft_passes: float, c: float = 0.3) -> CostModel:
    return CostModel(k_max=4, k=k, draft_passes=draft_passes, alpha=0.5,
                     tokens_per_loop=float(analytics.tokens_per_loop(0.5, 4)), plain_pass_s=0.01, draft_cost=c,
                     verify_cost=1.0, verify_cost_raw=1.0, other_cost=0.0, plain_tokens_per_s=1.0,
                     spec_tokens_per_s=1.0)


def test_the_legend_names_the_copied_guesses_beside_the_draft_passes():
    words = loop(3.8, 3.3).drafting_words()
    assert words == "3.8 guesses on average: 3.3 from draft passes, 0.5 copied from the text, which needs no draft " \
        "pass (K·c)"
    assert loop(4, 4).drafting_words() == "4.0 draft passes on average (K·c)"  # no copies: nothing to explain
    assert "copied guesses" in loop(4, 0).drafting_words()  # prompt lookup: all copies


def test_the_drafting_sentence_counts_guesses_not_only_passes():
    text = decider_sentence(loop(3.8, 3.3, c=2.0))  # a loss, and drafting decides it at c = 2
    assert "the 3.8 guesses of an average loop (3.3 from draft passes, the rest copied" in text


def test_the_recorded_prose_run_legend_reconciles_with_its_proposals():
    run = recording.shipped_runs()["prose_run"]
    model = cost_model([run.spec], [run.plain])
    assert model.draft_passes < model.k  # the default drafter copied some guesses in this run
    names = [t.name for t in why_figures.loop_cost_figure(model).data]
    drafting = next(n for n in names if n.endswith("(K·c)"))
    assert f"{model.k:.1f} guesses on average: {model.draft_passes:.1f} from draft passes" in drafting
    assert "copied from the text, which needs no draft pass" in drafting
