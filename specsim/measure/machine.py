"""Settings measured on this machine, not assumed: the decode path, v(n), the draft's cost and the best K.

Hosts change from day to day (an Intel Xeon one time, an AMD EPYC the next), and which dtype decodes
fastest, or how steep v(n) is, changes with them. So on the first run on a machine (``make run`` does
it before the app starts, ``python -m specsim.measure.machine`` by hand) this module:

1. times one-token target passes on each candidate path, interleaved, medians (docs/timing.md):
   bfloat16 with the position-invariant path (the only one that guarantees greedy identity), stock
   bfloat16 and stock float32;
2. picks the fastest path that guarantees identity, and names the runner-up and what it costs;
3. measures v(n) for n = 1 .. K_MAX + 1 on that path in shuffled rounds, each round's passes divided by that
   round's one-token pass, until the 95 % interval of every v(n) lies within ±5 % of its median (or a time cap:
   then the profile says it is noisy), and fits the medians monotone (a pass over more tokens never costs less);
4. runs the default drafter for real, greedy, at every K of :data:`PROFILE_KS` on held-out prompts the bench's
   check does not use, each prompt's plain run beside them and the Ks in shuffled order. Greedy runs are
   deterministic, so tokens per loop at each K is exact, not a sample; drafting and bookkeeping per loop come
   from the cost model (:mod:`specsim.measure.costmodel`) of those runs, and v(K + 1) from the fitted curve;
5. picks the K whose predicted speedup t ÷ (K·c + v(K + 1) + o) is highest. No i.i.d. α is plugged in: real
   runs keep fewer guesses than the closed form says, because acceptance rises along the draft and loops
   start right after a rejection.

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

from specsim.core import environment
from specsim.core.defaults import COPY_NGRAM, DEFAULT_DRAFT, DEFAULT_DRAFTER, DEFAULT_K, K_MAX
from specsim.measure import analytics, flags
from specsim.measure.profile_timing import (
    PROFILE_KS,
    PROFILE_TREES,
    SPREAD_GOAL,
    chains,
    draft_cost_interval,
    position_rates,
    predicted_speedups,
    profile_prompts,
    speedup_noise,
    time_runs,
    time_v,
    tree_key,
    tree_noise,
    trees_of,
)

PROFILE_VERSION = 4  # 2: K from real runs, v(n) timed to ±5 % and fitted monotone; 3: the cheapest K within noise;
# 4: token trees timed beside the chains, the best setting chosen among both

PATHS = (("bfloat16", True), ("bfloat16", False), ("float32", False))
"""Candidate target paths on the CPU: (dtype, position-invariant). Only the invariant path guarantees identity."""
GPU_PATHS = (("bfloat16", False), ("float32", False))
"""On a GPU: its kernels only (the invariant path is CPU code), so none guarantees identity."""


def paths_for(device: str) -> tuple[tuple[str, bool], ...]:
    return GPU_PATHS if device.startswith("cuda") else PATHS


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
    draft_alpha: float  # acceptance the default drafter measured in the profile's real runs (checked slots kept)
    draft_cost: float  # c, measured through the cost model on the chosen path
    best_k: int
    speedup_by_k: dict[int, float] = field(default_factory=dict)  # the prediction at each K the choice was made from
    v_spread: dict[int, float] = field(default_factory=dict)  # each v(n)'s 95 % interval, ± share of its median
    draft_cost_spread: float = 0.0  # c's 95 % interval, ± share of c
    rounds: int = 0  # shuffled rounds the v(n) timing took
    noisy: str = ""  # why the timings did not settle within ±5 % before the time cap ("" when they did)
    tokens_per_loop_by_k: dict[int, float] = field(default_factory=dict)  # exact, from the greedy runs
    alpha_by_position: list[float] = field(default_factory=list)  # P(kept | checked) at draft positions 1, 2, ...
    prompts: int = 0  # held-out prompts the runs used
    device: str = "cpu"  # where it was measured: the device the app runs its models on
    speedup_noise: dict[int, float] = field(default_factory=dict)  # each prediction's 95 % interval, ± share
    within_noise: list[int] = field(default_factory=list)  # the Ks the measurement cannot tell from the best
    # token trees, by their guesses: predicted speedup, its 95 % interval (± share), tokens per loop, depth
    speedup_by_tree: dict[int, float] = field(default_factory=dict)
    tree_noise: dict[int, float] = field(default_factory=dict)
    tokens_per_loop_by_tree: dict[int, float] = field(default_factory=dict)
    tree_depths: dict[int, int] = field(default_factory=dict)
    best_setting: str = ""  # the choice among chains and trees: "K=2" or "tree 12" ("": measured before trees)
    settings_within_noise: list[str] = field(default_factory=list)  # the settings it cannot tell from the best

    @property
    def runner_up(self) -> tuple[str, float] | None:
        """The fastest other path and its one-token pass relative to the chosen one."""
        others = {n: ms for n, ms in self.one_token_ms.items() if n != self.chosen}
        if not others:
            return None
        name = min(others, key=others.get)
        return name, others[name] / self.one_token_ms[self.chosen]

    def k_sentence(self) -> str:
        """Why the live page starts at its K, quoting the figures the choice was made from."""
        if not self.tokens_per_loop_by_k:  # a profile measured before the runs existed
            return (f"K starts at {self.best_k}, the best K the closed form gives for the default draft on this "
                    "machine (measured before real runs decided it; "
                    "`python -m specsim.measure.machine --again` measures "
                    "it afresh).")
        others = ", ".join(f"K = {k}: {x:.2f}×" for k, x in sorted(self.speedup_by_k.items()) if k != self.best_k)
        rates = self.alpha_by_position
        positions = " / ".join(f"{a:.2f}" for a in rates)
        rising = len(rates) > 1 and all(a < b for a, b in zip(rates[:-1], rates[1:], strict=True))
        trend = "rising along the draft" if rising else "not one α for every slot"
        tied = [k for k in self.within_noise if k != self.best_k]
        choice = ("the best K for the default drafter on this machine" if not tied else
                  f"the smallest of the Ks whose predicted speedups this measurement cannot tell apart "
                  f"(K = {', '.join(str(k) for k in sorted(self.within_noise))}, each known to within ±"
                  f"{max(self.speedup_noise.get(k, 0.0) for k in self.within_noise):.0%}, none predicted more than "
                  f"{analytics.TIE_LOSS:.0%} below the best): it drafts the fewest "
                  "guesses per loop, so the least drafting time goes on guesses the target throws away")
        text = (f"K starts at {self.best_k}, {choice}. Run for real on "
                f"{self.prompts} held-out prompts, it kept {self.draft_alpha:.0%} of the guesses the target checked "
                f"(by draft position: {positions}, {trend}) and wrote "
                f"{self.tokens_per_loop_by_k[self.best_k]:.2f} tokens per loop at K = {self.best_k}. With its drafting "
                f"({self.draft_cost:.3f} target passes per guess) and a pass over {self.best_k + 1} tokens "
                f"({self.v[self.best_k + 1]:.2f} one-token passes) timed here, the cost model predicts "
                f"{self.speedup_by_k[self.best_k]:.2f}× ({others}).")
        if self.noisy and not tied:
            text += f" The timings were noisy ({self.noisy}), so neighbouring Ks may be as good."
        return text + self.tree_sentence()

    def tree_sentence(self) -> str:
        """Where token trees stand against the chains on this machine, and which setting it chose among both."""
        if not self.speedup_by_tree or not self.best_setting:
            return ""
        timed = ", ".join(f"{n} guesses {s:.2f}×" for n, s in sorted(self.speedup_by_tree.items()))
        text = f" Token trees were timed beside the chains ({timed})"
        tied = [s for s in self.settings_within_noise if s != self.best_setting]
        if self.best_setting.startswith("tree"):
            n = int(self.best_setting.split()[1])
            text += (f": the best setting here is a tree of {n} guesses, {self.tree_depths.get(n, 0)} levels deep "
                     f"({self.speedup_by_tree[n]:.2f}× predicted, against {self.speedup_by_k[self.best_k]:.2f}× for "
                     f"K = {self.best_k}); pick the K policy \"a token tree of alternative guesses\" on the live page "
                     "to run it.")
        else:
            text += f"; the choice here is a chain, {setting_label(self.best_setting)}" + (
                "." if any(s.startswith("tree") for s in tied) else
                ": the trees' wider passes cost more here than their extra tokens bring.")
        if tied:
            text += (f" The measurement cannot tell it from {', '.join(setting_label(s) for s in tied)}; it took the "
                     "one with the narrowest verification pass.")
        return text

    def path_sentence(self) -> str:
        """Which path runs and why, with the runner-up."""
        if self.device.startswith("cuda"):
            text = (f"{self.chosen} on the GPU ({self.machine}): the path the app runs there (one-token pass "
                    f"{self.one_token_ms[self.chosen]:.1f} ms); on a GPU no path guarantees greedy identity, since "
                    "the position-invariant kernels are CPU code")
            runner = self.runner_up
            if runner is not None:
                text += f"; {runner[0]} at {runner[1]:.2f}× its time"
            return text + "."
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
        """pydantic reads it by the annotations (JSON's string keys become the ints of ``v`` and the K tables)."""
        from pydantic import TypeAdapter

        return TypeAdapter(cls).validate_json(text)


def profile_key(threads: int | None = None, device: str | None = None) -> str:
    """The machine's identity (:func:`specsim.core.cpu.machine_id`: CPU, GPU where the app uses one, threads, torch),
    then the profile's version, transformers, the fused kernels' build, which decode-pass path runs
    (:mod:`specsim.core.target_pass`) and the default draft (its α and c pick the best K): what a measurement
    depends on."""
    import transformers

    from specsim.core.cpu import machine_id
    from specsim.core.fused import extension_name
    from specsim.core.models import default_device

    passes = "transformers passes" if environment.current().no_target_pass else "one-call passes"
    return (f"{machine_id(device or default_device(), threads)} | profile {PROFILE_VERSION} | "
            f"transformers {transformers.__version__} | {extension_name()} | {passes} | draft {draft_identity()}")


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
    from specsim.core.paths import cache_dir

    return cache_dir() / f"machine-{hashlib.sha1(key.encode()).hexdigest()[:12]}.json"


def cached(device: str | None = None) -> Profile | None:
    """This machine's profile (for ``device``, default the one the app uses) when it has been measured, else None
    (never measures)."""
    path = cache_file(profile_key(device=device))
    try:
        return Profile.from_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def default_k(profile: Profile | None = None) -> tuple[int, str]:
    """The live page's starting K, and one sentence on why: the measured best K of ``profile`` (default: this
    machine's, when it has been measured), else the lesson's K."""
    profile = profile or cached()
    if profile is not None:
        return profile.best_k, profile.k_sentence()
    return DEFAULT_K, (f"K = {DEFAULT_K} is the lesson's example. This machine's best K has not been measured yet: "
                       "`make run` measures it once (or run `python -m specsim.measure.machine`).")


def heldout_alpha(draft: str = DEFAULT_DRAFT, copy: bool = True) -> float:
    """The draft's held-out α from the evaluation saved beside it: as the app runs it (copying repeated text, where
    its evaluation measured that), or with ``copy=False`` the draft model's own guesses alone."""
    result = json.loads((Path(draft) / "heldout_eval.json").read_text(encoding="utf-8"))
    return float((result.get("with_copy", result) if copy else result)["overall"]["alpha"])


def heldout_chain_k(draft: str = DEFAULT_DRAFT) -> int:
    """The K of the chains the held-out α of :func:`heldout_alpha` counts (one chain started at every position)."""
    return int(json.loads((Path(draft) / "heldout_eval.json").read_text(encoding="utf-8"))["k"])


def measure(repeats: int = 5, log=print, device: str | None = None) -> Profile:
    """Measure this machine (see the module docstring) on ``device`` (default: the one the app uses, CUDA where
    present); about two minutes on two CPU cores."""
    import torch

    from specsim.core.cpu import device_name
    from specsim.core.models import default_device, default_dtype, load_bundled_target
    from specsim.core.trace import pooled_acceptance_rate, pooled_tokens_per_pass
    from specsim.measure.passcost import measure_pass_costs
    from specsim.methods import build_drafter

    log("Measuring this machine once (about two minutes): decode paths, v(n), then real runs at "
        f"K = {min(PROFILE_KS)}..{max(PROFILE_KS)} and trees of {PROFILE_TREES[0][0]}..{PROFILE_TREES[-1][0]} guesses")
    device = device or default_device()
    targets = {path_name(d, inv): load_bundled_target(device, d, invariant=inv) for d, inv in paths_for(device)}
    samples: dict[str, list[float]] = {name: [] for name in targets}
    for _ in range(repeats):  # interleaved: a burst of load hits every path alike
        for name, target in targets.items():
            samples[name].append(measure_pass_costs(target, ns=(1,), repeats=3, warmup=1).seconds[1])
    one_token_ms = {name: 1e3 * statistics.median(s) for name, s in samples.items()}
    if device.startswith("cuda"):  # nothing guarantees identity there: time the path the app runs
        chosen = path_name(str(default_dtype(device)).removeprefix("torch."), False)
    else:
        chosen = min((name for name, t in targets.items() if t.invariant), key=one_token_ms.get)
    target = targets[chosen]
    log("one-token pass: " + ", ".join(f"{n} {ms:.1f} ms" for n, ms in one_token_ms.items()))
    timing = time_v(target, tuple(range(1, K_MAX + 2)), log=log)
    log(f"v(n) after {timing.rounds} rounds: " + " ".join(f"{timing.v[n]:.2f}" for n in sorted(timing.v)[1:9]) + " …")
    drafter = build_drafter(DEFAULT_DRAFTER, target, DEFAULT_DRAFT)
    prompts = profile_prompts()
    runs, plain = time_runs(target, drafter, prompts, log=log, trees=PROFILE_TREES)
    spec, tree_runs = chains(runs), trees_of(runs)
    c, c_spread = draft_cost_interval(spec, plain)
    predicted = predicted_speedups(spec, plain, timing.v)
    noise = speedup_noise(c, c_spread, timing.v, timing.spread, predicted)
    by_tree = predicted_speedups(tree_runs, plain, timing.v)  # a tree's v is its pass's: guesses + 1 tokens
    t_noise = tree_noise(tree_runs, plain, c_spread, timing.v, timing.spread)
    k, chain_ties, setting, tied = choose(predicted, noise, by_tree, t_noise)
    noisy = timing.noisy or ("" if c_spread <= SPREAD_GOAL else f"the draft cost still ±{c_spread:.0%}")
    return Profile(key=profile_key(device=device), machine=device_name(device), threads=torch.get_num_threads(),
                   one_token_ms=one_token_ms, chosen=chosen, v=timing.v, draft_alpha=pooled_acceptance_rate(spec[k]),
                   draft_cost=c, best_k=k, speedup_by_k=predicted, v_spread=timing.spread,
                   draft_cost_spread=c_spread, rounds=timing.rounds, noisy=noisy, speedup_noise=noise,
                   within_noise=chain_ties,
                   tokens_per_loop_by_k={kk: pooled_tokens_per_pass(runs) for kk, runs in spec.items()},
                   alpha_by_position=position_rates(spec),
                   prompts=len(prompts), device=device, speedup_by_tree=by_tree, tree_noise=t_noise,
                   tokens_per_loop_by_tree={n: pooled_tokens_per_pass(r) for n, r in tree_runs.items()},
                   tree_depths=dict(PROFILE_TREES), best_setting=setting, settings_within_noise=tied)


def load_or_measure(log=print, device: str | None = None) -> Profile:
    """The cached profile, or a new measurement written to the cache."""
    profile = cached(device)
    if profile is None:
        profile = measure(log=log, device=device)
        path = cache_file(profile.key)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(profile.to_json(), encoding="utf-8")
    return profile


def setting_label(key: str) -> str:
    """ "K=2" → "K = 2", "tree 12" → "a tree of 12 guesses"."""
    return f"a tree of {key.split()[1]} guesses" if key.startswith("tree") else key.replace("=", " = ")


def choose_setting(predicted: dict[str, float], noise: dict[str, float]) -> tuple[str, list[str]]:
    """The setting to run among chains ("K=2") and trees ("tree 12") and those the measurement cannot tell from the
    best (narrowest pass first): every setting whose 95 % interval reaches the best one's and whose prediction is at
    most :data:`specsim.measure.analytics.TIE_LOSS` below it. Of those it takes the narrowest verification pass
    (K + 1 tokens, or a tree's guesses + 1), a chain on a tie: the least arithmetic spent on guesses."""
    def width(key: str) -> tuple[int, bool]:
        return int(key.replace("=", " ").split()[1]) + 1, key.startswith("tree")

    tied = sorted(analytics.within_noise(predicted, noise), key=width)  # the chains' rule, over every setting
    return tied[0], tied


def choose(by_k: dict[int, float], k_noise: dict[int, float], by_tree: dict[int, float],
           t_noise: dict[int, float]) -> tuple[int, list[int], str, list[str]]:
    """(the live page's K, the Ks tied with it, the setting chosen among chains and trees, the settings tied with
    it). Where the choice is a chain, the page's K is that chain: a tree ahead of every chain lifts the floor a
    chain's tie must reach."""
    setting, tied = choose_setting({**{f"K={k}": s for k, s in by_k.items()},
                                    **{tree_key(n): s for n, s in by_tree.items()}},
                                   {**{f"K={k}": x for k, x in k_noise.items()},
                                    **{tree_key(n): x for n, x in t_noise.items()}})
    if setting.startswith("K="):
        return int(setting[2:]), sorted(int(s[2:]) for s in tied if s.startswith("K=")), setting, tied
    return analytics.cheapest_k(by_k, k_noise), list(analytics.within_noise(by_k, k_noise)), setting, tied


def format_profile(p: Profile) -> str:
    """The choice and the table behind it, for the CLI and the bench."""
    lines = [f"machine: {p.key}", "one-token target pass (median, interleaved):"]
    lines += [f"  {name:38s} {ms:7.1f} ms" for name, ms in p.one_token_ms.items()]
    lines.append(f"chosen: {p.path_sentence()}")
    ns = sorted(p.v)
    lines.append("n new tokens  " + " ".join(f"{n:5d}" for n in ns))
    lines.append("v(n), fitted  " + " ".join(f"{p.v[n]:5.2f}" for n in ns))
    if p.v_spread:
        lines.append("95 % ± share  " + " ".join(f"{p.v_spread.get(n, 0.0):5.1%}" for n in ns))
        lines.append(f"({p.rounds} shuffled rounds; c = {p.draft_cost:.3f} ± {p.draft_cost_spread:.1%})")
    ks = sorted(p.speedup_by_k)
    lines.append("K             " + " ".join(f"{k:5d}" for k in ks))
    if p.tokens_per_loop_by_k:
        lines.append("tokens/loop   " + " ".join(f"{p.tokens_per_loop_by_k[k]:5.2f}" for k in ks))
    lines.append("predicted     " + " ".join(f"{p.speedup_by_k[k]:5.2f}" for k in ks))
    if p.speedup_by_tree:
        ns = sorted(p.speedup_by_tree)
        lines.append("tree guesses  " + " ".join(f"{n:5d}" for n in ns))
        lines.append("tokens/loop   " + " ".join(f"{p.tokens_per_loop_by_tree.get(n, 0.0):5.2f}" for n in ns))
        lines.append("predicted     " + " ".join(f"{p.speedup_by_tree[n]:5.2f}" for n in ns))
        lines.append(f"chosen among chains and trees: {setting_label(p.best_setting)}")
    lines.append(p.k_sentence())
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import argparse


    parser = argparse.ArgumentParser(prog="python -m specsim.measure.machine", description=__doc__.splitlines()[0])
    parser.add_argument("--again", action="store_true", help="measure even when a cached profile exists")
    flags.add_machine(parser, dtype=False)
    args = parser.parse_args(argv)
    flags.apply_threads(args.threads)
    if args.again:
        cache_file(profile_key(device=args.device)).unlink(missing_ok=True)
    print(format_profile(load_or_measure(device=args.device)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
