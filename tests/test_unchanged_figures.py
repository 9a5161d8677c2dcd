"""app.unchanged.figures: the p-against-q chart's names, before and after a top-k or top-p cut."""

from __future__ import annotations

from app.unchanged.figures import pq_figure


def test_the_cut_chart_names_the_cut_distributions():
    fig = pq_figure(["a", "b"], [0.5, 0.5], [0.4, 0.6], cut=True)
    names = [trace.name for trace in fig.data]
    assert names[0].startswith("target p′") and names[1].startswith("draft q′") and "min(p′, q′)" in names[2]
    assert "Σ min(p′, q′)" in fig.layout.title.text
    assert [trace.name for trace in pq_figure(["a"], [1.0], [1.0]).data][0] == "target p"
