"""specsim: speculative decoding, explained by running it.

The library never imports streamlit. Its folders are its layers; a layer imports only the layers above it in
this list (``tests/test_layers.py`` holds it to that):

- ``core/``: the loop a student reads (``core.engine``) and what it runs on: acceptance, sampling, K policies,
  drafters, the trace, models, the position-invariant path and its kernels;
- ``variants/``: lookahead, Medusa and token trees, on the same target;
- ``methods`` / ``request``: every way this project decodes, registered once, and the one validated run request
  that carries a run's settings from a page (or the CLI, the bench, a worker) to the engine;
- ``liverun``: the run service every learner's run goes through, in the page's process or on a class worker: one
  request in, the speculative run and its timed plain baseline out, its models from one shelf;
- ``measure/``: timing, the cost model, v(n), the machine profile, the benchmark and the command line
  (``bench`` here is the benchmark's short command, ``python -m specsim.bench``);
- ``lesson/`` and ``distill/``: what the pages teach, and how the shipped drafts were trained;
- ``classroom/``: the same runs and the pages' measurements for a whole class, on a queue served by workers.
"""

__version__ = "0.1.0"
