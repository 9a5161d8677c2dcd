"""``python -m specsim.distill``: build the data, train the drafts, evaluate them.

Stages: ``gen`` (the token corpus under ``data/corpus``: batched, resumable, self-instruct prompts; see
corpus.py), ``featurize`` (training records, the target's features and top-k, recomputed from the corpus),
``agree`` (batched against one-at-a-time greedy), ``train`` (one draft kind), ``eval`` (greedy acceptance
on the held-out prompts), ``all`` (gen, featurize, train and eval in order, with the corpus under ROOT),
``speed`` (end to end through the engine, against prompt lookup and early exit). ``--budget tiny`` makes
every stage a few seconds long, for tests.

On a shared 2-core CPU, one thread per process with passive OpenMP waiting is several times faster than
two spinning threads; ``--threads`` sets the count.
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

from pathlib import Path  # noqa: E402

BUDGETS = {
    # the corpus (answer tokens, seed requests and direct prompts a round, answer length), training steps,
    # the vocabulary's minimum count, held-out prompts and continuation length for eval, speed prompts
    "tiny": dict(gen_tokens=30, gen_seeds=2, gen_direct=2, gen_max_new=6, steps=8, min_count=1,
                 eval_prompts=2, eval_len=8, speed_prompts=2, speed_len=8),
    "full": dict(gen_tokens=3_000_000, gen_seeds=64, gen_direct=48, gen_max_new=160, steps=3000, min_count=2,
                 eval_prompts=0, eval_len=64, speed_prompts=4, speed_len=48),
}


def default_root() -> Path:
    from specsim.core.paths import cache_dir

    return cache_dir() / "distill"


def layer_list(text: str) -> list[int]:
    """``2,15,30`` -> [2, 15, 30] (hidden-state indices, rising)."""
    try:
        layers = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"layer indices separated by commas, e.g. 2,15,30: {text!r}") from None
    if len(layers) < 2 or layers != sorted(set(layers)) or layers[0] < 0:
        raise argparse.ArgumentTypeError(f"two or more rising layer indices, e.g. 2,15,30: {text!r}")
    return layers


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m specsim.distill", description=__doc__.split("\n")[0])
    ap.add_argument("stage", choices=["gen", "featurize", "agree", "train", "eval", "all", "speed"])
    ap.add_argument("--budget", choices=sorted(BUDGETS), default="full")
    ap.add_argument("--root", type=Path, default=None, help="working folder (default ~/.cache/specsim/distill)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--shard", default="0/1",
                    help="i/n: gen writes only the shard numbers of part i of n, so n processes (one core each) "
                    "grow one corpus")
    ap.add_argument("--minutes", type=float, default=None, help="time budget of the stage")
    ap.add_argument("--corpus", type=Path, default=None, help="gen: the token shards (default data/corpus)")
    ap.add_argument("--tokens", type=int, default=None,
                    help="gen: stop at this many answer tokens in the corpus; train --from-corpus: learn from the "
                    "first shards that hold this many")
    ap.add_argument("--gen-batch", type=int, default=64, help="gen: sequences per batched pass")
    ap.add_argument("--max-shards", type=int, default=None,
                    help="gen: stop before this shard number; featurize: only the shards numbered below it")
    ap.add_argument("--with-records", action="store_true",
                    help="gen: also write training records (features, top-k) to ROOT/data from the same passes")
    ap.add_argument("--target-dtype", default="bfloat16", help="gen/featurize: the target's dtype")
    ap.add_argument("--device", default="cpu", help="gen/featurize: cpu, or cuda for a GPU (batch 256-1024 there)")
    ap.add_argument("--kind", choices=["standalone", "eagle"], default="standalone")
    ap.add_argument("--feature-layers", type=layer_list, default=None, metavar="LOW,MID,HIGH",
                    help="featurize/train an EAGLE-3-style draft on fused features: the target's hidden states "
                         "after these layers, the last one its last (e.g. 2,15,30); records go to ROOT/data-L2-15-30")
    ap.add_argument("--name", default=None, help="draft name (folder under ROOT/drafts)")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--batch", type=int, default=8, help="train: records per step")
    ap.add_argument("--records", choices=["all", "greedy", "sampled"], default="all",
                    help="train: which answers to learn from (greedy or sampled generations only, for ablations)")
    ap.add_argument("--dtype", default="float32", help="speed: the target's dtype (float32 or bfloat16)")
    ap.add_argument("--init", type=Path, default=None, help="train: continue from this saved draft folder")
    ap.add_argument("--lr", type=float, default=None, help="train: peak learning rate (default by kind)")
    ap.add_argument("--from-corpus", type=Path, default=None, metavar="DIR",
                    help="train (standalone): learn from the token shards in DIR (e.g. data/corpus), labels = the "
                    "tokens the target wrote; no features or target pass needed")
    ap.add_argument("--grow", action="store_true", help="train: take in new data shards while training")
    ap.add_argument("--autocast", action="store_true", help="train: bfloat16 autocast (faster on CPUs with bf16)")
    ap.add_argument("--unroll", type=int, default=2,
                    help="train (EAGLE-style): steps on the draft's own predicted features (training-time test)")
    ap.add_argument("--kl", type=float, default=0.7, help="weight of the top-k KL term (rest: hard-label CE)")
    ap.add_argument("--drafts", nargs="*", default=None, help="draft folders to evaluate")
    ap.add_argument("--k", type=int, default=5, help="draft chain length in eval")
    ap.add_argument("--ks", default="2,3,4,5", help="speed: the K values to time")
    return ap.parse_args(argv)


def keep_freed_memory() -> bool:
    """Ask glibc to keep freed memory for reuse instead of handing it back to the kernel at once.

    Batched decoding frees and allocates tensors of tens of MB every step, which glibc serves with fresh
    ``mmap`` pages. Set through environment variables before start, this took a one-batch burst from 96 to
    130 answer tokens/s on one thread; called here, at run time, a full round measured the same as before
    (68.8 vs 69.9 tok/s side by side), so it is kept as harmless, not as a proven gain. Returns False
    where there is no glibc.
    """
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if not name:
        return False
    try:
        libc = ctypes.CDLL(name)
        m_trim_threshold, m_top_pad, m_mmap_threshold = -1, -2, -3
        return all(libc.mallopt(opt, val) == 1 for opt, val in (
            (m_mmap_threshold, 32 << 20), (m_trim_threshold, 4 << 30), (m_top_pad, 1 << 30)))
    except (OSError, AttributeError):
        return False


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.stage in ("gen", "featurize", "agree", "all"):
        keep_freed_memory()
    import torch

    torch.set_num_threads(args.threads)
    budget = BUDGETS[args.budget]
    root = args.root or default_root()
    root.mkdir(parents=True, exist_ok=True)
    if args.stage in ("gen", "featurize", "agree", "all"):
        from specsim.distill.stages import run_corpus

        run_corpus(args, budget, root, ("gen", "featurize") if args.stage == "all" else (args.stage,))
    if args.stage in ("train", "all"):
        from specsim.distill.stages import run_train

        run_train(args, budget, root)
    if args.stage in ("eval", "all"):
        from specsim.distill.stages import run_eval

        run_eval(args, budget, root)
    if args.stage == "speed":
        from specsim.distill.speed import run as run_speed

        run_speed(args, budget, root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
