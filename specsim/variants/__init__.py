"""Variants of speculative decoding run on the same target: lookahead (Jacobi) decoding, Medusa heads,
and a runner that compares them with the draft-model, prompt-lookup and early-exit drafters."""
