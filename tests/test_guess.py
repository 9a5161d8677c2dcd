"""Be the draft: a learner's guesses checked against a recorded greedy run, scored by the cost model."""

from __future__ import annotations

import pytest

from specsim.lesson import guess, recorded
from specsim.measure import costmodel

RUNS = {r.name: recorded.load(r.path) for r in recorded.RECIPES}


@pytest.mark.parametrize("name", list(RUNS))
def test_the_recorded_tokens_are_the_targets_choices(name):
    run = RUNS[name]
    tops = guess.target_tops(run.spec)
    assert len(tops) == run.spec.n_generated
    # greedy: the token written at each position is the target's top choice there
    assert [t[0].token_id for t in tops] == list(run.plain.generated_ids)


def test_a_perfect_guesser_keeps_everything_and_a_wrong_one_still_gets_the_plus_one():
    tokens = [5, 6, 7, 8, 9, 10]
    perfect = guess.check(tokens, 0, [5, 6, 7])
    assert perfect.kept == 3 and perfect.extra == 8 and perfect.tokens == 4 and perfect.checked == 3
    wrong = guess.check(tokens, 1, [1, 7, 8])
    assert wrong.kept == 0 and wrong.extra == 6 and wrong.tokens == 1 and wrong.checked == 1
    half = guess.check(tokens, 2, [7, 1, 9])
    assert half.kept == 1 and half.extra == 8 and half.checked == 2  # the third guess is never checked
    end = guess.check(tokens, 4, [9, 10])
    assert end.kept == 2 and end.extra is None and end.tokens == 2  # the text ended with the last guess
    with pytest.raises(ValueError):
        guess.check(tokens, 6, [1])


def test_the_learner_is_scored_like_the_real_draft():
    """Replaying the real draft's own proposals as guesses gives the draft's α and tokens per loop."""
    run = RUNS["prose_run"]
    tokens = list(run.plain.generated_ids)
    loops, start = [], run.spec.n_prefilled  # the prefill wrote the first token; the loops start after it
    for it in run.spec.iterations:
        if start >= len(tokens):  # a last loop with no room to draft still writes its +1 token
            break
        loops.append(guess.check(tokens, start, [s.token_id for s in it.slots]))
        start += loops[-1].tokens
    s = guess.score(loops)
    assert s.alpha == pytest.approx(run.spec.acceptance_rate)
    assert s.tokens_per_loop == pytest.approx(run.spec.tokens_per_pass)
    costs = costmodel.cost_model([run.spec], [run.plain])
    assert s.speedup(costs) == pytest.approx(costs.speedup)
    # a learner who keeps more, at the same price per guess, is faster
    better = guess.Score(s.loops, s.kept + 10, s.checked, s.tokens + 10, s.guessed_per_loop)
    assert better.speedup(costs) > s.speedup(costs)
