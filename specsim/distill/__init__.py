"""Training draft models for the bundled target from its own outputs (``python -m specsim.distill``).

prompts (training prompt generators, kept apart from the held-out set) -> data (the target's answers with
top-k log-probs and hidden states) -> draft_model (standalone and EAGLE-style drafts, save/load) -> train ->
evaluate (held-out greedy acceptance, draft cost) -> speed (end to end through the engine); drafter plugs
the shipped drafts into the engine.
"""
