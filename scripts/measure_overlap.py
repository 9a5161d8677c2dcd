"""A real pair's α against temperature: Σ min(p_T, q_T) over the positions of the target's greedy answers (the same
text at every T, not text sampled at that T), written to JSON.

    OMP_NUM_THREADS=1 nice -n 19 taskset -c 1 .venv/bin/python scripts/measure_overlap.py

The target is the bundled SmolLM2-135M-Instruct, the draft the app's default (``specsim.core.defaults.DEFAULT_DRAFT``,
its model distribution alone: the copying from repeated text is left out, since a copied guess is a point mass and
not the draft's q). The text is the target's own greedy answer to each held-out prompt
(:func:`specsim.distill.evaluate.heldout_set`, the app's plain decoding); at each of its positions both models
read the text so far (one teacher-forced pass each) and :func:`specsim.lesson.overlap.accepted_mass_at_temperature`
gives
the chance a guess is kept at each temperature, the engine's own warp and vocabulary map; T = 0 is the greedy
rule (1 when the two argmaxes agree, else 0). The page *Why the output is unchanged* reads the file
(``specsim.core.paths.OVERLAP_MEASURED``) and draws it beside the toy.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run as a script from any folder: the repo's specsim

TEMPERATURES = (0.0, 0.05, 0.1, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0)
"""T = 0 (greedy) and the live page's range up to ``defaults.TEMPERATURE_MAX``."""


def measure(n_new: int, limit: int) -> dict:
    import torch

    from specsim.core.defaults import DEFAULT_DRAFT
    from specsim.core.draft_nets import load_draft
    from specsim.core.models import load_bundled_target
    from specsim.distill.evaluate import heldout_set
    from specsim.lesson.overlap import accepted_mass_by_temperature

    start = time.perf_counter()
    target = load_bundled_target(device="cpu", dtype="float32", invariant=False)
    draft, _ = load_draft(DEFAULT_DRAFT)
    items = heldout_set(target, n_new, limit)
    rows: list[list[float]] = []  # one per position: the kept chance at each temperature
    domains: list[str] = []
    with torch.inference_mode():
        for item in items:
            tokens, p = item["tokens"], item["prompt_len"]
            # the logits at position i predict token i + 1; the answer's tokens are predicted from p − 1 on
            t_logits = target.model(input_ids=tokens[None, :-1]).logits[0, p - 1 :].float()
            d_logits = draft(input_ids=tokens[None, :-1]).logits[0, p - 1 :].float()
            for t_row, d_row in zip(t_logits, d_logits, strict=True):
                rows.append(accepted_mass_by_temperature(t_row, d_row, TEMPERATURES, vocab_map=draft.id_map))
                domains.append(item["domain"])
    by_t = [sum(r[i] for r in rows) / len(rows) for i in range(len(TEMPERATURES))]
    per_domain = {}
    for name in sorted(set(domains)):
        mine = [r for r, d in zip(rows, domains, strict=True) if d == name]
        per_domain[name] = {"positions": len(mine),
                            "accepted_mass": [round(sum(r[i] for r in mine) / len(mine), 4)
                                              for i in range(len(TEMPERATURES))]}
    return {
        "what": "mean over positions of Σ min(p_T, q_T), the chance a guess is kept (T = 0: greedy agreement)",
        "target": target.name, "draft": DEFAULT_DRAFT.rsplit("/", 1)[-1],
        "draft_note": "the draft model's own q; its copying from repeated text is left out",
        "text": "the target's greedy answers to the held-out prompts (assets/prompts/heldout.json)",
        "prompts": len(items), "new_tokens_per_prompt": n_new, "positions": len(rows), "dtype": "float32",
        "temperatures": list(TEMPERATURES), "accepted_mass": [round(x, 4) for x in by_t],
        "domains": per_domain, "seconds": round(time.perf_counter() - start, 1),
    }


def main() -> None:
    from specsim.core.defaults import DEFAULT_MAX_NEW_TOKENS
    from specsim.core.paths import OVERLAP_MEASURED

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--new-tokens", type=int, default=DEFAULT_MAX_NEW_TOKENS,
                        help="answer tokens per held-out prompt")
    parser.add_argument("--limit", type=int, default=0, help="first N held-out prompts (0: all)")
    args = parser.parse_args()
    result = measure(args.new_tokens, args.limit)
    OVERLAP_MEASURED.parent.mkdir(parents=True, exist_ok=True)
    OVERLAP_MEASURED.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({k: result[k] for k in ("positions", "temperatures", "accepted_mass", "seconds")}))


if __name__ == "__main__":
    main()
