"""Under the hood for a token-tree run (issue 64, item 2): the tree pass's rows and mask as the engine ran them, the
caches told from the recorded lengths, the cost figures priced by the tree's width, and the page drawing it all."""

from __future__ import annotations

import itertools

import pytest

from app import state
from specsim.core.model_drafters import ModelDrafter
from specsim.core.tiny import tiny_llama, tiny_loaded
from specsim.core.token_tree import TokenTree
from specsim.core.trees import TreeShape, tree_generate
from specsim.lesson import hood, hood_tree
from specsim.lesson import tree_economics as te
from tests.conftest import ROOT, open_page


@pytest.fixture(scope="module")
def trace():
    """A tiny pair whose draft is the target with its weights nudged: the walk keeps some guesses (up to two a loop)
    and refuses others, and passes over siblings of the kept ones."""
    import torch

    target = tiny_loaded(64, seed=1, logit_scale=4.0)
    draft = tiny_llama(64, seed=1, logit_scale=4.0)
    noise = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for weight in draft.parameters():
            weight.add_(0.02 * torch.randn(weight.shape, generator=noise))
    out = tree_generate(target, ModelDrafter(draft, "a nudged copy"), [1, 2, 3, 4], TreeShape(8, 3, 3), 20)
    statuses = {node.status for it in out.iterations for node in it.tree.nodes}
    assert {"kept", "refused", "passed", "unchecked"} <= statuses, statuses  # every verdict a greedy walk gives
    return out


def _engine_tree(it) -> TokenTree:
    return TokenTree([n.token.token_id for n in it.tree.nodes], [n.parent for n in it.tree.nodes],
                     ["node"] * len(it.tree.nodes))


def test_each_row_sits_at_its_paths_position_and_sees_what_the_engines_mask_lets_it_see(trace):
    for step, it in enumerate(trace.iterations):
        rows = hood_tree.tree_rows(trace, step)
        engine = _engine_tree(it)
        past = it.context_len - 1
        assert [r.position for r in rows] == engine.position_ids(past)[0].tolist()
        assert [r.parent for r in rows] == [None, *(n.parent for n in it.tree.nodes[1:])]
        labels, grid, hidden = hood_tree.tree_mask(it, context_shown=3)
        mask = engine.attention_mask(past)[0, 0]
        assert hidden == past - 3 and len(labels) == 3 + len(rows)
        assert grid == mask[:, hidden:].tolist()  # the columns shown are the mask's last ones, row for row
        assert all(mask[:, :hidden].flatten().tolist())  # and every row reads the hidden context


def test_the_decisive_row_is_the_last_kept_guesses_and_gives_the_plus_one(trace):
    for step, it in enumerate(trace.iterations):
        rows = hood_tree.tree_rows(trace, step)
        row = rows[hood_tree.decisive_row(it)]
        assert row.status in ("kept", "root")
        assert len(it.tree.kept_path()) == it.n_accepted
        if trace.settings.temperature == 0:  # greedy: the +1 is the target's top token after the kept path
            assert it.extra.token_id == row.target_top.token_id


def test_the_cache_sentences_count_what_the_engine_recorded(trace):
    for it in trace.iterations:
        c, n, kept = it.caches, len(it.tree.nodes), len(it.tree.kept_path())
        assert c.target_written - c.target_before == n and c.target_kept == c.target_before + 1 + kept
        target, draft = hood_tree.cache_sentences(it)
        assert f"{n} more, {c.target_written} in all" in target
        assert f"drops the other {c.target_written - c.target_kept}: {c.target_kept} stay" in target
        assert f"it reads {c.draft_catch_up} token" in draft


def test_the_cost_figures_count_the_trees_width_not_the_walks_slots(trace):
    c = hood.compute_per_token(trace)
    widths = [it.tree.width_read for it in trace.iterations]
    assert c.positions_per_pass == pytest.approx(sum(widths) / len(widths))
    assert c.positions_per_pass > sum(it.k + 1 for it in trace.iterations) / len(trace.iterations)
    assert c.k == trace.settings.tree[0] and c.longest_pass == max(widths)


@pytest.mark.parametrize(("nodes", "depth", "width"), [(6, 2, 2), (8, 3, 3), (5, 4, 1), (12, 3, 2)])
def test_the_best_tree_of_a_shape_is_its_most_probable_allowed_paths(nodes, depth, width):
    probs = (0.45, 0.2, 0.1, 0.05)
    tree = te.best_tree(probs, nodes, depth, width)
    assert max(len(p) for p in tree.paths) <= depth and max(max(p) for p in tree.paths) <= width
    allowed = sorted((_value(probs, p) for d in range(1, depth + 1)
                      for p in itertools.product(range(1, width + 1), repeat=d)), reverse=True)
    assert sum(tree.values) == pytest.approx(sum(allowed[:nodes]))
    assert all(p[:-1] in tree.paths for p in tree.paths if len(p) > 1)  # every prefix is in the tree
    assert te.best_tree(probs, nodes).tau >= tree.tau


def _value(probs, path) -> float:
    out = 1.0
    for r in path:
        out *= probs[r - 1]
    return out


def test_the_hood_page_takes_a_tree_run_apart(trace):
    at = open_page(None)
    at.session_state[state.LIVE_TRACE] = trace
    at.switch_page(str(ROOT / "pages" / "hood.py")).run()
    assert not at.exception and not at.error, [e.value for e in at.exception]
    heads = [h.value for h in at.subheader]
    assert "One pass over the whole tree" in heads and "One pass, K + 1 answers" not in heads
    step = at.slider(key=state.widget_key(state.HOOD_STEP)).value - 1
    it = trace.iterations[step]
    text = "\n".join(m.value for m in at.markdown)
    assert f"all {len(it.tree.nodes) - 1} guesses in **one** pass, {len(it.tree.nodes)} inputs" in text
    assert "This run drafted real trees" in text and f"τ = {trace.tokens_per_pass:.2f}" in text
    assert "The walk met " in text and "the tree thins with depth" in text
    assert "tokens per loop; the run made" not in text  # the chain's geometric model is not a tree's
    table = at.dataframe[0].value
    assert len(table) == len(it.tree.nodes) and list(table["verdict"])[0] == hood_tree.VERDICT["root"]
    captions = " ".join(c.value for c in at.caption)
    assert "1 + α + … + α^K is a chain's" in captions and "no K policy applies" in captions
    assert "The identity above is for one candidate a position" in text
    assert "With a tree of 8 guesses the same model" in text


def test_the_overlap_section_says_one_minus_tv_is_a_chains_identity_and_gives_the_trees_rate(trace):
    note = hood_tree.overlap_note(trace)
    assert "The identity above is for one candidate a position" in note
    assert f"kept {trace.n_accepted} of the {trace.n_checked} steps" in note
    assert f"the tree's α per step is {trace.acceptance_rate:.2f}" in note and 0 < trace.acceptance_rate < 1


def test_the_tree_economics_marks_the_runs_own_trees_beside_the_models(trace):
    from app.hood.trees import economics_figure, real_trees, real_trees_sentence

    hits = te.rank_hits([trace])
    c, v = 0.1, (lambda n: 1.0 + 0.02 * (n - 1))
    own = real_trees(trace, c, v)
    its = trace.iterations
    loop_cost = sum(it.k_planned * c + v(it.tree.width_read) for it in its) / len(its)
    assert own.speedup == pytest.approx(trace.tokens_per_pass / loop_cost)
    assert own.passes == pytest.approx(trace.draft_passes / len(its))
    fig = economics_figure(hits.probs, c, v, "v", own)
    stars = [t for t in fig.data if t.name == "this run's real trees"]
    assert [(t.x[0], t.y[0]) for t in stars] == [(own.guesses, own.tau), (own.guesses, own.speedup)]
    assert not [t for t in economics_figure(hits.probs, c, v).data if t.name == stars[0].name]
    nodes, depth, width = trace.settings.tree
    model = te.fastest_tree(hits.probs, nodes, c, v, width=width, max_depth=depth)
    text = real_trees_sentence(trace, hits, c, v)
    assert f"that is **{own.speedup:.2f}×** (the star)" in text
    assert f"under the same limits writes τ = {model.tau:.2f} with {model.depth} draft pass" in text
    assert f"{te.speedup(model, c, v):.2f}×" in text


def test_the_growth_sentence_counts_the_draft_passes_the_loop_spent_and_the_lowest_score_kept(trace):
    for step, it in enumerate(trace.iterations):
        text = hood_tree.growth_sentence(trace, step)
        if len(it.tree.nodes) > 1:
            low = min(node.score for node in it.tree.nodes[1:])
            assert f"The lowest score kept here was {low:.3f}" in text
        if it.k_planned:
            assert f"It spent {it.k_planned} draft pass" in text
    assert sum(it.k_planned or 0 for it in trace.iterations) == trace.draft_passes


@pytest.mark.parametrize(("kept", "reached", "words"), [
    ((9, 4, 0), (25, 8, 2), "do not rise steadily: the last is below the first"),
    ((9, 4, 1), (20, 10, 5), "fall rather than rise"),
    ((5, 6, 6), (20, 10, 8), None)])
def test_the_rates_sentence_says_fall_only_when_every_rate_falls(kept, reached, words):
    from dataclasses import replace

    model = replace(hood.position_model(_any_trace()), kept=kept, reached=reached)
    text = hood.rates_sentence(model)
    for phrase in ("do not rise steadily", "fall rather than rise"):
        assert (phrase in text) == (words is not None and phrase in words), (phrase, text)


def _any_trace():
    from specsim.lesson import recorded

    return recorded.load(next(r.path for r in recorded.RECIPES if r.name == "prose_run")).spec


@pytest.mark.parametrize(("nodes", "c"), [(3, 0.05), (4, 0.3), (4, 0.02), (5, 0.15)])
def test_the_fastest_tree_of_a_budget_beats_every_tree_within_it(nodes, c):
    """Every prefix-closed set of at most ``nodes`` paths over 3 ranks and 3 levels, priced with a draft pass per
    level and v of its width: none is faster than :func:`fastest_tree`, which may be shallower or smaller than the
    tree with the most τ, and whose speedup never falls as the budget grows."""
    import math

    probs, v, levels = (0.6, 0.25, 0.1), (lambda n: 1.0 + 0.05 * (n - 1)), 3
    paths = [p for d in range(1, levels + 1) for p in itertools.product(range(1, 4), repeat=d)]
    best = 0.0
    for size in range(1, nodes + 1):
        for chosen in itertools.combinations(paths, size):
            s = set(chosen)
            if all(p[:-1] in s for p in chosen if len(p) > 1):
                tau = 1 + sum(math.prod(probs[r - 1] for r in p) for p in chosen)
                best = max(best, tau / (max(len(p) for p in chosen) * c + v(size + 1)))
    fastest = te.fastest_tree(probs, nodes, c, v, max_depth=levels)
    assert fastest.nodes <= nodes and te.speedup(fastest, c, v) == pytest.approx(best)
    assert fastest.depth <= te.best_tree(probs, nodes).depth
    speeds = [te.speedup(te.fastest_tree(probs, n, c, v, max_depth=levels), c, v) for n in range(1, nodes + 1)]
    assert speeds == sorted(speeds)


def test_the_cache_sentence_names_the_rows_that_move_and_only_those(trace):
    """Row i of the pass sits at the root's slot + i: a kept guess moves only where its row is not its depth."""
    for it in trace.iterations:
        target = hood_tree.cache_sentences(it)[0]
        path = it.tree.kept_path()
        shifted = [row for depth, row in enumerate(path, start=1) if row != depth]
        if shifted:
            rows = ", ".join(str(r) for r in shifted)
            assert f"row{'s' if len(shifted) > 1 else ''} {rows} move" in target, target
        else:
            assert "nothing moves" in target


def test_a_loop_with_room_for_the_plus_one_alone_drafts_nothing_and_spends_no_draft_pass(trace):
    """The run's last loop, where the token budget leaves one token: no draft pass, a root-only tree, and the pages
    say so instead of describing a tree of 0 guesses."""
    from specsim.lesson.replay import narrate_tree

    last = trace.iterations[-1]
    assert trace.n_generated == trace.settings.max_new_tokens and len(last.tree.nodes) == 1
    assert last.draft_passes == 0 and last.caches.draft_drafted == last.caches.draft_before
    assert trace.draft_passes == sum(it.draft_passes for it in trace.iterations)
    assert narrate_tree(trace, len(trace.iterations) - 1).startswith("Drafted nothing")
    at = open_page(None)
    at.session_state[state.LIVE_TRACE] = trace
    at.session_state[state.HOOD_STEP] = len(trace.iterations)
    at.switch_page(str(ROOT / "pages" / "hood.py")).run()
    assert not at.exception
    assert any(i.value.startswith("In this iteration the draft proposed nothing") for i in at.info)


def test_the_candidates_the_walk_met_thin_with_depth_and_start_with_the_roots_children(trace):
    met = hood_tree.candidates_by_depth(trace)
    roots = [sum(1 for n in it.tree.nodes if n.parent == 0) for it in trace.iterations if len(it.tree.nodes) > 1]
    assert met[0] == pytest.approx(sum(roots) / len(roots))
    assert all(0 < x <= trace.settings.tree[2] for x in met) and len(met) <= trace.settings.tree[1]
    assert hood_tree.candidates_by_depth(_any_trace()) == []  # a chain has no tree to walk


def test_without_a_curve_measured_here_trees_are_priced_on_the_cpu_curve_not_a_gpus_roofline(monkeypatch):
    """A lecturer's review: the tree economics priced this run's CPU-measured c with a GPU's roofline v(n), a machine
    that exists nowhere (the best tree 2.08×, the chain 1.64×; on the CPU the tree loses). With nothing measured here,
    the recorded CPU curve of *Is verification free here?* prices them; the batch table says its GPU keeps c only as a
    stand-in."""
    from app.calculator import v_curve
    from app.hood import trees
    from specsim.core.paths import VERIFY_CURVE_RECORDED
    from specsim.measure import passcost

    recorded = passcost.load_recorded(VERIFY_CURVE_RECORDED)
    assert recorded is not None
    monkeypatch.setattr(v_curve, "measured", lambda: None)
    source = trees.machine_v()
    assert "recorded on a CPU" in source.name and recorded.machine in source.name
    assert source.short == "v(n) recorded on a CPU"
    v = source.v
    assert v(1) == 1.0 and v(5) == pytest.approx(max(1.0, recorded.curve.v_at(5))) and v(5) > 1.05
    monkeypatch.setattr(v_curve, "measured", lambda: ("this machine, measured on the verify page", [1.5] * 16))
    here = trees.machine_v()
    assert (here.name, here.short, here.v(5), here.v(1)) == (
        "this machine, measured on the verify page", "v(n) measured here", 1.5, 1.0)
    monkeypatch.setattr(v_curve, "measured", lambda: None)
    monkeypatch.setattr(passcost, "load_recorded", lambda path: None)
    gpu = trees.machine_v()  # neither measured nor recorded: the GPU's roofline, named as the calculator names it
    assert gpu.name == next(iter(v_curve.MODELS)) and gpu.short == "the roofline's v(n), R = 256"
    assert gpu.v(17) == 1.0 and gpu.v(513) == pytest.approx(513 / 256)
    assert "this run's c kept as a stand-in" in trees.batch_sentence([])


def test_the_tau_panel_draws_the_richest_tree_which_never_keeps_less_than_the_chain():
    """A new learner's reading: the τ panel drew only the fastest tree, which on a CPU curve was three nodes at
    τ 1.86 under the chain's 2.0, beside a take-away that says trees raise τ. The panel now also draws the tree with
    the most τ of each size: never below the chain (a chain is a tree), above it when runners-up are kept."""
    from app.hood.trees import SIZES, economics_figure

    probs = (0.4, 0.15, 0.08)
    fig = economics_figure(probs, 0.05, lambda n: 1.0 + 0.05 * (n - 1))
    richest = [t for t in fig.data if t.name.startswith("tree with the most τ")]
    chain = [t for t in fig.data if t.name == "chain of K guesses" and t.xaxis == "x"]
    assert len(richest) == 1 and len(chain) == 1
    assert richest[0].xaxis == "x"  # the left (τ) panel only
    assert all(r >= c - 1e-12 for r, c in zip(richest[0].y, chain[0].y, strict=True))
    assert richest[0].y[-1] > chain[0].y[-1] + 0.1  # with 15 % and 8 % runners-up, 16 nodes keep far more
    assert list(richest[0].x) == list(SIZES)
