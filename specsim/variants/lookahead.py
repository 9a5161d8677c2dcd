"""Lookahead (Jacobi) decoding: the target guesses several future tokens itself, no second model.

Jacobi decoding treats the next W tokens as unknowns y_1..y_W of the fixed-point equations
y_i = argmax p(. | context, y_1..y_{i-1}). Start from any guess, run the target ONCE over
[last context token, y_1..y_W] and replace every y_i by the argmax the pass gives at its slot:
that is one Jacobi iteration. Slot 1 is conditioned on the true context only, so after one
iteration y_1 is right; after two, y_1..y_2; a fixed point is reached in at most W iterations,
and the fixed point IS greedy decoding (:func:`jacobi_iterations`).

Lookahead decoding (Fu et al., 2024) makes this useful:

1. every pass refines the window by one Jacobi iteration (the *lookahead branch*);
2. the Jacobi trajectories leave behind n-grams: N tokens, each predicted right after the one
   before it in N successive passes (a diagonal through the last N windows). They go into a
   pool keyed by their first token, and so do the n-grams of the kept output (the part of the
   trajectory that converged);
3. the pool's n-grams that start with the context's last token are *candidates*; they are
   verified in the SAME pass (the *verification branch*);
4. the longest accepted guess (window or candidate) is kept, plus the target's own next token,
   so every pass yields at least one token, and greedy output is unchanged.

Design choice: the window and the candidates share one batch row as a token tree (a custom 4D
attention mask keeps each branch blind to the others, see :mod:`specsim.variants.tree`), rather
than a second batch row: one row reuses the engine's single KV cache and costs one pass.
Greedy only: the lesson's identity check is against plain greedy decoding.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable

import torch
from transformers import DynamicCache

from specsim.core.clock import now
from specsim.core.drafters import Proposal, crop_cache
from specsim.core.engine import decode_loop
from specsim.core.loop_parts import Checked, run_settings
from specsim.core.models import LoadedModel
from specsim.core.sampling import SamplingConfig
from specsim.core.token_tree import TokenTree, keep_nodes, tree_forward
from specsim.core.trace import Iteration
from specsim.variants.runs import JacobiStep, LookaheadRun
from specsim.variants.tree import PathVerdict, verify_tree

POOL_PER_KEY = 8  # n-grams kept per first token (most recent first)


class NgramPool:
    """n-grams seen in the Jacobi trajectories: first token -> recent continuations of N-1 tokens."""

    def __init__(self, n: int):
        if n < 2:
            raise ValueError(f"n-grams need n >= 2, got {n}")
        self.n = n
        self.table: dict[int, list[tuple[int, ...]]] = {}

    def add_run(self, tokens: list[int]) -> None:
        """Add every n-gram of a run of consecutive tokens."""
        for i in range(len(tokens) - self.n + 1):
            key, rest = tokens[i], tuple(tokens[i + 1 : i + self.n])
            bucket = self.table.setdefault(key, [])
            if rest in bucket:
                bucket.remove(rest)
            bucket.insert(0, rest)
            del bucket[POOL_PER_KEY:]

    def add_trajectories(self, history: deque[dict[int, int]]) -> None:
        """Add the n-grams that run diagonally through the last N windows (position -> token each).

        The newest window's token at position p was predicted right after the token the pass read at
        p - 1, which the previous window had produced at p - 1, and so on: each diagonal is a chain
        of next-token predictions, unlike a row of one window (its slots saw different guesses).
        """
        if len(history) < self.n:
            return
        for p in sorted(history[-1]):
            chain = [history[-self.n + k].get(p - self.n + 1 + k) for k in range(self.n)]
            if None not in chain:
                self.add_run(chain)

    def candidates(self, token: int, limit: int) -> list[tuple[int, ...]]:
        return self.table.get(token, [])[:limit]

    def __len__(self) -> int:
        return sum(len(b) for b in self.table.values())


def jacobi_iterations(
    model: torch.nn.Module, prompt_ids: list[int], init: list[int], max_iters: int | None = None
) -> list[list[int]]:
    """Pure Jacobi decoding of ``len(init)`` tokens after a fixed prompt, one pass per iteration.

    Returns every iterate, starting with ``init`` and ending at the fixed point (or after
    ``max_iters`` passes). Iterate i has at least its first i tokens equal to greedy decoding.
    """
    window = [int(t) for t in init]
    if not window or not prompt_ids:
        raise ValueError("need a prompt and a non-empty initial window")
    device = next(model.parameters()).device
    iterates = [list(window)]
    with torch.inference_mode():
        cache = DynamicCache()
        past = len(prompt_ids) - 1
        if past:
            model(input_ids=torch.tensor([prompt_ids[:-1]], device=device), past_key_values=cache, use_cache=True)
        for _ in range(max_iters if max_iters is not None else len(window) + 1):
            ids = torch.tensor([[prompt_ids[-1], *window[:-1]]], dtype=torch.long, device=device)
            logits = model(input_ids=ids, past_key_values=cache, use_cache=True).logits[0]
            crop_cache(cache, past)
            new = [int(t) for t in logits.argmax(dim=-1)]
            if new == window:
                break
            window = new
            iterates.append(list(window))
    return iterates


def _initial_window(prompt_ids: list[int], window: int, seed: int) -> list[int]:
    """Start guesses: tokens drawn from the prompt (any guess converges; these are cheap and plausible)."""
    rng = random.Random(seed)
    return [rng.choice(prompt_ids) for _ in range(window)]


class LookaheadStep:
    """One lookahead pass: the Jacobi window and the pool's n-grams as one token tree, verified at once."""

    needs_prompt_hidden = False
    sampling, generator = SamplingConfig(), None  # greedy: the first token too

    def __init__(self, target: LoadedModel, window: int, ngram: int, max_candidates: int, seed: int):
        self.target, self.window, self.ngram, self.seed = target, window, ngram, seed
        self.max_candidates = max_candidates
        self.pool = NgramPool(ngram)  # refuses n < 2 before any model pass
        self.steps: list[JacobiStep] = []

    def start(self, context: list[int], cache: DynamicCache, prompt_hidden: torch.Tensor | None) -> None:
        self.cache, self.steps = cache, []
        self.pool = NgramPool(self.ngram)
        self.guesses = _initial_window(context, self.window, self.seed)
        self.history: deque[dict[int, int]] = deque(maxlen=self.ngram)  # the last N refined windows

    def check(self, context: list[int], budget: int) -> Checked:
        device = self.target.device
        # Build the tree: the Jacobi window first, then the pool's candidates for the last token.
        draft_start = now(device)
        tree = TokenTree.rooted(context[-1])
        jacobi_nodes = tree.add_chain(self.guesses, "jacobi")
        self.candidates = self.pool.candidates(context[-1], self.max_candidates)
        for i, cand in enumerate(self.candidates):
            tree.add_chain(list(cand), f"n-gram {i + 1}")
        self.overhead = now(device) - draft_start
        # One pass over the whole tree, then the greedy verdict on every branch.
        pass_start = now(device)
        self.past = len(context) - 1
        logits = tree_forward(self.target.model, self.cache, tree).logits[0]
        verdicts, probs = verify_tree(tree, logits)
        self.pass_time = now(device) - pass_start
        # The Jacobi iteration: every window slot takes the argmax the pass gave there.
        self.refined = [int(t) for t in probs[[0, *jacobi_nodes]].argmax(dim=-1)]  # positions L .. L+W
        self.tree, self.best = tree, verdicts[0]
        path_tokens = [tree.tokens[i] for i in self.best.nodes]
        proposal = Proposal(tokens=path_tokens, q=[1.0] * len(path_tokens), top=[[(t, 1.0)] for t in path_tokens],
                            overhead_s=self.overhead)
        return Checked(proposal, probs[self.best.rows], self.best.verdict, self.pass_time)

    def accept(self, context: list[int], emitted: list[int]) -> None:
        best: PathVerdict = self.best
        keep_nodes(self.cache, self.past, [0, *best.nodes[: len(emitted) - 1]])
        self.history.append({self.past + 1 + i: t for i, t in enumerate(self.refined)})
        self.pool.add_trajectories(self.history)
        winner = self.tree.labels[best.nodes[best.n_accepted - 1]] if best.n_accepted else "none"
        self.steps.append(JacobiStep(
            index=len(self.steps), context_len=self.past + 1, window_before=tuple(self.guesses),
            window_after=tuple(self.refined[: self.window]), candidates=tuple(self.candidates), winner=winner,
            n_accepted=best.n_accepted, emitted=tuple(emitted), pool_size=len(self.pool), pass_tokens=len(self.tree),
            time_s=self.pass_time + self.overhead))
        self.pool.add_run(context[-(len(emitted) + self.ngram - 1):])  # the kept tokens: a converged trajectory
        # Slide the window past the kept tokens and top it up from the pool (or by repeating).
        guesses = self.refined[len(emitted):]
        while len(guesses) < self.window:
            last = guesses[-1] if guesses else context[-1]
            more = self.pool.candidates(last, 1)
            guesses += list(more[0]) if more else [last]
        self.guesses = guesses[: self.window]


def lookahead_generate(
    target: LoadedModel,
    prompt_ids: list[int],
    max_new_tokens: int,
    window: int = 5,
    ngram: int = 4,
    max_candidates: int = 3,
    seed: int = 0,
    on_iteration: Callable[[Iteration], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> LookaheadRun:
    """Greedy generation by lookahead decoding; the output equals plain greedy decoding token for token."""
    if max_candidates < 0:
        raise ValueError("max_candidates must be >= 0")
    step = LookaheadStep(target, window, ngram, max_candidates, seed)
    settings = run_settings(target, window, max_new_tokens, SamplingConfig(), seed, "lookahead",
                            f"Jacobi window {window}, {ngram}-gram pool, {max_candidates} candidates")
    trace = decode_loop(target, step, prompt_ids, settings, on_iteration, should_stop)
    return LookaheadRun(trace, tuple(step.steps), window, ngram, max_candidates)


def jacobi_demo(target: LoadedModel, prompt_ids: list[int], window: int = 6, seed: int = 0) -> list[list[int]]:
    """Jacobi iterations for the first ``window`` tokens after the prompt, from the same starting guess
    lookahead decoding uses; the last iterate is the fixed point (greedy decoding)."""
    return jacobi_iterations(target.model, prompt_ids, _initial_window(prompt_ids, window, seed))
