"""Token trees drafted by a model drafter (specsim.core.trees): the tree's shape, its rows against a pass per node,
and greedy output equal to plain decoding with tiny models and with the bundled pair."""

from __future__ import annotations

import copy

import pytest
import torch

from specsim.core.engine import plain_generate, prefill
from specsim.core.kpolicy import KPolicy
from specsim.core.model_drafters import ModelDrafter, draft_cache_length
from specsim.core.sampling import SamplingConfig
from specsim.core.tiny import tiny_llama, tiny_loaded
from specsim.core.token_tree import tree_forward
from specsim.core.trees import TreeShape, TreeStep, draft_tree, tree_generate, walk

VOCAB = 64
SHAPES = [TreeShape(1, 1, 1), TreeShape(4, 3, 2), TreeShape(8, 4, 3), TreeShape(16, 6, 4)]


@pytest.fixture(scope="module")
def tiny_pair():
    target = tiny_loaded(VOCAB, seed=1, logit_scale=4.0)
    # a draft that is close to the target but not the same: some guesses are kept, some are not
    draft = tiny_llama(VOCAB, seed=1, logit_scale=4.0)
    with torch.no_grad():
        for p in draft.parameters():
            p.mul_(1 + 0.3 * torch.randn_like(p))
    return target, ModelDrafter(draft, "tiny near copy")


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"n{s.nodes}-d{s.depth}-w{s.width}")
def test_the_drafted_tree_has_its_shape_and_the_draft_forgets_it(tiny_pair, shape):
    target, drafter = tiny_pair
    context = [3, 1, 4, 1, 5, 9, 2, 6]
    drafter.start(context, VOCAB)
    drafted = draft_tree(drafter, context, shape, max_depth=shape.depth)
    tree = drafted.tree
    assert 1 <= len(tree) - 1 <= shape.nodes and tree.tokens[0] == context[-1]
    assert max(tree.depth(n) for n in range(len(tree))) <= shape.depth
    for node in range(1, len(tree)):
        parent = tree.parents[node]
        assert parent < node
        assert sum(1 for n in range(1, len(tree)) if tree.parents[n] == parent) <= shape.width
        assert drafted.score[node] == pytest.approx(drafted.score[parent] * drafted.q[node])
        assert drafted.score[node] <= drafted.score[parent]
    siblings = {}
    for node in range(1, len(tree)):
        siblings.setdefault(tree.parents[node], []).append(tree.tokens[node])
    assert all(len(set(tokens)) == len(tokens) for tokens in siblings.values()), "siblings are distinct tokens"
    assert draft_cache_length(drafter) == len(context), "the draft's cache holds the context again"
    shallow = draft_tree(drafter, context, shape, max_depth=1)
    assert max(shallow.tree.depth(n) for n in range(len(shallow.tree))) == 1


def test_the_best_scored_guesses_are_kept():
    """The kept guesses are the best scored ones the draft produced: with a budget of one, the draft's top token."""
    target = tiny_loaded(VOCAB, seed=2)
    drafter = ModelDrafter(tiny_llama(VOCAB, seed=3), "tiny")
    context = [7, 8, 9]
    drafter.start(context, VOCAB)
    one = draft_tree(drafter, context, TreeShape(1, 3, 3), max_depth=3)
    drafter.start(context, VOCAB)
    with torch.inference_mode():
        top = int(torch.argmax(drafter.read_context(context)))
    assert one.tree.tokens == [context[-1], top]
    wide = draft_tree(drafter, context, TreeShape(3, 3, 3), max_depth=3)
    assert wide.score[1:] == sorted(wide.score[1:], reverse=True) or len(wide.tree) == 4
    assert target is not None


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"n{s.nodes}-d{s.depth}-w{s.width}")
def test_greedy_tree_decoding_writes_plain_decodings_tokens(tiny_pair, shape):
    target, drafter = tiny_pair
    for prompt in ([1, 2, 3, 4], [5, 9, 11], [60, 61, 2, 2, 2]):
        reference = plain_generate(target, prompt, 24).generated_ids
        step = TreeStep(target, drafter, shape, SamplingConfig())
        trace = tree_generate(target, drafter, prompt, shape, 24, step=step)
        assert trace.generated_ids == reference
        assert all(width <= shape.nodes + 1 for width in step.widths)
        for it in trace.iterations:  # the checked path: the kept guesses, then at most one refused
            assert it.n_accepted <= it.k <= it.n_accepted + 1
    assert any(it.n_accepted > 0 for it in trace.iterations), "the near copy's guesses are sometimes kept"


def test_the_token_budget_caps_the_tree_and_the_run(tiny_pair):
    target, drafter = tiny_pair
    for budget in (1, 2, 3, 7):
        trace = tree_generate(target, drafter, [1, 2, 3], TreeShape(16, 6, 4), budget)
        assert trace.generated_ids == plain_generate(target, [1, 2, 3], budget).generated_ids
        assert len(trace.generated_ids) == budget


def test_end_of_text_inside_the_tree_ends_the_run():
    """An accepted end-of-text ends the check: nothing after it is kept, as in plain decoding."""
    target = tiny_loaded(VOCAB, seed=1, logit_scale=4.0, eos_token_id=0)
    reference = None
    for eos in range(VOCAB):  # an end-of-text the run meets within its budget
        target.model.generation_config.eos_token_id = eos
        target.tokenizer.eos_token_id = eos
        reference = plain_generate(target, [1, 2, 3, 4], 40)
        if reference.stop_reason == "eos" and len(reference.generated_ids) > 2:
            break
    assert reference is not None and reference.stop_reason == "eos"
    drafter = ModelDrafter(tiny_llama(VOCAB, seed=1, logit_scale=4.0), "the target itself")
    trace = tree_generate(target, drafter, [1, 2, 3, 4], TreeShape(8, 4, 3), 40)
    assert trace.generated_ids == reference.generated_ids and trace.stop_reason == "eos"


def test_drafters_without_a_model_and_shapes_out_of_range_are_refused_with_a_message(tiny_pair):
    from specsim.core.drafters import PromptLookupDrafter

    target, drafter = tiny_pair
    with pytest.raises(ValueError, match="cannot draft a tree"):
        TreeStep(target, PromptLookupDrafter(), TreeShape(), SamplingConfig())
    with pytest.raises(ValueError, match="nodes must be between 1 and 64"):
        TreeShape(nodes=0)


def test_the_lean_drafts_tree_pass_is_its_chain_pass_on_a_chain_and_reads_siblings_apart():
    """The standalone draft's tree pass (LeanLlama.tree_forward): on a chain it gives the causal pass's logits; two
    siblings each give what their own one-token pass gives."""
    from specsim.core.defaults import DEFAULT_DRAFT
    from specsim.core.draft_forward import LeanLlama
    from specsim.core.draft_nets import load_draft
    from tests.conftest import ROOT

    draft, _ = load_draft(ROOT / DEFAULT_DRAFT)
    lean = LeanLlama(draft, dtype=torch.float32)
    context, chain = [1, 504, 3000, 42, 17], [99, 250, 7]
    full = lean.new_cache()
    expected = [lean.forward(context, full)]
    for token in chain:
        expected.append(lean.forward([token], full))
    cache = lean.new_cache()
    lean.forward(context, cache)
    n, base = len(chain), len(context)
    allowed = torch.ones(n, base + n, dtype=torch.bool).tril(diagonal=base)
    rows = lean.tree_forward(chain, [base + i for i in range(n)], allowed, cache)
    for row, want in zip(rows, expected[1:], strict=True):
        torch.testing.assert_close(row, want, rtol=1e-4, atol=1e-4)
    cache.crop(base)
    siblings = [99, 1234]
    allowed = torch.ones(2, base + 2, dtype=torch.bool)
    allowed[0, base + 1] = allowed[1, base] = False
    rows = lean.tree_forward(siblings, [base, base], allowed, cache)
    for token, row in zip(siblings, rows, strict=True):
        alone = lean.new_cache()
        lean.forward(context, alone)
        torch.testing.assert_close(row, lean.forward([token], alone), rtol=1e-4, atol=1e-4)


@pytest.fixture(scope="module")
def default_pair(default_target):
    from specsim.core.defaults import DEFAULT_DRAFT
    from specsim.core.trained_drafters import make_drafter
    from tests.conftest import ROOT

    return default_target, make_drafter(ROOT / DEFAULT_DRAFT, default_target.model, dtype=default_target.dtype)


@pytest.mark.parametrize("shape", [TreeShape(8, 4, 3), TreeShape(16, 6, 4)], ids=["8-guesses", "16-guesses"])
def test_every_node_of_the_targets_tree_pass_is_a_pass_over_its_own_path(default_pair, shape):
    """Step 2's premise, on the app's target: a node's row in the tree pass equals the last row of a pass over the
    root-to-node path alone, bitwise on the position-invariant path (where the app runs the bundled target)."""
    from specsim.core.models import format_prompt

    target, drafter = default_pair
    ids = format_prompt(target.tokenizer, "List three uses of a paperclip.")
    with torch.inference_mode():
        filled = prefill(target, ids)
        context = [*ids, int(torch.argmax(filled.logits))]
        drafter.start(context, target.model.get_output_embeddings().weight.shape[0])
        tree = draft_tree(drafter, context, shape, max_depth=shape.depth).tree
        assert len(tree) == shape.nodes + 1  # the widest pass the page allows: 16 guesses and the root
        rows = tree_forward(target.model, copy.deepcopy(filled.cache), tree).logits[0]
        for node in range(len(tree)):
            path = [tree.tokens[0], *(tree.tokens[n] for n in tree.path(node))]
            alone = target.model(input_ids=torch.tensor([path]), past_key_values=copy.deepcopy(filled.cache),
                                 use_cache=True).logits[0, -1]
            if target.invariant:
                assert torch.equal(rows[node], alone), f"node {node} at depth {tree.depth(node)}"
            else:
                torch.testing.assert_close(rows[node], alone, rtol=1e-4, atol=1e-4)


def test_the_bundled_pairs_tree_writes_plain_decodings_tokens_and_keeps_more_than_the_chain(default_pair):
    from specsim.core.engine import speculative_generate
    from specsim.core.models import format_prompt
    from specsim.measure.bench import heldout_prompts

    target, drafter = default_pair
    tree_tokens = chain_tokens = tree_loops = chain_loops = 0
    for item in heldout_prompts(3):
        ids = format_prompt(target.tokenizer, item["prompt"])
        reference = plain_generate(target, ids, 16).generated_ids
        trace = tree_generate(target, drafter, ids, TreeShape(8, 4, 3), 16)
        assert trace.generated_ids == reference, item["prompt"]
        chain = speculative_generate(target, drafter, ids, KPolicy(2), 16)
        tree_tokens, tree_loops = tree_tokens + len(trace.generated_ids) - 1, tree_loops + len(trace.iterations)
        chain_tokens, chain_loops = chain_tokens + len(chain.generated_ids) - 1, chain_loops + len(chain.iterations)
    assert tree_tokens / tree_loops > chain_tokens / chain_loops, "a tree keeps more tokens per loop than K = 2"


def test_walk_follows_the_targets_top_token_down_the_tree():
    from specsim.core.token_tree import TokenTree

    tree = TokenTree.rooted(5)
    a, b = tree.add(1, 0, "x"), tree.add(2, 0, "x")
    c = tree.add(3, b, "x")
    probs = torch.zeros(len(tree), 8)
    probs[0, 2] = probs[b, 3] = probs[c, 4] = probs[a, 7] = 1.0
    assert walk(tree, probs) == [b, c]
    probs[0] = 0
    probs[0, 6] = 1.0
    assert walk(tree, probs) == []


def test_the_tree_benchmark_prints_a_row_per_setting_from_the_runs_it_timed(tiny_pair):
    """``python -m specsim.bench --trees``' table (specsim.measure.treebench), on the tiny pair: one row per chain K
    and tree shape, τ and the pass width read from the traces, and every setting wrote plain decoding's tokens."""
    from specsim.measure import treebench

    target, drafter = tiny_pair
    shapes = (TreeShape(4, 3, 2), TreeShape(8, 4, 3))
    rows = treebench.tree_rows(target, drafter, [[1, 2, 3, 4], [5, 9, 11]], 12, ks=(1, 2), shapes=shapes)
    plain = rows.pop()
    assert plain["setting"] == "plain" and plain["tok/s"] > 0 and plain["pass s"] > 0
    assert [r["setting"] for r in rows] == ["chain K=1", "chain K=2", *(treebench.tree_name(s) for s in shapes)]
    assert all(r["identical"] == "yes" for r in rows)
    for row, width in zip(rows, (2, 3, 5, 9), strict=True):
        assert 1 < row["pass width"] <= width  # the last loops of a run may be cut by the token budget
        assert 1 <= row["τ"] <= width and row["v"] > 0 and row["c"] > 0 and row["speedup"] > 0
    table = treebench.format_rows(rows)
    assert len(table.splitlines()) == 2 + len(rows) and "pass width" in table.splitlines()[0]


def test_the_eagle_heads_tree_writes_plain_decodings_tokens(default_target):
    """The EAGLE head drafts a tree too: each node reads its parent's predicted features and its own token."""
    from specsim.core.models import format_prompt
    from specsim.core.trained_drafters import make_drafter
    from specsim.measure.bench import heldout_prompts
    from tests.conftest import ROOT

    eagles = sorted((ROOT / "assets" / "drafts").glob("eagle-*"))
    assert eagles, "an EAGLE head ships"
    drafter = make_drafter(eagles[0], default_target.model, dtype=default_target.dtype)
    kept = 0
    for item in heldout_prompts(2):
        ids = format_prompt(default_target.tokenizer, item["prompt"])
        reference = plain_generate(default_target, ids, 16).generated_ids
        trace = tree_generate(default_target, drafter, ids, TreeShape(8, 4, 3), 16)
        assert trace.generated_ids == reference, item["prompt"]
        kept += sum(it.n_accepted for it in trace.iterations)
    assert kept > 0, "the head's guesses are kept sometimes"


# ---- sampling: EAGLE-2's rule for distinct candidates, checked like the chain (tests/test_whole_block.py) ---------
def _tree_first_two_tokens(target, draft, runs: int, shape: TreeShape, sampling: SamplingConfig):
    """The first two tokens the tree loop wrote after the prefill's, in ``runs`` seeded runs, and how deep the first
    iteration's walk went."""
    from collections import Counter

    from specsim.lesson import blockcheck

    pairs, depths = Counter(), Counter()
    drafter = ModelDrafter(draft)
    for seed in range(runs):
        seen = []
        trace = tree_generate(target, drafter, list(blockcheck.PROMPT), shape, 4, sampling=sampling, seed=seed,
                              on_iteration=seen.append,
                              should_stop=lambda seen=seen: sum(len(it.emitted) for it in seen) >= 2)
        pairs[tuple(trace.generated_ids[1:3])] += 1
        depths[trace.iterations[0].n_accepted] += 1
    return pairs, depths


SAMPLED_SHAPE = TreeShape(4, 2, 2)


@pytest.mark.parametrize("sampling", [SamplingConfig(1.0), SamplingConfig(0.8, top_p=0.9, top_k=3)],
                         ids=["t1", "t0.8-top_k3-top_p0.9"])
def test_a_sampled_tree_writes_the_targets_joint_distribution(sampling):
    """Over many seeded runs of a draft unlike the target, the first two tokens after the prefill's follow the target's
    own (warped) joint distribution, computed exactly from its logits (χ², 5 % level), with walks of every depth."""
    from specsim.lesson import blockcheck

    target, draft = blockcheck.tiny_pair()
    pairs, depths = _tree_first_two_tokens(target, draft, 1500, SAMPLED_SHAPE, sampling)
    # walks of every depth at temperature 1; with the cut, the draft's favourites often lie outside the target's
    # nucleus, so walks stop early (refused at the root, or one guess kept) and rarely reach the bottom
    reached = range(SAMPLED_SHAPE.depth + 1) if sampling.top_k is None else range(SAMPLED_SHAPE.depth)
    assert all(depths[d] >= 50 for d in reached), depths
    joint = blockcheck.exact_joint(target, sampling)
    assert all(joint[cell] > 0 for cell in pairs)
    assert blockcheck.pooled_chi_square(pairs, joint).p_value > 0.05


def test_the_chains_ratio_rule_on_the_trees_top_candidates_fails_the_same_check(monkeypatch):
    """The mistake *Under the hood* warns of: keeping a top candidate with min(1, p/q), as if it were a draw from q.
    The same check refuses it, so it has the power to see a wrong rule."""
    from specsim.core import trees
    from specsim.lesson import blockcheck

    real = trees.walk_sampled
    drafted_q = {}

    def ratio_rule(tree, target_probs, score, generator, eos=()):
        q = drafted_q["q"]
        walked = real(tree, target_probs, score, generator, eos)  # keeps the generator's stream in step
        path, node = [], 0
        children = trees.children_in_order(tree, score)
        while True:  # redo the walk with min(1, p/q): keep the first child whose ratio test passes
            nxt = next((c for c in children.get(node, [])
                        if trees.uniform(generator) < min(1.0, float(target_probs[node, tree.tokens[c]]) / q[c])),
                       None)
            if nxt is None:
                break
            path.append(nxt)
            node = nxt
        walked.path, walked.refused = path, None
        walked.keep, walked.draws = [1.0] * len(path), [0.0] * len(path)
        walked.extra, walked.extra_kind, walked.residual = trees.sample(target_probs[node], generator), "bonus", None
        return walked

    real_draft = trees.draft_tree

    def remember_q(*args, **kwargs):
        drafted = real_draft(*args, **kwargs)
        drafted_q["q"] = drafted.q
        return drafted

    monkeypatch.setattr(trees, "walk_sampled", ratio_rule)
    monkeypatch.setattr(trees, "draft_tree", remember_q)
    target, draft = blockcheck.tiny_pair()
    pairs, _ = _tree_first_two_tokens(target, draft, 500, SAMPLED_SHAPE, SamplingConfig(1.0))
    assert blockcheck.pooled_chi_square(pairs, blockcheck.exact_joint(target)).p_value < 0.05


def test_a_sampled_trees_record_reads_like_a_chains():
    """Each sampled iteration: the kept nodes with their keep probability and draw, then at most one refused child;
    the +1 is a resample after a refusal (with what was left of p) or a bonus at a leaf."""
    from specsim.lesson import blockcheck

    target, draft = blockcheck.tiny_pair()
    kinds = set()
    for seed in range(30):
        trace = tree_generate(target, ModelDrafter(draft), list(blockcheck.PROMPT), SAMPLED_SHAPE, 8,
                              sampling=SamplingConfig(1.0), seed=seed)
        for it in trace.iterations:
            kinds.add(it.extra_kind)
            kept = [s for s in it.slots if s.status == "accepted"]
            assert len(kept) == it.n_accepted and all(s.draw < s.accept_prob for s in kept)
            refused = [s for s in it.slots if s.status == "rejected"]
            assert len(refused) <= 1 and all(s.draw >= s.accept_prob for s in refused)
            assert (it.extra_kind == "resample") == bool(refused)
            if refused:
                assert it.residual is not None and 0 < it.residual.mass < 1
        again = tree_generate(target, ModelDrafter(draft), list(blockcheck.PROMPT), SAMPLED_SHAPE, 8,
                              sampling=SamplingConfig(1.0), seed=seed)
        assert again.generated_ids == trace.generated_ids, "a seed decides the run"
    assert kinds == {"resample", "bonus"}


@pytest.mark.parametrize("sampling", [SamplingConfig(), SamplingConfig(1.0)], ids=["greedy", "sampled"])
def test_the_trace_records_each_iterations_tree_and_reads_it_back_from_json(tiny_pair, sampling):
    from specsim.core.trace import Trace

    target, drafter = tiny_pair
    shape = TreeShape(8, 4, 3)
    trace = tree_generate(target, drafter, [1, 2, 3, 4], shape, 20, sampling=sampling, seed=3)
    assert trace.settings.tree == (8, 4, 3)
    for it in trace.iterations:
        tree = it.tree
        assert tree is not None and (tree.budget, tree.depth, tree.width) == (8, 4, 3)
        assert tree.nodes[0].status == "root" and tree.nodes[0].parent == -1
        assert all(node.parent < i for i, node in enumerate(tree.nodes) if i)
        assert it.caches.target_written - it.caches.target_before == tree.width_read
        path = tree.kept_path()
        assert [tree.nodes[n].token.token_id for n in path] == [s.token_id for s in it.slots[: it.n_accepted]]
        for n in path:  # a kept path: each kept node hangs under the root or the kept node before it
            assert tree.nodes[n].parent in (0, *path)
        refused = [s for s in it.slots if s.status == "rejected"]
        if refused:
            stop = path[-1] if path else 0
            assert any(node.status == "refused" and node.parent == stop
                       and node.token.token_id == refused[0].token_id for node in tree.nodes)
        if sampling.greedy:  # the walk follows the target's top token: a kept node is its parent's target top
            assert all(tree.nodes[n].token.token_id == tree.nodes[tree.nodes[n].parent].target_top.token_id
                       for n in path)
        walked, stop = [0, *path], (path[-1] if path else 0)
        for node in tree.nodes[1:]:  # refused where the walk stopped, passed over beside it, unreached below
            expected = ("kept" if node in [tree.nodes[n] for n in path] else
                        "refused" if node.parent == stop and not it.ended_by_text_end else
                        "passed" if node.parent in walked and node.parent != stop else "unchecked")
            if sampling.greedy or expected in ("kept", "unchecked"):
                assert node.status == expected, (node, expected)
            else:  # sampling tries children in order and stops at the first kept: later siblings are not tried
                assert node.status in ((expected, "untried") if expected == "passed" else (expected,)), node
    assert Trace.from_json(trace.to_json()) == trace


def test_a_tree_request_runs_as_a_live_run_beside_plain_decoding(tiny_pair):
    """The run request carries the tree (specsim.request: tree_nodes, tree_depth) to the live run, which times it
    against plain decoding as it times a chain."""
    from specsim import liverun
    from specsim.request import RunRequest

    target, drafter = tiny_pair

    class Shelf:
        def pair(self, request):
            return target, drafter

    request = RunRequest(prompt_ids=(1, 2, 3, 4), drafter="early_exit", tree_nodes=6, tree_depth=3,
                         max_new_tokens=12)
    run = liverun.run_request(request, Shelf())
    assert run.spec.settings.tree == (6, 3, 3) and all(it.tree is not None for it in run.spec.iterations)
    assert run.plain.generated_ids == run.spec.generated_ids
