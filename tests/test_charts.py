"""Every chart's text alternative (issue 51, item 5): app/charts.py reads a description and the numbers behind the
chart off the figure itself (pure functions), and :func:`app.charts.chart` hands them to the page."""

from __future__ import annotations

import math

import plotly.graph_objects as go
import pytest
from streamlit.testing.v1 import AppTest

from app import charts
from app.calculator import figures as calc_figs
from specsim.measure import analytics
from tests.test_live_markdown import NASTY, visible


def _bars_and_line() -> go.Figure:
    fig = go.Figure([go.Bar(name="measured", x=[1, 2, 3], y=[0.5, 0.25, 0.125], text=["50%", "25%", "13%"]),
                     go.Scatter(name="α<sup>i</sup> model", x=[1, 2, 3], y=[0.6, 0.36, 0.216])])
    fig.update_layout(title="<b>Acceptance by draft position</b><br><sup>one run</sup>",
                      xaxis_title="draft position i", yaxis_title="share kept")
    fig.add_annotation(text="α = 0.60", x=2, y=0.5)
    return fig


def test_the_summary_names_title_axes_series_and_marks_in_plain_text():
    summary = charts.chart_summary(_bars_and_line())
    assert summary == ("Acceptance by draft position · one run. share kept against draft position i. "
                       "Series: measured; αi model. Marked: α = 0.60.")


def test_the_series_table_has_one_row_per_point_with_its_label():
    [table] = charts.chart_tables(_bars_and_line())
    assert table.columns == {
        "series": ["measured"] * 3 + ["αi model"] * 3,
        "draft position i": ["1", "2", "3"] * 2,
        "share kept": ["0.5", "0.25", "0.125", "0.6", "0.36", "0.216"],
        "label": ["50%", "25%", "13%", "", "", ""],
    }
    assert table.note == ""


@pytest.mark.parametrize(("value", "shown"), [(3, "3"), (4.0, "4"), (0.1 + 0.2, "0.3"), (1.23456, "1.235"),
                                              (12345.6, "12,346"), (True, "yes"), (math.nan, ""), (None, ""),
                                              ("<b>x</b> &amp; y", "x & y")])
def test_cells_show_numbers_to_four_figures_and_labels_as_plain_text(value, shown):
    assert charts.value_text(value) == shown


def test_a_diagram_without_data_is_described_by_its_labels_and_has_no_table():
    fig = go.Figure()
    fig.add_shape(type="rect", x0=0, x1=1, y0=0, y1=1)
    for word in ("draft", "verify", "keep"):
        fig.add_annotation(text=word, x=0, y=0)
    fig.update_layout(title="One round")
    assert charts.chart_summary(fig) == "One round. Labels: draft; verify; keep."
    assert charts.chart_tables(fig) == []


def test_the_calculator_map_is_tabled_from_its_own_grid_every_fifth_alpha_with_first_and_last():
    c, v, k, alpha_pct = 0.13, 1.0, 4, 70
    fig = calc_figs.speedup_heatmap(c, v, k, alpha_pct)
    grid = [t for t in charts.chart_tables(fig) if t.note]
    assert len(grid) == 1
    [table] = grid
    head, *ks = table.columns
    alphas = [int(a) for a in table.columns[head]]
    assert alphas == list(range(0, 101, 5)) and len(alphas) <= charts.MAX_GRID_ROWS
    assert table.note == "one row in 5 of 101"
    assert [int(x) for x in ks] == list(range(analytics.K_MIN, analytics.K_MAX + 1))
    for kk in ks:
        for a, cell in zip(alphas, table.columns[kk], strict=True):
            assert float(cell) == pytest.approx(float(analytics.speedup(a / 100, int(kk), c, v)), rel=5e-4)


def test_the_one_loop_chart_lists_each_guess_and_the_expected_prefix():
    prefix = analytics.expected_accepted_prefix(0.7, 4)
    fig = calc_figs.prefix_distribution_figure(0.7, 4)
    [table] = charts.chart_tables(fig)
    probabilities = [float(p) for p in table.columns["probability"]]
    assert probabilities == pytest.approx(list(analytics.prefix_distribution(0.7, 4)), rel=5e-4)
    assert f"E[j] = {prefix:.2f}" in charts.chart_summary(fig)


def test_a_long_series_keeps_first_and_last_and_says_how_many():
    n = 1000
    fig = go.Figure(go.Scatter(name="curve", x=list(range(n)), y=[i * i for i in range(n)]))
    [table] = charts.chart_tables(fig)
    assert table.rows <= charts.MAX_ROWS + 1
    assert table.columns["x"][0] == "0" and table.columns["x"][-1] == str(n - 1)
    assert table.note == f"one point in {math.ceil((n - 1) / (charts.MAX_ROWS - 1))} of {n}"


def figure_with(text: str) -> go.Figure:
    return go.Figure(go.Bar(name=text, x=[text, "b"], y=[0.25, 0.75]))


def _chart_page(text: str) -> None:
    from app.charts import chart
    from tests.test_charts import figure_with

    chart(figure_with(text), key="c")


@pytest.mark.parametrize("text", NASTY)
def test_the_page_gets_the_description_as_the_charts_name_and_the_data_as_typed(text):
    """Token texts (```, **, $x$, :red[...]) in a chart's data table show as the table says: Streamlit renders table
    cells as Markdown, and chart() escapes them."""
    at = AppTest.from_function(_chart_page, args=(text,)).run()
    assert not at.exception
    [element] = at.get("plotly_chart")
    assert element.proto.alt == charts.chart_summary(figure_with(text))
    assert [e.label for e in at.expander] == ["Chart data"]
    [meant] = charts.chart_tables(figure_with(text))
    shown = at.table[0].value
    assert [visible(head) for head in shown.columns] == list(meant.columns)
    for column, (head, cells) in zip(shown.columns, meant.columns.items(), strict=True):
        assert [visible(cell) for cell in shown[column]] == cells, head
