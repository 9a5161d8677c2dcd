"""specsim: speculative decoding, explained by running it.

The library never imports streamlit. Read it top to bottom:

- ``analytics``: the closed forms (expected accepted prefix, tokens per loop, speedup);
- ``trace``: the record of one run that every consumer replays;
- ``models`` / ``drafters`` / ``engine``: real models, draft proposals, one speculative iteration;
- ``loop``: the decoding loop every decoder shares (prefill, budget, end-of-text, timing, the trace);
- ``defaults`` / ``paths`` / ``clock``: every shared constant, every asset path, the one timer;
- ``sampling``: min(1, p/q), norm(max(0, p - q)), temperature and top-p;
- ``measure``: measured alpha and costs of real runs, and the calculator's prediction from them;
- ``run`` / ``bench``: the command line (``python -m specsim.run``) and the benchmark table.
"""

__version__ = "0.1.0"
