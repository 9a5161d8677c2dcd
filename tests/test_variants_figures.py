"""The variants page's plotly builders: pure functions checked on hand-made data."""

from __future__ import annotations

from app import palette
from app.figures import variants as figs


def test_comparison_chart_marks_slowdowns_red_and_speedups_green():
    fig = figs.comparison_chart(["a", "b"], [1.5, 1.0], [1.3, 0.7])
    tokens, speed = fig.data
    assert list(tokens.y) == [1.5, 1.0]
    assert list(speed.marker.color) == [palette.KEPT, palette.REJECTED]
    assert list(speed.text) == ["1.30x", "0.70x"]


def test_jacobi_grid_colours_final_tokens():
    fig = figs.jacobi_grid([["a", "x"], ["a", "b"]], [[True, False], [True, True]])
    heat = fig.data[0]
    assert [list(r) for r in heat.z] == [[1, 0], [1, 1]]
    assert list(heat.y) == ["iteration 0", "iteration 1"] and list(heat.x) == ["t+1", "t+2"]


def test_token_tree_highlights_the_accepted_branch_and_the_extra_token():
    # root -> A -> B (accepted), root -> C; then the target's own token after B
    fig = figs.token_tree(["r", "A", "C", "B"], [-1, 0, 0, 1], ["root", "h1", "h1", "h2"], [1, 3], "Z")
    nodes = fig.data[-1]
    assert list(nodes.text) == ["r", "A", "C", "B", "Z"]
    assert list(nodes.marker.color) == [palette.KEPT, palette.KEPT, palette.MUTED, palette.KEPT, palette.EXTRA]
    assert max(nodes.x) == 3  # B sits at depth 2, the extra token one further
    edges = [d for d in fig.data[:-1] if d.line.color == palette.KEPT]
    assert len(edges) == 2  # root-A and A-B


def test_per_pass_chart_stacks_one_target_token_on_every_iteration():
    fig = figs.per_pass_chart([0, 2, 1], [0.1, 0.1, 0.1], [0.2, 0.2, 0.2], "t")
    assert list(fig.data[1].y) == [1, 1, 1]
    assert fig.layout.barmode == "stack"
