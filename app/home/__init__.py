"""The idea page's own figure: one target pass reads the context and the guesses, and predicts at every position."""
