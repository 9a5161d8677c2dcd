"""Nothing after an accepted end-of-text proposal is checked or counted (issue 12, defect 7).

The target is a small random model whose end-of-text id is set to its own second greedy token (the
first is the prefill's); a scripted drafter proposes that token, then the target's true next token,
then another. The target agrees with the first two, but the text ends at the first: the second must
stay unchecked.
"""

from __future__ import annotations

import pytest

from specsim.core.drafters import Proposal
from specsim.core.engine import plain_generate, speculative_generate
from specsim.core.kpolicy import KPolicy
from specsim.core.tiny import tiny_loaded
from specsim.lesson import replay

VOCAB, SEED, PROMPT = 64, 4, [5, 9, 2, 7]


class Scripted:
    """Proposes the same tokens every time, each with q = 1 (greedy mode needs no more)."""

    kind, name, needs_target_hidden = "scripted", "scripted", False

    def __init__(self, tokens: list[int]):
        self.tokens = tokens

    def start(self, prompt_ids, vocab_size, target_hidden=None) -> None:
        pass

    def propose(self, context, k, sampling, generator, stop_below=0.0) -> Proposal:
        tokens = self.tokens[:k]
        return Proposal(tokens, [1.0] * len(tokens), None, [[(t, 1.0)] for t in tokens], [0.0] * len(tokens))

    def observe(self, context, target_hidden=None) -> None:
        pass


@pytest.fixture(scope="module")
def run():
    first, second, third = plain_generate(tiny_loaded(VOCAB, SEED), PROMPT, 3).generated_ids
    assert first != second  # else the prefill's token would already end the text
    other = (third + 1) % VOCAB
    target = tiny_loaded(VOCAB, SEED, eos_token_id=second)  # same weights, and its second token ends the text
    return (first, second), speculative_generate(target, Scripted([second, third, other]), PROMPT, KPolicy(3), 10)


def test_the_text_ends_at_the_accepted_end_of_text(run):
    written, trace = run
    assert trace.generated_ids == written and trace.stop_reason == "eos"
    (it,) = trace.iterations
    assert it.n_accepted == 1
    assert [s.status for s in it.slots] == ["accepted", "unchecked", "unchecked"]
    assert it.slots[1].draw is None


def test_proposals_after_the_end_are_not_counted(run):
    _, trace = run
    stats = replay.run_stats(trace)
    assert stats.alpha == 1.0  # one proposal checked, one kept
    assert stats.kept_share == (1.0, None, None)
    assert stats.kept_counts == (0, 1, 0, 0)


def test_the_narration_says_the_rest_was_not_checked(run):
    _, trace = run
    text = replay.narrate(trace, 0)
    assert "agreed with the first one, which ended the text" in text
    assert "the 2 proposals after it were not checked" in text and "rejected" not in text
    assert "1 token this loop" in text
