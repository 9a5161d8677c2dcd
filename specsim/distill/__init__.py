"""Training draft models for the bundled target from its own outputs (``python -m specsim.distill``).

training_prompts (prompt generators, kept apart from the held-out set) -> instruct and corpus (the target's
own answers, a resumable token corpus) -> stages (featurised training records: the target's top-k and hidden
states) -> draft_model (standalone and EAGLE-style drafts, save and load) and lean (their fast forward pass)
-> train -> evaluate (held-out greedy acceptance, draft cost) -> speed (end to end through the engine, timed by
specsim.timing); drafter plugs the shipped drafts into the engine.
"""
