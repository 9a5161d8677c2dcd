"""Under the hood, "What a tree buys": τ against the verification width for a chain and for the best tree of the
same node count, from the run's own acceptance by rank, priced with this machine's v(n) and with the roofline at
batch size B (:mod:`specsim.lesson.tree_economics`)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from app import state
from app.charts import chart
from app.layout import script_path
from app.palette import DRAFT, KEPT, REJECTED, TARGET
from specsim.core.defaults import GPU_RIDGE
from specsim.core.paths import VERIFY_CURVE_RECORDED
from specsim.core.trace import Trace
from specsim.lesson import roofline
from specsim.lesson import tree_economics as te
from specsim.measure import costmodel, fairtime, passcost
from specsim.variants import tree_rules

SIZES = tuple(range(1, 17))  # nodes: the chain's K, or a tree's candidates (a pass over 1 + nodes tokens)
BATCHES = (1, 4, 16, 32, 64, 128, 256)


@dataclass(frozen=True)
class VSource:
    """Where the tree economics' v(n) comes from: its name in the text, its short name in the chart, and v(n)."""

    name: str
    short: str
    v: Callable[[int], float]


_ORDINALS = ("first", "second", "third")


def tree_paths(tree: te.Tree) -> str:
    """A tree's nodes as the draft's ranks along each path, e.g. "1; 1→1; 3": the top guess, the top guess after
    it, and the third choice at the first position."""
    return "; ".join("→".join(str(r) for r in path) for path in tree.paths)


def machine_v() -> VSource:
    """This machine's measured v(n) where there is one; else the curve recorded on a CPU (the recordings' c was timed
    on a CPU, so a GPU's roofline beside it would price a machine that exists nowhere); the app's GPU roofline only
    when neither is there. n = 1 costs 1."""
    from app.calculator import v_curve

    def from_curve(curve) -> Callable[[int], float]:  # v(K + 1) for K = 1..: v(n) at index n - 2
        return lambda n: 1.0 if n <= 1 else float(curve[min(n - 1, len(curve)) - 1])

    here = v_curve.measured()
    if here is not None:
        return VSource(here[0], "v(n) measured here", from_curve(here[1]))
    recorded = passcost.load_recorded(VERIFY_CURVE_RECORDED)
    if recorded is not None:
        return VSource(f"the curve recorded on a CPU ({recorded.machine}, {recorded.when}; *Is verification free "
                       "here?*)", "v(n) recorded on a CPU",
                       lambda n: 1.0 if n <= 1 else max(1.0, recorded.curve.v_at(n)))
    name, ridge = next(iter(v_curve.MODELS.items()))  # the GPU serving one request
    return VSource(name, f"the roofline's v(n), R = {ridge:g}",
                   lambda n: 1.0 if n <= 1 else roofline.roofline_pass_cost(n, ridge))


def batch_v(batch: int, ridge: float = GPU_RIDGE) -> Callable[[int], float]:
    """The roofline's v at batch B for a pass of n tokens a sequence (weights only)."""
    return lambda n: roofline.roofline_pass_cost(batch * n, ridge) / roofline.roofline_pass_cost(batch, ridge)


def economics_figure(probs: tuple[float, ...], draft_cost: float, v: Callable[[int], float],
                     v_label: str = "this machine's v(n)", measured: RealTrees | None = None) -> go.Figure:
    """τ and speedup against the nodes checked, for a chain and the fastest tree of each size, and on the τ panel the
    tree with the most τ of each size (the n most probable paths: never below the chain, since a chain is a tree);
    the fastest tree can keep fewer tokens than either and still win, by fewer draft passes. ``measured`` marks a
    tree run's own trees on both panels."""
    chains = [te.chain(probs, n) for n in SIZES]
    trees = [te.fastest_tree(probs, n, draft_cost, v) for n in SIZES]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("tokens per loop τ", f"speedup, with {v_label}"))
    fig.add_scatter(x=list(SIZES), y=[te.best_tree(probs, n).tau for n in SIZES], mode="lines",
                    name="tree with the most τ of that many nodes (left only)",
                    line={"color": TARGET, "dash": "dot"}, row=1, col=1)
    for name, shapes, colour in (("chain of K guesses", chains, DRAFT),
                                 ("fastest tree of up to that many nodes", trees, TARGET)):
        fig.add_scatter(x=list(SIZES), y=[t.tau for t in shapes], mode="lines+markers", name=name,
                        line={"color": colour}, legendgroup=name, row=1, col=1)
        fig.add_scatter(x=list(SIZES), y=[te.speedup(t, draft_cost, v) for t in shapes], mode="lines+markers",
                        name=name, line={"color": colour}, legendgroup=name, showlegend=False, row=1, col=2)
    if measured is not None:
        for col, y in ((1, measured.tau), (2, measured.speedup)):
            fig.add_scatter(x=[measured.guesses], y=[y], mode="markers", name="this run's real trees",
                            marker={"color": KEPT, "size": 13, "symbol": "star"}, legendgroup="real",
                            showlegend=col == 1, row=1, col=col)
    fig.add_scatter(x=[SIZES[0], SIZES[-1]], y=[1, 1], mode="lines", name="plain decoding",
                    line={"color": REJECTED, "dash": "dash"}, row=1, col=2)
    fig.update_xaxes(title_text="nodes checked (the pass reads 1 + nodes tokens)", dtick=2)
    fig.update_layout(height=360, margin={"l": 10, "r": 10, "t": 50, "b": 10}, legend={"orientation": "h", "y": -0.3})
    return fig


@functools.lru_cache(maxsize=16)
def batch_rows(probs: tuple[float, ...], draft_cost: float) -> tuple[tuple[int, te.Tree, float, te.Tree, float], ...]:
    """(B, best chain, its speedup, best tree, its speedup) at each batch size, weights-only roofline; kept for the
    runs last shown (every script run of the page asks again)."""
    rows = []
    for b in BATCHES:
        ch, s_ch = te.best_by_size(probs, draft_cost, batch_v(b), SIZES, te.chain)
        tr, s_tr = te.best_by_size(probs, draft_cost, batch_v(b), SIZES)
        rows.append((b, ch, s_ch, tr, s_tr))
    return tuple(rows)


def batch_table(rows: Sequence[tuple[int, te.Tree, float, te.Tree, float]]) -> list[dict]:
    """One row per batch size: the best chain and the best tree, each with its speedup (1× where neither pays)."""
    out = []
    for b, ch, s_ch, tr, s_tr in rows:
        pays = max(s_ch, s_tr) > 1
        out.append({"batch size B": b,
                    "best chain": f"K = {ch.nodes}, {s_ch:.2f}×" if pays else "off (1×)",
                    "best tree": f"{tr.nodes} node{'' if tr.nodes == 1 else 's'}, {s_tr:.2f}×" if pays else "off (1×)"})
    return out


def batch_sentence(rows: list[tuple[int, te.Tree, float, te.Tree, float]]) -> str:
    """What the table of :func:`batch_table` shows, in one or two sentences."""
    equal = next(((b, ch, s_ch, tr, s_tr) for b, ch, s_ch, tr, s_tr in rows
                  if tr.nodes <= ch.nodes or s_tr - s_ch < 0.005), None)
    text = "**As the batch grows** on a GPU, "
    if equal is not None:
        b, ch, s_ch, tr, s_tr = equal
        text += (f"from B = {b} the best tree has no more nodes than the best chain ({tr.nodes} and {ch.nodes}): "
                 "each extra candidate is now arithmetic the batch already uses, so width stops paying")
        if s_tr - s_ch < 0.005:
            text += "."
        elif tr.tau > ch.tau:
            text += (f"; what lead the tree keeps there ({s_tr:.2f}× against {s_ch:.2f}×) comes from placing its nodes "
                     f"where the target's tokens are: τ {tr.tau:.2f} against {ch.tau:.2f}.")
        else:
            text += (f"; what lead the tree keeps there ({s_tr:.2f}× against {s_ch:.2f}×) comes from its shallower "
                     f"shape: {tr.depth} draft pass{'' if tr.depth == 1 else 'es'} against the chain's {ch.nodes}, for "
                     f"τ {tr.tau:.2f} against {ch.tau:.2f}.")
    else:
        text += "at every batch size here a tree still beats the chain."
    return text + (f" Assumptions: the GPU's roofline, weights only, R = {GPU_RIDGE}; this run's c kept as a stand-in "
                   "(a small draft on a GPU is launch-bound and has a c of its own, *Is verification free here?*); "
                   "the long context's KV-cache reads, which *What it costs* adds, left out (they keep the larger "
                   "batches paying longer).")


def rules_example() -> str:
    """The worked example beside the two rules: the draft's top candidates at one node, checked both ways."""
    p, q, k = tree_rules.EXAMPLE_P, tree_rules.EXAMPLE_Q, tree_rules.EXAMPLE_CANDIDATES
    names = "ABCDEFGH"[: len(p)]

    def spelled(dist) -> str:
        return ", ".join(f"{name} {x:.2f}" for name, x in zip(names, dist, strict=True))

    def verdict(dist) -> str:
        return "which is p" if tree_rules.is_target(dist, p) else "not p"

    eagle, wrong, iid = (tree_rules.eagle2(p, q, k), tree_rules.specinfer_rule_on_top_k(p, q, k),
                         tree_rules.specinfer(p, q, k))
    tops = " and ".join(names[i] for i in tree_rules.top_k(q, k))
    return (f"A worked node: the target's p is ({spelled(p)}) and the draft's q is ({spelled(q)}); the tree puts "
            f"the draft's top {k}, {tops}, at the node. Checked with EAGLE-2's rule they give ({spelled(eagle)}), "
            f"{verdict(eagle)}. Checked with SpecInfer's min(1, p/q) rule, which assumes the candidates were drawn "
            f"from q, the same candidates give ({spelled(wrong)}), {verdict(wrong)}. Drawn from q instead, {k} "
            f"candidates checked with SpecInfer's rule give ({spelled(iid)}), {verdict(iid)} (exact sums over every "
            "case, no sampling).")


def rules_section() -> None:
    st.subheader("Trees, and which variants stay lossless")
    st.markdown(
        "A chain proposes one guess per position. A **token tree** proposes several candidates per position "
        "(SpecInfer, Medusa, EAGLE-2) and verifies the whole tree in one pass, with a **tree attention mask**: each "
        "node attends to the cached context, its ancestors and itself, the tree version of a chain's causal "
        "mask. Each node is also numbered by its depth in the tree, not by its row in the pass, so siblings share "
        "one position number (the position ids the model's position encoding reads).\n\n"
        "- **Greedy trees** are lossless trivially: the longest path whose every token is the target's argmax is "
        "kept. The app's trees are checked this way: the live page's drafted trees, and on the Variants page Medusa's "
        "and lookahead's.\n"
        "- **Sampling trees** stay lossless with **multi-candidate rejection sampling**, and which rule is right "
        "depends on how the candidates at a node were chosen:\n"
        "  - **Candidates drawn independently from the draft's q** (SpecInfer, Miao et al., 2023): try them in "
        "turn, each kept with probability min(1, p/q); after a refusal replace p by the normalised residual "
        "max(0, p − q) and try the next; if all are refused, sample the residual. Each step is the one-slot rule "
        "of *Why the output is unchanged*.\n"
        "  - **The draft's distinct top-k tokens** (EAGLE-2, Li et al., 2024): q plays no part. Keep candidate x "
        "with probability p(x); after a refusal set p(x) = 0 and renormalise, then try the next; if all are "
        "refused, sample what is left of p. Refusing x and renormalising is p conditioned on \"not x\", so the "
        "output is p.\n"
        "  - Mixing them up breaks the guarantee: min(1, p/q) assumes the candidate was a draw from q, and a "
        "top-k token was not.\n"
        "- **Medusa's typical acceptance** (its sampling mode; it decodes greedily by default) keeps a candidate "
        "whose probability under the target clears a threshold. It is faster and **lossy**: the output no longer "
        "follows the target's distribution.")
    st.markdown(rules_example())
    st.page_link(script_path("variants.py"), label="Run the Medusa tree on the Variants page",
                 icon=":material/account_tree:")


@dataclass(frozen=True)
class RealTrees:
    """A tree run's own trees, priced as the chart prices the model's: τ over (draft passes · c + v(pass width))."""

    guesses: float  # guesses a tree, on average
    tau: float  # tokens per loop
    passes: float  # draft passes a loop, on average
    speedup: float


def real_trees(trace: Trace, draft_cost: float, v: Callable[[int], float]) -> RealTrees:
    its = trace.iterations
    cost = sum(it.draft_passes * draft_cost + v(it.tree.width_read) for it in its) / len(its)
    return RealTrees(sum(len(it.tree.nodes) - 1 for it in its) / len(its), trace.tokens_per_pass,
                     trace.draft_passes / len(its), trace.tokens_per_pass / cost)


def real_trees_sentence(trace: Trace, hits: te.RankHits, draft_cost: float, v: Callable[[int], float],
                        measured: float | None = None) -> str:
    """A tree run's measured τ and priced speedup beside the model's fastest tree under the same limits, and
    ``measured``, the run's own speedup timed against plain decoding, where there is one."""
    nodes, depth, width = trace.settings.tree
    real = real_trees(trace, draft_cost, v)
    model = te.fastest_tree(hits.probs, nodes, draft_cost, v, width=width, max_depth=depth)
    s_model = te.speedup(model, draft_cost, v)
    idle = sum(1 for it in trace.iterations if it.k == 0)
    text = (f"**This run drafted real trees** (at most {nodes} guesses, {depth} levels and {width} children a node; "
            f"{real.guesses:.1f} guesses a loop on average): {trace.n_decoded} tokens in {len(trace.iterations)} "
            f"loops, **τ = {real.tau:.2f}**, with {real.passes:.1f} draft passes a loop. Priced as the chart prices "
            f"the model, that is **{real.speedup:.2f}×** (the star). The model's fastest tree under the same limits "
            f"writes τ = {model.tau:.2f} with {model.depth} draft pass{'' if model.depth == 1 else 'es'}, "
            f"{s_model:.2f}×. ")
    if real.speedup < s_model - 0.02:
        text += (f"The real trees fall short for plain reasons: the model is scored on the {hits.checked} positions "
                 "it was fitted to, which flatters it, and takes every position as alike; the real trees are shaped "
                 "by the draft's own q, not by those ranks; the real draft spends a "
                 f"pass on every level asked for ({depth} here) even where the guesses it keeps stop short of them"
                 + (f"; and {idle} loop{'s' if idle != 1 else ''} had no room left for a guess" if idle else "")
                 + ". ")
    elif real.speedup > s_model + 0.02:
        text += ("The real trees beat the model: the draft's q tells easy positions from hard ones and spends its "
                 "nodes where they pay, which a model of alike positions cannot. ")
    else:
        text += "The two agree within 0.02×. "
    text += "From so few positions, read the gap as rough."
    if measured is not None:
        text += (f" Timed against plain decoding on this machine, the run itself ran at {measured:.2f}×: the chart "
                 "prices every tree with the same v(n), and a real pass costs what this machine's kernels make it.")
    return text


def section(trace: Trace, plain: Trace | None, fallback_cost: float) -> None:
    st.subheader("What a tree buys")
    hits = te.rank_hits([trace])
    if not hits.checked or len(hits.counts) < 2:
        st.info("This run's drafter offered one guess per position (prompt lookup copies one), so it has no ranking "
                "of candidates to build a tree from. Pick the prose recording, or a run with a draft model.")
        return
    cov = [hits.coverage(r) for r in range(1, len(hits.counts) + 1)]
    st.markdown(
        "A tree is worth its extra width only if the target's token is often the draft's runner-up. On this run, at "
        f"the {hits.checked} positions the target checked, its token was the draft's "
        + ", ".join(f"{_ORDINALS[r]} choice {p:.0%} of the time" for r, p in enumerate(hits.probs[:3]))
        + f" (in its top {len(cov)}: {cov[-1]:.0%}). "
        "Taking positions as alike and independent (the chain's one-α assumption, rank by rank), the best tree of "
        "n nodes is the n most probable paths, each with its prefix (the shape EAGLE-2's dynamic tree grows toward). "
        "Each extra level costs one more draft pass, so at each size the chart draws the fastest such tree: its "
        "depth capped where a deeper level costs more than it keeps.")
    measured_c = plain is not None and plain.n_generated
    c = costmodel.cost_model([trace], [plain]).draft_cost if measured_c else fallback_cost
    c_from = "this run's measured drafting cost" if measured_c else "the calculator's draft cost"
    source = machine_v()
    v_name, v, short = source.name, source.v, source.short
    own = real_trees(trace, c, v) if trace.settings.tree is not None else None
    chart(economics_figure(hits.probs, c, v, short, own), key=state.HOOD_TREE_CHART)
    tree, s_tree = te.best_by_size(hits.probs, c, v, SIZES)
    ch, s_ch = te.best_by_size(hits.probs, c, v, SIZES, te.chain)
    same = te.chain(hits.probs, tree.nodes)
    st.markdown(
        f"With c = {c:.3f} (one draft pass's time over one target pass: {c_from}) and v(n) (a target pass over n "
        f"tokens, over a one-token pass) from {v_name}: the best tree of up to {SIZES[-1]} nodes has "
        f"{tree.nodes} nodes (the draft's ranks along each path: {tree_paths(tree)}) and writes τ = {tree.tau:.2f} "
        "tokens a loop, where a chain of the same size writes "
        f"{same.tau:.2f}; the best tree runs at {s_tree:.2f}× and the best "
        f"chain (K = {ch.nodes}) at {s_ch:.2f}×. The tree's draft spends {tree.depth} "
        f"pass{'' if tree.depth == 1 else 'es'} (one per level; a draft pass is priced at c however many nodes its "
        f"level reads); the best chain (K = {ch.nodes}) spends {ch.nodes}, and a chain of {tree.nodes} guesses would "
        f"spend {tree.nodes}. The tree's verification reads {tree.nodes + 1} tokens. "
        f"From {hits.checked} positions these rates are rough: a few "
        f"more hits at rank 2 or 3 move the tree's τ. So the best K here (K = {ch.nodes}) comes from a model, and the "
        "live page's measured best K can differ: that one times whole runs on this machine, copying included, on "
        f"held-out prompts; this chart prices one run's acceptance by rank with {short}, and the table below with "
        "a GPU's roofline.")
    if trace.settings.tree is not None:
        timed = fairtime.fair_speedup([(trace, plain)]).headline if measured_c else None
        st.markdown(real_trees_sentence(trace, hits, c, v, timed))
    rows = batch_rows(hits.probs, c)
    st.markdown(batch_sentence(rows))
    st.table(batch_table(rows), hide_index=True)
    with st.expander("How this was measured"):
        st.markdown(f"Acceptance by rank {' / '.join(f'{p:.2f}' for p in hits.probs)} (ranks 1 to {len(hits.probs)} "
                    f"of the draft's list; counts {' / '.join(str(n) for n in hits.counts)} of {hits.checked} "
                    f"positions). Trees of {SIZES[0]} to {SIZES[-1]} nodes; a draft pass over a level's nodes is "
                    "priced as one pass.")



