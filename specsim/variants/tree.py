"""Verifying several guessed continuations in ONE target pass: a token tree with tree attention.

Lookahead decoding and Medusa both hand the target more than one guess at a time. All guesses
start from the context's last token (the *root*) and may share prefixes, so they form a tree.
The target reads the whole tree in one forward pass if every node

- sits at position ``context_len - 1 + depth`` (siblings share a position), and
- attends to the cached context plus its own ancestors only (a custom 4D attention mask).

Then the logits at a node are exactly those a plain causal pass over the root-to-node path would
give (up to float rounding in the attention's sums), so each root-to-leaf path is verified with
the engine's ordinary greedy rule, and the longest accepted path wins. Afterwards the KV cache
keeps the context plus the winning path and forgets every other branch.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers import DynamicCache

from specsim.core.acceptance import Verdict, verify
from specsim.core.drafters import Proposal, crop_cache
from specsim.core.sampling import SamplingConfig, warp

GREEDY = SamplingConfig()


@dataclass
class TokenTree:
    """Node 0 is the root (the context's last token); ``parents[i] < i`` for every other node."""

    tokens: list[int]
    parents: list[int]
    labels: list[str]  # which guess each node belongs to (e.g. "jacobi", "n-gram 1", "head 2 #1")

    @classmethod
    def rooted(cls, root: int) -> TokenTree:
        return cls([root], [-1], ["root"])

    def add(self, token: int, parent: int, label: str) -> int:
        """Add one node under ``parent``; return its index."""
        if not 0 <= parent < len(self.tokens):
            raise ValueError(f"parent {parent} is not a node of this tree")
        self.tokens.append(int(token))
        self.parents.append(parent)
        self.labels.append(label)
        return len(self.tokens) - 1

    def add_chain(self, tokens: list[int], label: str, parent: int = 0) -> list[int]:
        """Add a chain of nodes below ``parent``, reusing existing nodes where the prefix already exists."""
        nodes = []
        for token in tokens:
            child = next((i for i, (t, p) in enumerate(zip(self.tokens, self.parents, strict=True))
                          if p == parent and t == token and i > 0), None)
            parent = child if child is not None else self.add(token, parent, label)
            nodes.append(parent)
        return nodes

    def __len__(self) -> int:
        return len(self.tokens)

    def depth(self, node: int) -> int:
        d = 0
        while self.parents[node] != -1:
            node, d = self.parents[node], d + 1
        return d

    def path(self, node: int) -> list[int]:
        """Nodes from just below the root down to ``node`` (empty for the root)."""
        nodes = []
        while node > 0:
            nodes.append(node)
            node = self.parents[node]
        return nodes[::-1]

    def leaves(self) -> list[int]:
        has_child = set(self.parents)
        return [i for i in range(len(self.tokens)) if i not in has_child]

    def attention_mask(self, past_len: int) -> torch.Tensor:
        """(1, 1, n, past_len + n) booleans: True where node i may attend (context and its ancestors)."""
        n = len(self.tokens)
        mask = torch.zeros(n, past_len + n, dtype=torch.bool)
        mask[:, :past_len] = True
        for i in range(n):
            j = i
            while j != -1:
                mask[i, past_len + j] = True
                j = self.parents[j]
        return mask[None, None]

    def position_ids(self, past_len: int) -> torch.Tensor:
        return torch.tensor([[past_len + self.depth(i) for i in range(len(self.tokens))]], dtype=torch.long)


def tree_forward(model: torch.nn.Module, cache: DynamicCache, tree: TokenTree, output_hidden: bool = False):
    """One target pass over every node of the tree; the cache grows by ``len(tree)`` entries."""
    past = cache.get_seq_length()
    device = next(model.parameters()).device
    return model(
        input_ids=torch.tensor([tree.tokens], dtype=torch.long, device=device),
        attention_mask=tree.attention_mask(past).to(device), position_ids=tree.position_ids(past).to(device),
        past_key_values=cache, use_cache=True, output_hidden_states=output_hidden,
    )


def keep_nodes(cache: DynamicCache, past_len: int, nodes: list[int]) -> None:
    """Keep the first ``past_len`` cache entries plus the tree nodes listed (in order); drop the rest."""
    if nodes == list(range(len(nodes))):  # a prefix of the pass: the engine's crop is enough
        crop_cache(cache, past_len + len(nodes))
        return
    for layer in cache.layers:
        index = torch.tensor([past_len + i for i in nodes], dtype=torch.long, device=layer.keys.device)
        layer.keys = torch.cat([layer.keys[:, :, :past_len], layer.keys.index_select(2, index)], dim=2)
        layer.values = torch.cat([layer.values[:, :, :past_len], layer.values.index_select(2, index)], dim=2)


@dataclass
class PathVerdict:
    """The greedy verdict on one root-to-leaf path of the tree."""

    leaf: int
    nodes: list[int]  # the path's nodes below the root
    rows: list[int]  # tree rows whose logits check the path: the root, then each node
    verdict: Verdict  # the engine's verdict on the path's tokens

    @property
    def n_accepted(self) -> int:
        return self.verdict.n_accepted

    @property
    def extra(self) -> int:
        return self.verdict.extra


def verify_tree(tree: TokenTree, logits: torch.Tensor) -> tuple[list[PathVerdict], torch.Tensor]:
    """Check every root-to-leaf path with the engine's greedy rule; return the verdicts and the probabilities.

    The best verdict comes first: most tokens accepted, ties broken by the order the leaves were added.
    """
    probs = warp(logits, GREEDY)
    verdicts = []
    for leaf in tree.leaves():
        nodes = tree.path(leaf)
        rows = [0, *nodes]
        tokens = [tree.tokens[i] for i in nodes]
        proposal = Proposal(tokens=tokens, q=[1.0] * len(tokens))
        verdicts.append(PathVerdict(leaf, nodes, rows, verify(tokens, proposal, probs[rows], GREEDY, None)))
    verdicts.sort(key=lambda v: -v.n_accepted)  # stable: earlier leaves win ties
    return verdicts, probs
