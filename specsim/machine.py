"""Settings measured on this machine, not assumed: the decode path, v(n), the draft's cost and the best K.

Hosts change from day to day (an Intel Xeon one time, an AMD EPYC the next), and which dtype decodes
fastest, or how steep v(n) is, changes with them. So on the first run on a machine (``make run`` does
it before the app starts, ``python -m specsim.machine`` by hand) this module:

1. times one-token target passes on each candidate path, interleaved, medians (STYLE.md):
   bfloat16 with the position-invariant path (the only one that guarantees greedy identity), stock
   bfloat16 and stock float32;
2. picks the fastest path that guarantees identity, and names the runner-up and what it costs;
3. measures v(n) for n = 1 .. K_MAX + 1 on that path, and the default draft's c from one short real
   run read through the cost model (:mod:`specsim.costmodel`);
4. picks the default drafter's best K from the closed form with the draft's held-out α, that c and
   v(K + 1): argmax over K of (1 − α^(K+1)) / (1 − α) ÷ (K·c + v(K + 1)).

The result is cached as JSON under the specsim cache, keyed by CPU model, thread count and library
versions; a later run on the same machine reads it back in milliseconds.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from specsim import analytics
from specsim.defaults import COPY_NGRAM, DEFAULT_DRAFT, DEFAULT_DRAFTER, DEFAULT_K, K_MAX, K_MIN

PATHS = (("bfloat16", True), ("bfloat16", False), ("float32", False))
"""Candidate target paths: (dtype, position-invariant). Only the invariant path guarantees identity."""


def path_name(dtype: str, invariant: bool) -> str:
    return f"{dtype}, {'position-invariant' if invariant else 'stock kernels'}"


@dataclass(frozen=True)
class Profile:
    """What was measured on one machine, and the settings chosen from it."""

    key: str
    machine: str
    threads: int
    one_token_ms: dict[str, float]  # median one-token pass per path name
    chosen: str  # the fastest path that guarantees greedy identity
    v: dict[int, float]  # v(n) on the chosen path, n = 1 .. K_MAX + 1
    draft_alpha: float  # the default draft's held-out α (its heldout_eval.json)
    draft_cost: float  # c, measured through the cost model on the chosen path
    best_k: int
    speedup_by_k: dict[int, float] = field(default_factory=dict)  # the closed form at each K

    @property
    def runner_up(self) -> tuple[str, float] | None:
        """The fastest other path and its one-token pass relative to the chosen one."""
        others = {n: ms for n, ms in self.one_token_ms.items() if n != self.chosen}
        if not others:
            return None
        name = min(others, key=others.get)
        return name, others[name] / self.one_token_ms[self.chosen]

    def k_sentence(self) -> str:
        """Why the live page starts at its K."""
        return (f"K starts at {self.best_k}, the best K for the default draft on this machine: with that draft's "
                f"held-out acceptance as the app runs it ({self.draft_alpha:.2f}), its cost "
                f"measured here ({self.draft_cost:.3f} target passes per guess) and this machine's pass over K + 1 "
                f"tokens ({self.v[self.best_k + 1]:.2f} one-token passes), the closed form gives "
                f"{self.speedup_by_k[self.best_k]:.2f}×. Real runs usually measure less: the closed form keeps every "
                "guess with the same chance, but a loop often starts just after a rejection, where guessing is harder.")

    def path_sentence(self) -> str:
        """Which path runs and why, with the runner-up."""
        text = (f"{self.chosen}: the fastest path here that guarantees greedy identity (one-token pass "
                f"{self.one_token_ms[self.chosen]:.1f} ms)")
        runner = self.runner_up
        if runner is not None:
            text += f"; runner-up {runner[0]} at {runner[1]:.2f}× its time, without the guarantee"
        return text + "."

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1)

    @classmethod
    def from_json(cls, text: str) -> Profile:
        data = json.loads(text)
        data["v"] = {int(n): x for n, x in data["v"].items()}
        data["speedup_by_k"] = {int(k): x for k, x in data["speedup_by_k"].items()}
        return cls(**data)


def profile_key(threads: int | None = None) -> str:
    """CPU model, thread count, library versions, the fused kernels' build and the default draft (its α and c
    pick the best K): what a measurement depends on."""
    import transformers

    from specsim.fused import extension_name
    from specsim.host import machine_name

    threads = threads or torch.get_num_threads()
    return (f"{machine_name()} | {threads} threads | torch {torch.__version__} | "
            f"transformers {transformers.__version__} | {extension_name()} | draft {draft_identity()}")


def draft_identity(draft: str | None = None) -> str:
    """The draft's folder name, a digest of its ``draft.json`` (training steps, validation score) and how it
    copies repeated text, so a draft retrained under the same name, or copying differently, is measured afresh."""
    import hashlib

    draft = draft or DEFAULT_DRAFT
    try:
        digest = hashlib.sha256((Path(draft) / "draft.json").read_bytes()).hexdigest()[:12]
    except OSError:
        digest = "no draft.json"
    return f"{Path(draft).name} {digest} copy {COPY_NGRAM[0]}-{COPY_NGRAM[1]}"


def cache_file(key: str) -> Path:
    from specsim.paths import cache_dir

    return cache_dir() / f"machine-{hashlib.sha1(key.encode()).hexdigest()[:12]}.json"


def cached() -> Profile | None:
    """This machine's profile when it has been measured, else None (never measures)."""
    path = cache_file(profile_key())
    try:
        return Profile.from_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def default_k() -> tuple[int, str]:
    """The live page's starting K, and one sentence on why: the measured best K when this machine has a
    profile, else the lesson's K."""
    profile = cached()
    if profile is not None:
        return profile.best_k, profile.k_sentence()
    return DEFAULT_K, (f"K = {DEFAULT_K} is the lesson's example. This machine's best K has not been measured yet: "
                       "`make run` measures it once (or run `python -m specsim.machine`).")


def best_k(alpha: float, draft_cost: float, v: dict[int, float]) -> tuple[int, dict[int, float]]:
    """argmax over K of tokens per loop ÷ (K·c + v(K + 1)), the smallest K on a tie; and every K's value."""
    ks = [k for k in range(K_MIN, K_MAX + 1) if k + 1 in v]
    values = {k: float(analytics.speedup(alpha, k, draft_cost, max(1.0, v[k + 1]))) for k in ks}
    return max(ks, key=lambda k: (values[k], -k)), values


def heldout_alpha(draft: str = DEFAULT_DRAFT, copy: bool = True) -> float:
    """The draft's held-out α from the evaluation saved beside it: as the app runs it (copying repeated text, where
    its evaluation measured that), or with ``copy=False`` the draft model's own guesses alone."""
    result = json.loads((Path(draft) / "heldout_eval.json").read_text(encoding="utf-8"))
    return float((result.get("with_copy", result) if copy else result)["overall"]["alpha"])


COST_PROMPT = "Write a short paragraph about a lighthouse keeper during a storm."
"""The prompt of the short real run that measures a drafter's costs (a held-out-style task, not a training one)."""


def run_costs(target, drafter, k: int = DEFAULT_K, n_new: int = 24, prompt: str = COST_PROMPT):
    """The cost model (:class:`specsim.costmodel.CostModel`: c, v and o in plain passes) of one short real run
    of ``drafter`` against plain decoding of the same prompt, after an untimed warm-up of both."""
    from specsim.costmodel import cost_model
    from specsim.engine import plain_generate, speculative_generate
    from specsim.models import format_prompt

    ids = format_prompt(target.tokenizer, prompt)
    speculative_generate(target, drafter, ids, k, 4)  # warm-up
    plain_generate(target, ids, 4)
    spec = speculative_generate(target, drafter, ids, k, n_new)
    plain = plain_generate(target, ids, spec.n_generated)
    return cost_model([spec], [plain])


def measure(repeats: int = 5, log=print) -> Profile:
    """Measure this machine (see the module docstring); a few tens of seconds."""
    from specsim.methods import build_drafter
    from specsim.models import load_bundled_target
    from specsim.passcost import measure_pass_costs

    targets = {path_name(d, inv): load_bundled_target("cpu", d, invariant=inv) for d, inv in PATHS}
    samples: dict[str, list[float]] = {name: [] for name in targets}
    for _ in range(repeats):  # interleaved: a burst of load hits every path alike
        for name, target in targets.items():
            samples[name].append(measure_pass_costs(target, ns=(1,), repeats=3, warmup=1).seconds[1])
    one_token_ms = {name: 1e3 * statistics.median(s) for name, s in samples.items()}
    guaranteed = [name for name, t in targets.items() if t.invariant]
    chosen = min(guaranteed, key=one_token_ms.get)
    target = targets[chosen]
    log("one-token pass: " + ", ".join(f"{n} {ms:.1f} ms" for n, ms in one_token_ms.items()))
    v = measure_pass_costs(target, ns=tuple(range(1, K_MAX + 2)), repeats=repeats, warmup=1)
    v_of_n = {n: v.v(n) for n in v.seconds}
    c = run_costs(target, build_drafter(DEFAULT_DRAFTER, target, DEFAULT_DRAFT)).draft_cost
    alpha = heldout_alpha()
    k, values = best_k(alpha, c, v_of_n)
    return Profile(key=profile_key(), machine=profile_key().split(" | ")[0], threads=torch.get_num_threads(),
                   one_token_ms=one_token_ms, chosen=chosen, v=v_of_n, draft_alpha=alpha, draft_cost=c, best_k=k,
                   speedup_by_k=values)


def load_or_measure(log=print) -> Profile:
    """The cached profile, or a new measurement written to the cache."""
    profile = cached()
    if profile is None:
        profile = measure(log=log)
        path = cache_file(profile.key)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(profile.to_json(), encoding="utf-8")
    return profile


def format_profile(p: Profile) -> str:
    """The choice and the table behind it, for the CLI and the bench."""
    lines = [f"machine: {p.key}", "one-token target pass (median, interleaved):"]
    lines += [f"  {name:38s} {ms:7.1f} ms" for name, ms in p.one_token_ms.items()]
    lines.append(f"chosen: {p.path_sentence()}")
    ns = sorted(p.v)
    lines.append("n new tokens  " + " ".join(f"{n:5d}" for n in ns))
    lines.append("v(n)          " + " ".join(f"{p.v[n]:5.2f}" for n in ns))
    ks = sorted(p.speedup_by_k)
    lines.append("K             " + " ".join(f"{k:5d}" for k in ks))
    lines.append("closed form   " + " ".join(f"{p.speedup_by_k[k]:5.2f}" for k in ks))
    lines.append(p.k_sentence())
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m specsim.machine", description=__doc__.splitlines()[0])
    parser.add_argument("--again", action="store_true", help="measure even when a cached profile exists")
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.again:
        cache_file(profile_key()).unlink(missing_ok=True)
    print(format_profile(load_or_measure()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
