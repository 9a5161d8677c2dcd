"""``python -m specsim.bench``: the benchmark table (:mod:`specsim.measure.bench`), under its short name."""

from specsim.measure.bench import main

if __name__ == "__main__":
    raise SystemExit(main())
