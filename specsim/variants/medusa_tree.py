"""Medusa with a candidate TREE verified in one target pass (tree attention).

Every head reads the same hidden state, so head d's top few tokens can follow ANY of head d-1's:
the candidates form a tree. ``choices`` names its paths by rank (Cai et al.'s "Medusa choices"):
``(0, 1)`` is head 1's top token followed by head 2's runner-up. The target reads root + tree in
one pass with a 4D mask that lets each node see only its ancestors, every root-to-leaf path is
checked with the engine's greedy rule, and the longest accepted path is kept, plus the target's
own next token. The same pass yields the hidden state that drafts the next tree.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from transformers import DynamicCache

from specsim.core.clock import now
from specsim.core.drafters import Proposal
from specsim.core.engine import decode_loop
from specsim.core.loop_parts import Checked, run_settings
from specsim.core.models import LoadedModel
from specsim.core.sampling import SamplingConfig
from specsim.core.token_tree import TokenTree, keep_nodes, tree_forward
from specsim.core.trace import Iteration
from specsim.variants.medusa import MedusaDrafter, MedusaHeads
from specsim.variants.runs import MedusaTreeRun, TreeStep
from specsim.variants.tree import PathVerdict, verify_tree

DEFAULT_CHOICES: tuple[tuple[int, ...], ...] = (
    (0,), (1,), (2,), (0, 0), (0, 1), (1, 0), (0, 0, 0), (0, 1, 0), (1, 0, 0), (0, 0, 0, 0),
)


def build_tree(root: int, head_probs: torch.Tensor, vocab_ids: torch.Tensor,
               choices: tuple[tuple[int, ...], ...]) -> tuple[TokenTree, dict[int, float]]:
    """The candidate tree for ``choices`` from each head's ranked tokens; also q per node."""
    tree = TokenTree.rooted(root)
    width = 1 + max(max(c) for c in choices)
    top_p, top_i = torch.topk(head_probs, width, dim=-1)  # (K, width)
    q: dict[int, float] = {}
    for choice in sorted(choices, key=len):
        if len(choice) > head_probs.shape[0]:
            continue
        parent = 0
        for d, rank in enumerate(choice):
            token = int(vocab_ids[top_i[d, rank]])
            parent = tree.add_chain([token], f"head {d + 1} #{rank + 1}", parent=parent)[0]
            q.setdefault(parent, float(top_p[d, rank]))
    return tree, q


class MedusaTreeStep:
    """Draft a tree from the last pass's hidden state, verify it in one pass, keep the best branch."""

    needs_prompt_hidden = True  # the heads read the state that chose the newest token: the prefill's last one
    sampling, generator = SamplingConfig(), None  # greedy: the first token too

    def __init__(self, target: LoadedModel, heads: MedusaHeads, choices: tuple[tuple[int, ...], ...]):
        self.target, self.heads, self.choices = target, heads, choices
        self.drafter = MedusaDrafter(heads, target.model)  # reuses its restricted output matrix and head_probs
        self.steps: list[TreeStep] = []
        self.cache = DynamicCache()
        self.hidden: torch.Tensor | None = None  # the target's state that chose the newest token
        # What check() leaves for accept(): the tree, its best branch, and the pass's timing.
        self.tree = TokenTree.rooted(0)
        self.best: PathVerdict | None = None
        self.past, self.draft_time, self.pass_time = 0, 0.0, 0.0

    def start(self, context: list[int], cache: DynamicCache, prompt_hidden: torch.Tensor | None) -> None:
        self.cache, self.steps = cache, []
        self.hidden = None if prompt_hidden is None else prompt_hidden[-1]  # the state that chose the first token

    def check(self, context: list[int], budget: int) -> Checked:
        device = self.target.device
        draft_start = now(device)
        if self.hidden is None:  # no hidden state to draft from: root only
            tree, q = TokenTree.rooted(context[-1]), {}
        else:
            tree, q = build_tree(context[-1], self.drafter.head_probs(self.hidden), self.heads.vocab_ids, self.choices)
        self.draft_time = now(device) - draft_start
        pass_start = now(device)
        self.past = len(context) - 1
        out = tree_forward(self.target.model, self.cache, tree, output_hidden=True)
        verdicts, probs = verify_tree(tree, out.logits[0])
        best = verdicts[0]
        self.hidden = out.hidden_states[-1][0, best.rows[best.n_accepted]]  # the state that chose the +1 token
        self.pass_time = now(device) - pass_start
        self.tree, self.best = tree, best
        path_tokens = [tree.tokens[i] for i in best.nodes]
        proposal = Proposal(tokens=path_tokens, q=[q.get(i, 1.0) for i in best.nodes],
                            top=[[(t, q.get(i, 1.0))] for i, t in zip(best.nodes, path_tokens, strict=True)],
                            overhead_s=self.draft_time)
        return Checked(proposal, probs[best.rows], best.verdict, self.pass_time)

    def accept(self, context: list[int], emitted: list[int]) -> None:
        tree, best = self.tree, self.best
        keep_nodes(self.cache, self.past, [0, *best.nodes[: len(emitted) - 1]])
        self.steps.append(TreeStep(
            index=len(self.steps), context_len=self.past + 1, tokens=tuple(tree.tokens), parents=tuple(tree.parents),
            labels=tuple(tree.labels), accepted_nodes=tuple(best.nodes[: best.n_accepted]), extra=best.extra,
            emitted=tuple(emitted), time_s=self.pass_time + self.draft_time))


def medusa_tree_generate(
    target: LoadedModel,
    heads: MedusaHeads,
    prompt_ids: list[int],
    max_new_tokens: int,
    choices: tuple[tuple[int, ...], ...] = DEFAULT_CHOICES,
    on_iteration: Callable[[Iteration], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> MedusaTreeRun:
    """Greedy generation with Medusa heads and tree attention; equals plain greedy decoding."""
    if not choices or any(len(c) == 0 or min(c) < 0 for c in choices):
        raise ValueError("choices must be non-empty rank paths such as (0,), (0, 1)")
    step = MedusaTreeStep(target, heads, choices)
    settings = run_settings(target, heads.n_heads, max_new_tokens, SamplingConfig(), 0, "medusa_tree",
                            f"Medusa heads (K={heads.n_heads}), tree of {len(choices)} paths")
    trace = decode_loop(target, step, prompt_ids, settings, on_iteration, should_stop)
    return MedusaTreeRun(trace, tuple(step.steps), tuple(choices))
