"""Where a speculative run's time goes on this machine's device: one run of the default draft at K = 4, after a
warm-up, under cProfile (GPU work lands in whatever call waits for it: a sync, ``.item()``, ``.tolist()``).

    python scripts/device_profile.py [--k 4] [--tokens 64] [--dtype bfloat16]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from specsim.core import defaults, models  # noqa: E402
from specsim.core.draft_loader import load_draft_model  # noqa: E402
from specsim.core.engine import plain_generate, speculative_generate  # noqa: E402
from specsim.core.kpolicy import KPolicy  # noqa: E402
from specsim.core.prompt_sets import builtin_prompts  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--dtype", default=None)
    args = parser.parse_args(argv)
    target = models.load_bundled_target(dtype=args.dtype)
    drafter = load_draft_model(defaults.DEFAULT_DRAFT, target)
    ids = models.format_prompt(target.tokenizer, builtin_prompts()[0])
    speculative_generate(target, drafter, ids, KPolicy(args.k), 16)  # warm-up
    plain = plain_generate(target, ids, args.tokens)
    profiler = cProfile.Profile()
    profiler.enable()
    spec = speculative_generate(target, drafter, ids, KPolicy(args.k), args.tokens)
    profiler.disable()
    draft_s = sum(it.draft_time_s for it in spec.iterations)
    verify_s = sum(it.verify_time_s for it in spec.iterations)
    print(f"{target.device} {target.dtype}: {spec.n_generated} tokens in {len(spec.iterations)} loops, "
          f"{spec.decode_time_s * 1e3:.0f} ms decoding (draft {draft_s * 1e3:.0f} ms, verify {verify_s * 1e3:.0f} ms, "
          f"rest {(spec.decode_time_s - draft_s - verify_s) * 1e3:.0f} ms); plain {plain.decode_time_s * 1e3:.0f} ms "
          f"for {plain.n_generated}; identical {spec.generated_ids == plain.generated_ids}")
    stats = pstats.Stats(profiler)
    stats.sort_stats("cumulative").print_stats(35)
    stats.sort_stats("tottime").print_stats(25)
    return 0


if __name__ == "__main__":
    sys.exit(main())
