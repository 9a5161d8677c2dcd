"""Build the training set: the target's own answers, with its top-k log-probs and last hidden states.

Each record holds one prompt (through the chat template) and the target's answer, greedy or sampled:

- ``tokens``   int32 [P + n]          the prompt, then the answer (its end-of-turn token included);
- ``prompt_len``                      P;
- ``feats``    float16 [P + n - 1, d] the target's last hidden state (after the final norm) at every
                                      position that has a next token: ``feats[t]`` predicts ``tokens[t+1]``;
- ``topk_ids`` int32 / ``topk_logp`` float16 [n, k]: the target's k most likely next tokens (temperature 1)
                                      for each answer token, in the same order as the answer.

Generation is batched with left padding so both CPU cores work on many rows at once. Shards are
written as they finish, so a time budget can stop the run at any batch and keep what was made.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from pathlib import Path

import torch
from tqdm import tqdm

from specsim.distill import prompts as P
from specsim.models import format_prompt


def left_pad(prompts: list[list[int]], pad_id: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Prompts right-aligned in one batch: (input ids, attention mask, position ids)."""
    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for i, p in enumerate(prompts):
        ids[i, width - len(p):] = torch.tensor(p)
        mask[i, width - len(p):] = 1
    return ids, mask, (mask.cumsum(-1) - 1).clamp(min=0)


@torch.inference_mode()
def generate_batch(model, prompt_ids: list[list[int]], temperatures: list[float], max_new: int, top_k: int,
                   eos_id: int, gen: torch.Generator, pad_id: int = 0) -> list[dict]:
    """Answer a batch of prompts; temperature 0 means greedy. Returns one record per prompt."""
    b = len(prompt_ids)
    ids, mask, pos = left_pad(prompt_ids, pad_id)
    width = ids.shape[1]
    temps = torch.tensor(temperatures, dtype=torch.float32)
    out = model.model(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=True)
    cache, h = out.past_key_values, out.last_hidden_state[:, -1]
    feats = [[out.last_hidden_state[i, width - len(p):].half()] for i, p in enumerate(prompt_ids)]
    answers: list[list[int]] = [[] for _ in range(b)]
    tk_ids: list[list[torch.Tensor]] = [[] for _ in range(b)]
    tk_logp: list[list[torch.Tensor]] = [[] for _ in range(b)]
    done = torch.zeros(b, dtype=torch.bool)
    for _ in range(max_new):
        logp = torch.log_softmax(model.lm_head(h).float(), dim=-1)
        top = logp.topk(top_k, dim=-1)
        greedy = logp.argmax(-1)
        scaled = torch.softmax(logp / temps.clamp(min=1e-3)[:, None], dim=-1)
        sampled = torch.multinomial(scaled, 1, generator=gen).squeeze(-1)
        nxt = torch.where(temps > 0, sampled, greedy)
        for i in range(b):
            if not done[i]:
                answers[i].append(int(nxt[i]))
                tk_ids[i].append(top.indices[i].int())
                tk_logp[i].append(top.values[i].half())
        done |= nxt == eos_id
        if bool(done.all()):
            break
        mask = torch.cat([mask, torch.ones((b, 1), dtype=torch.long)], dim=1)
        pos = pos[:, -1:] + 1
        out = model.model(input_ids=nxt[:, None], attention_mask=mask, position_ids=pos, past_key_values=cache,
                          use_cache=True)
        cache, h = out.past_key_values, out.last_hidden_state[:, -1]
        for i in range(b):
            if not done[i]:
                feats[i].append(h[i : i + 1].half())
    records = []
    for i, p in enumerate(prompt_ids):
        n = len(answers[i])
        records.append({
            "tokens": torch.tensor(p + answers[i], dtype=torch.int32), "prompt_len": len(p),
            "feats": torch.cat(feats[i])[: len(p) + n - 1].clone(),
            "topk_ids": torch.stack(tk_ids[i]), "topk_logp": torch.stack(tk_logp[i]),
            "temperature": temperatures[i],
        })
    return records


def batches(items: list, size: int) -> Iterator[list]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def answer_prompts(model, tokenizer, texts: list[str], *, temps: list[float], max_new: int, top_k: int,
                   batch_size: int, seed: int, max_prompt: int, deadline: float, out_dir: Path | None,
                   desc: str) -> list[dict]:
    """Answer every prompt (sorted by length to limit padding); stop at ``deadline`` (time.time())."""
    gen = torch.Generator().manual_seed(seed)
    rows = [(format_prompt(tokenizer, t), temp, t) for t, temp in zip(texts, temps, strict=True)]
    rows = [r for r in rows if len(r[0]) <= max_prompt]
    rows.sort(key=lambda r: len(r[0]))
    chunks = list(batches(rows, batch_size))
    random.Random(seed).shuffle(chunks)  # mixed lengths over time, so a stopped run is still varied
    records = []
    for k, chunk in enumerate(tqdm(chunks, desc=desc, unit="batch")):
        if time.time() > deadline:
            break
        recs = generate_batch(model, [r[0] for r in chunk], [r[1] for r in chunk], max_new, top_k,
                              tokenizer.eos_token_id, gen)
        for rec, r in zip(recs, chunk, strict=True):
            rec["prompt"] = r[2]
        records.extend(recs)
        if out_dir is not None:
            torch.save(recs, out_dir / f"{desc}-{k:05d}.pt")
    return records


def build_prompts(rng: random.Random, n_template: int, n_stdlib: int, n_family: int = 0) -> list[str]:
    texts = P.template_prompts(rng, n_template) + P.stdlib_prompts(rng, n_stdlib) + P.family_prompts(rng, n_family)
    kept, _ = P.filter_heldout(texts)
    return kept


def self_prompts(model, tokenizer, rng: random.Random, n: int, seed: int, deadline: float,
                 max_new: int = 48) -> list[str]:
    """Ask the target to write ``n`` questions for itself (sampled at T=1), keep the usable ones."""
    recs = answer_prompts(model, tokenizer, P.self_prompt_requests(rng, n), temps=[1.0] * n, max_new=max_new,
                          top_k=1, batch_size=32, seed=seed, max_prompt=10_000, deadline=deadline, out_dir=None,
                          desc="self-prompts")
    texts = [P.clean_self_prompt(tokenizer.decode(r["tokens"][r["prompt_len"]:].tolist(),
                                                  skip_special_tokens=True)) for r in recs]
    kept, _ = P.filter_heldout(sorted({t for t in texts if t}))
    return kept


def mix_temperatures(rng: random.Random, n: int, greedy_share: float) -> list[float]:
    """Greedy for a share of the rows, otherwise a sampling temperature drawn from {0.7, 0.85, 1.0}."""
    return [0.0 if rng.random() < greedy_share else rng.choice([0.7, 0.85, 1.0]) for _ in range(n)]


def load_records(folder: Path) -> list[dict]:
    """Every record of every shard in ``folder`` (in shard order)."""
    records = []
    for f in sorted(folder.glob("*.pt")):
        records.extend(torch.load(f, weights_only=False))
    return records


@torch.inference_mode()
def teacher_force_batch(model, tokenizer, pairs: list[tuple[str, str]], answer_len: int, top_k: int) -> list[dict]:
    """Records for given (prompt, answer) texts: one right-padded target pass, no generation."""
    seqs = []
    for prompt, answer in pairs:
        p = format_prompt(tokenizer, prompt)
        a = tokenizer(answer, add_special_tokens=False)["input_ids"][:answer_len]
        seqs.append((p, a))
    width = max(len(p) + len(a) for p, a in seqs)
    ids = torch.zeros((len(seqs), width), dtype=torch.long)
    for i, (p, a) in enumerate(seqs):
        ids[i, : len(p) + len(a)] = torch.tensor(p + a)
    h = model.model(input_ids=ids).last_hidden_state  # right padding: earlier positions are unaffected
    records = []
    for i, (p, a) in enumerate(seqs):
        n = len(p) + len(a)
        logp = torch.log_softmax(model.lm_head(h[i, len(p) - 1 : n - 1]).float(), dim=-1).topk(top_k, dim=-1)
        records.append({"tokens": torch.tensor(p + a, dtype=torch.int32), "prompt_len": len(p),
                        "feats": h[i, : n - 1].half().clone(), "topk_ids": logp.indices.int(),
                        "topk_logp": logp.values.half(), "temperature": -1.0, "prompt": pairs[i][0]})
    return records


def teacher_force(model, tokenizer, pairs: list[tuple[str, str]], *, answer_len: int, batch_size: int,
                  deadline: float, out_dir: Path, desc: str) -> list[dict]:
    """Teacher-forced records for every pair (until ``deadline``), written shard by shard."""
    records = []
    for k, chunk in enumerate(tqdm(list(batches(pairs, batch_size)), desc=desc, unit="batch")):
        if time.time() > deadline:
            break
        recs = teacher_force_batch(model, tokenizer, chunk, answer_len, 32)
        records.extend(recs)
        torch.save(recs, out_dir / f"{desc}-{k:05d}.pt")
    return records
