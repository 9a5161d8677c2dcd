"""Under the hood for a token-tree iteration (:mod:`specsim.core.trees`), read off the trace; nothing runs a model.

A chain's pass reads the last kept token and K guesses in a line, and its causal mask lets row i see rows 0 … i. A
tree's pass reads the last kept token (the root) and every node of the tree, in the order they were drafted (parents
before children). Two nodes at the same depth sit at the same position in the text, so position is not order: each
row carries the position of its own path (the root's plus its depth), and the **tree attention mask** lets it see the
cached context, its ancestors and itself, never a sibling, a cousin or another branch. Row i then computes what plain
decoding would compute after node i's own path.

- :func:`tree_rows`: one row per node: its parent, depth, position, the guess with q and its score, the target's top
  token after it, and its verdict.
- :func:`tree_mask`: the mask itself, built from the recorded parents.
- :func:`cache_sentences`: the target's and the draft's caches through a tree iteration. The target writes an entry
  for every node; after the walk it keeps the entries of the kept path, moved up behind the root, and drops the rest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from specsim.core.trace import Iteration, TokenProb, Trace, TreeRecord

# What each verdict means, in the words the live page's tree figure and this page use
VERDICT = {"root": "the context's last token (the root)", "kept": "kept: the target's token",
           "refused": "refused: the walk stopped here", "passed": "passed over: the target kept a sibling",
           "untried": "not tried: an earlier sibling was kept (sampling)",
           "unchecked": "not reached: its parent was not kept"}


@dataclass(frozen=True)
class TreeRow:
    """Row ``index`` of a tree iteration's verification pass: node ``index`` of the tree (row 0 is the root)."""

    index: int
    parent: int | None  # the parent's row (None: the root)
    depth: int  # steps down from the root (the root: 0)
    position: int  # the node's position in the text: the root's plus its depth
    text: str  # the token read at this row
    q: float | None  # the draft's probability of this guess after its parent (None: the root)
    score: float | None  # q multiplied down the path: the draft's estimate that the guess is kept
    target_top: TokenProb  # the target's most likely token after this node's path (greedy: what the walk looks for)
    status: str  # the node's verdict (:data:`VERDICT`)


def depths(tree: TreeRecord) -> list[int]:
    """Each node's depth below the root (parents come before their children in ``tree.nodes``)."""
    out: list[int] = []
    for node in tree.nodes:
        out.append(0 if node.parent < 0 else out[node.parent] + 1)
    return out


def ancestors(tree: TreeRecord) -> list[set[int]]:
    """Each node's path from the root: the rows it may attend to among the pass's new inputs (itself included)."""
    out: list[set[int]] = []
    for i, node in enumerate(tree.nodes):
        out.append({i} | (out[node.parent] if node.parent >= 0 else set()))
    return out


def tree_rows(trace: Trace, step: int) -> list[TreeRow]:
    """The rows of iteration ``step``'s tree pass, one per node, in the order the pass read them."""
    it = trace.iterations[step]
    tree = it.tree
    if tree is None:
        raise ValueError(f"iteration {step + 1} drafted a chain, not a tree")
    root = it.context_len - 1  # the last kept token's position
    return [TreeRow(i, None if node.parent < 0 else node.parent, d, root + d, node.token.text,
                    None if node.parent < 0 else node.token.prob, None if node.parent < 0 else node.score,
                    node.target_top, node.status)
            for i, (node, d) in enumerate(zip(tree.nodes, depths(tree), strict=True))]


def tree_mask(it: Iteration, context_shown: int = 4) -> tuple[list[str], list[list[bool]], int]:
    """The tree pass's attention mask: (column labels, rows of True where a row may attend, hidden columns), shaped
    as :func:`specsim.lesson.hood.causal_mask`'s. Columns are the last ``context_shown`` cached positions (every row
    reads them and the earlier ones), then the pass's inputs, each labelled with its row and its position."""
    tree = it.tree
    if tree is None:
        raise ValueError("a chain's pass has the causal mask, not a tree's")
    cached = it.context_len - 1
    shown = min(context_shown, cached)
    paths, ds = ancestors(tree), depths(tree)
    labels = [f"{p}" for p in range(cached - shown, cached)] + [f"row {i} @ {cached + d}" for i, d in enumerate(ds)]
    grid = [[True] * shown + [j in paths[i] for j in range(len(tree.nodes))] for i in range(len(tree.nodes))]
    return labels, grid, cached - shown


def growth_sentence(trace: Trace, step: int) -> str:
    """How the draft grew iteration ``step``'s tree (EAGLE-2's dynamic tree) and what that cost in draft passes."""
    it = trace.iterations[step]
    nodes, depth, width = trace.settings.tree
    guesses = it.tree.nodes[1:]
    low = min(guesses, key=lambda node: node.score) if guesses else None
    passes = it.draft_passes
    text = (f"**How the draft grew it** (EAGLE-2's dynamic tree): a node's **score** is q multiplied down its path, "
            "the draft's own estimate that the guess is kept, so the scores of a tree add up to the draft's estimate "
            f"of τ − 1. At each level the draft expanded its {width} best-scored newest nodes, {width} children each, "
            f"and in the end kept the {nodes} best-scored guesses of all it had drafted. Here the draft is a small "
            "standalone model; EAGLE-2 grew its trees from its own feature-level head, whose confidence it found to "
            "track acceptance. ")
    if low is not None:
        text += (f"The lowest score kept here was {low.score:.3f}; every candidate scored below it was dropped, "
                 "which is why some branches stop early. ")
    if passes:
        text += (f"It spent {passes} draft pass{'' if passes == 1 else 'es'}: reading the context gives the first "
                 f"level's candidates and each further pass the next level's, up to the {depth} levels asked for, "
                 "even where the guesses kept stop short of them.")
    return text


def decisive_row(it: Iteration) -> int:
    """The row whose output chose the +1 token: the last kept node's (the root's when nothing was kept)."""
    path = it.tree.kept_path() if it.tree is not None else []
    return path[-1] if path else 0


def cache_sentences(it: Iteration) -> list[str]:
    """The caches through one tree iteration, from the lengths the engine recorded."""
    c, tree = it.caches, it.tree
    if tree is None:
        raise ValueError("a chain iteration's caches are told by specsim.lesson.hood.cache_story")
    kept = len(tree.kept_path())
    n = len(tree.nodes)
    if c is None:
        return [f"Target: the pass writes {n} entries, the root and its {n - 1} guesses; the {kept} of the kept path "
                "stay, moved up behind the root, and the others are dropped."]
    path = tree.kept_path()
    shifted = [row for i, row in enumerate(path, start=1) if row != i]  # row i sits at the root's slot + i already
    moved = (" (" + ("row " if len(shifted) == 1 else "rows ") + ", ".join(str(r) for r in shifted)
             + (" moves" if len(shifted) == 1 else " move") + "; the others already sit in their slots)"
             if shifted else " (every one already sits in its slot: nothing moves)")
    out = [f"Target: {c.target_before} positions cached before the pass; the pass writes an entry for the root and "
           f"each of the {n - 1} guesses, {n} more, {c.target_written} in all. A chain would now crop the end off; "
           f"a tree's kept guesses need not be its first rows, so the engine keeps the entries of the root and the "
           f"{kept} kept guess{'' if kept == 1 else 'es'}, moved up where needed to sit right after the context, and "
           "drops the other "
           f"{c.target_written - c.target_kept}: {c.target_kept} stay{moved}. No entry needs computing again: each "
           "node's keys were rotated for its position in the text (rotary position embeddings, RoPE: the root's "
           "position plus its depth), which is where the kept path sits once moved. The +1 token is not cached "
           "yet: it is the first input of the next pass."]
    if c.draft_before is not None and c.draft_drafted is not None:
        read = c.draft_drafted - c.draft_before
        again = (f"the {kept} kept guess{'' if kept == 1 else 'es'} (inputs of its level passes, whose entries went "
                 "with the levels) and the +1 token" if kept else "the +1 token")
        out.append(f"Draft: {c.draft_before} cached before drafting. It first reads the {read} newest token"
                   f"{'' if read == 1 else 's'} of the context, root included ({c.draft_drafted} cached), then drafts "
                   "the tree one level per pass. Each level's entries serve only the levels below it and are dropped "
                   f"once the tree is drafted, so the draft holds the context and the root alone, {c.draft_drafted}, "
                   f"when the target checks, and {c.draft_kept} after the verdict. Before its next tree it reads "
                   f"{c.draft_catch_up} token{'s' if c.draft_catch_up != 1 else ''}: {again}."
                   + (" Keeping the kept path's entries, as the target does, would spare re-reading the kept guesses."
                      if kept else ""))
    return out


POSITION_INTRO = (
    "For a chain the calculator assumes one α for every guess, so slot i survives with probability αⁱ. A tree asks the "
    "same question one level at a time: **rᵢ** is the chance that the walk goes down to depth i given that it reached "
    "a node at depth i − 1 with candidates below it (a kept guess with no children ends the walk unchecked), that is, "
    "that one of those candidates is the target's token. Offering several "
    "candidates is what lifts rᵢ above a chain's: the target's token needs to be among them, not first. The "
    "chain's 1 + α + … + α^K does not describe a tree; *What a tree buys* below models a tree's tokens per loop "
    "from the run's acceptance by rank.")


def candidates_by_depth(trace: Trace) -> list[float]:
    """The candidates the walk met at each depth i = 1, 2, …: the children of the node it stood on when it checked
    depth i, averaged over the loops whose walk checked depth i. A tree thins with depth, so a deeper rᵢ judges fewer
    candidates."""
    met: dict[int, list[int]] = {}
    for it in trace.iterations:
        if it.tree is None:
            continue
        nodes = it.tree.nodes
        children: dict[int, int] = {}
        for node in nodes[1:]:
            children[node.parent] = children.get(node.parent, 0) + 1
        at = 0  # the walk starts at the root and steps down the kept path
        for depth, row in enumerate([*it.tree.kept_path(), None], start=1):
            if children.get(at):
                met.setdefault(depth, []).append(children[at])
            if row is None:
                break
            at = row
    return [sum(met[d]) / len(met[d]) for d in sorted(met)]


def overlap_note(trace: Trace) -> str:
    """Why α = 1 − TV(p, q) is a chain's identity and what a tree's α per step is instead."""
    kept, checked = trace.n_accepted, trace.n_checked
    how = ("greedy, a level keeps a guess when the target's top token is among the candidates drafted there, "
           "whatever rank the draft gave it" if trace.settings.temperature == 0 else
           "sampled, EAGLE-2's rule keeps candidate x with probability p(x) and q plays no part")
    hits = sum(1 for it in trace.iterations for s in it.slots[:it.n_accepted + 1]
               if s.status != "unchecked" and s.draft_top and s.target_top
               and s.draft_top[0].token_id == s.target_top[0].token_id)
    chain = (f" The draft's single top guess was the target's at {hits} of those {checked} steps "
             f"({hits / checked:.2f}): an estimate, on the positions the tree's walk reached and taking positions as "
             "alike, of the α a chain drafted by the same draft would see. The α on this page's charts below is the "
             "tree's rate per step." if checked else "")
    greedy = ("This run is greedy (temperature 0): p and q are one-hot, so 1 − TV(p, q) is 1 when the draft's top "
              "token is the target's and 0 otherwise. " if trace.settings.temperature == 0 else "")
    return (greedy + "The identity above is for one candidate a position, drawn from q and checked with "
            "min(1, p/q). A tree "
            f"offers the draft's top candidates instead, and checks them differently: {how}. So a tree's α per step "
            "is how well the candidates at a node cover the target's choice, and more candidates raise it. On this run "
            f"the walk kept {kept} of the {checked} steps it checked down the trees: the tree's α per step is "
            f"{kept / checked if checked else math.nan:.2f}." + chain)


def mean_width(trace: Trace) -> float:
    """Positions the average verification pass read: a tree's nodes with its root, a chain's guesses plus one."""
    its = trace.iterations
    if not its:
        return math.nan
    return sum(it.tree.width_read if it.tree is not None else it.k + 1 for it in its) / len(its)
