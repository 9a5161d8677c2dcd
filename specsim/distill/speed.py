"""End-to-end check with the engine: plain decoding against each drafter, on held-out prompts.

For every drafter and K, the same prompts are decoded by ``speculative_generate`` and compared with
``plain_generate`` (greedy, target in ``--dtype``, float32 by default; drafts in float32): the output must
be identical, and the speedup is the ratio of total wall time (prefill included, so the EAGLE drafter's
extra prompt pass is paid for). Runs are interleaved prompt by prompt so a shared CPU's load drifts
equally over every column.
"""

from __future__ import annotations

import json
from argparse import Namespace
from pathlib import Path

import torch
from tqdm import tqdm

from specsim.paths import DRAFTS
from specsim.prompts import heldout_items
from specsim.trace import Trace, pooled_acceptance_rate, pooled_tokens_per_pass


def drafters(target, folders: list[Path]) -> dict[str, object]:
    """The drafters to compare: each trained draft, prompt lookup and early exit."""
    from specsim.defaults import DEFAULT_EARLY_EXIT_LAYERS
    from specsim.distill.drafter import make_drafter
    from specsim.drafters import EarlyExitDrafter, PromptLookupDrafter

    out = {f.name: make_drafter(f, target.model) for f in folders}
    out["prompt_lookup"] = PromptLookupDrafter()
    out[f"early_exit_{DEFAULT_EARLY_EXIT_LAYERS}"] = EarlyExitDrafter(target.model, DEFAULT_EARLY_EXIT_LAYERS)
    return out


def run(args: Namespace, budget: dict, root: Path) -> dict:
    from specsim.engine import plain_generate, speculative_generate
    from specsim.models import format_prompt, load_bundled_target

    dtype = getattr(args, "dtype", "float32")
    target = load_bundled_target("cpu", dtype)
    folders = [Path(f) for f in args.drafts] if args.drafts else sorted(DRAFTS.glob("*/"))
    cands = drafters(target, folders)
    ks = [int(k) for k in args.ks.split(",")]
    held = heldout_items()[:: max(1, len(heldout_items()) // budget["speed_prompts"])][: budget["speed_prompts"]]
    n_new = budget["speed_len"]
    runs: dict[tuple[str, int], list[Trace]] = {}
    identical: dict[tuple[str, int], bool] = {}
    plain_time = 0.0
    with torch.inference_mode():
        for item in tqdm(held, desc="speed", unit="prompt"):
            ids = format_prompt(target.tokenizer, item["prompt"])
            plain = plain_generate(target, ids, n_new)
            plain_time += plain.total_time_s
            for name, drafter in cands.items():
                for k in ks:
                    tr = speculative_generate(target, drafter, ids, k, n_new)
                    runs.setdefault((name, k), []).append(tr)
                    identical[name, k] = identical.get((name, k), True) and tr.generated_ids == plain.generated_ids
    table = []
    for (name, k), traces in runs.items():
        time = sum(t.total_time_s for t in traces)
        draft = sum(it.draft_time_s for t in traces for it in t.iterations)
        table.append({"drafter": name, "k": k, "alpha": pooled_acceptance_rate(traces),
                      "tokens_per_loop": pooled_tokens_per_pass(traces), "speedup": plain_time / time,
                      "draft_share": draft / time, "identical": identical[name, k]})
    print(f"{len(held)} held-out prompts, {n_new} new tokens, {dtype} CPU; plain decoding {plain_time:.1f} s")
    print(f"{'drafter':28s} {'K':>2s} {'alpha':>6s} {'tok/loop':>8s} {'speedup':>7s} {'draft%':>6s} identical")
    for t in table:
        print(f"{t['drafter']:28s} {t['k']:2d} {t['alpha']:6.3f} {t['tokens_per_loop']:8.2f} {t['speedup']:7.2f} "
              f"{100 * t['draft_share']:6.1f} {t['identical']}")
    result = {"prompts": [h["id"] for h in held], "n_new": n_new, "dtype": dtype, "plain_s": plain_time, "rows": table}
    (root / "eval").mkdir(parents=True, exist_ok=True)
    (root / "eval" / f"speed-{dtype}.json").write_text(json.dumps(result, indent=1))
    return result
