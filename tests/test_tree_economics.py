"""What a token tree buys over a chain (specsim.lesson.tree_economics) and the hood's section that prices it."""

from __future__ import annotations

import itertools
import math

import pytest

from app import recording
from specsim.lesson import tree_economics as te
from specsim.measure import analytics
from tests.conftest import open_page

PROBS = (0.5, 0.1, 0.1, 0.05)


def test_a_chain_is_the_calculators_closed_form_at_its_top_rank():
    for k in range(1, 9):
        assert te.chain(PROBS, k).tau == pytest.approx(float(analytics.tokens_per_loop(PROBS[0], k)))


def _brute_best_tau(probs, nodes, depth):
    """The best prefix-closed set of ``nodes`` paths, by trying every set (small cases only)."""
    paths = [p for d in range(1, depth + 1) for p in itertools.product(range(1, len(probs) + 1), repeat=d)]
    value = {p: math.prod(probs[r - 1] for r in p) for p in paths}
    best = 0.0
    for chosen in itertools.combinations(paths, nodes):
        s = set(chosen)
        if all(p[:-1] in s for p in chosen if len(p) > 1):
            best = max(best, sum(value[p] for p in chosen))
    return 1 + best


@pytest.mark.parametrize("nodes", [1, 2, 3, 4])
def test_the_greedy_tree_is_the_best_tree_of_its_size(nodes):
    probs = (0.5, 0.2, 0.1)
    tree = te.best_tree(probs, nodes)
    assert tree.nodes == nodes and all(p[:-1] in tree.paths for p in tree.paths if len(p) > 1)
    assert tree.tau == pytest.approx(_brute_best_tau(probs, nodes, nodes))


def test_a_tree_never_writes_fewer_tokens_than_a_chain_of_its_size_and_is_shallower():
    for n in range(1, 17):
        tree, chain = te.best_tree(PROBS, n), te.chain(PROBS, n)
        assert tree.tau >= chain.tau - 1e-12 and tree.depth <= chain.depth


def test_rank_hits_read_the_target_token_at_every_checked_slot():
    trace = recording.shipped_runs()["prose_run"].spec
    hits = te.rank_hits([trace])
    checked = sum(min(len(it.slots), it.n_accepted + 1) for it in trace.iterations)
    assert hits.checked == checked
    kept = sum(it.n_accepted for it in trace.iterations)
    assert hits.counts[0] >= kept  # greedy: a kept guess was the target's token and the draft's top choice
    assert sum(hits.counts) <= hits.checked and hits.coverage(len(hits.counts)) <= 1


def test_trees_stop_paying_as_the_batch_grows():
    from app.hood import trees

    rows = trees.batch_rows(PROBS, 0.05)
    assert rows[0][4] > rows[0][2]  # batch 1: the best tree beats the best chain
    widths = [tr.nodes for _, _, _, tr, _ in rows]
    assert widths == sorted(widths, reverse=True) and widths[-1] < widths[0]
    sentence = trees.batch_sentence(rows)
    assert "the best tree has no more nodes than the best chain" in sentence
    b, ch, s_ch, tr, s_tr = next(r for r in rows if r[3].nodes <= r[1].nodes or r[4] - r[2] < 0.005)
    assert f"from B = {b} " in sentence and f"({tr.nodes} and {ch.nodes})" in sentence
    # a learner's reading: at that batch the tree could still lead; the sentence says why (a lecturer's: by fewer
    # draft passes when its τ is no higher, by where its nodes sit when it is)
    assert ("what lead the tree keeps there" in sentence) == (s_tr - s_ch >= 0.005)
    if s_tr - s_ch >= 0.005:
        assert ("its shallower shape" in sentence) == (tr.tau <= ch.tau) and f"τ {tr.tau:.2f} against" in sentence
    table = trees.batch_table(rows)  # a table, not a run-on list of seven batch sizes (a lecturer's review)
    assert [r["batch size B"] for r in table] == [b for b, *_ in rows]
    assert table[0]["best tree"] == f"{rows[0][3].nodes} nodes, {rows[0][4]:.2f}×"
    assert "B = " not in trees.batch_sentence(rows).split("from B = ")[0]


def test_the_hood_prices_a_tree_from_the_runs_own_ranks():
    at = open_page("hood.py")
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    hits = te.rank_hits([recording.shipped_runs()["prose_run"].spec])
    assert f"at the {hits.checked} positions the target checked" in text
    # a learner's reading: the best tree's τ could not be checked from top-1 and top-2 coverage alone; each of the
    # first ranks has its rate, and the tree its nodes
    rates = ", ".join(f"{o} choice {p:.0%} of the time"
                      for o, p in zip(("first", "second", "third"), hits.probs[:3], strict=True))
    assert f"its token was the draft's {rates}" in text and hits.probs[0] == hits.coverage(1)
    from app.hood.trees import SIZES, machine_v, tree_paths

    c = float(text.split("With c = ")[1].split(" ")[0])
    tree, _ = te.best_by_size(hits.probs, c, machine_v().v, SIZES)
    assert f"has {tree.nodes} nodes (the draft's ranks along each path: {tree_paths(tree)})" in text
    assert f"τ = {1 + sum(tree.values):.2f}" in text
    assert "What a tree buys" in [h.value for h in at.subheader]
