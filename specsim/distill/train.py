"""Train a draft on the target's answers: soft targets (its top-k log-probs) plus hard labels.

Loss on every answer token (prompt tokens are context only):

    kl * CE(p_topk, q) + (1 - kl) * CE(x, q)

where p_topk is the target's top-k distribution restricted to the draft's vocabulary and renormalised
(cross-entropy with soft labels equals KL(p || q) up to a constant). The EAGLE-style draft also
regresses the target's next hidden state (smooth L1), gets noise on its input features, and is unrolled
``--unroll`` steps on its own predicted features (training-time test, default 2), so it learns to
continue from its own guesses. ``--autocast`` runs the passes in bfloat16.

Training is time-budgeted: the cosine schedule runs over whichever ends first, the steps or the minutes;
the checkpoint with the best validation top-1 agreement is the one kept.
"""

from __future__ import annotations

import json
import math
import random
import time
from argparse import Namespace
from pathlib import Path

import torch
import torch.nn.functional as F
from tqdm import tqdm

from specsim.core import draft_nets as M
from specsim.distill.corpus import load_records, records_folder

MAX_LEN = 192
TOKENS_ONLY = "--from-corpus has token ids only: it trains the standalone draft (--kind standalone)"
GROW_RECORDS = ("--grow takes in new feature records from ROOT/data, not token shards: with --from-corpus, "
                "train again once the corpus has grown")


def token_counts(records: list[dict], vocab: int, top: int = 3) -> torch.Tensor:
    """How often each target token is emitted, plus how often it is among the target's top few."""
    counts = torch.zeros(vocab)
    for r in records:
        counts += torch.bincount(r["tokens"][r["prompt_len"]:].long(), minlength=vocab)
        counts += 0.25 * torch.bincount(r["topk_ids"][:, :top].reshape(-1).long(), minlength=vocab)
    return counts


def token_records(corpus: Path, max_tokens: int | None = None) -> list[dict]:
    """Training records read straight from the corpus's token shards, with no target pass.

    The label of each answer position is the token the target wrote there. For a greedy answer that is the
    target's argmax. For a sampled answer it is a draw from the target's distribution p, and the expected
    cross-entropy of a draw is the cross-entropy to p itself, so sampled text still teaches p. There are no
    features, so only the standalone draft (which reads token ids) can learn from these records.
    ``max_tokens`` keeps the first shards, in order, until they hold that many answer tokens.
    """
    from specsim.distill.corpus import read_shard, shards

    records, n_answer = [], 0
    for f in shards(corpus):
        if max_tokens is not None and n_answer >= max_tokens:
            break
        for r in read_shard(f):
            answer = r["tokens"][r["prompt_len"]:]
            records.append({**r, "topk_ids": answer[:, None].int(), "topk_logp": torch.zeros((len(answer), 1),
                            dtype=torch.float16), "feats": None})
            n_answer += len(answer)
    return records


def select_records(records: list[dict], which: str) -> list[dict]:
    """All records, or only the greedy (temperature 0) or only the sampled (temperature > 0) answers."""
    if which == "greedy":
        return [r for r in records if r["temperature"] == 0]
    if which == "sampled":
        return [r for r in records if r["temperature"] > 0]
    return records


def prepare(rec: dict, to_small: torch.Tensor, unk: int) -> dict:
    """One record cut to MAX_LEN (the end kept), with soft and hard targets in draft ids.

    The hard label is the target's own argmax (``topk_ids[:, 0]``), not the token that was written: on
    sampled or teacher-forced text the two differ, and greedy acceptance is about the argmax.
    """
    tokens, p = rec["tokens"].long(), rec["prompt_len"]
    cut = max(0, len(tokens) - MAX_LEN)
    soft_idx = to_small[rec["topk_ids"].long()]
    soft_w = rec["topk_logp"].float().exp() * (soft_idx != unk)
    soft_w = soft_w / soft_w.sum(-1, keepdim=True).clamp(min=1e-9)
    hard = to_small[rec["topk_ids"][:, 0].long()]
    feats = rec["feats"][cut:] if rec["feats"] is not None else None
    return {"tokens": tokens[cut:], "p": p - cut, "feats": feats, "soft_idx": soft_idx.clamp(max=unk - 1),
            "soft_w": soft_w, "hard": hard}


def collate(items: list[dict], kind: str, unk: int) -> dict:
    """Right-padded batch; ``ans[b, t]`` is the answer index the logits at input t predict (or -1).

    ``soft_idx``/``soft_w``/``hard`` are the targets of those positions, gathered once per batch.
    """
    shift = 1 if kind == "standalone" else 2  # logits at input t predict tokens[t + shift]
    n_in = max(len(it["tokens"]) - 1 for it in items)
    b = len(items)
    k = items[0]["soft_idx"].shape[-1]
    tok = torch.zeros((b, n_in + 1), dtype=torch.long)
    ans = torch.full((b, n_in), -1, dtype=torch.long)
    soft_idx = torch.zeros((b, n_in, k), dtype=torch.long)
    soft_w = torch.zeros((b, n_in, k))
    hard = torch.full((b, n_in), unk, dtype=torch.long)
    for i, it in enumerate(items):
        n_tok = len(it["tokens"])
        tok[i, :n_tok] = it["tokens"]
        t0 = max(0, it["p"] - shift)  # first input whose prediction is an answer token
        t1 = n_tok - shift
        if t1 > t0:
            j = torch.arange(t0, t1) + shift - it["p"]
            ans[i, t0:t1] = j
            soft_idx[i, t0:t1], soft_w[i, t0:t1], hard[i, t0:t1] = it["soft_idx"][j], it["soft_w"][j], it["hard"][j]
    out = {"tok": tok, "ans": ans, "soft_idx": soft_idx, "soft_w": soft_w, "hard": hard}
    if kind == "eagle":
        d = items[0]["feats"].shape[-1]
        feats = torch.zeros((b, n_in, d))
        fmask = torch.zeros((b, n_in), dtype=torch.bool)
        for i, it in enumerate(items):
            f = it["feats"].float()
            feats[i, : len(f)] = f
            fmask[i, : len(f) - 1] = True  # input t has a next feature f_{t+1}
        out["feats"], out["fmask"] = feats, fmask
    return out


def token_loss(logits, batch: dict, kl: float) -> tuple[torch.Tensor, int]:
    """Soft + hard cross-entropy over the positions that predict an answer token.

    ``logits`` is [B, T, V], or a function of (b_idx, t_idx) that returns the logits of those positions only.
    """
    b_idx, t_idx = (batch["ans"] >= 0).nonzero(as_tuple=True)
    picked = logits(b_idx, t_idx) if callable(logits) else logits[b_idx, t_idx]
    if len(b_idx) == 0:
        return picked.sum() * 0, 0
    logq = torch.log_softmax(picked.float(), dim=-1)
    soft_idx, soft_w = batch["soft_idx"][b_idx, t_idx], batch["soft_w"][b_idx, t_idx]
    hard = batch["hard"][b_idx, t_idx]
    soft = -(soft_w * logq.gather(1, soft_idx)).sum(-1).mean()
    ok = hard < logq.shape[-1]
    hard_ce = F.nll_loss(logq[ok], hard[ok]) if ok.any() else logq.sum() * 0
    return kl * soft + (1 - kl) * hard_ce, int(len(b_idx))


def forward_loss(draft, batch: dict, kl: float, noise: float | torch.Tensor = 0.0,
                 unroll: int = 2) -> tuple[torch.Tensor, dict]:
    """The batch's loss and its parts. ``noise``: the std of the noise on the input features (a scalar, or one
    per feature column); the EAGLE draft regresses the next feature of the target's last layer."""
    if draft.kind == "standalone":
        h = draft.hidden(batch["tok"][:, :-1])
        loss, n = token_loss(lambda b, t: draft.logits(h[b, t]), batch, kl)
        return loss, {"tok": float(loss.detach()), "n": n}
    feats, fmask = batch["feats"], batch["fmask"]
    nxt = batch["tok"][:, 1 : feats.shape[1] + 1]
    noisy = feats + noise * torch.randn_like(feats) if torch.any(torch.as_tensor(noise) > 0) else feats
    h, _, _ = draft(noisy, nxt, with_logits=False)
    top = feats[..., -draft.config.hidden_size :]  # the last layer's (all of f_t unless fused)
    target_next = torch.cat([top[:, 1:], top[:, -1:]], dim=1)
    reg = F.smooth_l1_loss(h[fmask].float(), target_next[fmask]) if fmask.any() else h.sum() * 0
    tok, n = token_loss(lambda b, t: draft.logits(h[b, t]), batch, kl)
    loss = tok + 0.5 * reg
    logs = {"tok": float(tok.detach()), "reg": float(reg.detach()), "n": n}
    # Training-time test: further steps on its own guesses, input t carrying the feature predicted at t - 1
    # by the step before (so step j learns to continue from j - 1 guesses of its own).
    for j in range(2, unroll + 1):
        own = torch.cat([draft.lift_feats(feats[:, :1]), h[:, :-1].float()], dim=1)
        h, _, _ = draft(own, nxt, with_logits=False)
        tok_j, _ = token_loss(lambda b, t, h=h: draft.logits(h[b, t]), batch, kl)
        reg_j = F.smooth_l1_loss(h[fmask].float(), target_next[fmask]) if fmask.any() else h.sum() * 0
        loss = loss + 0.5 ** (j - 1) * (tok_j + 0.5 * reg_j)
        logs[f"tok{j}"] = float(tok_j.detach())
    return loss, logs


@torch.no_grad()
def agreement(draft, items: list[dict], unk: int) -> float:
    """Top-1 agreement with the target's greedy choice on answer tokens (teacher forcing)."""
    draft.eval()
    hit = total = 0
    for i in range(0, len(items), 8):
        chunk = items[i : i + 8]
        batch = collate(chunk, draft.kind, unk)
        if draft.kind == "standalone":
            logits = draft(input_ids=batch["tok"][:, :-1]).logits
        else:
            logits = draft(batch["feats"], batch["tok"][:, 1 : batch["feats"].shape[1] + 1])[1]
        b_idx, t_idx = (batch["ans"] >= 0).nonzero(as_tuple=True)
        best = batch["soft_idx"][b_idx, t_idx, 0]
        in_vocab = batch["soft_w"][b_idx, t_idx, 0] > 0
        hit += int(((logits[b_idx, t_idx].argmax(-1) == best) & in_vocab).sum())
        total += len(b_idx)
    draft.train()
    return hit / max(total, 1)


def run(args: Namespace, budget: dict, root: Path) -> Path:
    """Train one draft as ``args`` say and write it to ROOT/drafts/<name>; returns the folder."""
    from specsim.core.models import load_bundled_target

    start = time.time()
    torch.manual_seed(args.seed)
    corpus = getattr(args, "from_corpus", None)
    if corpus is not None and args.kind != "standalone" and not args.init:
        raise SystemExit(TOKENS_ONLY)
    if corpus is not None and getattr(args, "grow", False):
        raise SystemExit(GROW_RECORDS)
    layers = getattr(args, "feature_layers", None)
    if args.init and not layers:  # continuing a fused draft: its own layers
        layers = json.loads((Path(args.init) / "config.json").read_text()).get("feature_layers")
    data = records_folder(root, layers)
    raw = token_records(corpus, getattr(args, "tokens", None)) if corpus else load_records(data)
    records = select_records(raw, getattr(args, "records", "all"))
    if not records:
        raise SystemExit(f"no training data under {corpus or data}: run the gen or featurize stage first"
                         f"{' with the same --feature-layers' if layers else ''}")
    target = load_bundled_target("cpu", "float32")
    tc = target.model.config
    counts = token_counts(records, tc.vocab_size)
    id_map = M.choose_vocab(counts, args.vocab, target.tokenizer.all_special_ids, budget["min_count"],
                            fill_by_id=True)
    if args.init:  # continue from a saved draft, its vocabulary filled up to --vocab
        draft, _ = M.load_draft(args.init)
        if args.vocab > draft.n_out:
            full = M.choose_vocab(counts, args.vocab, draft.id_map.tolist(), budget["min_count"], fill_by_id=True)
            draft = M.extend_vocab(draft, full[draft.n_out :], target.model)
        draft.train()
        if draft.kind == "eagle":
            draft.embed.weight.requires_grad_(False)
        id_map = draft.id_map
        args.kind = draft.kind
    elif args.kind == "standalone":
        draft = M.build_standalone(target.model, id_map, args.layers, args.width, args.seed)
    else:
        draft = M.build_eagle(target.model, id_map, args.layers, args.seed, feature_layers=layers)
    if corpus is not None and draft.kind != "standalone":
        raise SystemExit(TOKENS_ONLY)
    tokenizer = target.tokenizer
    del target
    unk = len(id_map)
    items = [prepare(r, draft.to_small, unk) for r in records]
    random.Random(args.seed).shuffle(items)
    n_val = max(1, min(48, len(items) // 20))
    val, train_items = items[:n_val], items[n_val:] or items[:n_val]
    seen = {f.name for f in data.glob("*.pt")}
    noise = 0.0
    if args.kind == "eagle":
        sample = torch.cat([it["feats"][:64].float() for it in train_items[:64]])
        d = draft.config.hidden_size  # one std per layer's block of columns: their scales differ
        noise = 0.1 * sample.unflatten(-1, (-1, d)).std(dim=(0, 2)).repeat_interleave(d)
    steps = args.steps or budget["steps"]
    minutes = args.minutes if args.minutes is not None else 25.0
    lr = args.lr or (1e-3 if args.kind == "standalone" else 6e-4)
    params = [p for p in draft.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
    name = args.name or f"{args.kind}-L{args.layers}-W{args.width if args.kind == 'standalone' else tc.hidden_size}"
    folder = root / "drafts" / name
    best = (-1.0, 0)
    rng = random.Random(args.seed + 1)
    bar = tqdm(range(steps), desc=f"train {name}", unit="step")
    draft.train()
    t0 = time.time()
    for step in bar:
        frac = max(step / steps, (time.time() - t0) / (60 * minutes))
        if frac >= 1.0:
            break
        for g in opt.param_groups:
            g["lr"] = lr * min(1.0, (step + 1) / 20) * 0.5 * (1 + math.cos(math.pi * frac))
        if getattr(args, "grow", False) and step % 50 == 0 and step:  # data still being generated: take it in
            fresh = sorted(f for f in data.glob("*.pt") if f.name not in seen)
            for f in fresh:
                seen.add(f.name)
                recs = select_records(torch.load(f, weights_only=False), getattr(args, "records", "all"))
                train_items += [prepare(r, draft.to_small, unk) for r in recs]
                records += recs
            if fresh:
                tqdm.write(f"step {step}: {len(fresh)} new shard(s), {len(train_items)} training records")
        chunk = rng.sample(train_items, min(args.batch, len(train_items)))
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=getattr(args, "autocast", False)):
            loss, logs = forward_loss(draft, collate(chunk, args.kind, unk), args.kl, noise,
                                      getattr(args, "unroll", 2))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        bar.set_postfix({k: round(v, 3) for k, v in logs.items() if k != "n"})
        last = step + 1 >= steps or (time.time() - t0) >= 60 * minutes
        if (step + 1) % 200 == 0 or last:
            acc = agreement(draft, val, unk)
            tqdm.write(f"step {step + 1}: val top-1 agreement {acc:.3f} ({(time.time() - t0) / 60:.1f} min)")
            if acc > best[0]:
                best = (acc, step + 1)
                M.save_draft(draft, folder, {"val_top1": acc, "step": step + 1})
    if best[0] < 0:  # stopped before the first check: save what there is
        M.save_draft(draft, folder, {"val_top1": agreement(draft, val, unk), "step": 0})
    info = json.loads((folder / "draft.json").read_text())
    info.update({"train_minutes": round((time.time() - start) / 60, 2), "records": len(records), "kl": args.kl,
                 "record_kind": getattr(args, "records", "all"),
                 "source": str(corpus) if corpus else "records", "batch": args.batch, "vocab": len(id_map),
                 "answer_tokens": int(sum(len(r["topk_ids"]) for r in records)), "layers": args.layers,
                 "seed": args.seed, "steps_run": step + 1})
    info["layers"] = draft.config.num_hidden_layers
    (folder / "draft.json").write_text(json.dumps(info, indent=1))
    (folder / "tokens.json").write_text(json.dumps(tokenizer.convert_ids_to_tokens(id_map.tolist())))
    print("train:", name, info)
    return folder
