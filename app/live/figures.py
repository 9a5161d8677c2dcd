"""Charts of the live decoding page: pure builders, a trace (or figures from it) in, a plotly figure out."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.palette import BACKGROUND, DRAFT, EXTRA, KEPT, MUTED, PLAIN, REJECTED, TARGET
from specsim.core.trace import Iteration, TokenProb, Trace
from specsim.lesson.replay import visible
from specsim.measure import analytics

# One colour per role, shared with the token chips.


def _ranked(top: Sequence[TokenProb], n: int, first: int | None = None) -> list[TokenProb]:
    """The ``n`` most likely tokens, most likely first; on an exact tie the token ``first`` (the one the model
    chose, e.g. the kept token) comes before the others, so the bar order agrees with the verdict."""
    return sorted(top, key=lambda t: (-t.prob, t.token_id != first))[:n]


def _target_choice(it: Iteration, position: int) -> int | None:
    """The token the target settled on at slot t+``position``: the kept proposal, or its own +1 token where
    that lands; None for a slot it never gave a verdict on."""
    if position <= it.n_accepted:
        return it.slots[position - 1].token_id
    if position == it.n_accepted + 1:
        return it.extra.token_id
    return None


def _bars(top: list[TokenProb], highlight: dict[int, str], name: str) -> go.Bar:
    """Horizontal bars, most likely on top; tokens in ``highlight`` get their colour, the rest grey."""
    return go.Bar(
        x=[t.prob for t in top],
        y=list(range(len(top))),
        orientation="h",
        name=name,
        marker_color=[highlight.get(t.token_id, MUTED) for t in top],
        text=[f"{t.prob:.3f}" for t in top],
        textposition="auto",  # inside a long bar, just past a short one
        textangle=0,  # never turned to squeeze into a short bar
        hovertemplate=[f"{visible(t.text)!s}: %{{x:.4f}}<extra>{name}</extra>" for t in top],
        showlegend=False,
    )


def alternatives_figure(it: Iteration, position: int, n: int = 8, cut: bool = False) -> go.Figure:
    """The target's and the draft's most likely tokens at slot t+``position``, side by side (``cut``: a run with
    top-k or top-p, whose p and q are the cut p′ and q′).

    ``position`` runs 1..K over the proposals; K+1 is where a bonus token lands after a full
    acceptance, a place the draft never proposed for.
    """
    if not 1 <= position <= it.k + 1:
        raise ValueError(f"slot t+{position} does not exist in an iteration with K={it.k}")
    slot = it.slots[position - 1] if position <= it.k else None
    copied = slot is not None and slot.copied
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.18,
                        subplot_titles=("target p′ (verification pass, after the cut)" if cut
                                        else "target p (verification pass)",
                                        "copied from earlier text: q = 1" if copied
                                        else "draft q′ (proposal, after the cut)" if cut else "draft q (proposal)"))
    target_top = _ranked(slot.target_top if slot else it.extra_target_top, n, _target_choice(it, position))
    draft_top = _ranked(slot.draft_top, n, slot.token_id) if slot else []
    highlight = {}
    if slot is not None:
        highlight[slot.token_id] = {"accepted": KEPT, "rejected": REJECTED}.get(slot.status, DRAFT)
    if position == it.n_accepted + 1:  # where the target's own token landed
        highlight = {**highlight, it.extra.token_id: EXTRA}
    fig.add_trace(_bars(target_top, highlight, "target"), row=1, col=1)
    if draft_top:
        fig.add_trace(_bars(draft_top, {slot.token_id: DRAFT}, "draft"), row=1, col=2)
    else:
        fig.add_annotation(text="the draft proposed nothing here", showarrow=False, row=1, col=2,
                           x=0.5, y=0.5, xref="x2 domain", yref="y2 domain")
    for col, top in ((1, target_top), (2, draft_top)):
        fig.update_yaxes(tickvals=list(range(len(top))), ticktext=[visible(t.text) for t in top],
                         autorange="reversed", row=1, col=col)
        fig.update_xaxes(range=[0, 1], title_text="probability", row=1, col=col)
    verdict = {"accepted": "kept ✓", "rejected": "rejected ✗", "unchecked": "never checked"}
    what = (f"{'copied' if copied else 'proposal'} {visible(slot.text)} — {verdict[slot.status]}" if slot
            else "bonus position after K")
    if slot is not None and slot.status == "rejected" and position == it.n_accepted + 1:
        what += f"; the target wrote {visible(it.extra.text)} here"  # its correction: the reason on the chart
    fig.update_layout(title=f"Slot t+{position}: {what}", height=360, margin=dict(t=80, l=10, r=10, b=40))
    return fig


def residual_figure(it: Iteration, n: int = 8, cut: bool = False) -> go.Figure:
    """norm(max(0, p − q)) at the first rejected slot, next to the target's p for the same tokens (``cut``: p′ and
    q′, after top-k or top-p)."""
    p, q = ("p′", "q′") if cut else ("p", "q")
    if it.residual is None:
        raise ValueError("this iteration has no residual distribution (greedy mode, or nothing was rejected)")
    rejected = it.slots[it.n_accepted]
    top = _ranked(it.residual.top, n, it.extra.token_id)
    target_p = {t.token_id: t.prob for t in rejected.target_top}
    labels = [visible(t.text) for t in top]
    fig = go.Figure()
    fig.add_bar(x=labels, y=[t.prob for t in top], name=f"residual norm(max(0, {p} − {q}))",
                marker_color=[EXTRA if t.token_id == it.extra.token_id else MUTED for t in top])
    fig.add_bar(x=labels, y=[target_p.get(t.token_id) for t in top], name=f"target {p}", marker_color=TARGET,
                opacity=0.5)
    fig.update_layout(
        title=(f"Slot t+{rejected.position}: the +1 token {visible(it.extra.text)} was drawn from the leftover "
               f"distribution norm(max(0, {p} − {q}))<br><sup>Its mass before normalising, {it.residual.mass:.3f}, is "
               f"the chance that a guess drawn from {q} is rejected, averaged over {q} before the draw; this guess's "
               f"own chance was 1 − min(1, {p}/{q}) = {1 - rejected.accept_prob:.3f}</sup>"),
        barmode="group", yaxis_title="probability", height=340, margin=dict(t=80, l=10, r=10, b=40),
        legend=dict(orientation="h", y=-0.25),
    )
    return fig


def kept_share_figure(kept_share: Sequence[float | None], alpha: float) -> go.Figure:
    """Slot survival: the measured share of iterations keeping slot t+i, against the model's alpha**i. Not the
    conditional acceptance rᵢ of *Under the hood*, which counts only the loops whose check reached the slot."""
    k = len(kept_share)
    xs = list(range(1, k + 1))
    fig = go.Figure()
    fig.add_bar(x=xs, y=list(kept_share), name="measured", marker_color=TARGET,
                hovertemplate="slot t+%{x}: %{y:.2f}<extra>measured</extra>")
    fig.add_scatter(x=xs, y=list(analytics.expected_kept_share(alpha, k)), mode="lines+markers",
                    name=f"α^i with α = {alpha:.2f}", line_color=DRAFT)
    fig.update_layout(title=("Slot survival: share of the loops that drafted slot i and kept it"
                             "<br><sup>r₁⋯rᵢ, not the conditional rᵢ of Under the hood</sup>"),
                      xaxis_title="draft position i (slot t+i)",
                      yaxis_title="share of iterations that kept it", yaxis_range=[0, 1.05], height=320,
                      xaxis=dict(tickmode="array", tickvals=xs), margin=dict(t=60, l=10, r=10, b=40))
    return fig


def kept_histogram_figure(kept_counts: Sequence[int], alpha: float | None) -> go.Figure:
    """How many iterations kept 0..K proposals, against the truncated geometric law at alpha (None: without it, as
    for a tree run, whose walks follow no such law)."""
    k = len(kept_counts) - 1
    xs = list(range(k + 1))
    total = sum(kept_counts)
    fig = go.Figure()
    fig.add_bar(x=xs, y=list(kept_counts), name="iterations", marker_color=TARGET)
    if alpha is not None:
        fig.add_scatter(x=xs, y=[total * p for p in analytics.prefix_distribution(alpha, k)], mode="markers",
                        marker=dict(size=10, symbol="diamond", color=DRAFT), name=f"expected at α = {alpha:.2f}")
    fig.update_layout(title="Kept proposals per loop", xaxis_title="proposals kept (j)", yaxis_title="iterations",
                      height=320, xaxis=dict(tickmode="array", tickvals=xs), margin=dict(t=60, l=10, r=10, b=40))
    return fig


def _prefill_label(trace: Trace) -> str:
    if trace.first is None:
        return "prompt prefill"
    return f"prompt prefill, which chose token 1: {visible(trace.first.text)}"


def _segments(spec: Trace | None, plain: Trace | None) -> list[tuple[str, str, float, str]]:
    """(row, kind, duration in s, hover label) in time order for each run."""
    out: list[tuple[str, str, float, str]] = []
    if spec is not None:
        out.append(("speculative", "prefill", spec.prefill_time_s, _prefill_label(spec)))
        busy = 0.0
        for it in spec.iterations:
            for s in it.slots:
                out.append(("speculative", "draft pass", s.draft_time_s,
                            f"iteration {it.index + 1}, draft pass {s.position}"))
            overhead = it.draft_time_s - sum(s.draft_time_s for s in it.slots)
            if overhead > 0:
                out.append(("speculative", "draft pass", overhead, f"iteration {it.index + 1}, drafting overhead"))
            out.append(("speculative", "verification", it.verify_time_s,
                        f"iteration {it.index + 1}, verification of {it.k} + 1 tokens"))
            busy += it.draft_time_s + it.verify_time_s
        out.append(("speculative", "other", max(0.0, spec.decode_time_s - busy), "bookkeeping between passes"))
    if plain is not None:
        out.append(("plain", "prefill", plain.prefill_time_s, _prefill_label(plain)))
        for it in plain.iterations:
            out.append(("plain", "plain pass", it.verify_time_s,
                        f"token {plain.n_prefilled + it.index + 1}: {visible(it.extra.text)}"))
        busy = sum(plain.pass_times)
        out.append(("plain", "other", max(0.0, plain.decode_time_s - busy), "bookkeeping between passes"))
    return out


TIMELINE_COLORS = {"prefill": MUTED, "draft pass": DRAFT, "verification": TARGET, "plain pass": PLAIN,
                   "other": BACKGROUND}


def timeline_figure(spec: Trace | None, plain: Trace | None) -> go.Figure:
    """Every forward pass of both runs on one time axis (milliseconds since the run started)."""
    segments = _segments(spec, plain)
    starts: dict[str, float] = {}
    by_kind: dict[str, dict[str, list]] = {}
    for row, kind, duration, label in segments:
        start = starts.get(row, 0.0)
        starts[row] = start + duration
        d = by_kind.setdefault(kind, {"x": [], "base": [], "y": [], "text": []})
        d["x"].append(duration * 1000)
        d["base"].append(start * 1000)
        d["y"].append(row)
        d["text"].append(f"{label}: {duration * 1000:.1f} ms")
    fig = go.Figure()
    for kind, d in by_kind.items():
        fig.add_bar(x=d["x"], base=d["base"], y=d["y"], orientation="h", name=kind,
                    marker_color=TIMELINE_COLORS[kind], marker_line_width=0.5, marker_line_color="white",
                    hovertext=d["text"], hoverinfo="text")
    fig.update_layout(title="Where the time goes: every forward pass on one clock", barmode="overlay",
                      xaxis_title="time since the run started (ms)", height=300,
                      legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0),  # above the plot,
                      yaxis=dict(categoryorder="array", categoryarray=["plain", "speculative"]),  # clear of the ticks
                      margin=dict(t=100, l=10, r=10, b=50))
    return fig
