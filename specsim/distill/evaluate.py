"""Held-out evaluation of a draft: greedy acceptance of K-token chains, per domain and per position.

For each held-out prompt the target writes its greedy continuation once (cached). Then a chain of K
draft proposals starts at every position i of it, as if the engine had just accepted everything before
i, and stops at the first proposal that differs from the target's token. From the chains:

- position-j acceptance = P(proposal j matches | proposals 1..j-1 matched);
- accepted per chain (chains with all K positions available);
- ``alpha``: accepted over checked proposals, a proposal after the first miss being unchecked
  (what the engine's ``Trace.acceptance_rate`` reports);
- the per-token α whose geometric model (specsim.measure.analytics) gives the same tokens per loop.

A standalone draft that has matched so far is in exactly the state teacher forcing gives it, so its
chains follow from one teacher-forced pass. The EAGLE-style draft continues from its *own* predicted
features, so every chain is really run, from a copy of its KV cache cut at the chain's start.

The draft's cost is not timed here: it is the app's one cost model of a short real run through the engine
(:func:`specsim.measure.profile_timing.run_costs`), so the c written beside α is the c the live page and the bench show.
"""

from __future__ import annotations

import json
import statistics
from argparse import Namespace
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm
from transformers import DynamicCache

from specsim.core.draft_loader import copy_lookup
from specsim.core.models import format_prompt
from specsim.distill.training_prompts import load_heldout


@torch.inference_mode()
def heldout_set(target, n_new: int, limit: int = 0, cache: Path | None = None) -> list[dict]:
    """Per held-out prompt: ids (prompt + greedy continuation), prompt length, domain, target features.

    ``target`` is the loaded target (:class:`~specsim.core.models.LoadedModel`). Each continuation is the app's own
    plain decoding (:func:`specsim.core.engine.plain_generate`, one prompt at a time), so every chain is scored
    against the tokens the engine verifies against, for all ``n_new`` tokens (or up to end-of-text). (Until
    2026-12-03 they came from batched generation, cut where one unpadded pass disagreed, which left some
    prompts with a token or two.) The features are the target's last hidden states from one pass.
    """
    from specsim.core.engine import plain_generate

    if cache is not None and cache.is_file():
        return torch.load(cache, weights_only=False)
    prompts = load_heldout()[: limit or None]
    out = []
    for p in tqdm(prompts, desc="held-out continuations", unit="prompt"):
        prompt_ids = format_prompt(target.tokenizer, p["prompt"])
        answer = list(plain_generate(target, prompt_ids, n_new).generated_ids)
        tokens = torch.tensor(prompt_ids + answer)
        h = target.model.model(input_ids=tokens[None, :-1]).last_hidden_state[0]
        out.append({"id": p["id"], "domain": p["domain"], "tokens": tokens, "prompt_len": len(prompt_ids),
                    "feats": h.float().clone()})
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        torch.save(out, cache)
    return out


@torch.inference_mode()
def with_features(target, items: list[dict], layers: list[int] | None) -> list[dict]:
    """The held-out items with fused features of ``layers`` in place of the last hidden states (EAGLE-3)."""
    if not layers:
        return items
    from specsim.core.drafters import target_features

    out = []
    for item in items:
        tokens = item["tokens"]
        hs = target.model(input_ids=tokens[None, :-1], output_hidden_states=list(layers)).hidden_states
        out.append({**item, "feats": target_features(hs, layers)[0].float().clone()})
    return out


def _first_misses(hits: np.ndarray, k: int) -> list[int]:
    """Accepted length of the chain starting at each i, from a per-position hit vector (teacher forcing)."""
    n = len(hits)
    return [int(next((j for j in range(min(k, n - i)) if not hits[i + j]), min(k, n - i))) for i in range(n)]


@torch.inference_mode()
def chains_standalone(draft, item: dict, k: int, copy=None) -> list[tuple[int, int]]:
    """(accepted, available) for a chain started at every continuation position.

    ``copy`` (a :class:`~specsim.core.drafters.PromptLookupDrafter`): a position where the text so far repeats its
    last few tokens proposes what followed them, as the engine's copying drafter does; a chain that has
    matched so far is still the teacher-forced text, so the same per-position hits give its chains.
    """
    tokens, p = item["tokens"], item["prompt_len"]
    logits = draft(input_ids=tokens[None, :-1]).logits[0]
    pred = draft.id_map[logits[p - 1 :].argmax(-1)]
    if copy is not None:
        ids = tokens.tolist()
        for i in range(len(pred)):
            copied = copy.next_copy(ids[: p + i])
            if copied is not None:
                pred[i] = copied
    hits = (pred == tokens[p:]).numpy()
    n = len(hits)
    return [(a, min(k, n - i)) for i, a in enumerate(_first_misses(hits, k))]


@torch.inference_mode()
def chains_eagle(draft, item: dict, k: int) -> list[tuple[int, int]]:
    """Every chain really run: the draft feeds its own predicted features back in."""
    tokens, p, feats = item["tokens"], item["prompt_len"], item["feats"]
    n = len(tokens) - p
    # Inputs t = 0..L-2: (f_t, x_{t+1}); the output at t proposes x_{t+2}.
    feats = feats.to(draft.embed.weight.dtype)
    h, logits, cache = draft(feats[None], tokens[None, 1 : len(feats) + 1], use_cache=True)
    out = []
    for i in range(n):
        t = p + i - 2  # the last input before the chain: (f_{p+i-2}, x_{p+i-1})
        avail = min(k, n - i)
        if t < 0:
            out.append((0, avail))
            continue
        guess = int(draft.id_map[logits[0, t].argmax()])
        if guess != int(tokens[p + i]):
            out.append((0, avail))
            continue
        accepted, feat = 1, h[:, t : t + 1]
        if accepted < avail:
            c = DynamicCache()
            for li, layer in enumerate(cache.layers):
                c.update(layer.keys[:, :, : t + 1], layer.values[:, :, : t + 1], li)
            while accepted < avail:
                feat, lg, c = draft(feat, torch.tensor([[guess]]), past_key_values=c, use_cache=True)
                guess = int(draft.id_map[lg[0, -1].argmax()])
                if guess != int(tokens[p + i + accepted]):
                    break
                accepted += 1
        out.append((accepted, avail))
    return out


def summarize(chains: list[tuple[int, int]], k: int) -> dict:
    """Position-wise acceptance, accepted per chain, accepted/checked and the fitted per-token α."""
    full = [a for a, av in chains if av == k]
    pos = []
    for j in range(1, k + 1):
        tried = sum(1 for a, av in chains if av >= j and a >= j - 1)
        ok = sum(1 for a, av in chains if av >= j and a >= j)
        pos.append(ok / tried if tried else float("nan"))
    mean_acc = statistics.fmean(full) if full else float("nan")
    checked = sum(a + (1 if a < av else 0) for a, av in chains)
    alpha = sum(a for a, _ in chains) / checked if checked else float("nan")
    return {"chains": len(chains), "position": pos, "accepted_per_chain": mean_acc, "alpha": alpha,
            "alpha_fit": fit_alpha(mean_acc, k)}


def fit_alpha(mean_accepted: float, k: int) -> float:
    """The α with α + α² + ... + α^K = mean accepted (the analytics' geometric model), by Brent's method (scipy);
    0 or 1 where the mean lies outside what any α gives."""
    from scipy.optimize import brentq

    if not np.isfinite(mean_accepted):
        return float("nan")
    if mean_accepted <= 0:
        return 0.0
    if mean_accepted >= k:
        return 1.0
    return float(brentq(lambda a: sum(a**j for j in range(1, k + 1)) - mean_accepted, 0.0, 1.0, xtol=1e-12))


def draft_costs(folder: Path, target, n_new: int = 24) -> dict:
    """The draft's costs as the app measures them: the cost model of a short real run through the engine
    (:func:`specsim.measure.profile_timing.run_costs`), c, v and o in plain one-token target passes (medians)."""
    from specsim.core.trained_drafters import make_drafter
    from specsim.measure.profile_timing import run_costs

    m = run_costs(target, make_drafter(folder, target.model, dtype=target.dtype, device=target.device), n_new=n_new)
    return {"draft_cost": m.draft_cost, "verify_cost": m.verify_cost, "other_cost": m.other_cost,
            "plain_pass_ms": 1e3 * m.plain_pass_s, "k": m.k_max, "noise": m.noise}


def evaluate(draft, items: list[dict], k: int, copy=None) -> dict:
    """Overall, per-domain and per-position results of one draft on the held-out items.

    With ``copy``, a standalone draft is also evaluated as the app ships it, copying repeated text
    (``with_copy``, the same fields); ``overall`` and ``domains`` stay the draft's own."""
    def one(chains) -> dict:
        by_domain: dict[str, list] = {}
        for item in tqdm(items, desc="eval chains", unit="prompt"):
            by_domain.setdefault(item["domain"], []).extend(chains(item))
        every = [c for cs in by_domain.values() for c in cs]
        return {"overall": summarize(every, k), "domains": {d: summarize(c, k) for d, c in by_domain.items()}}

    if draft.kind != "standalone":
        return {"k": k, **one(lambda item: chains_eagle(draft, item, k))}
    res = {"k": k, **one(lambda item: chains_standalone(draft, item, k))}
    if copy is not None:
        res["with_copy"] = one(lambda item: chains_standalone(draft, item, k, copy))
    return res


def run(args: Namespace, budget: dict, root: Path) -> None:
    from specsim.core.draft_nets import load_draft
    from specsim.core.models import load_bundled_target

    target = load_bundled_target("cpu")  # the app's default dtype on the CPU
    dtype = str(target.dtype).removeprefix("torch.")
    items = heldout_set(target, budget["eval_len"], budget["eval_prompts"],
                        root / "eval" / f"heldout-plain-{budget['eval_len']}-{budget['eval_prompts']}-{dtype}.pt")
    folders = [Path(f) for f in args.drafts] if args.drafts else sorted((root / "drafts").glob("*/"))
    for folder in folders:
        draft, _ = load_draft(folder, dtype=target.dtype)  # the draft runs in the target's dtype, as in the app
        fused = with_features(target.model, items, getattr(draft, "feature_layers", None))
        res = evaluate(draft, fused, args.k, copy=copy_lookup(target))  # the lookup the app's drafter copies with
        res["cost"] = draft_costs(folder, target, n_new=max(8, budget["speed_len"] // 2))
        res["draft"] = folder.name
        res["target_dtype"] = dtype
        (root / "eval").mkdir(parents=True, exist_ok=True)
        (root / "eval" / f"{folder.name}.json").write_text(json.dumps(res, indent=1))
        o = res["overall"]
        print(f"{folder.name}: pos {[round(x, 3) for x in o['position']]} acc/chain {o['accepted_per_chain']:.2f} "
              f"alpha {o['alpha']:.3f} alpha_fit {o['alpha_fit']:.3f} "
              f"c {res['cost']['draft_cost']:.3f} (cost model, plain pass {res['cost']['plain_pass_ms']:.1f} ms)")
        if "with_copy" in res:
            o = res["with_copy"]["overall"]
            print(f"{folder.name}, copying repeated text: pos {[round(x, 3) for x in o['position']]} "
                  f"acc/chain {o['accepted_per_chain']:.2f} alpha {o['alpha']:.3f}")
