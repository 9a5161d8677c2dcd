"""``python -m specsim.bench --trees``: chains of K guesses against token trees, timed in one interleaved run.

    python -m specsim.bench --trees --heldout 8 --max-new-tokens 48 --threads 2

One row per setting: chain K = 1..4 (:mod:`specsim.core.engine`) and trees of 4..16 guesses
(:mod:`specsim.core.trees`), all timed against plain decoding on the same prompts by
:func:`specsim.measure.timing.time_decoders` (each round runs every setting on every prompt, interleaved, so a
drift in the machine's load hits them alike). Columns:

- **τ**: tokens per loop (kept guesses + the target's +1);
- **pass width**: tokens the verification pass reads (K + 1 for a chain, the tree's guesses + 1);
- **v**: the median verification pass in one-token passes of plain decoding (its median pass);
- **c**: the median draft pass in the same unit (a chain drafts one pass per guess, a tree one per depth);
- **tok/s**: decode tokens per second (the prefill excluded), **speedup**: the median over the prompts of plain
  decoding's decode time over the setting's (:class:`specsim.measure.fairtime.FairSpeedup`'s wall clock);
- **identical**: whether every run wrote plain decoding's tokens (greedy: it must).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from specsim.core.engine import plain_generate, speculative_generate
from specsim.core.kpolicy import KPolicy
from specsim.core.trace import Trace, pooled_tokens_per_pass
from specsim.core.trees import TreeShape, tree_generate
from specsim.measure.costmodel import plain_pass_times
from specsim.measure.profile_timing import PROFILE_TREES
from specsim.measure.tables import render
from specsim.measure.timing import Contender, time_decoders

CHAIN_KS = (1, 2, 3, 4)
TREE_SHAPES = tuple(TreeShape.live(nodes, depth) for nodes, depth in PROFILE_TREES)  # the machine profile's trees
COLUMNS = ("setting", "τ", "pass width", "v", "c", "tok/s", "speedup", "identical")


def chain_name(k: int) -> str:
    return f"chain K={k}"


def tree_name(shape: TreeShape) -> str:
    return f"tree {shape.nodes} (depth {shape.depth}, width {shape.width})"


def tree_rows(target, drafter, prompts: Sequence[Sequence[int]], max_new_tokens: int,
              ks: Sequence[int] = CHAIN_KS, shapes: Sequence[TreeShape] = TREE_SHAPES, rounds: int = 1) -> list[dict]:
    """Every chain K and tree shape timed against plain decoding on ``prompts``, interleaved; one row each, then
    plain decoding's (its tok/s and median pass in seconds, ``pass s``)."""
    contenders = [Contender(chain_name(k), lambda ids, n, k=k: speculative_generate(target, drafter, ids, KPolicy(k),
                                                                                     n)) for k in ks]
    contenders += [Contender(tree_name(s), lambda ids, n, s=s: tree_generate(target, drafter, ids, s, n))
                   for s in shapes]
    timed = time_decoders(prompts, contenders, lambda ids, n: plain_generate(target, ids, n), max_new_tokens,
                          rounds=rounds)
    base = statistics.median(plain_pass_times(timed.plain_runs()))
    rows = []
    for contender in contenders:
        traces: list[Trace] = timed.runs[contender.name]
        loops = [it for t in traces for it in t.iterations]
        widths = [it.caches.target_written - it.caches.target_before for it in loops if it.caches is not None]
        # a chain's draft makes one pass per guess; a tree's one per depth (its planned K; fewer only where the
        # token budget's end cut the tree short)
        passes = [it.k if contender.name.startswith("chain") else it.draft_passes for it in loops]
        drafting = [it.draft_time_s / n for it, n in zip(loops, passes, strict=True) if n > 0]
        decode = sum(t.decode_time_s for t in traces)
        rows.append({
            "setting": contender.name, "τ": pooled_tokens_per_pass(traces),
            "pass width": statistics.fmean(widths) if widths else float("nan"),
            "v": statistics.median(it.verify_time_s for it in loops) / base,
            "c": statistics.median(drafting) / base if drafting else 0.0,
            "tok/s": sum(t.n_decoded for t in traces) / decode if decode > 0 else 0.0,
            "speedup": timed.fair(contender.name).measured,
            "identical": "yes" if timed.identical(contender.name) else "NO",
        })
    plain = timed.plain_runs()
    rows.append({"setting": "plain", "tok/s": sum(t.n_decoded for t in plain) / sum(t.decode_time_s for t in plain),
                 "pass s": base})
    return rows


def format_rows(rows: list[dict]) -> str:
    def cell(value) -> str:
        return f"{value:.3f}" if isinstance(value, float) and value < 0.1 else (
            f"{value:.2f}" if isinstance(value, float) else str(value))

    return render([list(COLUMNS)] + [[cell(row[c]) for c in COLUMNS] for row in rows])


def report(target, drafter, prompts: Sequence[Sequence[int]], max_new_tokens: int, rounds: int = 1,
           profile=None) -> str:
    """The table, the best chain and the best tree by measured speedup, and where the machine profile's choice
    (``profile``, a :class:`specsim.measure.machine.Profile`) stands among them: K = 1..4 run, and the profile's K
    where it is larger."""
    choice = getattr(profile, "best_setting", "") or ""
    ks = tuple(sorted({*CHAIN_KS, profile.best_k})) if profile is not None else CHAIN_KS
    rows = tree_rows(target, drafter, prompts, max_new_tokens, ks=ks, rounds=rounds)
    plain = rows.pop()
    chains = [r for r in rows if r["setting"].startswith("chain")]
    trees = [r for r in rows if r["setting"].startswith("tree")]
    best_chain, best_tree = max(chains, key=lambda r: r["speedup"]), max(trees, key=lambda r: r["speedup"])
    return (format_rows(rows) + f"\n\nplain decoding: {plain['tok/s']:.2f} tok/s, one-token pass "
            f"{plain['pass s'] * 1000:.1f} ms (median).\nbest chain: {best_chain['setting']} at "
            f"{best_chain['speedup']:.2f}x "
            f"(τ {best_chain['τ']:.2f}); best tree: {best_tree['setting']} at {best_tree['speedup']:.2f}x "
            f"(τ {best_tree['τ']:.2f})" + ("\n" + choice_report(rows, choice) if choice else ""))


def setting_row(rows: list[dict], choice: str) -> dict | None:
    """The row of a profile's setting ("K=2", "tree 12"), or None where it was not run."""
    if choice.startswith("K="):
        name = chain_name(int(choice[2:]))
        return next((r for r in rows if r["setting"] == name), None)
    nodes = int(choice.split()[1])
    return next((r for r in rows if r["setting"].startswith(f"tree {nodes} ")), None)


def choice_report(rows: list[dict], choice: str) -> str:
    """The machine profile's choice among chains and trees beside the best setting measured here."""
    best = max(rows, key=lambda r: r["speedup"])
    row = setting_row(rows, choice)
    head = f"the machine profile chose {choice}"
    if row is None:
        return f"{head}; it was not run here; the best setting here: {best['setting']} at {best['speedup']:.2f}x."
    gap = 1 - row["speedup"] / best["speedup"]
    verdict = ("the best setting here" if row is best else
               f"within {gap:.1%} of the best" if gap <= 0.03 else f"{gap:.1%} below the best, more than 3 %")
    return (f"{head}: {row['setting']} at {row['speedup']:.2f}x; the best here {best['setting']} at "
            f"{best['speedup']:.2f}x: {verdict}.")
