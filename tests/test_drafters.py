"""Drafters: what they propose, their q, and their KV cache after a rejection."""

from __future__ import annotations

import pytest
import torch

from specsim.core.drafters import Drafter, PromptLookupDrafter, common_prefix
from specsim.core.kpolicy import KPolicy
from specsim.core.model_drafters import EarlyExitDrafter, ModelDrafter, truncated_model
from specsim.core.sampling import SamplingConfig
from specsim.core.tiny import tiny_llama

GREEDY = SamplingConfig(0.0)
SAMPLE = SamplingConfig(1.0)
VOCAB = 40


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def fresh_greedy(model, context: list[int], k: int) -> list[int]:
    """What the model proposes greedily from scratch, without any cache (the reference)."""
    ids = list(context)
    with torch.inference_mode():
        for _ in range(k):
            ids.append(int(model(torch.tensor([ids])).logits[0, -1].argmax()))
    return ids[len(context):]


def test_every_kind_follows_the_protocol():
    model = tiny_llama(VOCAB, seed=0)
    for drafter in (ModelDrafter(model), EarlyExitDrafter(model, 1), PromptLookupDrafter()):
        assert isinstance(drafter, Drafter)


def test_model_drafter_rolls_back_after_rejections():
    """Cache reuse across accept/reject patterns gives the same proposals as recomputing from scratch."""
    model = tiny_llama(VOCAB, seed=0, logit_scale=5.0)
    drafter = ModelDrafter(model)
    context = [3, 7, 11, 2]
    drafter.start(context, VOCAB)
    rng = torch.Generator().manual_seed(1)
    with torch.inference_mode():
        for step in range(8):
            k = 1 + step % 4
            proposal = drafter.propose(context, k, GREEDY, None)
            assert proposal.tokens == fresh_greedy(model, context, k)
            kept = int(torch.randint(0, k + 1, (1,), generator=rng))  # 0..k accepted, then the +1 token
            context = context + proposal.tokens[:kept] + [int(torch.randint(0, VOCAB, (1,), generator=rng))]
            drafter.observe(context)
            assert drafter.cache.get_seq_length() == len(drafter.cached) <= len(context)
            assert drafter.cached == context[: len(drafter.cached)]


def test_full_acceptance_feeds_the_last_proposal():
    """After all K are kept the draft never saw its own last proposal; the next pass must feed it."""
    model = tiny_llama(VOCAB, seed=0, logit_scale=5.0)
    drafter = ModelDrafter(model)
    context = [5, 6, 7]
    drafter.start(context, VOCAB)
    with torch.inference_mode():
        proposal = drafter.propose(context, 3, GREEDY, None)
        assert drafter.cached == context + proposal.tokens[:2]
        context = context + proposal.tokens + [9]
        drafter.observe(context)
        assert drafter.propose(context, 2, GREEDY, None).tokens == fresh_greedy(model, context, 2)


def test_reduced_vocabulary_draft_maps_into_the_target_vocabulary():
    small, target_vocab = 6, VOCAB
    mapping = torch.tensor([4, 9, 17, 23, 30, 38])
    model = tiny_llama(target_vocab, seed=2, logit_scale=5.0, head_size=small)
    drafter = ModelDrafter(model, vocab_map=mapping)
    drafter.start([1, 2], target_vocab)
    with torch.inference_mode():
        proposal = drafter.propose([1, 2], 3, SAMPLE, torch.Generator().manual_seed(0))
        for token, q, q_probs in zip(proposal.tokens, proposal.q, proposal.q_probs, strict=True):
            assert token in mapping.tolist()
            assert q_probs.shape == (target_vocab,) and torch.isclose(q_probs.sum(), torch.tensor(1.0))
            outside = torch.ones(target_vocab, dtype=torch.bool)
            outside[mapping] = False
            assert float(q_probs[outside].abs().sum()) == 0.0 and float(q_probs[token]) == pytest.approx(q)
        greedy = drafter.propose([1, 2], 2, GREEDY, None).tokens
        small_ids = fresh_greedy(model, [1, 2], 1)
        assert greedy[0] == int(mapping[small_ids[0]])


def test_reduced_vocabulary_map_must_fit():
    model = tiny_llama(VOCAB, seed=2, head_size=6)
    drafter = ModelDrafter(model, vocab_map=[1, 2, 3])
    drafter.start([1, 2], VOCAB)
    with pytest.raises(ValueError, match="vocab_map"):
        drafter.propose([1, 2], 1, GREEDY, None)


def test_padded_draft_vocabulary_uses_the_shared_range():
    """A draft with a larger (padded) embedding than the target only proposes shared ids."""
    model = tiny_llama(VOCAB + 8, seed=3, logit_scale=5.0)
    drafter = ModelDrafter(model)
    drafter.start([1, 2], VOCAB)
    with torch.inference_mode():
        proposal = drafter.propose([1, 2], 4, SAMPLE, torch.Generator().manual_seed(0))
    assert all(t < VOCAB for t in proposal.tokens)
    assert all(q.shape == (VOCAB,) for q in proposal.q_probs)


def test_early_exit_shares_weights_and_matches_a_truncated_copy():
    model = tiny_llama(VOCAB, seed=4, layers=4, logit_scale=5.0)
    shallow = truncated_model(model, 2)
    assert len(shallow.model.layers) == 2 and len(model.model.layers) == 4
    assert shallow.lm_head.weight.data_ptr() == model.lm_head.weight.data_ptr()
    assert shallow.model.layers[1] is model.model.layers[1]
    ids = torch.tensor([[1, 5, 9, 2]])
    with torch.inference_mode():
        hidden = model(ids, output_hidden_states=True).hidden_states[2]  # after 2 blocks
        expected = model.lm_head(model.model.norm(hidden))
        assert torch.allclose(shallow(ids).logits, expected, atol=1e-5)
    drafter = EarlyExitDrafter(model, 2)
    drafter.start([1, 5, 9, 2], VOCAB)
    with torch.inference_mode():
        assert drafter.propose([1, 5, 9, 2], 3, GREEDY, None).tokens == fresh_greedy(shallow, [1, 5, 9, 2], 3)
    with pytest.raises(ValueError):
        truncated_model(model, 5)


def test_prompt_lookup_copies_the_latest_match():
    drafter = PromptLookupDrafter(max_ngram=2)
    drafter.start([], 50)
    context = [1, 2, 3, 4, 9, 1, 2, 3, 7, 8, 2, 3]
    assert drafter.continuation(context, 3) == [7, 8, 2]  # the 2-gram (2, 3) last seen before 7
    proposal = drafter.propose(context, 2, SAMPLE, None)
    assert proposal.tokens == [7, 8] and proposal.q == [1.0, 1.0]
    assert [int(q.argmax()) for q in proposal.q_probs] == [7, 8]
    assert all(float(q.sum()) == 1.0 for q in proposal.q_probs)
    assert drafter.propose([5, 6, 7], 4, GREEDY, None).tokens == []  # nothing repeats: no proposal


def test_common_prefix():
    assert common_prefix([1, 2, 3], [1, 2, 4, 5]) == 2 and common_prefix([], [1]) == 0


def test_prompt_lookup_never_matches_into_or_proposes_chat_template_tokens():
    """Issue 23 (b): on a short prompt the last token is the template's newline after `assistant`, whose latest
    earlier occurrence is followed by `<|im_start|>`: prompt lookup proposed the template instead of text."""
    start, end, nl = 1, 2, 11
    # <|im_start|> system \n ... <|im_end|> \n <|im_start|> user \n the cat <|im_end|> \n <|im_start|> assistant \n
    context = [start, 10, nl, 30, end, nl, start, 12, nl, 20, 21, end, nl, start, 13, nl]
    assert PromptLookupDrafter().continuation(context, 3) == [start, 13, nl]  # what it did
    drafter = PromptLookupDrafter(special_ids=(start, end))
    drafter.start(context, 50)
    assert drafter.continuation(context, 3) == [20, 21]  # the user's text, cut before the template's next token
    assert drafter.propose(context, 3, GREEDY, None).tokens == [20, 21]
    assert drafter.continuation([*context, 20, 21, end], 3) == []  # an n-gram ending in a template token: none
    assert drafter.continuation([5, 6, 7, 5, 6], 3) == [7, 5, 6]  # ordinary text is copied as before


def test_the_built_prompt_lookup_drafter_skips_the_template_and_keeps_greedy_output(default_target):
    from specsim.core.engine import plain_generate, speculative_generate
    from specsim.core.models import format_prompt
    from specsim.methods import build_drafter

    tokenizer = default_target.tokenizer
    special = set(tokenizer.all_special_ids)
    ids = format_prompt(tokenizer, "Say hi.")
    assert PromptLookupDrafter().continuation(ids, 4)[0] in special  # the defect, on the real template
    drafter = build_drafter("prompt_lookup", default_target)
    drafter.start(ids, len(tokenizer))
    assert not special & set(drafter.propose(ids, 4, GREEDY, None).tokens)
    spec = speculative_generate(default_target, drafter, ids, KPolicy(4), 12)
    assert not special & {s.token_id for it in spec.iterations for s in it.slots}
    assert spec.generated_ids == plain_generate(default_target, ids, 12).generated_ids
