"""Copying where the text repeats itself: the shipped draft takes the token that followed the same few tokens
earlier instead of its own guess (specsim.core.drafters.propose_by_passes with ``copy``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from specsim.core.defaults import COPY_NGRAM, DEFAULT_DRAFT
from specsim.core.draft_loader import COPY_NOTE, load_draft_model
from specsim.core.drafters import PromptLookupDrafter, propose_by_passes
from specsim.core.engine import plain_generate, speculative_generate
from specsim.core.kpolicy import KPolicy
from specsim.core.models import format_prompt
from specsim.core.sampling import SamplingConfig
from specsim.core.trace import Trace
from specsim.lesson.replay import chips_at, narrate

ROOT = Path(__file__).resolve().parents[1]
GREEDY = SamplingConfig(0.0, None)
QUOTING = 'Rewrite this sentence in the passive voice: "The committee approved the new budget on Monday."'

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def scripted_pass(answers: list[int], vocab: int = 10):
    """A draft pass that always puts its mass on the next scripted token; records what it was given to read."""
    read: list[list[int]] = []

    def draft_pass(unread: list[int]):
        read.append(list(unread))
        logits = torch.full((vocab,), -10.0)
        logits[answers[len(read) - 1]] = 10.0
        return logits, torch.arange(vocab)

    return draft_pass, read


def test_next_copy_takes_what_followed_the_latest_repeat_of_two_or_more_tokens():
    lookup = PromptLookupDrafter(max_ngram=4, min_ngram=2)
    assert lookup.next_copy([5, 6, 7, 9, 5, 6]) == 7
    assert lookup.next_copy([5, 6, 7, 9, 5], [6]) == 7  # the proposals so far count as text
    assert lookup.next_copy([5, 6, 7, 5, 6, 8, 1, 5, 6]) == 8  # the latest occurrence wins
    assert lookup.next_copy([5, 6, 7, 9, 6]) is None  # only one token repeats: below the 2-gram minimum
    assert lookup.next_copy([1, 2, 3]) is None


def test_copied_slots_have_q_one_and_skip_the_draft_pass():
    draft_pass, read = scripted_pass([3, 4, 8])
    copies = {1: 7, 2: 2}  # after one proposal copy 7, after two copy 2

    proposal = propose_by_passes(draft_pass, 5, 10, GREEDY, None, "cpu", copy=lambda so_far: copies.get(len(so_far)))
    assert proposal.tokens == [3, 7, 2, 4, 8]
    assert proposal.copied == [False, True, True, False, False]
    assert proposal.q[1:3] == [1.0, 1.0] and proposal.top[1] == [(7, 1.0)]
    # three passes for five proposals; the pass after the copies reads the draft's guess and both copies
    assert read == [[], [3, 7, 2], [4]]
    assert len(proposal.pass_times) == 5


def test_without_copying_nothing_is_marked_and_every_slot_is_a_pass():
    draft_pass, read = scripted_pass([3, 4, 8])
    proposal = propose_by_passes(draft_pass, 3, 10, GREEDY, None, "cpu")
    assert proposal.tokens == [3, 4, 8] and proposal.copied == [] and read == [[], [3], [4]]


def test_a_copied_slot_carries_a_one_hot_q_when_sampling():
    draft_pass, _ = scripted_pass([3, 4])
    proposal = propose_by_passes(draft_pass, 2, 10, SamplingConfig(1.0, None), torch.Generator().manual_seed(0),
                                 "cpu", copy=lambda so_far: 6 if so_far else None)
    assert proposal.copied == [False, True]
    assert torch.equal(proposal.q_probs[1], torch.nn.functional.one_hot(torch.tensor(6), 10).float())


@pytest.fixture(scope="module")
def copying_drafter(default_target):
    return load_draft_model(str(ROOT / DEFAULT_DRAFT), default_target)


def test_the_shipped_draft_copies_and_says_so(copying_drafter, default_target):
    assert copying_drafter.copy_from is not None
    assert (copying_drafter.copy_from.min_ngram, copying_drafter.copy_from.max_ngram) == COPY_NGRAM
    assert copying_drafter.name.endswith(COPY_NOTE)
    plain = load_draft_model(str(ROOT / DEFAULT_DRAFT), default_target, copy=False)
    assert plain.copy_from is None and not plain.name.endswith(COPY_NOTE)


def test_copying_keeps_the_output_and_the_trace_shows_the_copies(copying_drafter, default_target):
    ids = format_prompt(default_target.tokenizer, QUOTING)
    spec = speculative_generate(default_target, copying_drafter, ids, KPolicy(4), 24)
    assert spec.generated_ids == plain_generate(default_target, ids, 24).generated_ids
    copied = [(i, s) for i, it in enumerate(spec.iterations) for s in it.slots if s.copied]
    assert copied, "an answer that quotes its prompt should copy at least once"
    assert all(s.q == 1.0 for _, s in copied)
    index, slot = copied[0]
    assert "copied from earlier in the text" in narrate(spec, index)
    chip = next(c for c in chips_at(spec, index) if c.position == slot.position and c.role == slot.status)
    assert chip.note == "copied"
    again = Trace.from_json(spec.to_json())
    assert [s.copied for it in again.iterations for s in it.slots] == [s.copied for it in spec.iterations
                                                                       for s in it.slots]


def test_the_draft_reads_copied_tokens_like_its_own(copying_drafter, default_target):
    """A guess after copied slots is the guess of a draft that read the copies: the same as a fresh draft's on
    the same text. After a rollback the next loop proposes as a fresh start on the kept text would."""
    tok, vocab = default_target.tokenizer, default_target.model.config.vocab_size
    ids = format_prompt(tok, QUOTING) + tok.encode(" The new budget was approved by the committee on Monday.",
                                                   add_special_tokens=False)
    fresh = load_draft_model(str(ROOT / DEFAULT_DRAFT), default_target, copy=False)
    checked = 0
    for cut in range(len(ids) - 12, len(ids) - 1):
        context = ids[:cut]
        copying_drafter.start(context, vocab)
        proposal = copying_drafter.propose(context, 5, GREEDY, None)
        for i in range(1, len(proposal.tokens)):
            if proposal.copied[i - 1] and not proposal.copied[i]:  # a draft guess right after a copy
                fresh.start(context + proposal.tokens[:i], vocab)
                alone = fresh.propose(context + proposal.tokens[:i], 1, GREEDY, None)
                assert alone.tokens == proposal.tokens[i:i + 1]
                assert alone.q[0] == pytest.approx(proposal.q[i], rel=1e-3)
                checked += 1
        kept = context + proposal.tokens[:1] + [ids[cut + 1]]  # one proposal kept, then the target's own token
        copying_drafter.observe(kept)
        again = copying_drafter.propose(kept, 3, GREEDY, None)
        copying_drafter.start(kept, vocab)
        assert again.tokens == copying_drafter.propose(kept, 3, GREEDY, None).tokens
    assert checked, "no draft guess followed a copy: pick a text that repeats more"


def test_a_recorded_trace_without_the_field_loads_as_not_copied(default_target):
    ids = format_prompt(default_target.tokenizer, "Say hi.")
    plain = load_draft_model(str(ROOT / DEFAULT_DRAFT), default_target, copy=False)
    trace = speculative_generate(default_target, plain, ids, KPolicy(2), 4)
    text = trace.to_json().replace(', "copied": false', "")
    assert '"copied"' not in text
    assert all(not s.copied for it in Trace.from_json(text).iterations for s in it.slots)


def test_the_held_out_evaluation_scores_the_copies(default_target):
    """evaluate(copy=...) proposes the copy wherever there is one: an oracle copier accepts every chain, a
    copier that never fires changes nothing."""
    from specsim.core.draft_nets import load_draft
    from specsim.distill.evaluate import evaluate

    draft, _ = load_draft(ROOT / DEFAULT_DRAFT)
    tok = default_target.tokenizer
    prompt = format_prompt(tok, QUOTING)
    answer = tok.encode("The new budget was approved by the committee on Monday.", add_special_tokens=False)
    item = {"domain": "rewrite", "tokens": torch.tensor(prompt + answer), "prompt_len": len(prompt)}
    full = prompt + answer

    class Oracle:
        def next_copy(self, context, proposed=()):
            return full[len(context) + len(proposed)]

    class Never:
        def next_copy(self, context, proposed=()):
            return None

    alone = evaluate(draft, [item], 4)
    assert "with_copy" not in alone and alone["overall"]["alpha"] < 1.0
    assert evaluate(draft, [item], 4, copy=Oracle())["with_copy"]["overall"]["alpha"] == 1.0
    never = evaluate(draft, [item], 4, copy=Never())["with_copy"]  # NaN positions: compare as JSON
    own = {k: alone[k] for k in ("overall", "domains")}
    assert json.dumps(never, sort_keys=True) == json.dumps(own, sort_keys=True)


def brute_force_continuation(ids: list[int], k: int, low: int, high: int, special: set[int]) -> list[int]:
    """The lookup's definition, written out: the longest tail n-gram (high..low) with an earlier occurrence
    whose next tokens are not special, the latest such occurrence; what followed it, cut at a special token."""
    for n in range(min(high, len(ids) - 1), low - 1, -1):
        tail = ids[-n:]
        if special.intersection(tail):
            continue
        for start in range(len(ids) - n - 1, -1, -1):
            if ids[start:start + n] == tail:
                follow = ids[start + n:start + n + k]
                cut = next((i for i, t in enumerate(follow) if t in special), len(follow))
                if cut:
                    return follow[:cut]
    return []


def test_the_lookup_matches_its_definition_on_random_texts():
    import random

    rng = random.Random(0)
    for _ in range(3000):
        ids = [rng.randrange(rng.choice([3, 5, 12])) for _ in range(rng.randint(0, 40))]
        high = rng.randint(1, 5)
        low = rng.randint(1, high)
        special = {0} if rng.random() < 0.5 else set()
        k = rng.randint(1, 5)
        lookup = PromptLookupDrafter(max_ngram=high, min_ngram=low, special_ids=special)
        assert lookup.continuation(ids, k) == brute_force_continuation(ids, k, low, high, special), (ids, k, low, high)
