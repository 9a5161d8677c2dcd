"""``python -m app.record_default``: record the live page's default example into assets/live/ (see specsim.recorded)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from app import state
from specsim import defaults, recorded


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", default="auto")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=recorded.ASSET)
    args = parser.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    d = state.DEFAULTS
    run = recorded.record(d[state.LIVE_PROMPT], d[state.LIVE_K], d[state.LIVE_MAX_NEW], d[state.LIVE_DRAFTER],
                          defaults.DEFAULT_DRAFT, args.dtype, args.threads)
    recorded.write(run, args.out)
    print(f"{run.label()}\n{run.spec.n_generated} tokens in {len(run.spec.iterations)} loops, "
          f"acceptance {run.spec.acceptance_rate:.0%}; written to {args.out}")


if __name__ == "__main__":
    main()
