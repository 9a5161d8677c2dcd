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

The iteration records the path it checked: the walked nodes, then the best scored child where the walk
stopped (the guess the target refused), so a trace reads like a chain's. Sampling is not covered yet: a sampled
tree needs the distinct top-k rule (*Under the hood*, "token trees") and is refused with a message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

from specsim.core.acceptance import verify
from specsim.core.clock import now
from specsim.core.defaults import TOP_N
from specsim.core.drafters import Drafter, Proposal, hidden_request, target_features
from specsim.core.engine import decode_loop
from specsim.core.loop_parts import Checked, eos_token_ids, run_settings
from specsim.core.model_drafters import draft_cache_length
from specsim.core.models import LoadedModel
from specsim.core.sampling import SamplingConfig, top_tokens, warp
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


class TreeStep:
    """One tree iteration (steps 1-4) for :func:`specsim.core.engine.decode_loop`."""

    def __init__(self, target: LoadedModel, drafter: Drafter, shape: TreeShape, sampling: SamplingConfig):
        if not sampling.greedy:
            raise ValueError("token trees run greedy decoding only (temperature 0); a sampled tree needs the "
                             "distinct top-k rule, which the engine does not run yet")
        if not hasattr(drafter, "tree_pass"):
            raise ValueError(f"the {drafter.kind} drafter cannot draft a tree (a draft model or the EAGLE head can)")
        self.target, self.drafter, self.shape, self.sampling = target, drafter, shape, sampling
        self.generator = None
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
        path = walk(tree, target_probs)
        end = path[-1] if path else 0
        refused = [n for n in range(1, len(tree)) if tree.parents[n] == end]
        checked = path + sorted(refused, key=lambda n: (-drafted.score[n], n))[:1]
        tokens = [tree.tokens[n] for n in checked]
        times = drafted.pass_times
        proposal = Proposal(tokens=tokens, q=[drafted.q[n] for n in checked],
                            top=[drafted.top[tree.parents[n]] for n in checked],
                            pass_times=[times[tree.depth(n) - 1] for n in checked],
                            overhead_s=sum(times) - sum(times[tree.depth(n) - 1] for n in checked))
        rows = [0, *checked]
        verdict = verify(tokens, proposal, target_probs[rows], self.sampling, None, self.eos)
        kept = [0, *checked[: verdict.n_accepted]]
        keep_nodes(self.cache, past, kept)  # step 4
        self.hidden = (target_features(out.hidden_states, self.feature_layers)[0][kept]
                       if self.drafter.needs_target_hidden else None)
        self.widths.append(len(tree))
        self.trees.append(drafted)
        self.lengths = (past, past + len(tree), draft_before, draft_cache_length(self.drafter))
        return Checked(proposal, target_probs[rows], verdict, now(self.target.device) - verify_start,
                       k_planned=self.shape.depth)

    def accept(self, context: list[int], emitted: list[int]) -> CacheLengths:
        self.drafter.observe(context, None if self.hidden is None else self.hidden[: len(emitted)])
        target_before, target_written, draft_before, draft_drafted = self.lengths
        draft_kept = draft_cache_length(self.drafter)
        return CacheLengths(target_before, target_written, self.cache.get_seq_length(), draft_before, draft_drafted,
                            draft_kept, None if draft_kept is None else len(context) - draft_kept)


def tree_generate(
    target: LoadedModel, drafter: Drafter, prompt_ids: list[int], shape: TreeShape, max_new_tokens: int,
    sampling: SamplingConfig = GREEDY, on_iteration: Callable[[Iteration], None] | None = None,
    should_stop: Callable[[], bool] | None = None, step: TreeStep | None = None,
) -> Trace:
    """Generate with a token tree each iteration; greedy output equals plain decoding's. ``step`` (optional) is a
    :class:`TreeStep` built by the caller, to read its trees and pass widths afterwards."""
    step = step or TreeStep(target, drafter, shape, sampling)
    settings = run_settings(target, shape.depth, max_new_tokens, sampling, 0, drafter.kind,
                            f"{drafter.name}, {shape.label}")
    return decode_loop(target, step, prompt_ids, settings, on_iteration, should_stop)
