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
from dataclasses import dataclass

import torch

from specsim.drafters import Proposal, _now
from specsim.engine import _check, _emit, _settings, eos_token_ids, prefill
from specsim.models import LoadedModel
from specsim.sampling import SamplingConfig
from specsim.trace import Iteration, Trace
from specsim.trace_build import TokenNamer, build_iteration
from specsim.variants.medusa import MedusaDrafter, MedusaHeads
from specsim.variants.tree import TokenTree, keep_nodes, tree_forward, verify_tree

TOP_N = 5
DEFAULT_CHOICES: tuple[tuple[int, ...], ...] = (
    (0,), (1,), (2,), (0, 0), (0, 1), (1, 0), (0, 0, 0), (0, 1, 0), (1, 0, 0), (0, 0, 0, 0),
)


@dataclass(frozen=True)
class TreeStep:
    """One Medusa pass: the candidate tree and the branch the target accepted."""

    index: int
    context_len: int
    tokens: tuple[int, ...]  # node 0 is the root (the context's last token)
    parents: tuple[int, ...]
    labels: tuple[str, ...]  # "head d #r": head d's r-th choice
    accepted_nodes: tuple[int, ...]  # the kept path below the root
    extra: int  # the target's own token after the kept path
    emitted: tuple[int, ...]
    time_s: float


@dataclass(frozen=True)
class MedusaTreeRun:
    trace: Trace
    steps: tuple[TreeStep, ...]
    choices: tuple[tuple[int, ...], ...]


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


def medusa_tree_generate(
    target: LoadedModel,
    heads: MedusaHeads,
    prompt_ids: list[int],
    max_new_tokens: int,
    choices: tuple[tuple[int, ...], ...] = DEFAULT_CHOICES,
    on_iteration: Callable[[Iteration], None] | None = None,
) -> MedusaTreeRun:
    """Greedy generation with Medusa heads and tree attention; equals plain greedy decoding."""
    _check(prompt_ids, 1, max_new_tokens)
    if not choices or any(len(c) == 0 or min(c) < 0 for c in choices):
        raise ValueError("choices must be non-empty rank paths such as (0,), (0, 1)")
    drafter = MedusaDrafter(heads, target.model)  # reuses its restricted output matrix and head_probs
    eos = eos_token_ids(target)
    namer = TokenNamer(target.tokenizer)
    context, generated = list(prompt_ids), []
    iterations: list[Iteration] = []
    steps: list[TreeStep] = []
    hidden: torch.Tensor | None = None
    stop_reason: str | None = None
    with torch.inference_mode():
        cache, start, prefill_time, _ = prefill(target, context)
        while stop_reason is None:
            budget = max_new_tokens - len(generated)
            draft_start = _now(target.device)
            if hidden is None:  # the first pass has no hidden state to draft from: root only
                tree, q = TokenTree.rooted(context[-1]), {}
            else:
                tree, q = build_tree(context[-1], drafter.head_probs(hidden), heads.vocab_ids, choices)
            draft_time = _now(target.device) - draft_start
            pass_start = _now(target.device)
            past = len(context) - 1
            out = tree_forward(target.model, cache, tree, output_hidden=True)
            verdicts, probs = verify_tree(tree, out.logits[0])
            best = verdicts[0]
            path_tokens = [tree.tokens[i] for i in best.nodes]
            emitted, stop_reason = _emit(path_tokens[: best.n_accepted] + [best.extra], budget, eos)
            keep_nodes(cache, past, [0, *best.nodes[: len(emitted) - 1]])
            hidden = out.hidden_states[-1][0, best.rows[best.n_accepted]]  # the state that chose ``extra``
            pass_time = _now(target.device) - pass_start
            steps.append(TreeStep(
                index=len(steps), context_len=len(context), tokens=tuple(tree.tokens), parents=tuple(tree.parents),
                labels=tuple(tree.labels), accepted_nodes=tuple(best.nodes[: best.n_accepted]), extra=best.extra,
                emitted=tuple(emitted), time_s=pass_time + draft_time))
            proposal = Proposal(tokens=path_tokens, q=[q.get(i, 1.0) for i in best.nodes],
                                top=[[(t, q.get(i, 1.0))] for i, t in zip(best.nodes, path_tokens, strict=True)],
                                overhead_s=draft_time)
            iteration = build_iteration(
                namer, len(iterations), len(context), proposal, probs[best.rows], best.verdict, pass_time, emitted,
                stop_reason, TOP_N)
            iterations.append(iteration)
            context += emitted
            generated += emitted
            if on_iteration is not None:
                on_iteration(iteration)
        total_time = _now(target.device) - start
    settings = _settings(target, heads.n_heads, max_new_tokens, SamplingConfig(), 0, "medusa_tree",
                         f"Medusa heads (K={heads.n_heads}), tree of {len(choices)} paths")
    trace = Trace(
        mode="speculative", settings=settings, prompt=target.tokenizer.decode(prompt_ids),
        prompt_ids=tuple(prompt_ids), generated_ids=tuple(generated),
        text=target.tokenizer.decode(generated, skip_special_tokens=True), total_time_s=total_time,
        prefill_time_s=prefill_time, iterations=tuple(iterations), stop_reason=stop_reason or "max_new_tokens",
    )
    return MedusaTreeRun(trace, tuple(steps), tuple(choices))
