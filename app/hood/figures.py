"""Charts of the Under-the-hood page: pure builders, records of specsim.lesson.hood in, a plotly figure out."""

from __future__ import annotations

import math

import plotly.graph_objects as go

from app.palette import BACKGROUND, DRAFT, EXTRA, KEPT, MUTED, REJECTED, TARGET
from specsim.lesson.hood import CacheStory, PositionModel, SlotOverlap, VerifyRow
from specsim.lesson.replay import visible

OUTCOME_COLOURS = {"kept": KEPT, "+1 token": EXTRA, "not used": MUTED}


def _outcome_colour(outcome: str) -> str:
    return REJECTED if outcome.startswith("rejected") else OUTCOME_COLOURS.get(outcome, MUTED)


def mask_figure(labels: list[str], grid: list[list[bool]], hidden: int, rows: list[VerifyRow] | list[str],
                title: str = "Causal mask of the verification pass: which positions each row may read") -> go.Figure:
    """The verification pass's attention mask: one row per input, a filled cell where that row may attend. ``rows``
    names the rows: a chain's :class:`VerifyRow` list, or the names themselves (a tree's)."""
    z = [[1 if cell else 0 for cell in row] for row in grid]
    text = [["✓" if cell else "" for cell in row] for row in grid]
    y = [r if isinstance(r, str) else f"row {r.index}: {visible(r.input_text)!s}" for r in rows]
    fig = go.Figure(go.Heatmap(z=z, x=labels, y=y, text=text, texttemplate="%{text}", showscale=False,
                               colorscale=[[0, BACKGROUND], [1, TARGET]], zmin=0, zmax=1, xgap=2, ygap=2,
                               hovertemplate="%{y} may attend to position %{x}: %{text}<extra></extra>"))
    if hidden:
        title += f"<br><sup>and positions 0-{hidden - 1}, not drawn, which every row also reads</sup>"
    # the column labels sit on top, under a two-line title: room for both, so the subtitle never covers the labels
    fig.update_layout(title=title, height=180 + 34 * len(rows),
                      margin=dict(l=10, r=10, t=110, b=10),
                      yaxis=dict(autorange="reversed"), xaxis=dict(side="top", tickangle=0, type="category"))
    return fig


def rows_figure(rows: list[VerifyRow]) -> go.Figure:
    """Each row's output: the target's top token (p) and, where the row judges a guess, the guess with its q."""
    y = [f"row {r.index}" for r in rows]
    top_p = [r.target_top[0].prob if r.target_top else 0.0 for r in rows]
    top_text = [visible(r.target_top[0].text) if r.target_top else "" for r in rows]
    guess_p = [r.p_of_proposed if r.p_of_proposed is not None else 0.0 for r in rows]
    guess_q = [r.proposed.prob if r.proposed is not None else 0.0 for r in rows]
    guess_text = [visible(r.proposed.text) if r.proposed is not None else "" for r in rows]
    fig = go.Figure()
    fig.add_bar(y=y, x=top_p, orientation="h", name="target's top token: p", marker_color=TARGET,
                text=top_text, textposition="auto", offsetgroup="top")
    fig.add_bar(y=y, x=guess_p, orientation="h", name="the guess this row judges: p", marker_color=[
        _outcome_colour(r.outcome) for r in rows], text=guess_text, textposition="auto", offsetgroup="guess",
        showlegend=False)
    # the judged guess's bar takes its verdict's colour: one legend entry per colour drawn (no bars of their own)
    verdicts = {"kept": "kept", "rejected": "refused", "not used": "never checked (after a refusal)"}
    for outcome, said in verdicts.items():
        if any(r.outcome.startswith(outcome) and r.proposed is not None for r in rows):
            fig.add_bar(y=[y[0]], x=[None], orientation="h", name=f"the guess this row judges: p, {said}",
                        marker_color=_outcome_colour(outcome), offsetgroup="guess", hoverinfo="skip")
    fig.add_bar(y=y, x=guess_q, orientation="h", name="the same guess: q (the draft's)", marker_color=DRAFT,
                text=guess_text, textposition="auto", offsetgroup="q")
    fig.update_layout(barmode="group", title="What each row of the one pass returns", height=140 + 70 * len(rows),
                      xaxis=dict(title="probability", range=[0, 1]), yaxis=dict(autorange="reversed"),
                      margin=dict(l=10, r=10, t=50, b=40), legend=dict(orientation="h", y=-0.15))
    return fig


def cache_figure(story: CacheStory, written: str = "written", after: str = "after the crop") -> go.Figure:
    """KV-cache lengths through one iteration: before, after the pass or the drafting, after the crop (``written``
    and ``after`` name the last two stages: a tree's draft drops its levels' entries before the target checks, and
    a tree's cache keeps its kept path instead of a crop)."""
    c = story.lengths
    stages = ["before", written, after]
    fig = go.Figure()
    fig.add_bar(x=stages, y=[c.target_before, c.target_written, c.target_kept], name="target cache",
                marker_color=TARGET, text=[c.target_before, c.target_written, c.target_kept], textposition="outside")
    if c.draft_before is not None:
        fig.add_bar(x=stages, y=[c.draft_before, c.draft_drafted, c.draft_kept], name="draft cache",
                    marker_color=DRAFT, text=[c.draft_before, c.draft_drafted, c.draft_kept],
                    textposition="outside")
    low = min(v for v in (c.target_before, c.draft_before) if v is not None)
    fig.update_layout(barmode="group", title="KV-cache length (positions) in this iteration",
                      yaxis=dict(title="positions cached", range=[max(0, low - 6), c.target_written + 3]),
                      height=320, margin=dict(l=10, r=10, t=50, b=30))
    return fig


def overlap_figure(overlaps: list[SlotOverlap], measured_alpha: float) -> go.Figure:
    """Each checked slot's chance of being kept (Σ min(p, q)) in run order, coloured by what happened."""
    x = list(range(1, len(overlaps) + 1))
    fig = go.Figure(go.Scatter(
        x=x, y=[o.chance for o in overlaps], mode="markers", name="Σ min(p, q) per checked slot",
        marker=dict(color=[KEPT if o.kept else REJECTED for o in overlaps], size=9),
        text=[f"iteration {o.step + 1}, slot {o.position}: {visible(o.text)!s} ({'kept' if o.kept else 'rejected'})"
              for o in overlaps], hovertemplate="%{text}<br>chance %{y:.3f}<extra></extra>"))
    if overlaps:
        mean = sum(o.chance for o in overlaps) / len(overlaps)
        fig.add_hline(y=mean, line_dash="dash", line_color=TARGET,
                      annotation_text=f"mean chance {mean:.2f}", annotation_position="top left")
    if not math.isnan(measured_alpha):
        fig.add_hline(y=measured_alpha, line_dash="dot", line_color=KEPT,
                      annotation_text=f"measured α {measured_alpha:.2f}", annotation_position="bottom right")
    fig.update_layout(title="The chance each guess had, and what happened (green kept, red rejected)",
                      xaxis=dict(title="checked slot, in run order"), yaxis=dict(title="chance of being kept",
                                                                                 range=[-0.05, 1.05]),
                      height=340, margin=dict(l=10, r=10, t=50, b=40))
    return fig


def position_figure(model: PositionModel, chain: bool = True) -> go.Figure:
    """The conditional acceptance rᵢ and the slot survival by draft position, against the calculator's α and αⁱ; for
    a tree (``chain`` False) by depth, without the chain's αⁱ."""
    ks = list(range(1, len(model.by_position) + 1))
    fig = go.Figure()
    fig.add_scatter(x=ks, y=[None if math.isnan(v) else v for v in model.by_position], mode="lines+markers",
                    name="rᵢ: kept when reached (this run)", line_color=KEPT)
    fig.add_scatter(x=ks, y=[model.alpha] * len(ks), mode="lines", name=f"constant α = {model.alpha:.2f}",
                    line=dict(color=MUTED, dash="dash"))
    if chain:  # a tree's walk reaches depth i only by keeping depth i - 1: its survival is rᵢ again
        fig.add_scatter(x=ks, y=model.measured_share, mode="lines+markers",
                        name="slot survival: share of the loops drafting slot i that kept it", line_color=DRAFT)
        fig.add_scatter(x=ks, y=model.geometric_share, mode="lines", name="αⁱ (the calculator's model)",
                        line=dict(color=TARGET, dash="dot"))
    where = "draft position i" if chain else "depth i in the tree"
    fig.update_layout(title=(f"Conditional acceptance rᵢ and slot survival, by {where}" if chain else
                             f"Conditional acceptance rᵢ by {where}"),
                      xaxis=dict(title=where, dtick=1),
                      yaxis=dict(title="probability", range=[0, 1.05]), height=340,
                      margin=dict(l=10, r=10, t=50, b=40), legend=dict(orientation="h", y=-0.25))
    return fig


def policies_figure(runs) -> go.Figure:
    """Guesses drafted per iteration under each K policy (specsim.lesson.kpolicy_runs.PolicyRun), as steps."""
    fig = go.Figure()
    for run in runs:
        fig.add_scatter(x=list(range(1, len(run.drafted) + 1)), y=run.drafted, mode="lines+markers",
                        line={"shape": "hv"}, name=f"{run.name}: {len(run.drafted)} iterations")
    fig.update_layout(title="Guesses drafted in each iteration, by K policy", xaxis={"title": "iteration"},
                      yaxis={"title": "guesses drafted", "rangemode": "tozero"}, height=340,
                      margin={"l": 10, "r": 10, "t": 50, "b": 40}, legend={"orientation": "h", "y": -0.25})
    return fig
