"""Benchmark: the bundled target with each drafter and K, against plain decoding and transformers.

    python -m specsim.bench                      # early exit and prompt lookup, K = 1..8
    python -m specsim.bench --k 1 2 4 --prompts 2 --max-new-tokens 24

Per row: plain and speculative tokens/s (decode only), measured alpha, tokens per loop, measured
speedup, the calculator's prediction from the measured alpha, draft cost and verification cost,
engine efficiency (measured / predicted), transformers' assisted generation (constant K, no
confidence threshold) in tokens/s end to end, our end-to-end tokens/s over theirs, and whether all
three produced identical tokens (greedy). Each speculative run is timed next to its own plain run,
so slow drifts in machine load hit both alike.
"""

from __future__ import annotations

import argparse
import sys

import torch

from specsim.build import DRAFTER_KINDS, build_drafter
from specsim.defaults import DEFAULT_DRAFT, DEFAULT_EARLY_EXIT_LAYERS, DEFAULT_TARGET
from specsim.engine import plain_generate, speculative_generate
from specsim.hf_assisted import hf_assisted_generate
from specsim.measure import measure
from specsim.models import ModelUnavailable, TokenizerMismatch, format_prompt, load_model
from specsim.prompts import builtin_prompts

COLUMNS = ("drafter", "K", "plain tok/s", "spec tok/s", "alpha", "tok/loop", "speedup", "predicted", "efficiency",
           "HF tok/s", "ours/HF", "identical")


def bench_row(target, drafter, k: int, prompts: list[list[int]], max_new_tokens: int, with_hf: bool) -> dict:
    """Run every prompt plainly, speculatively and through transformers; pool the figures."""
    spec, plain, hf_time, ours_e2e, identical = [], [], 0.0, 0.0, True
    assistant = getattr(drafter, "model", None)
    for ids in prompts:
        plain.append(plain_generate(target, ids, max_new_tokens))
        spec.append(speculative_generate(target, drafter, ids, k, max_new_tokens))
        ours_e2e += spec[-1].total_time_s
        identical &= spec[-1].generated_ids == plain[-1].generated_ids
        if with_hf:
            hf_ids, seconds = hf_assisted_generate(target, ids, k, max_new_tokens, assistant)
            hf_time += seconds
            identical &= tuple(hf_ids) == plain[-1].generated_ids
    m = measure(spec, plain)
    n_tokens = sum(t.n_generated for t in spec)
    return {
        "drafter": drafter.kind, "K": k, "plain tok/s": m.plain_tokens_per_s, "spec tok/s": m.spec_tokens_per_s,
        "alpha": m.alpha, "tok/loop": m.tokens_per_loop, "speedup": m.speedup, "predicted": m.predicted_speedup,
        "efficiency": m.efficiency, "HF tok/s": n_tokens / hf_time if with_hf else float("nan"),
        "ours/HF": hf_time / ours_e2e if with_hf else float("nan"), "identical": "yes" if identical else "NO",
        "c": m.draft_cost, "v": m.verify_cost,
    }


def format_table(rows: list[dict]) -> str:
    def cell(value) -> str:
        return f"{value:.2f}" if isinstance(value, float) else str(value)

    table = [list(COLUMNS)] + [[cell(row[c]) for c in COLUMNS] for row in rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(COLUMNS))]
    lines = ["  ".join(v.rjust(w) for v, w in zip(r, widths, strict=True)) for r in table]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m specsim.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--drafters", nargs="+", choices=DRAFTER_KINDS, default=["early_exit", "prompt_lookup"])
    parser.add_argument("--draft", default=DEFAULT_DRAFT, help="draft model id or folder for the model drafter")
    parser.add_argument("--target", default=DEFAULT_TARGET)
    parser.add_argument("--k", nargs="+", type=int, default=list(range(1, 9)))
    parser.add_argument("--prompts", type=int, default=3, help="how many built-in prompts (1-8)")
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--early-exit-layers", type=int, default=DEFAULT_EARLY_EXIT_LAYERS)
    parser.add_argument("--dtype", default="auto")
    parser.add_argument("--device", default=None)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (1 is best on a busy machine)")
    parser.add_argument("--no-hf", action="store_true", help="skip transformers' assisted generation")
    args = parser.parse_args(argv)
    if any(not 1 <= k <= 16 for k in args.k):
        parser.error("every --k must be between 1 and 16")
    if not 1 <= args.prompts <= len(builtin_prompts()):
        parser.error(f"--prompts must be between 1 and {len(builtin_prompts())}")
    if args.max_new_tokens < 1:
        parser.error("--max-new-tokens must be at least 1")
    if "model" in args.drafters and not args.draft:
        parser.error("the model drafter needs --draft PATH_OR_ID")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # transformers' own deprecation chatter from inside generate()
    if args.threads:
        torch.set_num_threads(args.threads)
    try:
        target = load_model(args.target, device=args.device, dtype=args.dtype)
        drafters = [build_drafter(kind, target, args.draft, args.early_exit_layers) for kind in args.drafters]
    except (ModelUnavailable, TokenizerMismatch, ValueError) as error:
        print(f"python -m specsim.bench: error: {error}", file=sys.stderr)
        return 2
    prompts = [format_prompt(target.tokenizer, text) for text in builtin_prompts(args.prompts)]
    print(f"target {target.name} ({str(target.dtype).removeprefix('torch.')} on {target.device}, "
          f"{torch.get_num_threads()} threads); {len(prompts)} prompts x {args.max_new_tokens} new tokens, greedy")
    speculative_generate(target, drafters[0], prompts[0], 2, 4)  # warm-up
    rows = []
    for drafter in drafters:
        print(f"drafter: {drafter.name}", flush=True)
        for k in args.k:
            rows.append(bench_row(target, drafter, k, prompts, args.max_new_tokens, not args.no_hf))
            print(f"  K={k}: {rows[-1]['spec tok/s']:.1f} tok/s, efficiency {rows[-1]['efficiency']:.2f}", flush=True)
    print()
    print(format_table(rows))
    print("\nc, v (draft and verification cost in target passes): "
          + "; ".join(f"{r['drafter']} K={r['K']}: {r['c']:.3f}, {r['v']:.2f}" for r in rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
