"""The variants page's plotly builders: pure functions checked on hand-made data; the colours their titles and captions
name are the colours they draw."""

from __future__ import annotations

import re

from app import palette
from app.variants import figures as figs


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


def test_guide_diagrams_draw_their_boxes_and_arrows():
    from app.variants import guide_figures as g

    jacobi = g.jacobi_figure(window=4, iterations=3)
    assert len(jacobi.layout.shapes) == 12
    converged = [a.text for a in jacobi.layout.annotations if a.text and a.text.endswith("✓")]
    assert len(converged) == 1 + 2 + 3  # after pass i the first i tokens are final
    medusa = g.medusa_figure(heads=3)
    assert sum(1 for a in medusa.layout.annotations if a.showarrow) == 6
    for build in (g.prompt_lookup_figure, g.eagle_figure, g.early_exit_figure):
        fig = build()
        assert fig.layout.shapes and any(a.showarrow for a in fig.layout.annotations)


def test_arrows_join_box_edges():
    from app.variants.guide_figures import HALF_HEIGHT, Box, edge_points

    a, b = Box("a", 0, 1, width=1.0), Box("b", 3, 1, width=2.0)
    assert edge_points(a, b) == ((0.5, 1), (2.0, 1))
    top, bottom = Box("t", 0, 2), Box("u", 0.2, 1)
    assert edge_points(top, bottom) == ((0, 2 - HALF_HEIGHT), (0.2, 1 + HALF_HEIGHT))


def test_the_comparison_carries_the_text_of_every_token_the_page_names():
    """Issue 52: a class replica decoded lookahead's windows and Medusa's trees with the bundled target's tokenizer,
    loading the model; the texts now travel with the comparison, decoded where the run was."""
    from specsim.measure.compare_variants import Comparison, VariantResult, token_texts
    from specsim.variants.lookahead import JacobiStep
    from specsim.variants.medusa_tree import TreeStep

    class Words:
        def decode(self, ids):
            return " ".join(f"w{i}" for i in ids)

    jacobi = JacobiStep(index=0, context_len=5, window_before=(1, 2), window_after=(2, 3), candidates=(),
                        winner="jacobi", n_accepted=1, emitted=(2,), pool_size=0, pass_tokens=3, time_s=0.0)
    tree = TreeStep(index=0, context_len=5, tokens=(4, 5, 6), parents=(-1, 0, 0), labels=("", "h1", "h1"),
                    accepted_nodes=(1,), extra=7, emitted=(5, 7), time_s=0.0)

    class Details:
        def __init__(self, steps):
            self.steps = steps

    comparison = Comparison("p", 4, results=[
        VariantResult(key="lookahead", label="l", trace=None, tokens_per_pass=1.0, acceptance=None, decode_s=0.0,
                      speedup=1.0, extra_parameters=0, training="", identical=True, details=Details([jacobi])),
        VariantResult(key="medusa_tree", label="m", trace=None, tokens_per_pass=1.0, acceptance=None, decode_s=0.0,
                      speedup=1.0, extra_parameters=0, training="", identical=True, details=Details([tree]))])
    texts = token_texts(comparison, Words())
    assert texts == {i: f"w{i}" for i in range(1, 8)}
    comparison.texts = texts
    assert comparison.text(7) == "w7" and comparison.text(99) == "<99>"


# ---- the colours a figure's words name are the colours it draws ------------------------------------------------


def test_prompt_lookup_diagram_names_the_colours_it_draws():
    from app.variants.guide_figures import prompt_lookup_figure

    fig = prompt_lookup_figure()
    drawn = {shape.fillcolor for shape in fig.layout.shapes}
    named = set(re.findall(r"\(([a-z ]+)\)", fig.layout.title.text))
    colour_of = {name: colour for colour, name in palette.NAMES.items()}
    assert named and all(name in colour_of for name in named), named
    assert {colour_of[n] for n in named} <= drawn
    assert "green" not in named  # nothing in it is green


def test_medusa_tree_caption_names_the_colours_of_the_tree():
    from app.variants.compare import tree_caption

    caption = tree_caption(1, 6, 3, 2)
    fig = figs.token_tree(["", "a", "b", "c"], [0, 0, 1, 2], ["root", "h1", "h2", "h3"], [1, 3], "d")
    colours = {c for t in fig.data for c in ([t.line.color] if t.line and t.line.color else [])}
    colours |= {c for t in fig.data if t.marker is not None and t.marker.color is not None
                for c in (t.marker.color if isinstance(t.marker.color, tuple) else [t.marker.color])}
    assert palette.EXTRA in colours and f"({palette.NAMES[palette.EXTRA]})" in caption
    assert "(blue)" not in caption and "longest accepted path from the root" in caption
