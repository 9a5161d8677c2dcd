"""One registry of decoding methods (specsim.methods), and plain decoding as the loop with nothing proposed; the
variants table and the live page's drafter choice read their words from it."""

from __future__ import annotations

import pytest

from specsim import methods
from specsim.core import published
from specsim.core.drafters import NoDrafter, PromptLookupDrafter
from specsim.core.engine import plain_generate, speculative_generate
from specsim.core.kpolicy import KPolicy
from specsim.core.sampling import SamplingConfig
from specsim.core.tiny import tiny_loaded
from specsim.measure import bench, cli
from specsim.measure import compare_variants as cmp

VOCAB, PROMPT = 40, [1, 5, 9, 2]


@pytest.fixture(scope="module")
def tiny():
    return tiny_loaded(VOCAB, seed=3)


def test_plain_decoding_is_the_loop_with_a_drafter_that_proposes_nothing(tiny, one_torch_thread):
    trace = plain_generate(tiny, PROMPT, 9, sampling=SamplingConfig(0.9), seed=7)
    assert trace.mode == "plain" and trace.settings.k == 0 and trace.settings.drafter == NoDrafter.kind
    assert trace.n_generated == 9 and trace.n_decoded == 8  # the prefill drew the first token
    assert trace.target_passes == trace.n_decoded == len(trace.pass_times)  # then one pass per token
    assert all(it.slots == () and it.extra_kind == "bonus" and it.emitted == (it.extra.token_id,)
               for it in trace.iterations)
    assert trace.tokens_per_pass == 1.0 and trace.n_checked == 0
    # the speculative entry point with the same drafter makes the same draws, so the same tokens
    same = speculative_generate(tiny, NoDrafter(), PROMPT, KPolicy(3), 9, sampling=SamplingConfig(0.9), seed=7)
    assert same.generated_ids == trace.generated_ids
    assert [it.extra.prob for it in same.iterations] == [it.extra.prob for it in trace.iterations]


def test_plain_greedy_decoding_is_the_argmax_of_a_full_forward_pass(tiny, one_torch_thread):
    import torch

    ids = list(PROMPT)
    with torch.inference_mode():
        for _ in range(6):
            ids.append(int(tiny.model(torch.tensor([ids])).logits[0, -1].argmax()))
    assert list(plain_generate(tiny, PROMPT, 6).generated_ids) == ids[len(PROMPT):]


def test_k_zero_is_refused_for_a_real_drafter(tiny):
    with pytest.raises(ValueError, match="k must be at least 1"):
        speculative_generate(tiny, PromptLookupDrafter(), PROMPT, KPolicy(0), 4)


def test_every_entry_point_offers_the_registered_drafters():
    assert methods.DRAFTER_KINDS == ("draft_model", "prompt_lookup", "early_exit")
    with pytest.raises(SystemExit):
        cli.parse_args(["--prompt", "x", "--drafter", "medusa"])  # registered as a variant, not as a drafter kind
    for kind in methods.DRAFTER_KINDS:
        assert cli.parse_args(["--prompt", "x", "--drafter", kind])[0].drafter == kind
        assert bench.parse_args(["--drafters", kind]).drafters == [kind]
    from app.live.params import DRAFTERS

    assert list(DRAFTERS) == [m.key for m in methods.METHODS if m.live]


def test_each_drafter_kind_builds_a_drafter_of_that_kind(tiny):
    for kind in ("prompt_lookup", "early_exit"):
        assert methods.build_drafter(kind, tiny, early_exit_layers=1).kind == kind
    with pytest.raises(ValueError, match="needs a draft model"):
        methods.build_drafter("draft_model", tiny)
    with pytest.raises(ValueError, match="choose one of draft_model, prompt_lookup, early_exit"):
        methods.build_drafter("lookahead", tiny)


def test_the_comparison_and_the_lesson_table_read_the_registry():
    keys = [m.key for m in methods.METHODS]
    assert len(set(keys)) == len(keys) and keys[0] == "plain"
    assert set(published.SPEEDUPS) <= set(keys)  # every paper's figure belongs to a registered method
    rows = cmp.lesson_rows([])
    assert [r["variant"] for r in rows] == [m.label for m in methods.METHODS if m.lesson]
    assert all(r["reported speedup (papers)"] for r in rows)
    with pytest.raises(ValueError, match="unknown variant 'nope'"):
        cmp.run_variant("nope", None, [], 1)


def test_the_draft_model_method_has_one_key_and_its_old_name_still_reads():
    """Issue 63, item 4: the draft-model method was "draft_model" in the comparison and "model" as a drafter kind.
    Now one key names it everywhere; a link, a recorded trace, a stored request or a command written with the old
    kind reads as the new one."""
    import json

    from specsim.core.defaults import DRAFT_MODEL
    from specsim.core.paths import ASSETS
    from specsim.core.trace import Trace
    from specsim.measure import cli
    from specsim.request import RunRequest

    keys = {m.key for m in methods.METHODS}
    assert set(methods.DRAFTER_KINDS) <= keys and DRAFT_MODEL in methods.DRAFTER_KINDS
    assert set(methods.LIVE_DRAFTERS) <= keys
    recorded = json.loads((ASSETS / "live" / "prose_run.json").read_text(encoding="utf-8"))["spec"]
    assert recorded["settings"]["drafter"] == "model"  # recorded before the rename
    assert Trace.from_json(json.dumps(recorded)).settings.drafter == DRAFT_MODEL
    assert RunRequest(prompt="hi", drafter="model").drafter == DRAFT_MODEL
    args, request = cli.parse_args(["--prompt", "hi", "--drafter", "model", "--draft", "some/draft"])
    assert args.drafter == request.drafter == DRAFT_MODEL


# ---- what the pages say about each method ------------------------------------------------------------------------


def test_the_variants_table_is_one_corrected_table_and_a_note_names_each_correction():
    """The lesson's quoted columns beside "this app's correction" left the learner unsure which to trust (issue 61).
    One table now says the right thing, in the app's words, and a note says where the lesson's table differs."""
    lookahead = methods.method("lookahead").lesson
    assert "whole window" in lookahead.note and "regenerate only failed tokens" not in lookahead.note.lower()
    assert "only the failed tokens" in lookahead.departs
    assert "lesson" not in methods.departures()  # the learner never sees the seed's table: no note may point at it
    medusa = methods.method("medusa_tree").lesson
    assert "405B" in medusa.departs and published.NVIDIA_MEDUSA_70B_SPEEDUP.figure in medusa.departs
    assert "typical acceptance" in medusa.note
    assert "405B" in methods.method("medusa_tree").claimed_speedup()  # the reported column gives the setting
    assert methods.method("early_exit").claimed_speedup()  # LayerSkip and Kangaroo report speedups
    rows = methods.variant_rows()
    assert [r["variant"] for r in rows] == [m.lesson.name for m in methods.lesson_methods()]
    assert not any("lesson" in column for r in rows for column in r)  # no column quotes the lesson
    note = methods.departures()
    assert all(m.label in note for m in methods.lesson_methods() if m.lesson.departs)
    assert "Draft model" not in note  # the lesson's row was right: nothing to say


def test_live_drafter_choice_says_the_bundled_draft_also_copies():
    assert "copies" in methods.LIVE_DRAFTERS["draft_model"]
