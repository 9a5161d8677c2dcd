"""Each iteration's CacheLengths against the KV caches themselves, watched during real runs (issue 38).

Both models' forward passes are wrapped: every call logs the cache's length before and after it and how
many tokens it read; at every ``on_iteration`` callback (the loop calls it after the crop) the test reads
both caches' lengths again. Nothing here re-derives the engine's bookkeeping: the recorded numbers must be
the lengths the caches really had.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

import pytest
import torch

from specsim.core.drafters import PromptLookupDrafter
from specsim.core.engine import plain_generate, speculative_generate
from specsim.core.kpolicy import KPolicy
from specsim.core.model_drafters import EarlyExitDrafter, ModelDrafter
from specsim.core.sampling import SamplingConfig
from specsim.core.tiny import tiny_llama, tiny_loaded
from specsim.core.trace import CacheLengths, Trace
from specsim.lesson import recorded

VOCAB = 32
PROMPT = [3, 7, 11, 2, 9]

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@dataclass
class Pass:
    who: str  # "target" or "draft"
    before: int  # the cache's length when the pass started
    after: int  # and when it returned
    read: int  # input tokens


@dataclass
class Watch:
    """Every forward pass of the two models, cut into one list per iteration, and the caches after each crop."""

    passes: list[Pass] = field(default_factory=list)
    by_iteration: list[list[Pass]] = field(default_factory=list)
    after_crop: list[tuple[int, int | None]] = field(default_factory=list)  # (target, draft) at each callback
    target_cache: object = None

    def wrap(self, model: torch.nn.Module, drafter) -> None:
        """Log every pass of ``model``; a pass on the drafter's own cache is the draft's (the target may draft)."""
        inner = model.forward

        def forward(*args, **kwargs):
            cache = kwargs["past_key_values"]
            who = "draft" if cache is getattr(drafter, "cache", None) else "target"
            before = cache.get_seq_length()
            out = inner(*args, **kwargs)
            if who == "target":
                self.target_cache = cache
            self.passes.append(Pass(who, before, cache.get_seq_length(), kwargs["input_ids"].shape[1]))
            return out

        model.forward = forward

    def on_iteration(self, drafter):
        def callback(_iteration) -> None:
            self.by_iteration.append(self.passes)
            self.passes = []
            draft = drafter.cache.get_seq_length() if hasattr(drafter, "cache") else None
            self.after_crop.append((self.target_cache.get_seq_length(), draft))
        return callback


def watched_run(target, drafter, k: int, n_new: int, prompt=PROMPT, temperature: float = 0.0, seed: int = 0,
                **policy) -> tuple[Trace, Watch]:
    watch = Watch()
    models = {id(m): m for m in (target.model, getattr(drafter, "model", None)) if m is not None}.values()
    for model in models:
        watch.wrap(model, drafter)
    try:
        trace = speculative_generate(target, drafter, prompt, KPolicy(k, **policy), n_new,
                                     SamplingConfig(temperature), seed, on_iteration=watch.on_iteration(drafter))
    finally:
        for model in models:
            del model.forward  # back to the class's forward
    return trace, watch


def check_against_the_caches(trace: Trace, watch: Watch, prompt: list[int]) -> None:
    """Every recorded length is a length the watched caches had at that point."""
    prefills = [p for p in watch.by_iteration[0] if p.before == 0]
    # both prefills read the whole prompt: the context minus its last token, the one the target's prefill chose
    assert len(prefills) in (1, 2) and all(p.read == len(prompt) for p in prefills)
    first_reads: list[int | None] = []
    for i, (it, passes) in enumerate(zip(trace.iterations, watch.by_iteration, strict=True)):
        passes = [p for p in passes if p not in prefills] if i == 0 else passes
        *draft_passes, verification = passes
        assert verification.who == "target" and all(p.who == "draft" for p in draft_passes)
        c = it.caches
        assert c.target_before == verification.before
        assert c.target_written == verification.after
        assert verification.read == it.k + 1  # the pass wrote the last kept token and the K proposals
        target_now, draft_now = watch.after_crop[i]
        assert c.target_kept == target_now
        assert c.draft_kept == draft_now
        if draft_now is None:
            assert c.draft_before is c.draft_drafted is c.draft_catch_up is None
            continue
        # one draft pass per guessed slot; a copied slot has none
        assert len(draft_passes) == sum(not s.copied for s in it.slots)
        if draft_passes:
            assert (c.draft_before, c.draft_drafted) == (draft_passes[0].before, draft_passes[-1].after)
            first_reads.append(draft_passes[0].read if not it.slots[0].copied else None)
        else:
            assert c.draft_before == c.draft_drafted == (watch.after_crop[i - 1][1] if i else len(prompt))
            first_reads.append(None)
    # the catch-up is what the draft's first pass of the next iteration reads
    for it, read in zip(trace.iterations, first_reads[1:], strict=False):
        if read is not None:
            assert it.caches.draft_catch_up == read


@pytest.fixture(scope="module")
def target():
    return tiny_loaded(VOCAB, seed=1, logit_scale=4.0)


def test_a_draft_that_is_mostly_rejected(target):
    trace, watch = watched_run(target, ModelDrafter(tiny_llama(VOCAB, seed=2, logit_scale=4.0)), 3, 16)
    check_against_the_caches(trace, watch, PROMPT)
    assert any(it.n_accepted < it.k for it in trace.iterations)


def test_the_target_as_its_own_draft_keeps_everything_and_the_draft_catches_up_two(target):
    """After a full acceptance the draft never read its last proposal: it catches up on it and the +1 token."""
    trace, watch = watched_run(target, ModelDrafter(target.model), 3, 13)
    check_against_the_caches(trace, watch, PROMPT)
    full = [it for it in trace.iterations if it.k and it.n_accepted == it.k]
    assert full and all(it.caches.draft_catch_up == 2 for it in full[:-1])


def test_early_exit_mixes_kept_and_rejected_drafts(target):
    trace, watch = watched_run(target, EarlyExitDrafter(target.model, 1), 4, 24)
    check_against_the_caches(trace, watch, PROMPT)
    rejected = [it for it in trace.iterations if it.n_accepted < it.k]
    assert rejected and all(it.caches.draft_catch_up == 1 for it in rejected if it is not trace.iterations[-1])


def test_sampling_and_the_heuristic_schedule(target):
    """K moves, so the target writes a different number of entries from one iteration to the next."""
    trace, watch = watched_run(target, EarlyExitDrafter(target.model, 1), 2, 30, temperature=1.0, seed=4,
                               schedule="heuristic")
    check_against_the_caches(trace, watch, PROMPT)
    assert len({it.caches.target_written - it.caches.target_before for it in trace.iterations}) > 1


def test_copied_slots_skip_the_draft_pass(target):
    """A draft that copies where the text repeats: a copied slot has no draft pass (Slot.copied marks it)."""
    prompt = [4, 5, 6, 7, 8, 4, 5, 6, 7, 8, 4, 5]
    drafter = ModelDrafter(tiny_llama(VOCAB, seed=2, logit_scale=4.0), copy_from=PromptLookupDrafter(3, 2))
    trace, watch = watched_run(target, drafter, 4, 16, prompt=prompt)
    check_against_the_caches(trace, watch, prompt)
    assert any(s.copied for it in trace.iterations for s in it.slots)


def test_prompt_lookup_and_plain_decoding_record_only_the_target():
    target = tiny_loaded(VOCAB, seed=1, logit_scale=4.0)
    prompt = [4, 5, 6, 7, 4, 5, 6]
    trace, watch = watched_run(target, PromptLookupDrafter(), 3, 8, prompt=prompt)
    check_against_the_caches(trace, watch, prompt)
    plain = plain_generate(target, prompt, 4)
    assert [it.caches.target_before for it in plain.iterations] == list(range(len(prompt), len(prompt) + 3))
    assert all(it.caches.draft_before is None and it.caches.target_written == it.caches.target_before + 1
               for it in plain.iterations)


def test_a_wrong_record_is_caught(target):
    """The check above can fail: an off-by-one catch-up (the classic rollback bug) does not pass it."""
    trace, watch = watched_run(target, ModelDrafter(target.model), 3, 13)
    wrong = replace(trace, iterations=tuple(replace(it, caches=replace(it.caches, draft_catch_up=1))
                                            for it in trace.iterations))
    with pytest.raises(AssertionError):
        check_against_the_caches(wrong, watch, PROMPT)


def test_new_traces_round_trip_and_old_recordings_still_load(target):
    trace, _ = watched_run(target, EarlyExitDrafter(target.model, 1), 3, 8, temperature=0.8, seed=1,
                           schedule="heuristic", stop_below=0.2)
    again = Trace.from_json(trace.to_json())
    assert again == trace and isinstance(again.iterations[0].caches, CacheLengths)
    assert again.settings.k_schedule == "heuristic" and again.settings.stop_below == 0.2
    for recipe in recorded.RECIPES:
        run = recorded.load(recipe.path)
        assert run is not None, recipe.path
        # the shipped recordings were made by the engine that records the caches and the planned K
        assert all(isinstance(it.caches, CacheLengths) and it.k_planned == run.spec.settings.k
                   for it in run.spec.iterations)
        for new in (run.spec, run.plain):  # a trace written before those fields existed still loads
            data = json.loads(new.to_json())
            for it in data["iterations"]:
                it.pop("caches", None)
                it.pop("k_planned", None)
                for slot in it["slots"]:
                    slot.pop("accepted_mass", None)
            data["settings"].pop("k_schedule", None)
            data["settings"].pop("stop_below", None)
            data.pop("first", None)
            data.pop("first_target_top", None)
            old = Trace.from_json(json.dumps(data))
            assert old.first is None and old.n_decoded == old.n_generated  # its loops made every token
            assert old.iterations and all(it.caches is None and it.k_planned is None for it in old.iterations)
            assert old.settings.k_schedule == "fixed" and old.mean_accepted_mass is None
            assert old.k_max == old.settings.k and Trace.from_json(old.to_json()) == old
