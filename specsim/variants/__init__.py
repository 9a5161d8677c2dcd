"""Variants of speculative decoding run on the same target: lookahead (Jacobi) decoding, Medusa heads (a chain and
a tree), and token trees verified in one pass with their two lossless rules.

A layer above :mod:`specsim.core`: variants import the core, never a higher layer. Their timed comparison with
the draft-model, prompt-lookup and early-exit drafters is :mod:`specsim.measure.compare_variants`.
"""
