"""Measurement: timing runs fairly on a shared machine, the cost model read off traces, v(n), this machine's
profile, the benchmark and the command line. Imports the core, the variants and the run registry, never the
lesson or the classroom.

- ``analytics``: the closed forms (expected accepted prefix, tokens per loop, τ, the speedup, the one best K);
- ``proportion``: how far a measured share can be trusted (a Wilson interval on k of n);
- ``timing`` / ``fairtime`` / ``costmodel``: the one timing driver, fair speedups, the one cost model;
- ``passcost`` / ``machine`` / ``profile_timing`` / ``pathbench``: v(n) measured, this machine's profile (decode
  path, v(n), best K) and the runs it is measured from, and the target's two decode-pass paths timed against each
  other (``python -m specsim.bench --passes``);
- ``hf_assisted``: transformers' assisted generation, as a reference and a yardstick;
- ``compare_variants``: every variant timed on one prompt against plain greedy decoding;
- ``bench`` / ``cli`` / ``flags``: ``python -m specsim.bench``, ``python -m specsim.measure.cli``, and the flags
  every command line shares (models, threads, device, dtype), defined and checked once;
- ``treebench`` / ``tables``: chains against token trees (``python -m specsim.bench --trees``), and the plain-text
  tables the benchmarks print.
"""
