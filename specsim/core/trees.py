"""Speculative decoding with a token tree: the draft guesses several continuations, the target checks all at once.

A chain of K guesses stops paying at the first miss: with a draft whose top guess is the target's token a
fraction α of the time, the expected run of kept guesses is below α / (1 - α) however long the chain. Where the
top guess misses, the second or third often hits (the bundled pair: the target's token is the draft's top guess
at 39 % of held-out positions, in its top 2 at 52 %, its top 3 at 62 %). A tree keeps those alternatives. One
iteration, greedy (EAGLE-2's dynamic tree, Li et al., 2024):

1. **Draft the tree.** The draft (a draft model, or the EAGLE head on the target's features) reads the
   context; the root's ``width`` most likely tokens become its children. At each further depth the draft reads,
   in one pass, the ``width`` newest nodes with the highest *score* (the product of the draft's probabilities
   along the path from the root, its estimate of the chance that the whole path is kept), and each gets its
   ``width`` most likely children. After ``depth`` levels the ``nodes`` best scored guesses are kept (a child
   never scores above its parent, so they form a tree).
2. **Verify in one pass.** The target reads the root and every kept guess at once: each node sits at the
   position of its depth and attends to the context and its own ancestors (:mod:`specsim.core.token_tree`).
3. **Walk down.** From the root, follow the child whose token is the target's top token at the current node;
   stop where no child is. The walked path is kept and the target's top token after it is the +1, so the output
   is plain decoding's, token for token (each node's logits are those of plain decoding at that position:
   ``tests/test_trees.py`` checks them against a pass per node).
4. **Crop.** The target's cache keeps the context and the walked path; the draft forgets its tree passes.

Sampling (temperature above 0) uses EAGLE-2's rule for distinct candidates (*Under the hood*, "token trees";
:func:`specsim.variants.tree_rules.renormalise_rule` computes its output distribution exactly). The tree depends
on the draft alone, never on a random draw, so at each node the children are a fixed set of distinct tokens: try
them in the draft's order, keep child x with probability p(x); after a refusal set p(x) = 0 and renormalise;
if every child is refused, draw the +1 token from what is left of p (a node without children: from p). Refusing
x and renormalising is p conditioned on "not x", so each token is distributed as the target's own sampling
(:func:`walk_sampled`; ``tests/test_trees.py`` checks the first two tokens' joint distribution, χ²). The draft's
q takes no part: min(1, p/q) would assume the candidate was a draw from q, and a top token is not.

The iteration records the path it checked: the kept nodes, then the first child tried where the walk stopped
(the guess the target refused), so a trace reads like a chain's.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

import torch

from specsim.core.acceptance import Verdict, verify
from specsim.core.clock import now
from specsim.core.defaults import TOP_N
from specsim.core.drafters import Drafter, Proposal, hidden_request, target_features
from specsim.core.engine import decode_loop
from specsim.core.loop_parts import Checked, CheckedTree, eos_token_ids, run_settings
from specsim.core.model_drafters import draft_cache_length
from specsim.core.models import LoadedModel
from specsim.core.sampling import SamplingConfig, sample, top_tokens, uniform, warp
from specsim.core.token_tree import TokenTree, keep_nodes, tree_forward
from specsim.core.trace import CacheLengths, Iteration, Trace


@dataclass(frozen=True)
class TreeShape:
    """How big a tree the draft grows each iteration."""

    nodes: int = 8  # guesses in the tree (the root, the context's last token, not counted): the pass reads nodes + 1
    depth: int = 4  # the longest root-to-leaf path: at most depth + 1 tokens per iteration
    width: int = 3  # children per expanded node, and nodes expanded per depth

    def __post_init__(self) -> None:
        for name in ("nodes", "depth", "width"):
            if not 1 <= getattr(self, name) <= 64:
                raise ValueError(f"the tree's {name} must be between 1 and 64, not {getattr(self, name)}")

    @property
    def label(self) -> str:
        return f"tree of {self.nodes} guesses, depth {self.depth}, width {self.width}"

    @classmethod
    def live(cls, nodes: int, depth: int) -> TreeShape:
        """The shape the live page, the CLI and the machine profile run: ``nodes`` guesses, ``depth`` levels and
        min(TREE_WIDTH, nodes) children a node."""
        from specsim.core.defaults import TREE_WIDTH

        return cls(nodes, depth, min(TREE_WIDTH, nodes))


@dataclass
class DraftedTree:
    """The draft's tree for one iteration, with what the draft thought of each node."""

    tree: TokenTree
    q: list[float]  # the draft's probability of each node's token after its parent (the root: 1)
    score: list[float]  # the product of q from the root down to each node
    top: list[list[tuple[int, float]]]  # the draft's top tokens after each node that it read (empty: not read)
    pass_times: list[float] = field(default_factory=list)  # seconds of each draft pass (one per depth read)


def draft_tree(drafter: Drafter, context: Sequence[int], shape: TreeShape, max_depth: int) -> DraftedTree:
    """Step 1: grow the tree (never deeper than ``max_depth``, what the token budget can still use).

    Node order is creation order, so a parent always comes before its children; ties in score keep the
    earlier node. The draft's cache holds the context again afterwards."""
    device = drafter.device
    if max_depth < 1:  # the budget leaves room for the target's +1 alone: no guess to draft, no pass to spend
        return DraftedTree(TokenTree.rooted(int(context[-1])), [1.0], [1.0], [[]], [])
    tokens, parents, q, score, depth = [int(context[-1])], [-1], [1.0], [1.0], [0]
    top: list[list[tuple[int, float]]] = [[]]
    times = []
    start = now(device)
    logits = {0: drafter.read_context(context)}
    times.append(now(device) - start)
    base = drafter.cache.get_seq_length()  # the context as the draft holds it; its last entry is the root's input
    slot = {0: base - 1}  # node -> its entry in the draft's cache
    frontier = [0]
    for level in range(1, min(shape.depth, max_depth) + 1):
        newest = []
        for node in frontier:  # each read node's most likely tokens become its children
            row = logits.pop(node)
            vocab_map = drafter.map_for(row.shape[-1])
            probs = torch.softmax(row[: len(vocab_map)].float(), dim=-1)
            top[node] = [(int(vocab_map[i]), p) for i, p in top_tokens(probs, TOP_N)]
            values, indices = torch.topk(probs, min(shape.width, probs.shape[-1]))
            for p, i in zip(values.tolist(), indices.tolist(), strict=True):
                tokens.append(int(vocab_map[i]))
                parents.append(node)
                q.append(p)
                score.append(score[node] * p)
                depth.append(level)
                top.append([])
                newest.append(len(tokens) - 1)
        if level == min(shape.depth, max_depth):
            break
        frontier = sorted(newest, key=lambda i: (-score[i], i))[: shape.width]
        frontier.sort()
        start = now(device)
        cached = drafter.cache.get_seq_length()
        allowed = torch.zeros(len(frontier), cached + len(frontier), dtype=torch.bool)
        allowed[:, :base] = True  # the context, the root's input included
        for row, node in enumerate(frontier):
            slot[node] = cached + row
            ancestor = parents[node]
            while ancestor > 0:
                allowed[row, slot[ancestor]] = True
                ancestor = parents[ancestor]
            allowed[row, slot[node]] = True
        rows = drafter.tree_pass([tokens[i] for i in frontier], [base - 1 + level] * len(frontier), allowed,
                                 nodes=frontier, parents=[parents[i] for i in frontier])
        logits.update({node: rows[row] for row, node in enumerate(frontier)})
        times.append(now(device) - start)
    drafter.rewind()
    kept = sorted(sorted(range(1, len(tokens)), key=lambda i: (-score[i], i))[: shape.nodes])
    tree, index = TokenTree.rooted(tokens[0]), {0: 0}
    for node in kept:  # a kept node's parent scores at least as high and came first, so it is kept too
        index[node] = tree.add(tokens[node], index[parents[node]], f"depth {depth[node]}")
    order = [0, *kept]
    return DraftedTree(tree, [q[i] for i in order], [score[i] for i in order], [top[i] for i in order], times)


def walk(tree: TokenTree, target_probs: torch.Tensor) -> list[int]:
    """Step 3: from the root, the child whose token is the target's top token, as long as there is one."""
    children: dict[int, dict[int, int]] = {}
    for node in range(1, len(tree)):
        children.setdefault(tree.parents[node], {})[tree.tokens[node]] = node
    path, node = [], 0
    while (child := children.get(node, {}).get(int(torch.argmax(target_probs[node])))) is not None:
        path.append(child)
        node = child
    return path


GREEDY = SamplingConfig()


def children_in_order(tree: TokenTree, score: Sequence[float]) -> dict[int, list[int]]:
    """Each node's children, the draft's best scored first (ties: the earlier node)."""
    children: dict[int, list[int]] = {}
    for node in sorted(range(1, len(tree)), key=lambda n: (-score[n], n)):
        children.setdefault(tree.parents[node], []).append(node)
    return children


@dataclass
class SampledWalk:
    """Step 3 under sampling: the kept nodes, the first child refused where the walk stopped, and the +1 token."""

    path: list[int]
    refused: int | None  # the first child tried and refused at the last node (None: it had no children)
    keep: list[float]  # per checked node (the path, then the refused one): the probability it was kept with
    draws: list[float]  # the uniform draw each was compared with
    extra: int
    extra_kind: str  # "resample" (every child refused) or "bonus" (no child)
    residual: torch.Tensor | None  # what was left of p where the +1 token was drawn after refusals
    residual_mass: float  # p's mass on the tokens that were not refused there
    tried: list[int] = field(default_factory=list)  # every child tried and refused, in the order tried


def walk_sampled(tree: TokenTree, target_probs: torch.Tensor, score: Sequence[float],
                 generator: torch.Generator | None, eos: Collection[int] = ()) -> SampledWalk:
    """Step 3 by EAGLE-2's rule (module docstring): at each node its children in the draft's order, each kept with
    probability p(x) under p renormalised after every refusal; an accepted end-of-text ends the walk."""
    children = children_in_order(tree, score)
    path, keep, draws, node, tried = [], [], [], 0, []
    while True:
        p, kept, first_refused = target_probs[node].double(), None, None
        for child in children.get(node, []):
            token = tree.tokens[child]
            chance, draw = float(p[token]), uniform(generator)
            rest = float(p.sum() - p[token])
            if draw < chance or rest <= 0.0:  # (nothing left to renormalise: p was all on this token)
                kept = child
                keep.append(chance)
                draws.append(draw)
                break
            first_refused = first_refused or (child, chance, draw)
            tried.append(child)
            p = p.clone()
            p[token] = 0.0
            p = p / rest
        if kept is None:
            break
        path.append(kept)
        node = kept
        if tree.tokens[kept] in eos:  # the text is over: the +1 token is recorded, never emitted
            return SampledWalk(path, None, keep, draws, int(torch.argmax(target_probs[node])), "bonus", None, 1.0,
                               tried)
    if first_refused is None:  # a leaf: the bonus token from p
        return SampledWalk(path, None, keep, draws, sample(p.float(), generator), "bonus", None, 1.0, tried)
    child, chance, draw = first_refused
    refused_tokens = [tree.tokens[c] for c in children[node]]  # every child of the last node was refused
    mass = float(1.0 - target_probs[node].double()[refused_tokens].sum())
    return SampledWalk(path, child, [*keep, chance], [*draws, draw], sample(p.float(), generator), "resample",
                       p.float(), mass, tried)


def node_verdicts(tree: TokenTree, kept: list[int], ended: bool, tried: Sequence[int] | None) -> list[str]:
    """Each node's verdict after the walk (``kept``: the root and the kept nodes; ``ended``: an accepted end-of-text
    ended it, so nothing after the last kept node was checked; ``tried``: the children a sampled walk tried and
    refused, None for greedy, which judges every child of a node it reached at once). Where the walk stopped the
    children tried were "refused"; beside the path they were "passed" over (the target kept a sibling); a sampled
    walk's siblings after the kept one are "untried"; below a guess not kept, "unchecked"."""
    walked = kept[:-1] if ended else kept  # the nodes whose children the walk looked at
    stop = None if ended else kept[-1]
    looked_at = {n for n in range(1, len(tree)) if tree.parents[n] in walked} - set(kept)
    refused_or_passed = looked_at if tried is None else set(tried)
    verdicts = []
    for n in range(len(tree)):
        if n == 0:
            verdicts.append("root")
        elif n in kept:
            verdicts.append("kept")
        elif n in refused_or_passed:
            verdicts.append("refused" if tree.parents[n] == stop else "passed")
        else:
            verdicts.append("untried" if n in looked_at else "unchecked")
    return verdicts


class TreeStep:
    """One tree iteration (steps 1-4) for :func:`specsim.core.engine.decode_loop`."""

    def __init__(self, target: LoadedModel, drafter: Drafter, shape: TreeShape, sampling: SamplingConfig = GREEDY,
                 generator: torch.Generator | None = None):
        if not hasattr(drafter, "tree_pass"):
            raise ValueError(f"the {drafter.kind} drafter cannot draft a tree (a draft model or the EAGLE head can)")
        self.target, self.drafter, self.shape, self.sampling = target, drafter, shape, sampling
        self.generator = generator
        self.needs_prompt_hidden = hidden_request(drafter)  # the EAGLE head reads the target's features
        self.feature_layers = getattr(drafter, "feature_layers", None)
        self.hidden: torch.Tensor | None = None  # the target's features of the kept path in the latest pass
        self.eos = eos_token_ids(target)
        self.cache = None
        self.widths: list[int] = []  # tokens read by each verification pass (the tree's nodes and its root)
        self.trees: list[DraftedTree] = []
        self.lengths: tuple = ()

    def start(self, context: list[int], cache, prompt_hidden: torch.Tensor | None) -> None:
        self.cache = cache
        self.drafter.start(context, self.target.model.get_output_embeddings().weight.shape[0],
                           target_hidden=prompt_hidden)

    def check(self, context: list[int], budget: int) -> Checked:
        draft_before = draft_cache_length(self.drafter)
        drafted = draft_tree(self.drafter, context, self.shape, max_depth=budget - 1)
        tree = drafted.tree
        past, verify_start = self.cache.get_seq_length(), now(self.target.device)
        out = tree_forward(self.target.model, self.cache, tree, output_hidden=self.needs_prompt_hidden)  # step 2
        target_probs = warp(out.logits[0], self.sampling)
        if self.sampling.greedy:
            path = walk(tree, target_probs)
            end = path[-1] if path else 0
            checked = path + children_in_order(tree, drafted.score).get(end, [])[:1]
        else:
            sampled = walk_sampled(tree, target_probs, drafted.score, self.generator, self.eos)
            checked = sampled.path + ([] if sampled.refused is None else [sampled.refused])
        tokens = [tree.tokens[n] for n in checked]
        times = drafted.pass_times
        proposal = Proposal(tokens=tokens, q=[drafted.q[n] for n in checked],
                            top=[drafted.top[tree.parents[n]] for n in checked],
                            pass_times=[times[tree.depth(n) - 1] for n in checked],
                            overhead_s=sum(times) - sum(times[tree.depth(n) - 1] for n in checked))
        rows = [0, *checked]
        if self.sampling.greedy:
            verdict = verify(tokens, proposal, target_probs[rows], self.sampling, None, self.eos)
        else:
            ended = bool(sampled.path) and tree.tokens[sampled.path[-1]] in self.eos
            verdict = Verdict(len(sampled.path), sampled.extra, sampled.extra_kind, sampled.keep, sampled.draws,
                              sampled.residual, sampled.residual_mass, ended)
        kept = [0, *checked[: verdict.n_accepted]]
        keep_nodes(self.cache, past, kept)  # step 4
        tops = torch.max(target_probs, dim=-1)
        record = CheckedTree(
            tokens=list(tree.tokens), parents=list(tree.parents), q=drafted.q, score=drafted.score,
            status=node_verdicts(tree, kept, verdict.ended, None if self.sampling.greedy else sampled.tried),
            target_top=list(zip(tops.indices.tolist(), tops.values.tolist(), strict=True)),
            shape=(self.shape.nodes, self.shape.depth, self.shape.width))
        self.hidden = (target_features(out.hidden_states, self.feature_layers)[0][kept]
                       if self.drafter.needs_target_hidden else None)
        self.widths.append(len(tree))
        self.trees.append(drafted)
        self.lengths = (past, past + len(tree), draft_before, draft_cache_length(self.drafter))
        # k_planned: the draft passes this tree took (the context's read, then one per level expanded), fewer than
        # the depth where the token budget cut the tree short
        return Checked(proposal, target_probs[rows], verdict, now(self.target.device) - verify_start,
                       k_planned=len(drafted.pass_times), tree=record)

    def accept(self, context: list[int], emitted: list[int]) -> CacheLengths:
        self.drafter.observe(context, None if self.hidden is None else self.hidden[: len(emitted)])
        target_before, target_written, draft_before, draft_drafted = self.lengths
        draft_kept = draft_cache_length(self.drafter)
        return CacheLengths(target_before, target_written, self.cache.get_seq_length(), draft_before, draft_drafted,
                            draft_kept, None if draft_kept is None else len(context) - draft_kept)


def tree_generate(
    target: LoadedModel, drafter: Drafter, prompt_ids: list[int], shape: TreeShape, max_new_tokens: int,
    sampling: SamplingConfig = GREEDY, seed: int = 0, on_iteration: Callable[[Iteration], None] | None = None,
    should_stop: Callable[[], bool] | None = None, step: TreeStep | None = None,
) -> Trace:
    """Generate with a token tree each iteration: greedy output equals plain decoding's, sampled output is
    distributed as the target's own sampling. ``step`` (optional) is a :class:`TreeStep` built by the caller, to read
    its trees and pass widths afterwards (its sampling and generator are then the run's)."""
    if step is None:
        generator = torch.Generator(device=target.device).manual_seed(seed)
        step = TreeStep(target, drafter, shape, sampling, generator)
    settings = run_settings(target, shape.depth, max_new_tokens, step.sampling, seed, drafter.kind,
                            f"{drafter.name}, {shape.label}", tree=(shape.nodes, shape.depth, shape.width))
    return decode_loop(target, step, prompt_ids, settings, on_iteration, should_stop)
