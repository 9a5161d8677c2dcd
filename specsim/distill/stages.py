"""The stages of ``python -m specsim.distill``, each reading and writing under one root folder.

    ROOT/data/*.pt          shards of records (see data.py)
    ROOT/drafts/<name>/     a trained draft (see draft_model.py)
    ROOT/eval/<name>.json   its held-out evaluation (see evaluate.py)
"""

from __future__ import annotations

import json
import random
import time
from argparse import Namespace
from pathlib import Path


def _target():
    from specsim.models import load_bundled_target

    return load_bundled_target("cpu", "float32")


def run_data(args: Namespace, budget: dict, root: Path) -> None:
    from specsim.distill import data as D
    from specsim.distill import prompts as P

    i, n = (int(x) for x in args.shard.split("/"))
    out = root / "data"
    out.mkdir(parents=True, exist_ok=True)
    minutes = args.minutes if args.minutes is not None else budget["minutes"]
    deadline = time.time() + 60 * minutes
    start = time.time()
    target = _target()
    rng = random.Random(args.seed)
    texts = D.build_prompts(rng, budget["n_template"], budget["n_stdlib"], budget.get("n_family", 0))[i::n]
    n_self = max(1, budget["n_self"] // n)
    rng_self = random.Random(args.seed * 1000 + i)
    selfs = [] if args.forced_only else D.self_prompts(target.model, target.tokenizer, rng_self, n_self,
                                                        args.seed + i, deadline, max_new=min(48, 4 * budget["max_new"]))
    texts = [] if args.forced_only else texts + selfs
    temps = D.mix_temperatures(random.Random(args.seed + 17 * i), len(texts), greedy_share=0.5)
    recs = D.answer_prompts(target.model, target.tokenizer, texts, temps=temps, max_new=budget["max_new"],
                            top_k=32, batch_size=budget["batch"], seed=args.seed + i, max_prompt=400,
                            deadline=deadline, out_dir=out, desc=f"answers-s{args.seed}-{i}of{n}")
    if budget.get("n_forced", 0) and time.time() < deadline:
        pairs = P.reference_pairs(random.Random(args.seed), budget["n_forced"])[i::n]
        recs += D.teacher_force(target.model, target.tokenizer, pairs, answer_len=128, batch_size=8,
                                deadline=deadline, out_dir=out, desc=f"forced-s{args.seed}-{i}of{n}")
    n_tok = sum(len(r["topk_ids"]) for r in recs)
    info = {"shard": args.shard, "prompts": len(recs), "self_prompts": len(selfs), "answer_tokens": n_tok,
            "minutes": round((time.time() - start) / 60, 2)}
    (out / f"info-s{args.seed}-{i}of{n}.json").write_text(json.dumps(info, indent=1))
    print("data:", info)


def run_corpus(args: Namespace, budget: dict, root: Path) -> None:
    """``gen``: grow the token corpus; ``featurize``: records from it; ``agree``: batched vs single greedy,
    and the throughput of one batch."""
    import torch

    from specsim.defaults import CORPUS_DIR
    from specsim.distill import corpus as C
    from specsim.models import load_bundled_target

    corpus = args.corpus or Path(CORPUS_DIR)
    target = load_bundled_target(args.device, args.target_dtype, invariant=False)  # stock kernels: data, not identity
    if args.stage == "gen":
        plan = C.RoundPlan(seeds=budget["gen_seeds"], direct=budget["gen_direct"], max_new=budget["gen_max_new"],
                           seed_max_new=min(96, 2 * budget["gen_max_new"]), batch=args.gen_batch)
        minutes = args.minutes if args.minutes is not None else 24 * 60
        stats = C.run(target.model, target.tokenizer, corpus, target_tokens=args.tokens or budget["gen_tokens"],
                      minutes=minutes, plan=plan, seed=args.seed, max_shards=args.max_shards,
                      records=root / "data" if args.with_records else None,
                      part=tuple(int(x) for x in args.shard.split("/")))
        print("gen:", json.dumps(stats), flush=True)
    elif args.stage == "featurize":
        print("featurize:", C.featurize(target.model, corpus, root / "data"), "shards")
    else:
        from specsim.distill import instruct as I

        rng = random.Random(args.seed)
        texts = [t for _, t in I.direct_prompts(rng, 6)] + [s.text for s in I.seed_requests(rng, 6)]
        print("agree:", json.dumps(C.agreement(target.model, target.tokenizer, texts, budget["gen_max_new"])))
        recs = sorted((root / "data").glob("corpus-*.pt"))
        if recs:
            sample = torch.load(recs[-1], weights_only=False)[::12]
            print("labels:", json.dumps(C.label_agreement(target.model, sample)))
        burst = [t for _, t in I.direct_prompts(rng, args.gen_batch)]
        print("burst:", json.dumps(C.burst(target.model, target.tokenizer, burst, budget["gen_max_new"])))


def run_train(args: Namespace, budget: dict, root: Path) -> None:
    from specsim.distill import train as T

    T.run(args, budget, root)


def run_eval(args: Namespace, budget: dict, root: Path) -> None:
    from specsim.distill import evaluate as E

    E.run(args, budget, root)
