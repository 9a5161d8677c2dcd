"""specsim.lesson.replay on hand-built traces whose every number is worked out by hand in the docstrings."""

import pytest

from app.live import tokens
from app.live.figures import residual_figure
from specsim.core.trace import Trace
from specsim.lesson import replay
from tests.live_traces import VOCAB, hand_plain, hand_trace


def roles(chips):
    return [(c.text, c.role) for c in chips]


def test_chips_put_the_plus_one_on_the_first_rejected_slot():
    chips = replay.chips_at(hand_trace(), 1)
    assert roles(chips) == [("Hi <you>", "prompt"), (" the", "output"), (" cat", "output"), (" a", "output"),
                            (" on", "rejected"), ("\n", "extra"), (" mat", "unchecked"), (".", "unchecked")]
    rejected, extra = chips[4], chips[5]
    assert (rejected.p, rejected.q, rejected.accept_prob, rejected.position) == (0.05, 0.9, 0.0, 1)
    assert (extra.position, extra.note) == (1, "correction")


def test_chips_put_a_bonus_after_the_last_proposal():
    chips = replay.chips_at(hand_trace(), 2)
    assert [c.role for c in chips[-4:]] == ["accepted", "accepted", "accepted", "extra"]
    assert chips[-1].position == 4 and chips[-1].note == "bonus"


def test_chips_leave_out_a_plus_one_the_budget_cut():
    chips = replay.chips_at(hand_trace(), 3, prompt=False)
    assert [c.role for c in chips] == ["output"] * 8 + ["accepted"] * 3


def test_chips_reject_an_index_outside_the_run():
    with pytest.raises(IndexError):
        replay.chips_at(hand_trace(), 4)


def test_output_text_concatenates_what_each_iteration_emitted():
    trace = hand_trace()
    assert replay.output_text(trace, len(trace.iterations)) == trace.text
    assert replay.output_text(trace, 1) == " the cat a"


def test_narration_greedy():
    trace = hand_trace()
    assert replay.narrate(trace, 0) == ("Drafted 3, the target agreed with the first 2, rejected ' sat' "
                                        "(its own top choice was ' a'), and emitted ' a' itself: 3 tokens this loop.")
    assert replay.narrate(trace, 1) == ("Drafted 3, the target rejected the first one, ' on' (its own top choice "
                                        "was '\\n'), and emitted '\\n' itself: 1 token this loop.")
    assert replay.narrate(trace, 2) == ("Drafted 3, the target agreed with all 3 and added ' was' as a bonus from "
                                        "its verification pass: 4 tokens this loop.")
    assert replay.narrate(trace, 3).endswith(": 2 tokens this loop (the token budget ended the run).")


def test_narration_sampling_names_the_acceptance_chance_and_the_residual():
    text = replay.narrate(hand_trace(greedy=False), 0)
    assert "kept with chance 0.20; the random draw 0.73 was above that" in text  # min(1, 0.1 / 0.5)
    assert "drew ' a' from the leftover distribution" in text


def test_run_stats_against_hand_counts():
    stats = replay.run_stats(hand_trace(), hand_plain())
    assert stats.alpha == pytest.approx(0.8)
    assert stats.kept_counts == (1, 0, 1, 2)  # kept 2, 0, 3, 3
    assert stats.kept_share == pytest.approx((0.75, 0.75, 0.5))
    assert stats.tokens_per_pass == 2.5
    m = stats.costs
    assert m.draft_cost == pytest.approx(0.25)  # 2 ms / 8 ms
    assert m.verify_cost == pytest.approx(1.25)  # 10 ms / 8 ms
    assert m.speedup == pytest.approx(2.5 / (3 * 0.25 + 1.25 + 0.5))  # t / (K·c + v + o)
    assert m.wall_clock_speedup == pytest.approx((10 / 0.08) / (10 / 0.1))


def test_run_stats_without_a_baseline_leaves_costs_unknown():
    stats = replay.run_stats(hand_trace())
    assert stats.costs is None
    assert stats.alpha == pytest.approx(0.8)


def test_identity_when_tokens_match():
    result = replay.identity(hand_trace(), hand_plain())
    assert result.identical and result.compared == 10 and result.dtype == "float32"


def test_identity_names_the_first_difference():
    ids = list(hand_trace().generated_ids)
    ids[4] = 21
    result = replay.identity(hand_trace(), hand_plain(tuple(ids)))
    assert not result.identical
    assert (result.index, result.spec_token, result.plain_token) == (4, VOCAB[17], VOCAB[21])


def test_identity_when_one_run_stops_early():
    result = replay.identity(hand_trace(), hand_plain(hand_trace().generated_ids[:7]))
    assert (result.identical, result.index, result.plain_token) == (False, 7, "(end)")


def test_visible_whitespace():
    assert replay.visible(" a\n\tb") == "␣a↵→b"
    assert replay.visible("") == "∅"


def test_hand_trace_survives_json():
    trace = hand_trace(greedy=False)
    assert Trace.from_json(trace.to_json()) == trace


def test_small_chances_are_not_shown_as_zero():
    assert [replay.chance(x) for x in (0.0, 0.5, 0.01, 0.00123, 0.00001)] == [
        "0.00", "0.50", "0.01", "0.0012", "below 0.0001"]


# ---- the prefill's token: generated before the first iteration ------------------------------------------------
def test_the_prefills_token_comes_before_every_iteration():
    from specsim.lesson import guess
    from specsim.measure import cli
    from tests.live_traces import prefilled

    old, trace = hand_trace(), prefilled(hand_trace())
    first = replay.chips_at(trace, 0)[1]
    assert (first.text, first.role, first.token_id, first.note) == (" red", "output", 21, "prefill")
    assert roles(replay.chips_at(trace, 1))[1:5] == [(" red", "output"), (" the", "output"), (" cat", "output"),
                                                   (" a", "output")]
    assert replay.output_text(trace, len(trace.iterations)) == trace.text == " red" + old.text
    assert replay.output_text(trace, 0) == " red" and replay.spec_token_texts(trace)[0] == " red"
    # one record per generated token, the prefill's first: the target's alternatives there, and no draft guess
    assert len(guess.target_tops(trace)) == len(guess.draft_tops(trace)) == trace.n_generated == 11
    assert guess.target_tops(trace)[0] == trace.first_target_top and guess.draft_tops(trace)[0] == ()
    assert guess.target_tops(trace)[1:] == guess.target_tops(old)
    assert cli.marked_text(trace, colour=False).startswith("{+ red+} the cat[- sat-]")
    # loop statistics count the loops' tokens: the prefill chose one without a loop
    assert (trace.n_prefilled, trace.n_decoded, old.n_prefilled, old.n_decoded) == (1, 10, 0, 10)
    assert trace.tokens_per_pass == old.tokens_per_pass == 10 / 4
    assert trace.tokens_per_s == old.tokens_per_s
    assert replay.after_prefill(trace) and not replay.after_prefill(old)
    assert Trace.from_json(trace.to_json()) == trace


# ---- the words of a replay: chip titles, narration, the residual chart (an early review) ------------------------


def test_greedy_hover_never_shows_the_sampling_ratio():
    # hand_trace slot t+3 of iteration 0: p = 0.1, q = 0.5, rejected; a p > q rejection would read "= 1.0000"
    chips = replay.chips_at(hand_trace(greedy=True), 0)
    for chip in chips:
        if chip.role in ("accepted", "rejected"):
            title = tokens.chip_title(chip)
            assert "min(1, p/q)" not in title
            assert ("→ kept" in title) == (chip.role == "accepted")
            assert ("→ rejected" in title) == (chip.role == "rejected")


def test_sampling_hover_keeps_the_ratio():
    chips = replay.chips_at(hand_trace(greedy=False), 0)
    rejected = next(c for c in chips if c.role == "rejected")
    assert "min(1, p/q) = 0.2000" in tokens.chip_title(rejected) and not rejected.greedy


def test_narration_names_the_normalised_residual():
    spec = hand_trace(greedy=False)
    text = replay.narrate(spec, 0)
    assert "norm(max(0, p − q))" in text and "sum to 1" in text


def test_residual_title_separates_average_and_this_guess():
    it = hand_trace(greedy=False).iterations[0]
    title = residual_figure(it).layout.title.text
    assert "is the chance of rejection" not in title
    assert f"{it.residual.mass:.3f}" in title and "averaged over q" in title
    own = 1 - it.slots[it.n_accepted].accept_prob
    assert f"1 − min(1, p/q) = {own:.3f}" in title
