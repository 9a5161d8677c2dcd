"""specsim: speculative decoding, explained by running it.

The library never imports streamlit. Read it top to bottom:

- ``analytics``: the closed forms (expected accepted prefix, tokens per loop, speedup);
- ``trace``: the record of one run that every consumer replays;
- ``models`` / ``drafters`` / ``engine``: real models, draft proposals, the draft-verify loop.
"""

__version__ = "0.1.0"
