"""A token tree: guessed continuations that share prefixes, read by the target in ONE pass.

All guesses start from the context's last token (the *root*) and may share prefixes, so they form a tree.
The target reads the whole tree in one forward pass if every node

- sits at position ``context_len - 1 + depth`` (siblings share a position), and
- attends to the cached context plus its own ancestors only (a tree attention mask).

Then the logits at a node are those a plain causal pass over the root-to-node path gives; on the
position-invariant path (:mod:`specsim.core.invariant`) bitwise so, because each row attends to exactly its
visible keys, in order. Afterwards the KV cache keeps the context plus the kept path (:func:`keep_nodes`) and
forgets every other branch. Used by the model drafters' trees (:mod:`specsim.core.trees`) and the variants'
candidate trees (:mod:`specsim.variants.tree`).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers import DynamicCache

from specsim.core.drafters import crop_cache


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
