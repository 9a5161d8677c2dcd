"""Training draft models for the bundled target from its own outputs (``python -m specsim.distill``).

training_prompts (prompt generators, kept apart from the held-out set) -> instruct and corpus (the target's
own answers, a resumable token corpus, answered in batches by batch_generation) -> stages (featurised training
records: the target's top-k and hidden states) -> train -> evaluate (held-out greedy acceptance, draft cost) -> speed
(end to end through the engine, timed by specsim.measure.timing).

What a trained draft needs at run time lives in the core, not here: the architectures and their save and load
(:mod:`specsim.core.draft_nets`), their fast forward pass (:mod:`specsim.core.draft_forward`) and the drafters
that plug them into the engine (:mod:`specsim.core.trained_drafters`). Training sits beside the lesson, above
the measurement layer it uses to time its drafts.
"""
