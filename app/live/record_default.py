"""``python -m app.live.record_default``: record the live page's runs into assets/live/ (see specsim.lesson.recorded).

Record on an idle machine at its full thread count: the recorder refuses a noisy plain baseline.
"""

from __future__ import annotations

import argparse
import os

from specsim.lesson import recorded


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", default="auto")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--only", choices=[r.name for r in recorded.RECIPES], default=None)
    args = parser.parse_args(argv)
    for recipe in recorded.RECIPES:
        if args.only and recipe.name != args.only:
            continue
        run = recorded.record(recipe, args.dtype, args.threads)
        recorded.write(run, recipe.path)
        print(f"{run.label()}\n{run.spec.n_generated} tokens in {len(run.spec.iterations)} loops, "
              f"acceptance {run.spec.acceptance_rate:.0%}; written to {recipe.path}")


if __name__ == "__main__":
    main()
