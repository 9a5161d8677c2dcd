"""The core: one speculative loop and everything it runs on. It imports nothing else of specsim.

Read it in this order:

- ``engine``: one speculative iteration (``SpeculativeStep``) and the loop around it (``decode_loop``); plain
  decoding is its K = 0 case;
- ``loop_parts``: what every step shares (the ``Step`` protocol, prefill, the budget, end-of-text);
- ``acceptance``: steps 3-4 of an iteration, the longest agreeing prefix and the +1 token;
- ``sampling``: min(1, p/q), norm(max(0, p - q)), temperature, top-k and top-p; ``rules``: its two sums
  Σ min(p, q) and norm(max(0, p − q)), written once for numpy arrays and torch tensors (the pages call them too);
- ``kpolicy``: how many tokens to draft each loop (a fixed K, transformers' schedule, a confidence stop);
- ``trees`` / ``token_tree``: a token tree instead of a chain (the draft's most likely tokens at each position,
  checked in one pass with a tree mask, the path that follows the target's choices kept), and the tree itself;
- ``drafters`` / ``model_drafters`` / ``trained_drafters`` / ``draft_loader``: the guessers (their protocol and
  prompt lookup; a draft model and early exit), the shipped trained drafts (``draft_nets`` their architectures,
  ``draft_forward`` their fast forward pass), and loading what a drafter needs for a loaded target;
- ``trace`` / ``trace_build``: the record of one run that every consumer replays;
- ``models`` / ``model_checks`` / ``invariant`` / ``fused`` (``kernels/``) / ``target_pass``: real models and the
  checks around loading one (hub id, memory, shared tokenizer), the position-invariant decode path and its C++
  kernels, and the target's decode pass as one C++ call (bitwise the same);
- ``tiny``: small random-weight models built in a moment, for checks and tests;
- ``clock`` / ``cpu``: the one timer, and the machine (its ``/proc/cpuinfo``, its one identity);
- ``defaults`` / ``paths`` / ``published`` / ``prompt_sets`` / ``errors``: shared constants and limits, where
  files live, the papers' figures as data, the built-in prompts, one line per error;
- ``environment``: every ``SPECSIM_*`` setting, read by one class.
"""
