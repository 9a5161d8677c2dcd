"""End-to-end check with the engine: plain decoding against each drafter, on held-out prompts.

For every drafter and K, the same prompts are decoded by ``speculative_generate`` and compared with
``plain_generate`` (greedy, target in ``--dtype``, float32 by default; drafts in float32): the output must
be identical. Timing is the project's one driver, :func:`specsim.measure.timing.time_decoders`: an untimed warm-up,
then every prompt decoded plainly and by each drafter at each K, interleaved, and the speedup as the README
defines it (decode tokens per second over plain's, prefill excluded; the fair figure of
:mod:`specsim.measure.fairtime`). The prefill column shows what the drafters add before the first token (the EAGLE
drafter's extra prompt pass).
"""

from __future__ import annotations

import json
import statistics
from argparse import Namespace
from pathlib import Path

import torch

from specsim.core.kpolicy import KPolicy
from specsim.core.paths import DRAFTS
from specsim.core.prompt_sets import heldout_items
from specsim.core.trace import pooled_acceptance_rate, pooled_tokens_per_pass
from specsim.measure.timing import Contender, time_decoders


def drafters(target, folders: list[Path]) -> dict[str, object]:
    """The drafters to compare: each trained draft, prompt lookup and early exit."""
    from specsim.core.defaults import DEFAULT_EARLY_EXIT_LAYERS
    from specsim.core.drafters import PromptLookupDrafter
    from specsim.core.model_drafters import EarlyExitDrafter
    from specsim.core.trained_drafters import make_drafter

    out = {f.name: make_drafter(f, target.model) for f in folders}
    out["prompt_lookup"] = PromptLookupDrafter()
    out[f"early_exit_{DEFAULT_EARLY_EXIT_LAYERS}"] = EarlyExitDrafter(target.model, DEFAULT_EARLY_EXIT_LAYERS)
    return out


def run(args: Namespace, budget: dict, root: Path) -> dict:
    from specsim.core.engine import plain_generate, speculative_generate
    from specsim.core.models import format_prompt, load_bundled_target

    dtype = getattr(args, "dtype", "float32")
    target = load_bundled_target("cpu", dtype)
    folders = [Path(f) for f in args.drafts] if args.drafts else sorted(DRAFTS.glob("*/"))
    cands = drafters(target, folders)
    ks = [int(k) for k in args.ks.split(",")]
    held = heldout_items()[:: max(1, len(heldout_items()) // budget["speed_prompts"])][: budget["speed_prompts"]]
    n_new = budget["speed_len"]
    rows = [(name, k, Contender(f"{name} K={k}",
                                lambda ids, n, d=drafter, k=k: speculative_generate(target, d, ids, KPolicy(k), n)))
            for name, drafter in cands.items() for k in ks]
    prompts = [format_prompt(target.tokenizer, item["prompt"]) for item in held]
    with torch.inference_mode():
        timed = time_decoders(prompts, [c for _, _, c in rows], lambda ids, n: plain_generate(target, ids, n), n_new,
                              on_run=lambda _r, i, name, _n: print(f"  prompt {i + 1} of {len(prompts)}: {name}",
                                                                    flush=True))
    plain_time = sum(t.decode_time_s for t in timed.plain_runs())
    table = []
    for name, k, contender in rows:
        traces = timed.runs[contender.name]
        time = sum(t.decode_time_s for t in traces)
        draft = sum(it.draft_time_s for t in traces for it in t.iterations)
        table.append({"drafter": name, "k": k, "alpha": pooled_acceptance_rate(traces),
                      "tokens_per_loop": pooled_tokens_per_pass(traces), "speedup": timed.fair(contender.name).headline,
                      "prefill_s": statistics.median(t.prefill_time_s for t in traces),
                      "draft_share": draft / time, "identical": timed.identical(contender.name)})
    print(f"{len(held)} held-out prompts, {n_new} new tokens, {dtype} CPU; plain decoding {plain_time:.1f} s")
    print(f"{'drafter':28s} {'K':>2s} {'alpha':>6s} {'tok/loop':>8s} {'speedup':>7s} {'prefill':>7s} {'draft%':>6s} "
          "identical")
    for t in table:
        print(f"{t['drafter']:28s} {t['k']:2d} {t['alpha']:6.3f} {t['tokens_per_loop']:8.2f} {t['speedup']:7.2f} "
              f"{t['prefill_s']:7.3f} {100 * t['draft_share']:6.1f} {t['identical']}")
    result = {"prompts": [h["id"] for h in held], "n_new": n_new, "dtype": dtype, "plain_s": plain_time, "rows": table}
    (root / "eval").mkdir(parents=True, exist_ok=True)
    (root / "eval" / f"speed-{dtype}.json").write_text(json.dumps(result, indent=1))
    return result
