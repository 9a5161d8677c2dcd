"""The draft-distillation recipe and the shipped drafts (issue 6)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import torch

from specsim.core.defaults import CORPUS_DIR
from specsim.core.draft_nets import choose_vocab, load_draft
from specsim.core.kpolicy import KPolicy
from specsim.distill import evaluate as E
from specsim.distill import training_prompts as P
from specsim.measure import analytics

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted(p for p in (ROOT / "assets" / "drafts").glob("*/") if (p / "draft.json").is_file())


pytestmark = pytest.mark.usefixtures("one_torch_thread")


# --- held-out separation -------------------------------------------------------------------------


def test_heldout_prompts_cover_the_domains():
    held = P.load_heldout()
    assert len(held) >= 40
    assert {"prose", "explanation", "list", "story", "code", "qa", "rewrite"} <= {h["domain"] for h in held}
    assert len({h["id"] for h in held}) == len(held)


def test_training_topics_never_appear_in_heldout_prompts():
    text = " ".join(h["prompt"].lower() for h in P.load_heldout())
    assert [t for t in P.TOPICS if t.lower() in text] == []
    assert [c for c in P.CODE_TASKS if c in text] == []
    for subjects in (P.ACTIVITIES, P.CHARACTERS, P.SCENES, P.THINGS, P.PHENOMENA, P.SENTENCES):
        assert [x for x in subjects if x.lower() in text] == []


def test_task_families_are_varied_and_clear_of_heldout():
    fam = P.family_prompts(random.Random(0), 10_000)
    assert len(fam) == len(set(fam)) > 500
    assert P.filter_heldout(fam)[1] == 0
    held = {h["prompt"] for h in P.load_heldout()}
    assert not held & set(fam)


def test_filter_drops_heldout_prompts_and_keeps_templates():
    held = [h["prompt"] for h in P.load_heldout()]
    kept, dropped = P.filter_heldout(held[:5] + P.template_prompts(random.Random(0), 50))
    assert dropped >= 5 and not set(held[:5]) & set(kept)
    assert len(kept) >= 45


# --- pure pieces ---------------------------------------------------------------------------------


def test_collate_aligns_targets_with_answer_tokens():
    from specsim.distill.train import collate, prepare

    vocab = 50
    to_small = torch.arange(vocab)  # identity map: draft id = target id
    tokens = torch.tensor([5, 6, 7, 10, 11, 12], dtype=torch.int32)  # prompt of 3, answer of 3
    topk = torch.tensor([[10, 1, 2, 3], [20, 1, 2, 3], [12, 1, 2, 3]], dtype=torch.int32)  # argmax 10, 20, 12
    rec = {"tokens": tokens, "prompt_len": 3, "feats": torch.zeros(5, 2), "topk_ids": topk,
           "topk_logp": torch.log(torch.tensor([[0.7, 0.1, 0.1, 0.1]] * 3))}
    item = prepare(rec, to_small, vocab)
    # the hard label is the target's argmax, also where the written token differs (position 1: 11 vs 20)
    assert item["hard"].tolist() == [10, 20, 12]
    for kind, shift in (("standalone", 1), ("eagle", 2)):
        batch = collate([item], kind, vocab)
        ans = batch["ans"][0]
        rows = (ans >= 0).nonzero().flatten().tolist()
        assert rows == [t for t in range(5) if 3 <= t + shift < 6]
        for t in rows:  # the logits at input t predict tokens[t + shift]; its targets are that answer row
            assert int(ans[t]) == t + shift - 3
            assert int(batch["hard"][0, t]) == int(topk[t + shift - 3, 0])
            assert batch["soft_w"][0, t].sum().item() == pytest.approx(1.0)


def test_choose_vocab_keeps_specials_first_then_frequency():
    counts = torch.tensor([0.0, 0.0, 0.0, 5.0, 9.0, 1.0, 7.0])
    vocab = choose_vocab(counts, 5, [0, 1, 2], min_count=1)
    assert vocab.tolist() == [0, 1, 2, 4, 6]


def test_fit_alpha_inverts_the_geometric_model():
    for alpha in (0.1, 0.45, 0.8):
        for k in (1, 4, 7):
            mean = float(analytics.expected_accepted_prefix(alpha, k))
            assert E.fit_alpha(mean, k) == pytest.approx(alpha, abs=1e-6)


def test_chain_summary_counts_positions_like_the_engine():
    hits = [True, True, False, True, False]
    accepted = E._first_misses(hits, 2)
    assert accepted == [2, 1, 0, 1, 0]
    chains = [(a, min(2, len(hits) - i)) for i, a in enumerate(accepted)]
    s = E.summarize(chains, 2)
    # position 1: starts 0, 1, 3 match (3 of 5); position 2 is tried at those three, and only start 0 matches
    assert s["position"][0] == pytest.approx(3 / 5)
    assert s["position"][1] == pytest.approx(1 / 3)
    assert s["accepted_per_chain"] == pytest.approx((2 + 1 + 0 + 1) / 4)
    assert s["alpha"] == pytest.approx(4 / 8)  # checked: 2, 2, 1, 2, 1


# --- shipped drafts ------------------------------------------------------------------------------


def test_at_least_one_draft_ships():
    assert SHIPPED, "no draft under assets/drafts"


@pytest.mark.parametrize("folder", SHIPPED, ids=[p.name for p in SHIPPED])
def test_shipped_draft_loads_and_fits(folder, bundled_target):
    assert (folder / "model.safetensors").stat().st_size <= 25 * 2**20
    draft, id_map = load_draft(folder)
    vocab = bundled_target.model.get_output_embeddings().weight.shape[0]
    assert len(set(id_map)) == len(id_map) and 0 <= min(id_map) and max(id_map) < vocab
    assert bundled_target.tokenizer.eos_token_id in id_map
    ids = torch.tensor([bundled_target.tokenizer("Hello there, how are you?")["input_ids"]])
    with torch.inference_mode():
        if draft.kind == "standalone":
            logits = draft(input_ids=ids).logits
        else:
            feats = bundled_target.model.model(input_ids=ids).last_hidden_state
            logits = draft(feats, ids)[1]
    assert logits.shape[-1] == len(id_map) and torch.isfinite(logits).all()


@pytest.mark.parametrize("folder", SHIPPED, ids=[p.name for p in SHIPPED])
def test_id_map_tokens_agree_with_the_target_tokenizer(folder, bundled_target):
    id_map = json.loads((folder / "id_map.json").read_text())
    stored = json.loads((folder / "tokens.json").read_text())
    assert bundled_target.tokenizer.convert_ids_to_tokens(id_map) == stored


def test_default_pair_is_greedy_identical_to_plain_decoding(bundled_target):
    from specsim.core.defaults import DEFAULT_DRAFT
    from specsim.core.engine import plain_generate, speculative_generate
    from specsim.core.models import format_prompt
    from specsim.core.trained_drafters import make_drafter

    drafter = make_drafter(ROOT / DEFAULT_DRAFT, bundled_target.model)
    for text, k in zip([h["prompt"] for h in P.load_heldout()[::20]], (2, 5, 3), strict=True):  # a K per prompt
        ids = format_prompt(bundled_target.tokenizer, text)
        reference = plain_generate(bundled_target, ids, 20).generated_ids
        trace = speculative_generate(bundled_target, drafter, ids, KPolicy(k), 20)
        assert trace.generated_ids == reference


def test_classic_draft_is_greedy_identical_to_plain_decoding(bundled_target):
    """The shipped classic (standalone) draft, a cheap version of the slow benchmark's identity check."""
    from specsim.core.defaults import CLASSIC_DRAFT
    from specsim.core.engine import plain_generate, speculative_generate
    from specsim.core.models import format_prompt
    from specsim.core.trained_drafters import make_drafter

    drafter = make_drafter(ROOT / CLASSIC_DRAFT, bundled_target.model)
    assert drafter.kind == "draft_model"
    kept = 0
    for text in [h["prompt"] for h in P.load_heldout()[5:7]]:
        ids = format_prompt(bundled_target.tokenizer, text)
        reference = plain_generate(bundled_target, ids, 16).generated_ids
        trace = speculative_generate(bundled_target, drafter, ids, KPolicy(4), 16)
        assert trace.generated_ids == reference
        kept += trace.n_accepted
    assert kept > 0  # the draft is the trained one, not a draft whose every proposal is rejected


EAGLES = [f for f in SHIPPED if json.loads((f / "draft.json").read_text())["kind"] == "eagle"]


@pytest.mark.parametrize("folder", EAGLES, ids=[f.name for f in EAGLES])
def test_eagle_drafter_takes_the_prompt_features_from_the_prefill(folder, bundled_target):
    from specsim.core.engine import plain_generate, prefill, speculative_generate
    from specsim.core.models import format_prompt
    from specsim.core.trained_drafters import make_drafter

    ids = format_prompt(bundled_target.tokenizer, P.load_heldout()[3]["prompt"])
    handed, own = make_drafter(folder, bundled_target.model), make_drafter(folder, bundled_target.model)
    with torch.inference_mode():
        handed.start(ids, 10, target_hidden=prefill(bundled_target, ids[:-1], keep_hidden=True).hidden)
    own.start(ids, 10)  # computes them itself
    assert handed.feats.shape == own.feats.shape == (len(ids) - 1, bundled_target.model.config.hidden_size)
    assert torch.allclose(handed.feats, own.feats, atol=1e-4)
    reference = plain_generate(bundled_target, ids, 16).generated_ids
    for k in (1, 4):
        assert speculative_generate(bundled_target, handed, ids, KPolicy(k), 16).generated_ids == reference


# --- the recipe end to end -----------------------------------------------------------------------


def test_tiny_recipe_runs_end_to_end(tmp_path, capsys):
    from specsim.distill.__main__ import main

    root = tmp_path / "distill"
    repo_corpus = sorted(Path(CORPUS_DIR).glob("shard-*.npz"))
    # gen, featurize, train and eval, with the corpus under ROOT (never the repo's)
    assert main(["all", "--budget", "tiny", "--root", str(root), "--name", "s", "--width", "64", "--k", "3",
                 "--target-dtype", "float32"]) == 0
    assert sorted(Path(CORPUS_DIR).glob("shard-*.npz")) == repo_corpus
    shards = sorted((root / "corpus").glob("shard-*.npz"))
    assert shards and [f.stem.split("-")[1] for f in shards] == [
        f.stem.split("-")[1] for f in sorted((root / "data").glob("corpus-*.pt"))]
    assert main(["train", "--budget", "tiny", "--root", str(root), "--name", "e", "--kind", "eagle"]) == 0
    eagle = str(root / "drafts" / "e")
    assert main(["eval", "--budget", "tiny", "--root", str(root), "--k", "3", "--drafts", eagle]) == 0
    for name in ("s", "e"):
        res = json.loads((root / "eval" / f"{name}.json").read_text())
        assert res["overall"]["chains"] > 0 and 0.0 <= res["overall"]["alpha"] <= 1.0
        assert 0 < res["cost"]["draft_cost"] < 10 and res["cost"]["verify_cost"] >= 1
        draft, id_map = load_draft(root / "drafts" / name)
        assert draft.kind == {"s": "standalone", "e": "eagle"}[name] and len(id_map) > 3


@pytest.mark.parametrize("folder", EAGLES, ids=[f.name for f in EAGLES])
def test_eagle_drafter_runs_with_a_bfloat16_target(folder):
    from specsim.core.draft_loader import load_draft_model
    from specsim.core.engine import plain_generate, speculative_generate
    from specsim.core.models import format_prompt, load_bundled_target

    target = load_bundled_target("cpu", "bfloat16")
    drafter = load_draft_model(str(folder), target)  # the draft takes the target's dtype
    assert drafter.draft.embed.weight.dtype == torch.bfloat16
    ids = format_prompt(target.tokenizer, P.load_heldout()[7]["prompt"])
    reference = plain_generate(target, ids, 12).generated_ids
    assert speculative_generate(target, drafter, ids, KPolicy(3), 12).generated_ids == reference


# --- the token corpus (issue 15) -----------------------------------------------------------------


def test_heldout_prompts_are_rejected_by_ngram_overlap():
    from specsim.distill import instruct as I

    for h in P.load_heldout():
        ok, share, hid = I.clear_of_heldout(h["prompt"])
        assert not ok and share == 1.0 and hid == h["id"]
    reworded = "Could you write a short story about a lighthouse keeper who finds a message in a bottle?"
    assert not I.clear_of_heldout(reworded)[0]
    rng = random.Random(0)
    kept = [t for _, t in I.direct_prompts(rng, 200) if I.clear_of_heldout(t)[0]]
    assert len(kept) >= 190


def test_self_instruct_seeds_are_varied():
    from specsim.distill import instruct as I

    seeds = I.seed_requests(random.Random(0), 400)
    assert len({s.text for s in seeds}) >= 360  # kinds x domains x personas x forms: few repeats
    assert {s.kind for s in seeds} == set(I.SEED_KINDS) | {"passage"}
    passage = next(s for s in seeds if s.kind == "passage")
    text = "Rivers carry water from the hills to the sea. Along the way they shape valleys and feed farmland."
    prompt = I.prompt_from_seed(passage, text, random.Random(1))
    assert prompt.endswith(text) and prompt.split("\n")[0] in I.REWRITES


def test_batched_greedy_generation_agrees_with_one_sequence_at_a_time(bundled_target):
    from specsim.distill import corpus as C

    texts = ["Name three colours of the rainbow.", "Write a haiku about winter mornings in a small town."]
    res = C.agreement(bundled_target.model, bundled_target.tokenizer, texts, 12)
    assert res == {"prompts": 2, "identical": 1.0, "tokens_before_first_difference": 1.0}


def _tiny_plan():
    from specsim.distill import corpus as C

    return C.RoundPlan(seeds=3, direct=3, max_new=10, seed_max_new=24, batch=4, follow_share=0.5)


def test_corpus_run_is_resumable_and_stores_uint16_ids(tmp_path, bundled_target):
    """The corpus's bookkeeping (shards, restarts, parts), written by a small random model with the bundled target's
    tokenizer and chat template: what it writes is nonsense, and nothing here reads its sense."""
    import numpy as np

    from specsim.core.tiny import tiny_llama
    from specsim.distill import corpus as C

    tok = bundled_target.tokenizer
    model = tiny_llama(len(tok), seed=0, eos_token_id=tok.eos_token_id)
    out = tmp_path / "corpus"
    first = C.run(model, tok, out, target_tokens=10**6, minutes=10, plan=_tiny_plan(), max_shards=1, log=lambda s: None)
    assert first["shards"] == 1 and first["answer_tokens"] > 0
    shard0 = (out / "shard-00000.npz").read_bytes()
    (out / "shard-00001.tmp").write_bytes(b"half a shard from a killed run")
    second = C.run(model, tok, out, target_tokens=10**6, minutes=10, plan=_tiny_plan(), max_shards=2,
                   log=lambda s: None)
    assert second["shards"] == 2 and second["answer_tokens"] > first["answer_tokens"]
    assert (out / "shard-00000.npz").read_bytes() == shard0  # a restart never rewrites a finished shard
    with np.load(out / "shard-00001.npz") as z:
        assert z["tokens"].dtype == np.uint16
    rows = C.read_shard(out / "shard-00001.npz")
    assert len(rows) == C.shard_meta(out / "shard-00001.npz")["rows"]
    for r in rows:
        text = tok.decode(r["tokens"][: r["prompt_len"]].tolist())
        assert text.endswith("<|im_start|>assistant\n") and len(r["tokens"]) > r["prompt_len"]
    # the target-written prompts were answered in the same round
    assert {r["kind"].split("-")[0] for r in rows} >= {"seed", "self"} or any(r["kind"] != "seed" for r in rows)
    # a third run with the token goal already met adds nothing
    assert C.run(model, tok, out, target_tokens=1, minutes=10, plan=_tiny_plan(), log=lambda s: None) == second
    # part 1 of 2 (a second process beside another) goes on with the next odd number only
    third = C.run(model, tok, out, target_tokens=10**6, minutes=10, plan=_tiny_plan(), max_shards=5, part=(1, 2),
                  log=lambda s: None)
    assert [f.name for f in C.shards(out)] == ["shard-00000.npz", "shard-00001.npz", "shard-00003.npz"]
    assert third["shards"] == 3 and C.shard_meta(out / "shard-00003.npz")["shard"] == 3


@pytest.mark.parametrize(("existing", "part", "parts", "expected"), [
    ([], 0, 1, 0), ([0, 1, 2], 0, 1, 3), ([], 1, 2, 1), ([0, 1, 2], 0, 2, 4), ([0, 1, 2], 1, 2, 3),
    ([5], 2, 3, 8), ([0, 3], 1, 3, 4), ([7, 2], 0, 4, 8),
])
def test_parallel_generators_take_turns_and_never_share_a_shard(existing, part, parts, expected):
    from specsim.distill import corpus as C

    got = C.next_shard(existing, part, parts)
    assert got == expected and got > max(existing, default=-1) and got % parts == part


def test_a_part_outside_its_count_is_refused():
    from specsim.distill import corpus as C

    with pytest.raises(ValueError, match="from 0 to 1"):
        C.next_shard([], 2, 2)


def test_records_from_the_generator_match_a_teacher_forced_pass(tmp_path, bundled_target):
    from specsim.distill import corpus as C

    model, tok = bundled_target.model, bundled_target.tokenizer
    out, rec_dir = tmp_path / "corpus", tmp_path / "records"
    C.run(model, tok, out, target_tokens=10**6, minutes=10, plan=_tiny_plan(), max_shards=1, records=rec_dir,
          log=lambda s: None)
    live = torch.load(rec_dir / "corpus-00000.pt", weights_only=False)
    again = {tuple(r["tokens"].tolist()): r for r in C.records_from_shard(model, out / "shard-00000.npz")}
    assert len(live) == len(again)
    for r in live:
        twin = again[tuple(r["tokens"].tolist())]
        n = len(r["tokens"]) - r["prompt_len"]
        assert r["feats"].shape == twin["feats"].shape == (len(r["tokens"]) - 1, model.config.hidden_size)
        assert r["topk_ids"].shape == twin["topk_ids"].shape == (n, 32)
        assert torch.allclose(r["feats"].float(), twin["feats"].float(), atol=0.05)
        # the stored top-1 is the argmax the teacher-forced pass finds at the same answer positions
        assert (r["topk_ids"][:, 0] == twin["topk_ids"][:, 0]).float().mean() >= 0.9
        if r["temperature"] == 0:  # greedy answers: each token is the target's top-1
            assert r["tokens"][r["prompt_len"]:].tolist() == r["topk_ids"][:, 0].tolist()


def test_the_corpus_prompts_are_tokenized_as_the_app_serves_them(bundled_target):
    """Every stored prompt (multi-turn ones too) is what ``format_conversation`` makes of its turns."""
    import re

    from specsim.core.models import format_conversation, format_prompt
    from specsim.distill.corpus import read_shard, shards

    tok = bundled_target.tokenizer
    corpus = Path(__file__).resolve().parents[1] / "data" / "corpus"
    seen = set()
    for f in shards(corpus)[::60]:
        for r in read_shard(f):
            ids = r["tokens"][: r["prompt_len"]].tolist()
            turns = re.findall(r"<\|im_start\|>(\w+)\n(.*?)<\|im_end\|>", tok.decode(ids), flags=re.S)
            messages = [{"role": role, "content": text} for role, text in turns if role != "system"]
            assert format_conversation(tok, messages) == ids
            if len(messages) == 1:
                assert format_prompt(tok, messages[0]["content"]) == ids
            seen.add(len(messages))
    assert 1 in seen and 3 in seen  # single-turn prompts and follow-up turns were both checked


def _token_corpus(folder: Path, shard_lens: list[list[int]]) -> None:
    """Shards of made-up sequences: prompt ids 1..3, then answers of the given lengths (ids 10 + i)."""
    from specsim.distill import corpus as C

    for n, lens in enumerate(shard_lens):
        rows = [C.Row(messages=[], temperature=0.0 if i % 2 == 0 else 0.7, kind="math", prompt_ids=[1, 2, 3],
                      answer=[10 + (i + j) % 7 for j in range(m)]) for i, m in enumerate(lens)]
        C.write_shard(folder / f"shard-{n:05d}.npz", rows, {"shard": n})


def test_records_from_the_token_corpus_label_each_answer_position_with_the_written_token(tmp_path):
    from specsim.distill.train import collate, prepare, token_records

    _token_corpus(tmp_path, [[4, 5], [6], [3, 3]])
    recs = token_records(tmp_path)
    assert [len(r["topk_ids"]) for r in recs] == [4, 5, 6, 3, 3]
    # max_tokens keeps whole shards, in order, until they hold that many answer tokens
    assert [len(r["topk_ids"]) for r in token_records(tmp_path, max_tokens=9)] == [4, 5]
    assert [len(r["topk_ids"]) for r in token_records(tmp_path, max_tokens=10)] == [4, 5, 6]
    vocab = 20
    for rec in recs:
        item = prepare(rec, torch.arange(vocab), vocab)
        answer = rec["tokens"][3:].tolist()
        assert item["feats"] is None and item["hard"].tolist() == answer
        batch = collate([item], "standalone", vocab)
        rows = (batch["ans"][0] >= 0).nonzero().flatten().tolist()
        assert rows == list(range(2, 2 + len(answer)))  # logits at input t predict tokens[t + 1]
        for t in rows:  # one soft target of weight 1, the written token, sampled answers included
            assert int(batch["hard"][0, t]) == int(batch["soft_idx"][0, t, 0]) == int(rec["tokens"][t + 1])
            assert batch["soft_w"][0, t].tolist() == [1.0]


def test_featurize_writes_one_record_file_per_shard_resumes_and_stops_at_max_shards(tmp_path):
    from transformers import LlamaConfig, LlamaForCausalLM

    from specsim.distill.corpus import featurize, load_records

    (tmp_path / "corpus").mkdir()
    _token_corpus(tmp_path / "corpus", [[4, 5], [6], [3, 3]])
    cfg = LlamaConfig(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=1)
    model = LlamaForCausalLM(cfg).eval()
    rec = tmp_path / "records"
    with torch.inference_mode():
        assert featurize(model, tmp_path / "corpus", rec, max_shards=2) == 2
        assert sorted(f.name for f in rec.glob("*.pt")) == ["corpus-00000.pt", "corpus-00001.pt"]
        assert featurize(model, tmp_path / "corpus", rec) == 1  # only the shard without records
    records = load_records(rec)
    assert [len(r["topk_ids"]) for r in records] == [4, 5, 6, 3, 3]
    for r in records:
        assert r["feats"].shape == (len(r["tokens"]) - 1, 16) and r["topk_ids"].shape[1] == 32


def test_a_standalone_draft_trains_from_the_token_corpus_alone(tmp_path, capsys):
    from specsim.distill.__main__ import main
    from specsim.distill.corpus import read_shard

    corpus = Path(__file__).resolve().parents[1] / "data" / "corpus"
    first = sorted(corpus.glob("shard-*.npz"))[0]
    small = tmp_path / "corpus"
    small.mkdir()
    (small / first.name).write_bytes(first.read_bytes())
    root = tmp_path / "distill"
    args = ["train", "--budget", "tiny", "--root", str(root), "--from-corpus", str(small), "--width", "64"]
    assert main([*args, "--name", "s", "--tokens", "500"]) == 0
    info = json.loads((root / "drafts" / "s" / "draft.json").read_text())
    rows = read_shard(first)  # whole shards are kept: 500 tokens take all of the first
    assert info["source"] == str(small) and info["records"] == len(rows)
    assert info["answer_tokens"] == sum(len(r["tokens"]) - r["prompt_len"] for r in rows) >= 500
    draft, id_map = load_draft(root / "drafts" / "s")
    assert draft.kind == "standalone" and len(id_map) > 3
    assert not (root / "data").exists() or not list((root / "data").glob("*.pt"))  # no target pass, no records
    with pytest.raises(SystemExit, match="token ids only"):
        main([*args, "--name", "e", "--kind", "eagle"])
    with pytest.raises(SystemExit, match="not token shards"):  # --grow would mix in feature records
        main([*args, "--name", "g", "--grow"])


def test_source_segments_from_lines_split_once_equal_ast_s():
    import ast

    text = ('def é(x):\r\n    """Ünïcode — doc."""\r\n    return {"ä": x}\n\nclass C:\n    def f(self): return "ß"\r'
            '    def g(self,\n          y):\n        return y  # ✓\n')
    tree, lines = ast.parse(text), P.split_lines(text)
    nodes = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.Return))]
    assert len(nodes) == 7
    for node in nodes:
        assert P.source_segment(lines, node) == ast.get_source_segment(text, node)


# --- EAGLE-3-style fused features (issue 19) -----------------------------------------------------


def _fused_draft(target, layers=(2, 15, 30)):
    """An untrained fused draft whose lift mixes every layer (random weights), so each block matters."""
    from specsim.core.draft_nets import build_eagle

    draft = build_eagle(target.model, torch.arange(300), feature_layers=list(layers))
    with torch.no_grad():
        draft.lift.weight.normal_(0, 0.02)
    return draft.eval()


def test_fused_features_are_the_chosen_layers_side_by_side(bundled_target):
    from specsim.core.drafters import target_features

    ids = torch.tensor([[1, 2, 3, 4, 5]])
    with torch.inference_mode():
        out = bundled_target.model.model(input_ids=ids, output_hidden_states=True)
        fused = target_features(out.hidden_states, [2, 15, 30])
    d = bundled_target.model.config.hidden_size
    assert fused.shape == (1, 5, 3 * d)
    assert torch.equal(fused[..., :d], out.hidden_states[2])
    assert torch.equal(fused[..., d : 2 * d], out.hidden_states[15])
    assert torch.equal(fused[..., -d:], out.last_hidden_state)  # the last block: what a plain EAGLE draft reads
    assert torch.equal(target_features(out.hidden_states), out.last_hidden_state)


def test_a_fused_draft_starts_as_the_plain_one_and_refuses_bad_layers(bundled_target):
    from specsim.core.draft_nets import build_eagle

    plain = build_eagle(bundled_target.model, torch.arange(300))
    fused = build_eagle(bundled_target.model, torch.arange(300), feature_layers=[2, 15, 30])
    d = bundled_target.model.config.hidden_size
    feats, nxt = torch.randn(1, 4, 3 * d), torch.tensor([[5, 6, 7, 8]])
    with torch.no_grad():
        assert torch.allclose(fused(feats, nxt)[1], plain(feats[..., -d:], nxt)[1], atol=1e-5)
    for bad in ([2, 15], [15, 2, 30], [2, 2, 30]):
        with pytest.raises(ValueError, match="feature layers"):
            build_eagle(bundled_target.model, torch.arange(300), feature_layers=bad)


def test_fused_draft_is_greedy_identical_and_gets_the_layers_it_asks_for(tmp_path, bundled_target):
    from specsim.core.draft_nets import save_draft
    from specsim.core.drafters import target_features
    from specsim.core.engine import plain_generate, prefill, speculative_generate
    from specsim.core.models import format_prompt
    from specsim.core.trained_drafters import make_drafter

    save_draft(_fused_draft(bundled_target), tmp_path / "f")
    drafter = make_drafter(tmp_path / "f", bundled_target.model)  # through save and load
    assert drafter.feature_layers == [2, 15, 30]
    ids = format_prompt(bundled_target.tokenizer, P.load_heldout()[3]["prompt"])
    handed, own = make_drafter(tmp_path / "f", bundled_target.model), make_drafter(tmp_path / "f", bundled_target.model)
    with torch.inference_mode():
        handed.start(ids, 10, target_hidden=prefill(bundled_target, ids[:-1], keep_hidden=[2, 15, 30]).hidden)
    own.start(ids, 10)
    assert handed.feats.shape == own.feats.shape == (len(ids) - 1, 3 * bundled_target.model.config.hidden_size)
    assert torch.allclose(handed.feats, own.feats, atol=1e-4)
    reference = plain_generate(bundled_target, ids, 12).generated_ids
    trace = speculative_generate(bundled_target, drafter, ids, KPolicy(3), 12)
    assert trace.generated_ids == reference
    # after the run the drafter holds the fused features of the whole context but its last token, as a
    # teacher-forced pass gives them: the engine handed over the layers the draft asked for
    context = ids + list(trace.generated_ids)
    with torch.inference_mode():
        hs = bundled_target.model.model(input_ids=torch.tensor([context[:-1]]), output_hidden_states=True).hidden_states
    assert drafter.feats.shape[0] == len(context) - 1
    assert torch.allclose(drafter.feats, target_features(hs, [2, 15, 30])[0], atol=1e-3)


def test_fused_records_train_and_evaluate(tmp_path, bundled_target):
    from specsim.distill.corpus import records_folder, records_from_shard
    from specsim.distill.train import collate, forward_loss, prepare

    d = bundled_target.model.config.hidden_size
    assert records_folder(tmp_path, [2, 15, 30]) == tmp_path / "data-L2-15-30"
    _token_corpus(tmp_path, [[4, 5]])
    recs = records_from_shard(bundled_target.model, tmp_path / "shard-00000.npz", feature_layers=[2, 15, 30])
    plain = records_from_shard(bundled_target.model, tmp_path / "shard-00000.npz")
    for r, p in zip(recs, plain, strict=True):
        assert r["feats"].shape == (len(r["tokens"]) - 1, 3 * d)
        assert torch.equal(r["feats"][:, -d:], p["feats"]) and torch.equal(r["topk_ids"], p["topk_ids"])
    draft = _fused_draft(bundled_target).train()
    items = [prepare(r, draft.to_small, draft.n_out) for r in recs]
    noise = torch.full((3 * d,), 0.01)
    loss, logs = forward_loss(draft, collate(items, "eagle", draft.n_out), 0.7, noise, unroll=3)
    loss.backward()
    assert torch.isfinite(loss) and {"tok", "reg", "tok2", "tok3"} <= set(logs)
    assert draft.lift.weight.grad is not None and draft.lift.weight.grad[:, :d].abs().sum() > 0
    item = {"tokens": recs[0]["tokens"].long(), "prompt_len": 3, "domain": "x", "feats": None}
    (fused,) = E.with_features(bundled_target.model, [item], [2, 15, 30])
    assert fused["feats"].shape == (len(item["tokens"]) - 1, 3 * d)
    chains = E.chains_eagle(draft.eval(), fused, 3)
    assert len(chains) == len(item["tokens"]) - 3


def test_feature_layers_flag_is_checked():
    from specsim.distill.__main__ import parse_args

    assert parse_args(["featurize", "--feature-layers", "2,15,30"]).feature_layers == [2, 15, 30]
    for bad in ("30", "15,2", "a,b"):
        with pytest.raises(SystemExit):
            parse_args(["featurize", "--feature-layers", bad])
