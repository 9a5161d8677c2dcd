"""Verifying the variants' candidate trees: every root-to-leaf path by the engine's greedy rule.

Lookahead decoding and Medusa both hand the target more than one guess at a time, as a token tree
(:class:`specsim.core.token_tree.TokenTree`) read in one target pass. Each root-to-leaf path is checked
with the engine's ordinary greedy rule, and the longest accepted path wins.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from specsim.core.acceptance import Verdict, verify
from specsim.core.drafters import Proposal
from specsim.core.sampling import SamplingConfig, warp
from specsim.core.token_tree import TokenTree

GREEDY = SamplingConfig()


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
