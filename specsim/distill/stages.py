"""The stages of ``python -m specsim.distill``, each reading and writing under one root folder.

    data/corpus/shard-*.npz  the token corpus (see corpus.py; ``all`` writes its own under ROOT/corpus)
    ROOT/data/corpus-*.pt    training records recomputed from it: features, top-k (see corpus.load_records)
    ROOT/drafts/<name>/      a trained draft (see specsim/core/draft_nets.py)
    ROOT/eval/<name>.json    its held-out evaluation (see evaluate.py)
"""

from __future__ import annotations

import json
import random
from argparse import Namespace
from pathlib import Path


def corpus_folder(args: Namespace, root: Path) -> Path:
    """``--corpus``, else the repo's ``data/corpus``; the ``all`` stage uses ROOT/corpus, so a run of the whole
    recipe (the test's) never writes into the repo."""
    from specsim.core.defaults import CORPUS_DIR

    return args.corpus or (root / "corpus" if args.stage == "all" else Path(CORPUS_DIR))


def run_corpus(args: Namespace, budget: dict, root: Path, stages: tuple[str, ...]) -> None:
    """``gen``: grow the token corpus; ``featurize``: records from it; ``agree``: batched vs single greedy,
    and the throughput of one batch. The target is loaded once for all of ``stages``, run in order."""
    import torch

    from specsim.core.models import load_bundled_target
    from specsim.distill import corpus as C

    corpus = corpus_folder(args, root)
    target = load_bundled_target(args.device, args.target_dtype, invariant=False)  # stock kernels: data, not identity
    for stage in stages:
        if stage == "gen":
            plan = C.RoundPlan(seeds=budget["gen_seeds"], direct=budget["gen_direct"],
                               max_new=budget["gen_max_new"], seed_max_new=min(96, 2 * budget["gen_max_new"]),
                               batch=args.gen_batch)
            minutes = args.minutes if args.minutes is not None else 24 * 60
            stats = C.run(target.model, target.tokenizer, corpus, target_tokens=args.tokens or budget["gen_tokens"],
                          minutes=minutes, plan=plan, seed=args.seed, max_shards=args.max_shards,
                          records=root / "data" if args.with_records else None,
                          part=tuple(int(x) for x in args.shard.split("/")))
            print("gen:", json.dumps(stats), flush=True)
        elif stage == "featurize":
            layers = getattr(args, "feature_layers", None)
            print("featurize:", C.featurize(target.model, corpus, C.records_folder(root, layers), args.max_shards,
                                            layers), "shards")
        elif stage == "agree":
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
