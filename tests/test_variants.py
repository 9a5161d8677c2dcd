"""Variants on tiny random Llamas built here: fast, exhaustive checks of exactness.

Greedy identity is checked against a from-scratch argmax loop (no KV cache), which shares no code
with the variants, and against the engine's plain decoding.
"""

from __future__ import annotations

import itertools

import pytest
import torch
from transformers import DynamicCache

from specsim.core.engine import plain_generate, speculative_generate
from specsim.core.kpolicy import KPolicy
from specsim.core.tiny import tiny_loaded
from specsim.core.token_tree import TokenTree, keep_nodes, tree_forward
from specsim.variants.lookahead import NgramPool, jacobi_iterations, lookahead_generate
from specsim.variants.medusa import MedusaDrafter, MedusaHeads
from specsim.variants.medusa_tree import build_tree, medusa_tree_generate
from specsim.variants.tree import verify_tree

VOCAB = 40


def greedy_reference(model, prompt: list[int], n: int) -> list[int]:
    """Greedy decoding by re-reading the whole sequence every step (no cache, no shortcuts)."""
    ids = list(prompt)
    with torch.inference_mode():
        for _ in range(n):
            ids.append(int(model(input_ids=torch.tensor([ids])).logits[0, -1].argmax()))
    return ids[len(prompt):]


@pytest.fixture(scope="module")
def tiny():
    return tiny_loaded(VOCAB, seed=3, logit_scale=4.0)


def prompts(seed: int, count: int) -> list[list[int]]:
    g = torch.Generator().manual_seed(seed)
    return [torch.randint(0, VOCAB, (int(torch.randint(2, 9, (1,), generator=g)),), generator=g).tolist()
            for _ in range(count)]


# ---- Jacobi fixed point ------------------------------------------------------------------------
@pytest.mark.parametrize("window", [1, 3, 6])
def test_jacobi_reaches_the_greedy_fixed_point_from_any_start(tiny, window):
    for prompt in prompts(window, 4):
        greedy = greedy_reference(tiny.model, prompt, window)
        for init in ([0] * window, [VOCAB - 1] * window, [(7 * i) % VOCAB for i in range(window)]):
            iterates = jacobi_iterations(tiny.model, prompt, init)
            assert iterates[-1] == greedy
            assert len(iterates) <= window + 1  # at most W iterations after the start
            for i, guess in enumerate(iterates):  # iterate i is right on its first i tokens
                assert guess[:i] == greedy[:i]


def test_jacobi_starting_at_the_answer_stops_at_once(tiny):
    prompt = [5, 9, 2]
    greedy = greedy_reference(tiny.model, prompt, 5)
    assert jacobi_iterations(tiny.model, prompt, greedy) == [greedy]


# ---- tree attention ----------------------------------------------------------------------------
def test_tree_pass_gives_each_branch_the_logits_of_its_own_chain(tiny):
    prompt = [3, 14, 15, 9]
    tree = TokenTree.rooted(prompt[-1])
    a = tree.add_chain([1, 2, 3], "a")
    b = tree.add_chain([1, 7], "b")  # shares the first node with a
    c = tree.add_chain([8, 8, 8, 8], "c")
    assert b[0] == a[0] and len(tree) == 1 + 3 + 1 + 4
    with torch.inference_mode():
        cache = DynamicCache()
        tiny.model(input_ids=torch.tensor([prompt[:-1]]), past_key_values=cache, use_cache=True)
        tree_logits = tree_forward(tiny.model, cache, tree).logits[0]
        for nodes in (a, b, c):
            chain = [prompt[-1]] + [tree.tokens[i] for i in nodes]
            full = tiny.model(input_ids=torch.tensor([prompt[:-1] + chain])).logits[0, len(prompt) - 1:]
            torch.testing.assert_close(tree_logits[[0, *nodes]], full, atol=1e-5, rtol=1e-5)
        # Keeping one branch leaves exactly the cache that branch alone would have built.
        keep_nodes(cache, len(prompt) - 1, [0, *b])
        nxt = tiny.model(input_ids=torch.tensor([[11]]), past_key_values=cache, use_cache=True).logits[0, -1]
        ref = tiny.model(input_ids=torch.tensor([prompt + [1, 7, 11]])).logits[0, -1]
        torch.testing.assert_close(nxt, ref, atol=1e-5, rtol=1e-5)


def test_verify_tree_prefers_the_longest_accepted_branch(tiny):
    prompt = [4, 4, 21]
    greedy = greedy_reference(tiny.model, prompt, 4)
    wrong = (greedy[0] + 1) % VOCAB
    tree = TokenTree.rooted(prompt[-1])
    tree.add_chain([wrong, 0], "wrong")
    tree.add_chain(greedy[:2] + [(greedy[2] + 1) % VOCAB], "two right")
    tree.add_chain(greedy[:1], "one right")
    with torch.inference_mode():
        cache = DynamicCache()
        tiny.model(input_ids=torch.tensor([prompt[:-1]]), past_key_values=cache, use_cache=True)
        verdicts, _ = verify_tree(tree, tree_forward(tiny.model, cache, tree).logits[0])
    best = verdicts[0]
    assert best.n_accepted == 2 and tree.labels[best.leaf] == "two right" and best.extra == greedy[2]


# ---- lookahead ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("window", "ngram", "candidates"), [(1, 2, 0), (4, 3, 2), (6, 4, 5)])
def test_lookahead_equals_greedy(tiny, window, ngram, candidates):
    for prompt in prompts(10 + window, 4):
        run = lookahead_generate(tiny, prompt, 20, window=window, ngram=ngram, max_candidates=candidates)
        assert list(run.trace.generated_ids) == greedy_reference(tiny.model, prompt, 20)
        assert all(len(s.emitted) >= 1 for s in run.steps)  # never zero tokens per pass
        assert sum(len(s.emitted) for s in run.steps) == run.trace.n_decoded == 19  # the prefill chose the first
        for step in run.steps:  # the window's first slot is always right after one Jacobi iteration
            assert step.window_after[0] == run.trace.generated_ids[step.context_len - len(prompt)]


def test_lookahead_uses_its_pool_on_repetitive_output():
    # A sharp random model soon loops; the n-gram pool then supplies whole accepted runs.
    model = tiny_loaded(VOCAB, seed=0, logit_scale=12.0)
    run = lookahead_generate(model, [1, 2, 3], 40, window=4, ngram=3, max_candidates=3)
    assert list(run.trace.generated_ids) == greedy_reference(model.model, [1, 2, 3], 40)
    assert run.trace.tokens_per_pass > 1.0
    # the claim is about the pool: some loops must keep an n-gram candidate's tokens (a Jacobi win is not it)
    pool_wins = [s for s in run.steps if s.winner.startswith("n-gram")]
    assert pool_wins and all(s.n_accepted >= 1 for s in pool_wins), [s.winner for s in run.steps]


def test_ngram_pool_keeps_recent_distinct_ngrams():
    pool = NgramPool(3)
    pool.add_run([1, 2, 3, 1, 2, 4])
    assert pool.candidates(1, 5) == [(2, 4), (2, 3)]  # most recent first
    assert pool.candidates(9, 5) == []
    with pytest.raises(ValueError):
        NgramPool(1)


# ---- Medusa ------------------------------------------------------------------------------------
def random_heads(hidden: int, n_heads: int, seed: int) -> MedusaHeads:
    heads = MedusaHeads(hidden, n_heads, torch.arange(VOCAB))
    torch.manual_seed(seed)
    for block in heads.blocks:
        torch.nn.init.normal_(block.weight, std=0.5)
    return heads.eval()


@pytest.mark.parametrize(("n_heads", "seed"), list(itertools.product([1, 3], [0, 1])))
def test_medusa_chain_and_tree_equal_greedy(tiny, n_heads, seed):
    heads = random_heads(tiny.model.config.hidden_size, n_heads, seed)
    for prompt in prompts(20 + seed, 3):
        greedy = greedy_reference(tiny.model, prompt, 18)
        chain = speculative_generate(tiny, MedusaDrafter(heads, tiny.model), prompt, KPolicy(n_heads), 18)
        tree = medusa_tree_generate(tiny, heads, prompt, 18)
        assert list(chain.generated_ids) == greedy
        assert list(tree.trace.generated_ids) == greedy
        assert list(plain_generate(tiny, prompt, 18).generated_ids) == greedy
        # the first loop drafts from the prefill's last state, the one that chose the first token
        assert chain.iterations[0].k == n_heads and len(tree.steps[0].tokens) > 1
        assert all(it.k <= n_heads for it in chain.iterations)


def test_zero_initialised_heads_copy_the_target_head(tiny):
    heads = MedusaHeads(tiny.model.config.hidden_size, 2, torch.arange(VOCAB))
    h = torch.randn(5, tiny.model.config.hidden_size)
    out = heads.logits(h, tiny.model.lm_head.weight.detach())
    torch.testing.assert_close(out[1], tiny.model.lm_head(h).detach())


def test_heads_save_and_load(tmp_path, tiny):
    heads = random_heads(tiny.model.config.hidden_size, 3, 5)
    heads.meta = {"total_seconds": 1.5}
    heads.save(tmp_path / "h.pt")
    loaded = MedusaHeads.load(tmp_path / "h.pt")
    assert loaded.n_heads == 3 and loaded.meta == {"total_seconds": 1.5}
    assert torch.equal(loaded.vocab_ids, heads.vocab_ids)
    h = torch.randn(2, tiny.model.config.hidden_size)
    torch.testing.assert_close(loaded.logits(h, tiny.model.lm_head.weight.detach()),
                               heads.logits(h, tiny.model.lm_head.weight.detach()), atol=2e-2, rtol=2e-2)
    with pytest.raises(FileNotFoundError, match="train_medusa"):
        MedusaHeads.load(tmp_path / "missing.pt")


def test_candidate_tree_follows_the_choices(tiny):
    probs = torch.softmax(torch.randn(3, VOCAB), dim=-1)
    choices = ((0,), (1,), (0, 0), (0, 1), (0, 0, 0))
    tree, q = build_tree(7, probs, torch.arange(VOCAB), choices)
    ranked = probs.argsort(dim=-1, descending=True)
    assert len(tree) == 1 + len(choices)
    assert tree.tokens[1:3] == [int(ranked[0, 0]), int(ranked[0, 1])]
    assert [tree.depth(i) for i in range(len(tree))] == [0, 1, 1, 2, 2, 3]
    assert tree.labels[4] == "head 2 #2" and q[4] == pytest.approx(float(probs[1, ranked[1, 1]]))


def test_distill_shards_become_medusa_rows_with_the_right_offsets(tmp_path):
    from specsim.variants.train_medusa import distill_records

    tokens = torch.tensor([50, 51, 52, 10, 11, 12, 13], dtype=torch.int32)  # prompt of 3, answer of 4
    feats = torch.arange(6, dtype=torch.float16)[:, None].repeat(1, 4)  # feats[t] predicts tokens[t + 1]
    torch.save([{"tokens": tokens, "prompt_len": 3, "feats": feats, "temperature": 0.0}], tmp_path / "corpus-00000.pt")
    torch.save([{"tokens": tokens, "prompt_len": 3, "feats": feats}], tmp_path / "forced-0.pt")  # ignored
    x, y, answers = distill_records(tmp_path, n_heads=2)
    assert answers == [[10, 11, 12, 13]]
    assert x[:, 0].tolist() == [2.0, 3.0, 4.0]  # the states that predicted answer tokens 10, 11, 12
    assert y.tolist() == [[11, 12], [12, 13], [13, -1]]  # heads 1 and 2: one and two tokens further on
    with pytest.raises(FileNotFoundError):
        distill_records(tmp_path / "empty", n_heads=2)
