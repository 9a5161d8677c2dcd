"""The token corpus: the target's answers to many prompts, as compressed uint16 token ids in shards.

``python -m specsim.distill gen`` runs *rounds*. Each round, seeded by its shard number, (1) asks the target
to write prompts (self-instruct seeds, sampled at T = 0.8), (2) answers those and some direct prompts
(word problems, code, task families; mostly greedy), (3) answers a follow-up turn on a share of the
conversations (multi-turn chat). Everything the target wrote in the round goes into one shard:

    DIR/shard-00000.npz   tokens uint16 (every sequence, prompt then answer, concatenated), offsets int64,
                          prompt_len int32, temperature float16, kind (str), meta (json)

A shard appears atomically (written to a temporary name, then renamed), so a killed run keeps every
finished shard, and a restarted run goes on from the next shard number. Generation is batched with left
padding, an attention mask and a KV cache; finished rows leave the batch; attention is
:func:`~specsim.distill.batch_generation.gqa_attention` (eager arithmetic without the per-head copies); that
generator is :mod:`specsim.distill.batch_generation`. Hidden states are not stored:
:func:`records_from_shard` recomputes them with one teacher-forced pass (``featurize``). For speed the
generator can also write those training records as it goes (``--records``), from the same passes.
"""

from __future__ import annotations

import io
import json
import os
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from specsim.core.models import format_conversation, format_prompt
from specsim.distill import instruct as I
from specsim.distill.batch_generation import fast_attention, generate

SHARD_GLOB = "shard-*.npz"


@dataclass
class Row:
    """One sequence to answer: its chat messages, sampling temperature and kind."""

    messages: list[dict]
    temperature: float
    kind: str
    seed: I.Seed | None = None
    answer: list[int] = field(default_factory=list)
    prompt_ids: list[int] = field(default_factory=list)
    feats: torch.Tensor | None = None
    topk: tuple[torch.Tensor, torch.Tensor] | None = None


def answer_rows(model, tokenizer, rows: list[Row], *, batch: int, max_new: int, gen: torch.Generator,
                top_k: int, on_step=None) -> None:
    """Fill in ``answer`` (and the record parts) of every row; batches are formed by prompt length."""
    for r in rows:
        r.prompt_ids = format_conversation(tokenizer, r.messages)
    order = sorted(range(len(rows)), key=lambda i: len(rows[i].prompt_ids))
    for s in range(0, len(order), batch):
        chunk = [rows[i] for i in order[s : s + batch]]
        res = generate(model, [r.prompt_ids for r in chunk], [r.temperature for r in chunk], max_new,
                       tokenizer.eos_token_id, gen, top_k, on_step=on_step)
        for r, out in zip(chunk, res, strict=True):
            r.answer = out["answer"]
            if top_k:
                r.feats, r.topk = out["feats"], (out["topk_ids"], out["topk_logp"])


# ---- shards ------------------------------------------------------------------------------------------


def write_shard(path: Path, rows: list[Row], meta: dict) -> None:
    """One compressed shard of token ids, written atomically."""
    seqs = [r.prompt_ids + r.answer for r in rows]
    offsets = np.cumsum([0] + [len(s) for s in seqs]).astype(np.int64)
    tokens = np.fromiter((t for s in seqs for t in s), dtype=np.uint16, count=int(offsets[-1]))
    buf = io.BytesIO()
    np.savez_compressed(buf, tokens=tokens, offsets=offsets,
                        prompt_len=np.array([len(r.prompt_ids) for r in rows], dtype=np.int32),
                        temperature=np.array([r.temperature for r in rows], dtype=np.float16),
                        kind=np.array([r.kind for r in rows]), meta=np.array(json.dumps(meta)))
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(buf.getvalue())
    os.replace(tmp, path)


def read_shard(path: Path) -> list[dict]:
    """``[{"tokens": int32 tensor, "prompt_len", "temperature", "kind"}, ...]`` of one shard."""
    with np.load(path) as z:
        tokens, offsets = z["tokens"].astype(np.int32), z["offsets"]
        return [{"tokens": torch.from_numpy(tokens[offsets[i] : offsets[i + 1]].copy()),
                 "prompt_len": int(z["prompt_len"][i]), "temperature": float(z["temperature"][i]),
                 "kind": str(z["kind"][i])} for i in range(len(offsets) - 1)]


def shard_meta(path: Path) -> dict:
    with np.load(path) as z:
        return json.loads(str(z["meta"]))


def shards(folder: Path) -> list[Path]:
    return sorted(folder.glob(SHARD_GLOB))


def corpus_stats(folder: Path) -> dict:
    """Sequences, answer tokens and all tokens over every shard in ``folder``."""
    seqs = answer = total = 0
    worst = {"max_heldout_overlap": 0.0}
    for f in shards(folder):
        with np.load(f) as z:
            n = len(z["prompt_len"])
            seqs += n
            total += int(z["offsets"][-1])
            answer += int(z["offsets"][-1]) - int(z["prompt_len"].sum())
            meta = json.loads(str(z["meta"]))
        if meta.get("max_heldout_overlap", 0.0) > worst["max_heldout_overlap"]:
            worst = {k: meta[k] for k in ("max_heldout_overlap", "max_overlap_heldout_id", "max_overlap_prompt")}
    return {"shards": len(shards(folder)), "sequences": seqs, "answer_tokens": answer, "tokens": total,
            "bytes": sum(f.stat().st_size for f in shards(folder)), **worst}


# ---- one round ---------------------------------------------------------------------------------------


@dataclass
class RoundPlan:
    """How many rows of each step one round (one shard) has."""

    seeds: int = 64
    direct: int = 48
    follow_share: float = 0.25
    greedy_share: float = 0.8
    max_new: int = 160
    seed_max_new: int = 96
    seed_temperature: float = 0.8
    batch: int = 64


def run_round(model, tokenizer, index: int, plan: RoundPlan, base_seed: int, top_k: int = 0,
              on_step=None) -> tuple[list[Row], dict]:
    """The rows of shard ``index`` (seeded by it) and the round's report."""
    rng = random.Random(base_seed * 1_000_003 + index)
    gen = torch.Generator(device=model.device).manual_seed(base_seed * 1_000_003 + index)

    def temp() -> float:
        return 0.0 if rng.random() < plan.greedy_share else rng.choice([0.7, 0.85, 1.0])

    seeds = [Row([{"role": "user", "content": s.text}], plan.seed_temperature, f"seed-{s.kind}", seed=s)
             for s in I.seed_requests(rng, plan.seeds)]
    answer_rows(model, tokenizer, seeds, batch=plan.batch, max_new=plan.seed_max_new, gen=gen, top_k=top_k,
                on_step=on_step)
    texts: list[tuple[str, str]] = []
    for r in seeds:
        if not r.answer or r.answer[-1] != tokenizer.eos_token_id:
            continue  # cut off by the length limit: not a whole prompt
        text = I.prompt_from_seed(r.seed, tokenizer.decode(r.answer, skip_special_tokens=True), rng)
        if text:
            texts.append(("self-" + r.seed.kind, text))
    texts += I.direct_prompts(rng, plan.direct)
    kept, dropped, worst = [], 0, (0.0, "", "")
    for kind, text in texts:
        ok, share, hid = I.clear_of_heldout(text)
        if not ok:
            dropped += 1
        else:
            kept.append((kind, text))
            if share > worst[0]:
                worst = (share, hid, text)
    answers = [Row([{"role": "user", "content": t}], temp(), k) for k, t in kept]
    answer_rows(model, tokenizer, answers, batch=plan.batch, max_new=plan.max_new, gen=gen, top_k=top_k,
                on_step=on_step)
    follow = []
    for r in answers:
        if rng.random() < plan.follow_share and r.answer and r.answer[-1] == tokenizer.eos_token_id:
            reply = tokenizer.decode(r.answer, skip_special_tokens=True).strip()
            msgs = r.messages + [{"role": "assistant", "content": reply},
                                 {"role": "user", "content": rng.choice(I.FOLLOW_UPS)}]
            follow.append(Row(msgs, temp(), "followup"))
    answer_rows(model, tokenizer, follow, batch=plan.batch, max_new=plan.max_new, gen=gen, top_k=top_k,
                on_step=on_step)
    rows = seeds + answers + follow
    report = {"shard": index, "seed": base_seed, "rows": len(rows), "dropped_near_heldout": dropped,
              "max_heldout_overlap": round(worst[0], 3), "max_overlap_heldout_id": worst[1],
              "max_overlap_prompt": worst[2][:200], "answer_tokens": sum(len(r.answer) for r in rows),
              "plan": plan.__dict__}
    return rows, report


def to_record(r: Row) -> dict:
    """A training record (the format :func:`load_records` reads) of a row generated with ``top_k``."""
    return {"tokens": torch.tensor(r.prompt_ids + r.answer, dtype=torch.int32), "prompt_len": len(r.prompt_ids),
            "feats": r.feats, "topk_ids": r.topk[0], "topk_logp": r.topk[1], "temperature": r.temperature,
            "kind": r.kind}


def next_shard(existing: list[int], part: int = 0, parts: int = 1) -> int:
    """The first shard number after every ``existing`` one that belongs to ``part`` of ``parts``.

    ``parts`` generators fill one corpus side by side, one core each, without writing the same shard: part i
    writes the numbers i, i + parts, i + 2 parts, ... (a number is also its round's seed, so no two write alike).
    """
    if not 0 <= part < parts:
        raise ValueError(f"part {part} of {parts}: a part is a number from 0 to {parts - 1}")
    first = max(existing, default=-1) + 1
    return first + (part - first) % parts


def run(model, tokenizer, out: Path, *, target_tokens: int, minutes: float, plan: RoundPlan, seed: int = 0,
        records: Path | None = None, max_shards: int | None = None, part: tuple[int, int] = (0, 1),
        log=print) -> dict:
    """Add shards to ``out`` until ``target_tokens`` answer tokens are there (or time / shard count ends).

    ``part`` = (i, n): write only the shard numbers of part i of n (:func:`next_shard`), so n processes can
    grow one corpus at once."""
    out.mkdir(parents=True, exist_ok=True)
    if records is not None:
        records.mkdir(parents=True, exist_ok=True)
    done = corpus_stats(out)
    start = time.time()
    bar = tqdm(total=target_tokens, initial=min(done["answer_tokens"], target_tokens), unit="tok", smoothing=0.05,
               desc="answer tokens", mininterval=5)
    made = 0
    index = next_shard([int(f.stem.split("-")[1]) for f in shards(out)], *part)
    while done["answer_tokens"] + made < target_tokens and time.time() - start < 60 * minutes:
        if max_shards is not None and index >= max_shards:
            break
        t0 = time.time()
        with fast_attention(model):
            rows, report = run_round(model, tokenizer, index, plan, seed, top_k=32 if records else 0,
                                     on_step=bar.update)
        report["seconds"] = round(time.time() - t0, 1)
        report["answer_tokens_per_s"] = round(report["answer_tokens"] / max(report["seconds"], 1e-9), 1)
        if records is not None:  # the records first: a shard on disk always has its records
            tmp = records / f"corpus-{index:05d}.tmp"
            torch.save([to_record(r) for r in rows], tmp)
            os.replace(tmp, records / f"corpus-{index:05d}.pt")
        write_shard(out / f"shard-{index:05d}.npz", rows, report)
        made += report["answer_tokens"]
        log(json.dumps({k: v for k, v in report.items() if k != "plan"}))
        index += part[1]
    bar.close()
    return corpus_stats(out)


# ---- recomputing the training records ---------------------------------------------------------------


def records_folder(root: Path, feature_layers: list[int] | None = None) -> Path:
    """Where the training records live: ROOT/data, or ROOT/data-L2-15-30 for fused features of those layers."""
    return root / ("data-L" + "-".join(str(i) for i in feature_layers) if feature_layers else "data")


@torch.inference_mode()
def records_from_shard(model, path: Path, top_k: int = 32, batch: int = 16,
                       feature_layers: list[int] | None = None) -> list[dict]:
    """Training records of one shard: one right-padded teacher-forced pass gives features and top-k.

    With ``feature_layers`` the features are those layers' hidden states side by side (EAGLE-3 style).
    """
    from specsim.core.drafters import target_features

    seqs = read_shard(path)
    out = []
    order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]["tokens"]))
    for s in range(0, len(order), batch):
        chunk = [seqs[i] for i in order[s : s + batch]]
        width = max(len(c["tokens"]) for c in chunk)
        ids = torch.zeros((len(chunk), width), dtype=torch.long)
        for i, c in enumerate(chunk):
            ids[i, : len(c["tokens"])] = c["tokens"]
        out_ = model.model(input_ids=ids, output_hidden_states=feature_layers or None)
        h = out_.last_hidden_state  # right padding: earlier positions are unaffected
        feats = target_features(out_.hidden_states, feature_layers) if feature_layers else h
        for i, c in enumerate(chunk):
            n, p = len(c["tokens"]), c["prompt_len"]
            top = torch.log_softmax(model.lm_head(h[i, p - 1 : n - 1]).float(), dim=-1).topk(top_k, dim=-1)
            out.append({**c, "feats": feats[i, : n - 1].half().clone(), "topk_ids": top.indices.int(),
                        "topk_logp": top.values.half()})
    return out


def load_records(folder: Path) -> list[dict]:
    """Every training record of every records file in ``folder`` (in file order).

    A record is one sequence of the corpus with what training needs from the target:

    - ``tokens``   int32 [P + n]          the prompt, then the answer (its end-of-turn token included);
    - ``prompt_len``                      P;
    - ``feats``    float16 [P + n - 1, d] the target's last hidden state (after the final norm) at every
                                          position that has a next token: ``feats[t]`` predicts ``tokens[t+1]``
                                          ([P + n - 1, n_layers * d] for fused features, the last layer last);
    - ``topk_ids`` int32 / ``topk_logp`` float16 [n, k]: the target's k most likely next tokens (temperature 1)
                                          at each answer position, in the answer's order;
    - ``temperature`` (0 for a greedy answer) and ``kind``, as in the shard.
    """
    records = []
    for f in sorted(folder.glob("*.pt")):
        records.extend(torch.load(f, weights_only=False))
    return records


def featurize(model, corpus: Path, records: Path, max_shards: int | None = None,
              feature_layers: list[int] | None = None) -> int:
    """Write the training records of every shard that has none yet (only shards numbered below
    ``max_shards`` when it is given); returns how many shards were done."""
    records.mkdir(parents=True, exist_ok=True)
    todo = [(f, records / f"corpus-{f.stem.split('-')[1]}.pt") for f in shards(corpus)
            if max_shards is None or int(f.stem.split("-")[1]) < max_shards]
    todo = [(f, target) for f, target in todo if not target.exists()]
    for f, target in tqdm(todo, desc="featurize", unit="shard"):
        torch.save(records_from_shard(model, f, feature_layers=feature_layers), target.with_suffix(".tmp"))
        os.replace(target.with_suffix(".tmp"), target)
    return len(todo)


def agreement(model, tokenizer, texts: list[str], max_new: int) -> dict:
    """Batched greedy generation against one sequence at a time, on the same prompts.

    Returns the share of prompts whose answers are identical and the share of tokens before the first
    difference (a bfloat16 pass over a padded batch can round a near-tie differently).
    """
    ids = [format_prompt(tokenizer, t) for t in texts]
    gen = torch.Generator().manual_seed(0)
    with fast_attention(model):
        batched = generate(model, ids, [0.0] * len(ids), max_new, tokenizer.eos_token_id, gen)
    same = agree = total = 0
    for p, b in zip(ids, batched, strict=True):  # one at a time, through the model's own attention
        single = generate(model, [p], [0.0], max_new, tokenizer.eos_token_id, gen)[0]["answer"]
        same += single == b["answer"]
        n = next((i for i, (x, y) in enumerate(zip(single, b["answer"], strict=False)) if x != y),
                 min(len(single), len(b["answer"])))
        agree += n
        total += max(len(single), len(b["answer"]))
    return {"prompts": len(ids), "identical": same / len(ids), "tokens_before_first_difference": agree / total}


def burst(model, tokenizer, texts: list[str], max_new: int) -> dict:
    """Answer ``texts`` in one batch (greedy, fast attention); tokens, wall and CPU seconds.

    On a shared machine the wall clock says how busy the others were; CPU seconds over threads is what
    an idle machine would take (``tokens_per_s_idle``).
    """
    ids = [format_prompt(tokenizer, t) for t in texts]
    gen = torch.Generator().manual_seed(0)
    with fast_attention(model):
        wall, cpu = time.perf_counter(), time.process_time()
        res = generate(model, ids, [0.0] * len(ids), max_new, tokenizer.eos_token_id, gen)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    n = sum(len(r["answer"]) for r in res)
    threads = torch.get_num_threads()
    return {"rows": len(ids), "tokens": n, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "threads": threads,
            "tokens_per_s_wall": round(n / wall, 1), "tokens_per_s_idle": round(n * threads / cpu, 1)}


@torch.inference_mode()
def label_agreement(model, records: list[dict], chunk: int = 16) -> dict:
    """How often a record's stored top-1 label is the argmax ``model`` gives when it decodes the same text
    the way the app does: the prompt prefilled, then the answer fed ``chunk`` tokens per pass."""
    same = total = 0
    for r in records:
        tokens, p = r["tokens"].long(), r["prompt_len"]
        out = model(input_ids=tokens[None, :p], use_cache=True)
        cache, preds = out.past_key_values, [out.logits[0, -1].argmax()]
        for s in range(p, len(tokens) - 1, chunk):
            out = model(input_ids=tokens[None, s : min(s + chunk, len(tokens) - 1)], past_key_values=cache,
                        use_cache=True)
            cache = out.past_key_values
            preds.extend(out.logits[0].argmax(-1))
        preds = torch.stack(preds)
        same += int((preds == r["topk_ids"][:, 0].long()).sum())
        total += len(preds)
    return {"records": len(records), "positions": total, "same_top1": same / max(total, 1)}
