"""Turning the engine's tensors into the plain-number records of :mod:`specsim.core.trace`."""

from __future__ import annotations

import torch

from specsim.core.loop_parts import Checked, CheckedTree
from specsim.core.sampling import accepted_mass, top_rows, top_tokens
from specsim.core.trace import CacheLengths, Iteration, Residual, Slot, TokenProb, TreeNode, TreeRecord


class TokenNamer:
    """Token id -> its text, memoised (decoding one id at a time is slow in a hot loop)."""

    def __init__(self, tokenizer) -> None:
        self.tokenizer = tokenizer
        self._names: dict[int, str] = {}

    def __call__(self, token_id: int) -> str:
        name = self._names.get(token_id)
        if name is None:
            name = self._names[token_id] = self.tokenizer.decode([token_id])
        return name

    def tops(self, pairs: list[tuple[int, float]]) -> tuple[TokenProb, ...]:
        return tuple(TokenProb(t, self(t), float(p)) for t, p in pairs)


def build_iteration(
    namer: TokenNamer,
    index: int,
    context_len: int,
    checked: Checked,
    emitted: list[int],
    stop_reason: str | None,
    top_n: int,
    caches: CacheLengths | None = None,
) -> Iteration:
    """Record one iteration: every slot with q, p, verdict and alternatives, and the +1 token."""
    proposal, target_probs, verdict = checked.proposal, checked.target_probs, checked.verdict
    tokens, n_accepted, extra = proposal.tokens, verdict.n_accepted, verdict.extra
    rows = torch.arange(len(tokens))
    p_tokens = target_probs[rows, torch.tensor(tokens, dtype=torch.long)].tolist() if tokens else []
    masses = [None] * len(tokens)  # Σ min(p, q) per slot: needs the whole q, which only sampling keeps
    if proposal.q_probs and len(proposal.q_probs) == len(tokens):
        q_rows = torch.stack(proposal.q_probs).to(target_probs.device)
        masses = accepted_mass(target_probs[: len(tokens), : q_rows.shape[-1]], q_rows).tolist()
    target_tops = top_rows(target_probs, top_n)  # one top-n over every row: K + 1 separate calls cost about 3x more
    slots = []
    for i, token in enumerate(tokens):
        # after a rejection, or after an accepted end-of-text (verdict.ended), nothing was checked
        status = "accepted" if i < n_accepted else "rejected" if i == n_accepted and not verdict.ended else "unchecked"
        slots.append(Slot(
            position=i + 1, token_id=token, text=namer(token), q=float(proposal.q[i]), p=float(p_tokens[i]),
            accept_prob=float(verdict.accept_probs[i]), status=status, draft_top=namer.tops(proposal.top[i]),
            target_top=namer.tops(target_tops[i]),
            draft_time_s=float(proposal.pass_times[i]) if i < len(proposal.pass_times) else 0.0,
            draw=verdict.draws[i] if i < len(verdict.draws) else None,
            copied=i < len(proposal.copied) and proposal.copied[i], accepted_mass=masses[i],
        ))
    landing = target_probs[n_accepted]
    summary = None
    if verdict.residual is not None:
        summary = Residual(mass=verdict.residual_mass, top=namer.tops(top_tokens(verdict.residual, top_n)))
    return Iteration(
        index=index, context_len=context_len, slots=tuple(slots), n_accepted=n_accepted,
        extra=TokenProb(extra, namer(extra), float(landing[extra])), extra_kind=verdict.extra_kind,
        extra_target_top=namer.tops(target_tops[n_accepted]), residual=summary, verify_time_s=checked.verify_time,
        emitted=tuple(emitted), stop_reason=stop_reason, draft_overhead_s=proposal.overhead_s,
        k_planned=checked.k_planned, caches=caches,
        tree=None if checked.tree is None else tree_record(namer, checked.tree),
    )


def tree_record(namer: TokenNamer, tree: CheckedTree) -> TreeRecord:
    """A tree step's tree with its tokens named, as the trace keeps it."""
    nodes = tuple(
        TreeNode(TokenProb(token, namer(token), float(q)), parent, float(score), namer.tops([top])[0], status)
        for token, parent, q, score, status, top in zip(tree.tokens, tree.parents, tree.q, tree.score, tree.status,
                                                        tree.target_top, strict=True))
    return TreeRecord(nodes, *tree.shape)
