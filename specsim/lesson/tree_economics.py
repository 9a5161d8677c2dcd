"""What a token tree buys over a chain of the same size, from a real run's acceptance by rank.

A chain keeps slot i only if the draft's top guess was right at every slot before it: τ = 1 + h₁ + h₁² + … A tree
offers the target several candidates per position, so a position is won when the target's token is *anywhere*
among them. From a greedy run we read, at every position the target checked, the rank of the target's token in the
draft's list (:func:`rank_hits`). Taking positions as independent and alike (the chain's one-α assumption, per
rank), a node whose path takes ranks r₁ … r_d is on the target's path with probability P(r₁)⋯P(r_d), and the best
tree of n nodes is the n most probable paths, every prefix included (:func:`best_tree`, the shape EAGLE-2's dynamic
tree grows toward). Its τ is 1 plus the sum of its nodes' probabilities.

Verification reads 1 + n tokens (the tree and the position after the last kept token), and the draft spends one
pass per level of the tree (it expands a level's nodes together), where a chain of K spends K. Pure arithmetic: the
pages price it with this machine's v(n), and with the roofline at batch size B.
"""

from __future__ import annotations

import functools
import heapq
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from specsim.core.trace import Trace


@dataclass(frozen=True)
class RankHits:
    """At every position a greedy run's target checked: how often its token was the draft's 1st, 2nd, … guess."""

    counts: tuple[int, ...]  # counts[r - 1]: positions whose target token was the draft's r-th most likely
    checked: int  # positions checked (the target token may be outside the draft's listed top)

    @property
    def probs(self) -> tuple[float, ...]:
        """P(the target's token is the draft's r-th guess), r = 1 … len(counts)."""
        return tuple(c / self.checked for c in self.counts) if self.checked else tuple(0.0 for _ in self.counts)

    def coverage(self, r: int) -> float:
        """P(the target's token is among the draft's top r)."""
        return sum(self.probs[:r])


def rank_hits(traces: Iterable[Trace]) -> RankHits:
    """Ranks of the target's greedy token in the draft's listed top at every checked slot (the kept ones and the
    first refused one of each loop; later slots continue a refused guess and say nothing)."""
    depth = 0
    ranks: list[int | None] = []
    for trace in traces:
        for it in trace.iterations:
            for slot in it.slots[:it.n_accepted + 1]:
                if not slot.draft_top or not slot.target_top:
                    continue
                listed = [t.token_id for t in slot.draft_top]
                depth = max(depth, len(listed))
                target = slot.target_top[0].token_id
                ranks.append(listed.index(target) + 1 if target in listed else None)
    counts = tuple(sum(r == i for r in ranks) for i in range(1, depth + 1))
    return RankHits(counts, len(ranks))


@dataclass(frozen=True)
class Tree:
    """A token tree as the ranks along each node's path from the root, most probable nodes first."""

    paths: tuple[tuple[int, ...], ...]
    values: tuple[float, ...]  # each node's probability of lying on the target's path

    @property
    def nodes(self) -> int:
        return len(self.paths)

    @property
    def depth(self) -> int:
        return max((len(p) for p in self.paths), default=0)

    @property
    def tau(self) -> float:
        """Expected tokens per loop: the nodes kept plus the +1."""
        return 1.0 + sum(self.values)


def best_tree(probs: Sequence[float], nodes: int, depth: int | None = None, width: int | None = None) -> Tree:
    """The ``nodes`` most probable paths, each prefix before its extensions (a path's extension is never more
    probable than the path), grown by always adding the most probable child of a node already in the tree; at most
    ``depth`` levels and ``width`` children a node where they are given (the shape a live tree run was drafted to).

    Kept per arguments (a :class:`Tree` is immutable): :func:`fastest_tree` of every size asks for the same trees
    again, and *Under the hood* asks for every size at several batch sizes on each script run."""
    return _best_tree(tuple(probs), nodes, depth, width)


@functools.lru_cache(maxsize=4096)
def _best_tree(probs: tuple[float, ...], nodes: int, depth: int | None, width: int | None) -> Tree:
    ranked = [(r, p) for r, p in enumerate(probs, start=1) if p > 0 and (width is None or r <= width)]
    frontier: list[tuple[float, tuple[int, ...]]] = [(-p, (r,)) for r, p in ranked]
    heapq.heapify(frontier)
    paths: list[tuple[int, ...]] = []
    values: list[float] = []
    while frontier and len(paths) < nodes:
        neg, path = heapq.heappop(frontier)
        paths.append(path)
        values.append(-neg)
        if depth is None or len(path) < depth:
            for r, p in ranked:
                heapq.heappush(frontier, (neg * p, (*path, r)))
    return Tree(tuple(paths), tuple(values))


def chain(probs: Sequence[float], k: int) -> Tree:
    """A chain of K top guesses: ranks (1,), (1, 1), …"""
    top = probs[0] if probs else 0.0
    return Tree(tuple((1,) * i for i in range(1, k + 1)), tuple(top ** i for i in range(1, k + 1)))


def speedup(tree: Tree, draft_cost: float, verify_cost: Callable[[int], float]) -> float:
    """τ over the loop's cost: one draft pass per level at c each, and a pass over the tree plus one position."""
    return tree.tau / (tree.depth * draft_cost + verify_cost(tree.nodes + 1))


def fastest_tree(probs: Sequence[float], nodes: int, draft_cost: float, verify_cost: Callable[[int], float],
                 width: int | None = None, max_depth: int | None = None) -> Tree:
    """The tree of at most ``nodes`` nodes (a budget, as the live page's) with the highest :func:`speedup`, not the
    highest τ: every extra level costs a draft pass, and a wider pass costs v, so a shallower or smaller tree can be
    faster. It is the most probable paths of some size m under some depth cap d (:func:`best_tree`), the best over
    every m up to ``nodes`` and every d up to ``max_depth`` (default: m); the smaller tree on a tie."""
    trees = [best_tree(probs, m, d, width) for m in range(1, nodes + 1) for d in range(1, (max_depth or m) + 1)]
    return max(trees, key=lambda t: (speedup(t, draft_cost, verify_cost), -t.nodes, -t.depth))


def best_by_size(probs: Sequence[float], draft_cost: float, verify_cost: Callable[[int], float],
                 sizes: Sequence[int],
                 shape: Callable[[Sequence[float], int], Tree] | None = None) -> tuple[Tree, float]:
    """The tree (:func:`fastest_tree` of each size; or a chain, with ``shape=chain``) of the listed sizes with the
    highest speedup, and that speedup."""
    trees = [shape(probs, n) if shape is not None else fastest_tree(probs, n, draft_cost, verify_cost)
             for n in sizes]
    speeds = [speedup(t, draft_cost, verify_cost) for t in trees]
    i = max(range(len(trees)), key=lambda j: (speeds[j], -trees[j].nodes))
    return trees[i], speeds[i]
