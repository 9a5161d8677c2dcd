"""Be the draft on the live page (AppTest): shuffled picks, verdicts, the learner's score."""

from __future__ import annotations

import pytest

from app import state
from app.live.be_the_draft import NO_GUESS, offered, pick_key, verdict_line
from specsim.lesson import guess, recorded
from specsim.measure import costmodel
from tests.conftest import open_page


def _pick(at, spec, slot: int, token: int, start: int = 0):
    return at.radio(key=pick_key(spec, start, slot)).set_value(str(token))


def test_right_then_wrong_guesses_are_judged_and_scored_on_the_winning_recording():
    run = recorded.load(recorded.RECIPES[0].path)
    tokens, tops = list(run.spec.generated_ids), guess.target_tops(run.spec)
    s = run.spec.n_prefilled  # the first guess follows the prefill's token
    at = open_page("live.py")
    assert "Be the draft" in [h.value for h in at.subheader]
    # slot 1 right (the target's own choice), slot 2 wrong (its runner-up), so slot 3 is never checked
    _pick(at, run.spec, 1, tokens[s], start=s)
    runner_up = next(t.token_id for t in tops[s + 1] if t.token_id != tokens[s + 1])
    _pick(at, run.spec, 2, runner_up, start=s)
    _pick(at, run.spec, 3, tokens[s + 2], start=s)
    at.run()
    at.button(key=state.GUESS_CHECK_BUTTON).click().run()
    assert not at.exception
    loop = guess.check(tokens, s, [tokens[s], runner_up, tokens[s + 2]])
    assert loop.kept == 1 and loop.checked == 2
    texts = [m.value for m in at.markdown]
    assert any(v.startswith("✓") and "✗" in v and "+1" in v for v in texts)
    shown = {m.label: m.value for m in at.metric}
    assert shown["your acceptance α"] == "50%" and shown["your tokens per loop"] == "2.00"
    costs = costmodel.cost_model([run.spec], [run.plain])
    assert shown["your speedup"] == f"{guess.score([loop]).speedup(costs):.2f}×"
    assert any(f"α = {costs.alpha:.0%}" in c.value for c in at.caption)  # beside the real draft
    at.button(key=state.GUESS_RESET_BUTTON).click().run()
    assert "your acceptance α" not in {m.label for m in at.metric}


def test_the_verdict_line_names_each_slot():
    tokens = [5, 6, 7]
    loop = guess.check(tokens, 0, [5, 9, 7])
    from specsim.core.trace import TokenProb

    names = {t.token_id: t.text for t in (TokenProb(5, "a", 0.5), TokenProb(9, "z", 0.3), TokenProb(7, "c", 0.9))}
    assert verdict_line(loop, ["a", "b", "c"], names) == "✓ a  ✗ z (the target wrote b)  · c (never checked)  +1 b"


# ---- the picks give nothing away: shuffled, with the real draft's guesses among them ------------------------


def _runs():
    return [recorded.load(r.path) for r in recorded.RECIPES]


@pytest.mark.parametrize("recipe", range(len(recorded.RECIPES)))
def test_every_position_offers_the_target_token_among_draft_and_target_picks(recipe):
    spec = _runs()[recipe].spec
    tops, drafts = guess.target_tops(spec), guess.draft_tops(spec)
    assert len(drafts) == len(tops) == len(spec.generated_ids)
    with_draft_only = 0
    for pos, token in enumerate(spec.generated_ids):
        picks = offered(spec, pos, tops[pos], drafts[pos])
        ids = [t.token_id for t in picks]
        assert token in ids and len(ids) == len(set(ids)) <= guess.CHOICES
        assert offered(spec, pos, tops[pos], drafts[pos]) == picks  # the same order on every rerun
        with_draft_only += any(i not in {t.token_id for t in tops[pos]} for i in ids)
    if spec.n_accepted < spec.n_checked:  # a draft that was wrong somewhere: its wrong favourites are offered too
        assert with_draft_only > 0


def _first_pick_learner(spec, k: int) -> guess.Score:
    """A learner who always takes the first token listed, loop after loop, through the whole recording."""
    tokens = list(spec.generated_ids)
    tops, drafts = guess.target_tops(spec), guess.draft_tops(spec)
    loops, start = [], spec.n_prefilled
    while start < len(tokens):
        picks = [offered(spec, pos, tops[pos], drafts[pos])[0].token_id
                 for pos in range(start, min(start + k, len(tokens)))]
        loops.append(guess.check(tokens, start, picks))
        start += loops[-1].tokens
    return guess.score(loops)


def test_always_taking_the_first_pick_scores_about_chance():
    runs = _runs()
    scores = [_first_pick_learner(r.spec, r.spec.settings.k) for r in runs]
    kept, checked = sum(s.kept for s in scores), sum(s.checked for s in scores)
    # a blind pick among n offered tokens is kept with chance 1/n (n = CHOICES almost everywhere): the count of kept
    # first picks must sit within three standard deviations of that binomial, far below "always"
    n_offered = [len(offered(r.spec, pos, top, draft)) for r in runs
                 for pos, (top, draft) in enumerate(zip(guess.target_tops(r.spec), guess.draft_tops(r.spec),
                                                        strict=True))]
    chance = sum(1 / n for n in n_offered) / len(n_offered)
    assert checked > 60 and chance < 0.2
    assert abs(kept - checked * chance) <= 3 * (checked * chance * (1 - chance)) ** 0.5, (kept, checked, chance)


def test_choices_listed_by_probability_would_be_caught():
    """The check above can fail: with the picks in the target's order, the first pick is always kept."""
    spec = _runs()[0].spec
    tokens, tops = list(spec.generated_ids), guess.target_tops(spec)
    loops, start = [], spec.n_prefilled
    while start < len(tokens):
        picks = [tops[pos][0].token_id for pos in range(start, min(start + spec.settings.k, len(tokens)))]
        loops.append(guess.check(tokens, start, picks))
        start += loops[-1].tokens
    assert guess.score(loops).alpha == 1.0


def test_choices_mix_and_shuffle_by_seed():
    from specsim.core.trace import TokenProb

    target = tuple(TokenProb(i, f"t{i}", 0.5 / (i + 1)) for i in range(5))
    draft = tuple(TokenProb(i, f"d{i}", 0.4) for i in (0, 7, 8, 9))
    orders = {tuple(t.token_id for t in guess.choices(target, draft, seed)) for seed in range(50)}
    assert all(0 in o and {7, 8}.issubset(o) and len(o) == guess.CHOICES for o in orders)
    assert len({o[0] for o in orders}) > 3  # the target's favourite is not always listed first


def test_a_new_loop_opens_on_stop_here_and_picks_stay_with_their_recording():
    run = recorded.load(recorded.RECIPES[0].path)
    tokens, s = list(run.spec.generated_ids), run.spec.n_prefilled
    at = open_page("live.py")
    _pick(at, run.spec, 1, tokens[s], start=s)
    at.run()
    at.button(key=state.GUESS_CHECK_BUTTON).click().run()
    assert not at.exception
    loop = guess.check(tokens, s, [tokens[s]])
    nxt = at.radio(key=pick_key(run.spec, s + loop.tokens, 1))
    assert nxt.value == NO_GUESS
    other = recorded.load(recorded.RECIPES[1].path)
    assert pick_key(other.spec, 0, 1) != pick_key(run.spec, 0, 1)
