"""The live page's tree figure (app.live.tree_figure): every node of the recorded tree drawn where its depth and
score put it, in its verdict's colour, with the +1 token after the kept path."""

from __future__ import annotations

import pytest

from app.live.tree_figure import COLOUR, layout, tree_figure
from app.palette import EXTRA
from specsim.core.model_drafters import ModelDrafter
from specsim.core.tiny import tiny_llama, tiny_loaded
from specsim.core.trees import TreeShape, tree_generate


@pytest.fixture(scope="module")
def trace():
    target = tiny_loaded(64, seed=1, logit_scale=4.0)
    draft = tiny_llama(64, seed=1, logit_scale=4.0)
    return tree_generate(target, ModelDrafter(draft, "the target itself"), [1, 2, 3, 4], TreeShape(8, 4, 3), 16)


def test_every_node_is_drawn_once_in_its_verdicts_colour_and_the_plus_one_follows_the_kept_path(trace):
    for it in trace.iterations:
        fig = tree_figure(it)
        drawn = {}
        for t in fig.data:
            if t.mode == "markers+text" and t.marker.color != EXTRA:
                for x, y in zip(t.x, t.y, strict=True):
                    drawn[(x, y)] = t.marker.color
        where = layout(it.tree)
        assert len(drawn) == len(it.tree.nodes) == len(set(where))
        for node, place in zip(it.tree.nodes, where, strict=True):
            assert drawn[place] == COLOUR[node.status]
        extra = next(t for t in fig.data if t.marker.color == EXTRA)
        path = it.tree.kept_path()
        x, _ = where[path[-1] if path else 0]
        assert (extra.x[0], extra.y[0]) == (x + 1, -1) and it.extra.text in extra.text[0]
        assert f"{len(it.tree.nodes) - 1} guesses" in fig.layout.title.text


def test_the_layout_gives_each_branch_its_own_rows_best_scored_child_first(trace):
    """Depth is the column; a parent sits on its first child's row, its children below it in score order, and no
    two nodes share a place (so no edges cross)."""
    for it in trace.iterations:
        tree = it.tree
        where = layout(tree)
        assert len(set(where)) == len(where)
        for i, node in enumerate(tree.nodes):
            kids = [c for c, n in enumerate(tree.nodes) if n.parent == i]
            if node.parent >= 0:
                assert where[i][0] == where[node.parent][0] + 1
            if kids:
                rows = [where[c][1] for c in kids]
                assert where[i][1] == min(rows) and rows == sorted(rows)
                by_score = sorted(kids, key=lambda c: (-tree.nodes[c].score, c))
                assert [where[c][1] for c in by_score] == sorted(rows)


def test_a_chain_iteration_has_no_tree_to_draw():
    from tests.live_traces import plain_steps

    with pytest.raises(ValueError, match="drafted a chain"):
        tree_figure(plain_steps([5], [0.01])[0])
