"""specsim: speculative decoding, explained by running it.

The library never imports streamlit. Read it top to bottom:

- ``analytics``: the closed forms (expected accepted prefix, tokens per loop, speedup, the best K);
- ``trace`` / ``trace_build`` / ``replay``: the record of one run that every consumer replays;
- ``models`` / ``drafters`` / ``draft_loader``: real models, draft proposals, loading a drafter for a target;
- ``engine``: one speculative iteration (``SpeculativeStep``) and the loop around it (``decode_loop``);
- ``step`` / ``verify`` / ``sampling``: what every step shares (prefill, budget, end-of-text), the acceptance
  of one block, and min(1, p/q), norm(max(0, p - q)), temperature and top-p;
- ``kpolicy`` / ``adaptive`` / ``overlap``: how many tokens to draft each loop (fixed, transformers' schedule, a
  confidence stop), the three run side by side, and Σ min(p, q) = 1 − TV(p, q), the chance a guess is kept,
  at any temperature;
- ``invariant`` / ``fused``: the position-invariant decode path and its C++ kernels (``kernels/``);
- ``timing`` / ``costmodel`` / ``fairtime`` / ``clock``: the one timing driver, the one cost model, fair
  speedups on a shared machine, the one timer;
- ``passcost`` / ``machine`` / ``cpu``: v(n) measured, this machine's profile (decode path, v(n), best K), its name;
- ``roofline``: the batch-size caveat as a model (a chip's ridge point, v and the speedup at batch size B);
- ``methods`` / ``variants``: every decoding method registered once, and lookahead and Medusa;
- ``defaults`` / ``paths`` / ``published`` / ``prompt_sets``: shared constants, asset paths, the papers' figures,
  the built-in and held-out prompts;
- ``hood`` / ``serving``: one iteration's mechanics read off a trace (the pass, its mask, the caches, α as
  overlap, acceptance by position, compute per token), and switching speculation on in serving stacks;
- ``explain`` / ``domains`` / ``unchanged`` / ``blockcheck`` / ``guess`` / ``quiz`` / ``interview`` / ``recorded``:
  what the pages teach with, each computed from runs or from ``analytics`` (``blockcheck``: a whole block keeps
  the target's distribution, checked by running the engine on two tiny models);
- ``request``: the one validated run request (pydantic): every range of a run, checked once, with the K policy
  and the sampling settings inside it;
- ``liverun`` / ``runcache`` / ``jobs`` / ``tasks`` / ``worker``: one live run as a plain function (the live page
  and a worker both call it), the shared cache of finished runs, live runs as jobs on a queue for a whole class
  (RQ over Redis), the pages' other measurements (v(n), the variants comparison) as tasks on that queue, and the
  worker that serves them (``python -m specsim.worker --redis URL``);
- ``tiny``: small random-weight models built in a moment, for that check and the tests;
- ``cli`` / ``bench`` / ``hf_assisted`` / ``distill``: the command line (``python -m specsim.cli``), the
  benchmark table, transformers' assisted generation as a yardstick, and how the shipped draft was trained;
- ``gpu_identity``: the first GPU run's greedy-identity results, kept as data for the hood page;
- ``errors``: one line per error for users.
"""

__version__ = "0.1.0"
