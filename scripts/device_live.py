"""The live page's run, headless, through the code the page and the class workers call
(:func:`specsim.liverun.run_request`), on whatever device this machine picks (CUDA where present).

For each drafter it prints what the page would show: the device, dtype and decode path, the measured α, tokens
per loop, the fair speedup and the cost model's, whether the speculative tokens equal plain decoding's, and the
identity sentence the page puts beside that (a guarantee only on the CPU's invariant path).

    python scripts/device_live.py [--max-new-tokens 64] [--k 4]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from specsim.core import defaults, models
from specsim.core.prompt_sets import builtin_prompts  # noqa: E402
from specsim.lesson import replay  # noqa: E402
from specsim.liverun import ModelShelf, run_request  # noqa: E402
from specsim.measure import fairtime
from specsim.request import RunRequest  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=defaults.DEFAULT_K)
    parser.add_argument("--max-new-tokens", type=int, default=defaults.DEFAULT_MAX_NEW_TOKENS)
    parser.add_argument("--drafters", nargs="+", default=[defaults.DRAFT_MODEL, "prompt_lookup", "early_exit"])
    args = parser.parse_args(argv)
    print(f"default device: {models.default_device()}")
    shelf = ModelShelf()
    prompt = builtin_prompts()[0]
    failures = 0
    for drafter in args.drafters:
        draft = defaults.DEFAULT_DRAFT if drafter == defaults.DRAFT_MODEL else ""
        for temperature in (0.0, 0.8):
            request = RunRequest(prompt_ids=(), prompt=prompt, drafter=drafter, draft=str(draft), k=args.k,
                                 max_new_tokens=args.max_new_tokens, temperature=temperature, seed=7).resolved()
            start = time.perf_counter()
            run = run_request(request, shelf)
            spec, plain = run.spec, run.plain
            stats = replay.run_stats(spec, plain)
            fair = fairtime.fair_speedup([(spec, plain)]) if stats.costs is not None else None
            same = spec.generated_ids == plain.generated_ids
            print(f"\n== {drafter}, K = {args.k}, temperature {temperature}: {request.device} {request.dtype} "
                  f"invariant={request.invariant}, {time.perf_counter() - start:.1f} s with loading")
            print(f"tokens {spec.n_generated} in {stats.iterations} loops; α {stats.alpha:.3f}; tokens per loop "
                  f"{stats.tokens_per_pass:.2f}")
            print(f"spec {spec.tokens_per_s:.1f} tok/s, plain {plain.tokens_per_s:.1f} tok/s; fair speedup "
                  f"{'—' if fair is None else f'{fair.headline:.2f}x ({fair.source})'}; cost model "
                  f"{'—' if stats.costs is None else f'{stats.costs.speedup:.2f}x'}")
            if temperature == 0.0:
                failures += not same
                print(f"identical to plain decoding: {'yes' if same else 'NO'}")
                print("page says: " + replay.identity_guarantee(spec.settings))
            print("text: " + spec.text[:160].replace("\n", " "))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
