"""The "Is verification free here?" page's section on the target's two decode-pass paths: what removing the
per-operator overhead did to v(n) and to speculative decoding's speedup, read from the committed measurement
(``python -m specsim.bench --passes --save``, :mod:`specsim.measure.pathbench`)."""

from __future__ import annotations

import plotly.graph_objects as go

from app.palette import DRAFT, PLAIN
from specsim.measure.pathbench import PathRun


def paths_figure(run: PathRun) -> go.Figure:
    """v(n) on each path: the same passes, with and without the Python around every operator."""
    fig = go.Figure()
    for row, colour, dash in ((run.row("previous"), PLAIN, "dash"), (run.row("one call"), DRAFT, "solid")):
        ns = [1, *sorted(row.v)]
        label = "transformers' forward" if row.path == "previous" else "one C++ call"
        fig.add_scatter(x=ns, y=[1.0, *(row.v[n] for n in ns[1:])], mode="lines+markers",
                        name=f"{label} ({row.pass_ms:.1f} ms a one-token pass)",
                        line={"color": colour, "dash": dash, "width": 3},
                        hovertemplate="n = %{x}: %{y:.2f} one-token passes<extra></extra>")
    fig.update_layout(title="v(n) on each decode path, in that path's own one-token passes", height=340,
                      xaxis_title="new tokens in the pass (n)", yaxis_title="v(n)",
                      legend={"orientation": "h", "y": -0.3}, margin={"t": 50, "b": 10})
    return fig


def paths_text(run: PathRun) -> str:
    """What the measurement shows, every figure read from it."""
    old, new = run.row("previous"), run.row("one call")
    n = run.k + 1
    text = (f"Measured on {run.machine.split(' | ')[0]} ({run.when}; {run.prompts} held-out prompts × "
            f"{run.max_new_tokens} tokens, {run.rounds} interleaved rounds). specsim runs the target's decode passes "
            "as **one C++ call** that does the same arithmetic as transformers' forward, bitwise, without the Python "
            f"around each of its operators. The one-token pass went from {old.pass_ms:.1f} to {new.pass_ms:.1f} ms, "
            f"and plain decoding from {old.plain_tok_s:.0f} to {new.plain_tok_s:.0f} tokens/s "
            f"({new.plain_speedup:.2f}×). Speculative decoding (K = {run.k}) got faster too, "
            f"{old.spec_tok_s:.0f} → {new.spec_tok_s:.0f} tokens/s, ")
    if new.spec_speedup < old.spec_speedup:
        text += (f"but its speedup over plain decoding fell from {old.spec_speedup:.2f}× to "
                 f"{new.spec_speedup:.2f}×. The formula says why: tokens per loop ÷ (K·c + v(K + 1)), and both costs "
                 "in the denominator are counted in one-token passes, which just got cheaper. The draft's own pass "
                 f"did not, so its share grew: c = {old.draft_cost:.3f} → {new.draft_cost:.3f}. And with the fixed "
                 "cost of every operator call gone, more of what is left grows with the tokens a pass carries: "
                 f"v({n}) = {old.v[n]:.2f} → {new.v[n]:.2f} (the chart). The overhead had flattered "
                 "speculation: it made every pass cost about the same whatever it carried.")
    else:
        text += (f"and its speedup over plain decoding went from {old.spec_speedup:.2f}× to {new.spec_speedup:.2f}×: "
                 f"here the draft's share of a pass (c = {old.draft_cost:.3f} → {new.draft_cost:.3f}) and "
                 f"v({n}) ({old.v[n]:.2f} → {new.v[n]:.2f}, the chart) moved too little to cost it.")
    return text
