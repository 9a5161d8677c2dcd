"""Be the draft on the live page (AppTest): picks from the target's top five, verdicts, the learner's score."""

from __future__ import annotations

from app import state
from app.be_the_draft import verdict_line
from specsim import costmodel, guess, recorded
from tests.conftest import open_page


def _pick(at, slot: int, token: int):
    return at.radio(key=f"{state.GUESS_PICK}{slot}").set_value(str(token))


def test_right_then_wrong_guesses_are_judged_and_scored_on_the_winning_recording():
    run = recorded.load(recorded.RECIPES[0].path)
    tokens, tops = list(run.spec.generated_ids), guess.target_tops(run.spec)
    at = open_page("live.py")
    assert "Be the draft" in [h.value for h in at.subheader]
    # slot 1 right (the target's own choice), slot 2 wrong (its runner-up), so slot 3 is never checked
    _pick(at, 1, tokens[0])
    runner_up = next(t.token_id for t in tops[1] if t.token_id != tokens[1])
    _pick(at, 2, runner_up)
    _pick(at, 3, tokens[2])
    at.run()
    at.button(key=state.GUESS_CHECK_BUTTON).click().run()
    assert not at.exception
    loop = guess.check(tokens, 0, [tokens[0], runner_up, tokens[2]])
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
    from specsim.trace import TokenProb

    tops = [(TokenProb(5, "a", 0.5),), (TokenProb(6, "b", 0.4), TokenProb(9, "z", 0.3)), (TokenProb(7, "c", 0.9),)]
    assert verdict_line(loop, ["a", "b", "c"], tops) == "✓ a  ✗ z (the target wrote b)  · c (never checked)  +1 b"
