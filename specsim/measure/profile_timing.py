"""The measurements a machine profile is made of (:mod:`specsim.measure.machine`), each timed on this machine:
v(n), passes over n new tokens on one cached context divided by a one-token pass, until their 95 % intervals are
narrow (:func:`time_v`); real greedy runs of the default drafter at each K against plain decoding of the same
held-out prompts (:func:`time_runs`), and from them the draft's cost c, the predicted speedup per K and the
acceptance at each draft position; and one short run's cost model (:func:`run_costs`), for the draft's evaluation.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from specsim.core.defaults import DEFAULT_K
from specsim.core.kpolicy import KPolicy

PROFILE_KS = tuple(range(1, 7))
"""The Ks the profile runs for real; the live page starts at the best of them."""
PROFILE_TREES = ((4, 3), (8, 4), (12, 5), (16, 6))
"""The token trees the profile runs beside the chains: (guesses, depth), each node expanded into min(3, guesses)
children as the live page's trees (:attr:`specsim.request.RunRequest.tree`)."""
PROFILE_PROMPTS = 6  # held-out prompts for the runs, after the ones the bench's check (--heldout 8) uses
PROFILE_TOKENS = 24  # new tokens per run
SPREAD_GOAL = 0.05  # keep timing until every 95 % interval is within ± this share of its median
V_MIN_ROUNDS, V_TIME_CAP_S = 7, 25.0
RUNS_TIME_CAP_S = 45.0


COST_PROMPT = "Write a short paragraph about a lighthouse keeper during a storm."
"""The prompt of the short real run that measures a drafter's costs (a held-out-style task, not a training one)."""


def run_costs(target, drafter, k: int = DEFAULT_K, n_new: int = 24, prompt: str = COST_PROMPT):
    """The cost model (:class:`specsim.measure.costmodel.CostModel`: c, v and o in plain passes) of one short real run
    of ``drafter`` against plain decoding of the same prompt, timed by :func:`specsim.measure.timing.time_decoders`."""
    from specsim.core.engine import plain_generate, speculative_generate
    from specsim.core.models import format_prompt
    from specsim.measure.timing import Contender, time_decoders

    ids = format_prompt(target.tokenizer, prompt)
    spec = Contender("spec", lambda p, n: speculative_generate(target, drafter, p, KPolicy(k), n))
    timed = time_decoders([ids], [spec], lambda p, n: plain_generate(target, p, n), n_new, matched_plain=True,
                          warmup_tokens=4)
    return timed.costs("spec")


def median_interval(samples: Sequence[float]) -> tuple[float, float]:
    """The median of ``samples`` and its 95 % interval's half-width as a share of it, from order statistics (no
    assumption about the distribution: the ranks n/2 ± 1.96·√n/2). Fewer than 6 samples give an infinite width."""
    xs = sorted(samples)
    n = len(xs)
    med = statistics.median(xs) if xs else math.nan
    if n < 6 or not med > 0:
        return med, math.inf
    half = 1.96 * math.sqrt(n) / 2
    lo, hi = xs[max(0, math.floor(n / 2 - half))], xs[min(n - 1, math.ceil(n / 2 + half) - 1)]
    return med, max(med - lo, hi - med) / med


@dataclass(frozen=True)
class VTiming:
    """v(n) timed in shuffled rounds: the fitted curve, each raw median's spread, the rounds, and why it is noisy."""

    v: dict[int, float]
    raw: dict[int, float]
    spread: dict[int, float]
    rounds: int
    noisy: str


def time_v(target, ns: Sequence[int], log=print, goal: float = SPREAD_GOAL, min_rounds: int = V_MIN_ROUNDS,
           cap_s: float = V_TIME_CAP_S, seed: int = 0) -> VTiming:
    """Passes over n new tokens on one cached context, the sizes in a new random order every round, each divided by
    the same round's one-token pass, until every median's 95 % interval is within ±``goal`` (or ``cap_s``)."""
    from specsim.core.clock import now
    from specsim.measure.passcost import time_pass_rounds, v_from_rounds

    rng = random.Random(seed)
    ratios: dict[int, list[float]] = {n: [] for n in ns if n != 1}
    start, rounds, spread = now(target.device), 0, {n: math.inf for n in ratios}
    timed: list[dict[int, float]] = []
    for round_times in time_pass_rounds(target, sorted({1, *ns}), rng):
        timed.append(round_times)
        for n in ratios:
            ratios[n].append(round_times[n] / round_times[1])
        rounds += 1
        spread = {n: median_interval(r)[1] for n, r in ratios.items()}
        worst = max(spread.values(), default=0.0)
        elapsed = now(target.device) - start
        if rounds % 5 == 0:
            log(f"  v(n): {rounds} rounds, widest 95 % interval ±{worst:.1%} ({elapsed:.0f} s)")
        if rounds >= min_rounds and worst <= goal:
            break
        if elapsed > cap_s:
            break
    from specsim.measure.passcost import monotone_v

    raw = v_from_rounds(timed)  # the medians; median_interval above only says how sure each one is
    worst_n = max(spread, key=spread.get) if spread else 1
    noisy = "" if max(spread.values(), default=0.0) <= goal else (
        f"v({worst_n}) still ±{spread[worst_n]:.0%} after {rounds} rounds")
    return VTiming(monotone_v(raw), raw, {1: 0.0, **spread}, rounds, noisy)


def profile_prompts(n: int = PROFILE_PROMPTS) -> list[str]:
    """Held-out prompts for the profile's runs: the ones after those the bench's check (``--heldout 8``) takes."""
    from specsim.core.prompt_sets import heldout_items

    items = heldout_items()
    by_domain: dict[str, list[str]] = {}
    for item in items:
        by_domain.setdefault(item["domain"], []).append(item["prompt"])
    order, queues = [], [list(v) for v in by_domain.values()]
    while any(queues):  # round robin over the domains, as the bench picks its prompts
        for queue in queues:
            if queue:
                order.append(queue.pop(0))
    return order[8:8 + n] or order[:n]


def time_runs(target, drafter, prompts: Sequence[str], ks: Sequence[int] = PROFILE_KS,
              n_new: int = PROFILE_TOKENS, log=print, goal: float = SPREAD_GOAL, cap_s: float = RUNS_TIME_CAP_S,
              seed: int = 0, max_rounds: int = 20, trees: Sequence[tuple[int, int]] = ()) -> tuple[dict, list]:
    """Greedy runs at every K (and every tree of ``trees``, (guesses, depth)) on every prompt, timed by
    :func:`specsim.measure.timing.time_decoders` (each prompt's plain run and the settings in a random order); more
    rounds over the prompts while the draft cost's 95 % interval is wider than ±``goal`` and time is left. Returns
    each setting's runs (a chain's under its K, a tree's under :func:`tree_key`) and the plain runs."""
    from specsim.core.clock import now
    from specsim.core.engine import plain_generate, speculative_generate
    from specsim.core.models import format_prompt
    from specsim.core.trees import TreeShape, tree_generate
    from specsim.measure.timing import PLAIN, Contender, time_decoders

    encoded = [format_prompt(target.tokenizer, p) for p in prompts]
    contenders = [Contender(f"K={k}", lambda ids, n, k=k: speculative_generate(target, drafter, ids, KPolicy(k), n))
                  for k in ks]
    shapes = {nodes: TreeShape.live(nodes, depth) for nodes, depth in trees}
    contenders += [Contender(tree_key(nodes), lambda ids, n, s=shape: tree_generate(target, drafter, ids, s, n))
                   for nodes, shape in shapes.items()]
    start = now(target.device)

    def progress(round_: int, prompt: int, name: str, _tokens: int) -> None:
        if name == PLAIN:  # once per prompt and round
            log(f"  runs: round {round_ + 1}, prompt {prompt + 1} of {len(encoded)}, K = {min(ks)}..{max(ks)} "
                f"({now(target.device) - start:.0f} s)")

    def enough(timed) -> bool:
        spec = {k: timed.runs[f"K={k}"] for k in ks}
        return draft_cost_interval(spec, timed.plain_runs())[1] <= goal or now(target.device) - start > cap_s

    timed = time_decoders(encoded, contenders, lambda ids, n: plain_generate(target, ids, n), n_new,
                          rounds=max_rounds, order="shuffle", seed=seed, warmup_tokens=4, enough=enough,
                          on_run=progress)
    runs: dict = {k: timed.runs[f"K={k}"] for k in ks}
    runs.update({tree_key(nodes): timed.runs[tree_key(nodes)] for nodes, _ in trees})
    return runs, timed.plain_runs()


def tree_key(nodes: int) -> str:
    """A tree's key among the profile's runs and predictions (a chain's is its K)."""
    return f"tree {nodes}"


def chains(runs: dict) -> dict[int, list]:
    """The chain runs of :func:`time_runs`' result, by K."""
    return {k: r for k, r in runs.items() if isinstance(k, int)}


def trees_of(runs: dict) -> dict[int, list]:
    """The tree runs of :func:`time_runs`' result, by their guesses."""
    return {int(k.split()[1]): r for k, r in runs.items() if isinstance(k, str)}


def draft_cost_interval(spec: dict[int, list], plain: list) -> tuple[float, float]:
    """c over every loop of the runs (drafting time per guess ÷ the median plain pass) and its 95 % interval."""
    from specsim.measure.costmodel import plain_pass_times

    base = statistics.median(plain_pass_times(plain))
    per_loop = [it.draft_time_s / it.k / base for runs in spec.values() for t in runs for it in t.iterations if it.k]
    return median_interval(per_loop)


def predicted_speedups(spec: dict[int, list], plain: list, v: dict[int, float]) -> dict[int, float]:
    """The cost model of each K's real runs, its v replaced by the fitted curve's v(K + 1): t ÷ (K·c + v + o). For a
    tree's runs (keyed by its guesses n) the same with its draft passes for K and v(n + 1), its pass's width."""
    from dataclasses import replace

    from specsim.measure.costmodel import cost_model

    return {k: replace(cost_model(runs, plain), verify_cost=v[k + 1]).speedup for k, runs in spec.items()}


def tree_noise(tree_runs: dict[int, list], plain: list, c_spread: float, v: dict[int, float],
               v_spread: dict[int, float]) -> dict[int, float]:
    """Each tree's predicted speedup's 95 % interval as a share, as :func:`speedup_noise` gives a chain's, with the
    tree's draft passes per loop in place of K."""
    from specsim.measure.costmodel import cost_model

    out = {}
    for n, runs in tree_runs.items():
        model = cost_model(runs, plain)
        passes = model.k
        out[n] = ((passes * model.draft_cost * c_spread + v[n + 1] * v_spread.get(n + 1, 0.0))
                  / (passes * model.draft_cost + v[n + 1]))
    return out


def speedup_noise(c: float, c_spread: float, v: dict[int, float], v_spread: dict[int, float],
                  ks) -> dict[int, float]:
    """Each K's predicted speedup t ÷ (K·c + v(K + 1) + o), its 95 % interval as a share of it, from c's and v's
    intervals: (K·c·±c + v·±v) ÷ (K·c + v). The overhead o is left out of the sum below the line, which makes the
    share a little wider than it is, never narrower."""
    return {k: (k * c * c_spread + v[k + 1] * v_spread.get(k + 1, 0.0)) / (k * c + v[k + 1]) for k in ks}


POSITION_MIN_CHECKED = 20  # a draft position's acceptance is quoted only when this many checks reached it


def position_rates(spec: dict[int, list]) -> list[float]:
    """P(kept | checked) at draft positions 1, 2, ... pooled over every K's runs, up to the first position fewer
    than :data:`POSITION_MIN_CHECKED` checks reached (a rate from a handful of checks says little)."""
    from specsim.core.trace import acceptance_given_reached

    rates = acceptance_given_reached([t for runs in spec.values() for t in runs], max(spec), POSITION_MIN_CHECKED)
    out = []
    for rate in rates:
        if math.isnan(rate):
            break
        out.append(round(rate, 3))
    return out
