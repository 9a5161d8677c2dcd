"""Train Medusa heads on the target's own greedy outputs.

Recipe (``python -m specsim.variants.train_medusa [--budget tiny|default] [--out PATH] [--seed S]``):

1. reuse the distillation pipeline's records when they exist (``python -m specsim.distill featurize``
   writes the corpus's answers, the target's own, with its last hidden states); otherwise build prompts from templates x
   topics (none from the held-out set) and let the frozen target answer them greedily (batched,
   left-padded), keeping its last hidden state at every answer position;
2. train head k on h_t to predict token t+k+1, i.e. k places after the token the target's own head
   predicts from h_t (cross-entropy over a reduced vocabulary: the answers' tokens plus the
   commonest ids), target frozen; 10% of the rows are held back to score each head;
3. save the heads (float16) with the vocabulary, the budget, the seed and the measured time.
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from tqdm import tqdm

from specsim.core.models import LoadedModel, format_prompt, load_bundled_target
from specsim.core.paths import cache_dir
from specsim.variants.medusa import ASSET, MedusaHeads, restricted_output

DISTILL_DATA = cache_dir() / "distill" / "data"  # where ``python -m specsim.distill featurize`` writes its records

TEMPLATES = [
    "Explain {t} in three sentences.",
    "Write a short paragraph about {t}.",
    "Give four facts about {t}.",
    "What are the main benefits of {t}?",
    "Describe {t} to a ten-year-old.",
    "List three common mistakes people make with {t}.",
    "Write a haiku about {t}.",
    "Summarize the history of {t} briefly.",
    "Write a Python function related to {t}, with a docstring.",
    "What questions would a beginner ask about {t}? Answer two of them.",
]
TOPICS = [
    "solar panels", "chess openings", "coffee brewing", "volcanoes", "public libraries", "honey bees",
    "sourdough bread", "electric cars", "the water cycle", "origami", "jazz music", "recycling plastic",
    "marathon training", "black holes", "tea ceremonies", "map reading", "bird migration", "compost",
    "spreadsheets", "the printing press", "coral reefs", "knitting", "wind turbines", "meditation",
    "password managers", "glaciers", "board games", "fermentation", "street photography", "tides",
]


@dataclass(frozen=True)
class Budget:
    prompts: int
    new_tokens: int
    epochs: int
    n_heads: int = 4
    batch: int = 16  # prompts generated together
    base_vocab: int = 0  # the heads' vocabulary: the answers' tokens plus ids below this (BPE: the commonest)


BUDGETS = {
    "tiny": Budget(prompts=4, new_tokens=12, epochs=1, n_heads=3, batch=4),
    "default": Budget(prompts=64, new_tokens=40, epochs=3, batch=32, base_vocab=1024),
}


def training_prompts(n: int, seed: int) -> list[str]:
    """``n`` distinct prompts from TEMPLATES x TOPICS in a seeded order."""
    pairs = [(tpl, topic) for tpl in TEMPLATES for topic in TOPICS]
    random.Random(seed).shuffle(pairs)
    return [tpl.format(t=topic) for tpl, topic in pairs[:n]]


@torch.inference_mode()
def greedy_answers(target: LoadedModel, prompts: list[str], new_tokens: int, batch: int, n_heads: int):
    """Let the target answer every prompt greedily (batched, left-padded) and keep, for each answer
    token a_t, the last hidden state whose own output head predicted it.

    Returns (features (N, H), labels (N, K) with labels[:, k-1] = a_{t+k} or -1 past the answer's
    end, every answer's token ids). The hidden states come from the generation passes themselves.
    """
    tok = target.tokenizer
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    eos = target.model.generation_config.eos_token_id
    eos = set(eos if isinstance(eos, list) else [eos]) | {tok.eos_token_id}
    feats, labels, answers = [], [], []
    for i in tqdm(range(0, len(prompts), batch), desc="target answers", unit="batch"):
        ids = [format_prompt(tok, p) for p in prompts[i : i + batch]]
        width = max(len(x) for x in ids)
        input_ids = torch.tensor([[pad] * (width - len(x)) + x for x in ids])
        mask = torch.tensor([[0] * (width - len(x)) + [1] * len(x) for x in ids])
        out = target.model.generate(
            input_ids=input_ids.to(target.device), attention_mask=mask.to(target.device), max_new_tokens=new_tokens,
            do_sample=False, pad_token_id=pad, output_hidden_states=True, return_dict_in_generate=True)
        # out.hidden_states[s][-1][:, -1]: the state that predicted answer token s.
        states = torch.stack([step[-1][:, -1] for step in out.hidden_states], dim=1).float().cpu()
        for row, tokens in enumerate(out.sequences[:, width:].tolist()):
            answer = []
            for token in tokens:
                answer.append(token)
                if token in eos:
                    break
            answers.append(answer)
            for t in range(len(answer) - 1):  # a row needs at least one head target
                feats.append(states[row, t])
                labels.append([answer[t + k] if t + k < len(answer) else -1 for k in range(1, n_heads + 1)])
    return torch.stack(feats), torch.tensor(labels, dtype=torch.long), answers


def distill_records(folder: Path, n_heads: int):
    """Reuse the distillation pipeline's records of the token corpus (``corpus-*.pt``, see
    :func:`specsim.distill.corpus.load_records`: the target's own greedy or sampled answers with its last
    hidden states, ``feats[t]`` predicting ``tokens[t+1]``).

    Returns the same (features, labels, answers) as :func:`greedy_answers`; other files in the folder are
    skipped.
    """
    feats, labels, answers = [], [], []
    for path in tqdm(sorted(folder.glob("corpus-*.pt")), desc="distill shards", unit="file"):
        for rec in torch.load(path, weights_only=False):
            tokens, start = rec["tokens"].tolist(), rec["prompt_len"]
            answer = tokens[start:]
            answers.append(answer)
            for t in range(len(answer) - 1):
                feats.append(rec["feats"][start + t - 1].float())
                labels.append([answer[t + k] if t + k < len(answer) else -1 for k in range(1, n_heads + 1)])
    if not feats:
        raise FileNotFoundError(f"no corpus-*.pt records in {folder}")
    return torch.stack(feats), torch.tensor(labels, dtype=torch.long), answers


def train(target: LoadedModel, budget: Budget, seed: int = 0, progress: bool = True,
          data: Path | None = None) -> MedusaHeads:
    """Get the target's answers (from ``data`` shards of the distill pipeline, or by generating them),
    train the heads on 90% of the answers and score each head on the other 10%; ``heads.meta`` records
    data, seed, seconds and accuracy."""
    torch.manual_seed(seed)
    started = time.perf_counter()
    if data is not None:
        feats, labels, answers = distill_records(data, budget.n_heads)
    else:
        prompts = training_prompts(budget.prompts, seed)
        feats, labels, answers = greedy_answers(target, prompts, budget.new_tokens, budget.batch, budget.n_heads)
    vocab_ids = torch.unique(torch.cat([torch.tensor([t for a in answers for t in a]),
                                        torch.arange(min(budget.base_vocab, target.model.config.vocab_size))]))
    to_small = torch.full((int(vocab_ids.max()) + 1,), -1, dtype=torch.long)
    to_small[vocab_ids] = torch.arange(len(vocab_ids))
    small = torch.where(labels >= 0, to_small[labels.clamp(min=0)], torch.full_like(labels, -100))
    data_s = time.perf_counter() - started

    split = int(0.9 * len(feats)) if len(feats) >= 20 else len(feats)  # last 10% of rows (whole answers, mostly)
    val_feats, val_small = feats[split:], small[split:]
    feats, small = feats[:split], small[:split]
    heads = MedusaHeads(feats.shape[-1], budget.n_heads, vocab_ids)
    out_weight = restricted_output(target.model, vocab_ids).float().cpu()
    optimizer = torch.optim.AdamW(heads.parameters(), lr=1e-3, weight_decay=0.0)
    generator = torch.Generator().manual_seed(seed)
    steps = budget.epochs * ((len(feats) + 255) // 256)
    bar = tqdm(total=steps, desc="training heads", unit="step", disable=not progress)
    for _ in range(budget.epochs):
        order = torch.randperm(len(feats), generator=generator)
        for i in range(0, len(feats), 256):
            batch = order[i : i + 256]
            logits = heads.logits(feats[batch], out_weight)  # (K, B, V')
            loss = torch.nn.functional.cross_entropy(
                logits.reshape(-1, logits.shape[-1]), small[batch].T.reshape(-1), ignore_index=-100)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            bar.update(1)
            bar.set_postfix(loss=f"{loss.item():.3f}")
    bar.close()
    train_acc, val_acc = _accuracy(heads, feats, small, out_weight), _accuracy(heads, val_feats, val_small, out_weight)
    heads.meta = {
        "answers": len(answers), "answer_tokens": sum(len(a) for a in answers), "epochs": budget.epochs, "seed": seed,
        "positions": len(feats), "heldout_positions": len(val_feats), "vocab": len(vocab_ids),
        "data_seconds": round(data_s, 1),
        "train_seconds": round(time.perf_counter() - started - data_s, 1),
        "total_seconds": round(time.perf_counter() - started, 1), "train_top1_per_head": train_acc,
        "heldout_top1_per_head": val_acc, "data": "distill shards" if data is not None else "generated",
        "threads": torch.get_num_threads(),
    }
    return heads.eval()


@torch.no_grad()
def _accuracy(heads: MedusaHeads, feats: torch.Tensor, small: torch.Tensor, out_weight: torch.Tensor) -> list[float]:
    """Top-1 accuracy of each head on rows that have a target (in chunks, to bound memory)."""
    hits = torch.zeros(heads.n_heads)
    counts = torch.zeros(heads.n_heads)
    for i in range(0, len(feats), 1024):
        pred = heads.logits(feats[i : i + 1024], out_weight).argmax(-1).T  # (B, K)
        target = small[i : i + 1024]
        hits += ((pred == target) & (target >= 0)).sum(0).float()
        counts += (target >= 0).sum(0).float()
    return [round(float(h / c), 3) if c else 0.0 for h, c in zip(hits, counts, strict=True)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", choices=sorted(BUDGETS), default="default")
    parser.add_argument("--out", type=Path, default=ASSET)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", type=Path, default=DISTILL_DATA,
                        help="folder of the distill pipeline's corpus-*.pt records, reused when present "
                        "(default: %(default)s); 'none' generates fresh answers instead")
    args = parser.parse_args(argv)
    data = args.data if str(args.data) != "none" and args.budget != "tiny" and args.data.is_dir() else None
    target = load_bundled_target(device="cpu", dtype="float32")
    heads = train(target, BUDGETS[args.budget], seed=args.seed, data=data)
    heads.save(args.out)
    size = args.out.stat().st_size / 2**20
    print(f"saved {heads.n_heads} heads ({heads.extra_parameters():,} parameters, {size:.1f} MB) to {args.out}")
    print(heads.meta)


if __name__ == "__main__":
    main()
