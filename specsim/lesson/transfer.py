"""Transfer questions for the knowledge check: a new situation per attempt, its numbers drawn and its answer computed.

Each model draws its inputs from a :class:`random.Random` (the attempt's seed decides) and returns every name the
question's templates use: the inputs, the key's figure and each distractor's figure, each distractor computed from
the misconception it stands for (the tokens a loop yields where its speed was asked, the check priced at one plain
pass, the prefix rule forgotten...). Nothing here types an answer: the figures come from
:mod:`specsim.measure.analytics`, :mod:`specsim.lesson.roofline` and :mod:`specsim.lesson.moe`.

The inputs stay clear of the lesson's opening settings (α = 70 %, K = 4, c = 0.13, v = 1), so no key can be read
off a page as it opens. A model retries its draw until the options it computes are distinct as shown.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from specsim.lesson import moe, roofline
from specsim.measure import analytics

Names = dict[str, Any]

ALPHAS = (0.55, 0.6, 0.65, 0.75, 0.8, 0.85, 0.9)  # 0.70 is the calculator's opening α
DRAFT_COSTS = (0.04, 0.05, 0.06, 0.08, 0.1, 0.12, 0.15)  # 0.13 is its opening c
TOKENS = "ABCD"


def _distinct(*shown: str) -> bool:
    return len(set(shown)) == len(shown)


def _apart(values, gap: float) -> bool:
    """Every two of ``values`` at least ``gap`` apart: options read as "about" must not sit side by side."""
    ordered = sorted(values)
    return all(b - a >= gap for a, b in zip(ordered, ordered[1:], strict=False))


def _retry(draw: Callable[[random.Random], Names | None]) -> Callable[[random.Random], Names]:
    """A model that draws again until ``draw`` accepts its numbers (returns names, not None)."""
    def model(rng: random.Random) -> Names:
        for _ in range(1000):
            names = draw(rng)
            if names is not None:
                return names
        raise RuntimeError(f"{draw.__name__} found no draw with distinct options")  # pragma: no cover
    model.__name__ = draw.__name__
    model.__doc__ = draw.__doc__
    return model


@_retry
def tokens_per_loop(rng: random.Random) -> Names | None:
    """τ for drawn α and K; wrong: E[j] (the +1 forgotten), α·K (the prefix rule forgotten), 1 + α + … + α^(K−1)
    (the sum stopped one term short: the tokens of K − 1 guesses), and above the key 1 + α·K (the prefix rule
    forgotten, the +1 kept), 1 / (1 − α) (the ceiling of unlimited K) and K + 1 (every guess kept, the most a loop
    can write); below it, 1 + α (as if only the first guess could be kept)."""
    alpha, k = rng.choice(ALPHAS), rng.choice((3, 5, 6, 7))
    n = dict(alpha=alpha, k=k, answer=float(analytics.tokens_per_loop(alpha, k)),
             prefix=float(analytics.expected_accepted_prefix(alpha, k)), alpha_times_k=alpha * k,
             short_sum=float(analytics.tokens_per_loop(alpha, k - 1)), linear=1 + alpha * k,
             ceiling=1 / (1 - alpha), most=float(k + 1), first_only=1 + alpha)
    return n if _distinct(*(f"{n[x]:.2f}" for x in ("answer", "prefix", "alpha_times_k", "short_sum", "linear",
                                                     "ceiling", "most", "first_only"))) else None


@_retry
def speedup(rng: random.Random) -> Names | None:
    """The speedup with a measured v; wrong: the kept guesses alone over the cost (the target's own token forgotten),
    one more pass for the target's own token (as if it needed a pass of its own), and v paid per position checked
    ((K + 1)·v, as if v were a per-token price); above the key, τ / v (the drafting forgotten), the check priced at
    one plain pass (v = 1, the measured v ignored) and the drafting priced as one pass (c + v)."""
    alpha, k, c = rng.choice(ALPHAS), rng.choice((3, 5, 6)), rng.choice(DRAFT_COSTS)
    v = rng.choice((1.1, 1.15, 1.2, 1.25, 1.3, 1.4))
    tau = float(analytics.tokens_per_loop(alpha, k))
    cost = float(analytics.cost_per_loop(k, c, v))
    n = dict(alpha=alpha, k=k, c=c, v=v, n=k + 1, tau=tau, answer=float(analytics.speedup(alpha, k, c, v)),
             kept_only=float(analytics.expected_accepted_prefix(alpha, k)) / cost,
             extra_pass=float(analytics.speedup(alpha, k, c, v + 1.0)),
             per_position=float(analytics.speedup(alpha, k, c, (k + 1) * v)), cost=cost,
             no_drafting=tau / v, free_check=float(analytics.speedup(alpha, k, c, 1.0)), once=tau / (c + v))
    return n if _distinct(*(f"{n[x]:.2f}" for x in ("answer", "kept_only", "extra_pass", "per_position", "no_drafting",
                                                     "free_check", "once"))) else None


@_retry
def k_choice(rng: random.Random) -> Names | None:
    """Two K with their measured v(K + 1): the speedup of each, so which is faster. Wrong pairs: every check priced at
    one plain pass (v = 1), the drafting forgotten (τ / v), the target's own token forgotten (E[j] over cost), v paid
    per position checked ((K + 1)·v), one draft pass priced for all K guesses (c + v), and a pass of its own for the
    target's token (v + 1)."""
    alpha, c = rng.choice(ALPHAS), rng.choice(DRAFT_COSTS)
    k_short, k_long = rng.choice((2, 3)), rng.choice((5, 6, 7))
    v_short, v_long = rng.choice((1.0, 1.02, 1.05, 1.08)), rng.choice((1.2, 1.3, 1.4, 1.5, 1.6))
    s = {k_short: float(analytics.speedup(alpha, k_short, c, v_short)),
         k_long: float(analytics.speedup(alpha, k_long, c, v_long))}
    s1 = {k: float(analytics.speedup(alpha, k, c, 1.0)) for k in (k_short, k_long)}
    best = analytics.best_k(s)
    other = k_long if best == k_short else k_short
    best_v1 = analytics.best_k(s1)
    other_v1 = k_long if best_v1 == k_short else k_short
    if abs(s[k_short] - s[k_long]) < 0.05 or abs(s1[k_short] - s1[k_long]) < 0.05:
        return None
    tau = {k: float(analytics.tokens_per_loop(alpha, k)) for k in (k_short, k_long)}
    n = dict(alpha=alpha, c=c, k_short=k_short, k_long=k_long, v_short=v_short, v_long=v_long,
             n_short=k_short + 1, n_long=k_long + 1, best=best, other=other, s_best=s[best], s_other=s[other],
             s_short=s[k_short], s_long=s[k_long], s1_short=s1[k_short], s1_long=s1[k_long],
             nd_short=tau[k_short] / v_short, nd_long=tau[k_long] / v_long,
             kept_short=float(analytics.expected_accepted_prefix(alpha, k_short)) / float(
                 analytics.cost_per_loop(k_short, c, v_short)),
             kept_long=float(analytics.expected_accepted_prefix(alpha, k_long)) / float(
                 analytics.cost_per_loop(k_long, c, v_long)),
             tau_short=tau[k_short], tau_long=tau[k_long],
             pp_short=tau[k_short] / float(analytics.cost_per_loop(k_short, c, (k_short + 1) * v_short)),
             pp_long=tau[k_long] / float(analytics.cost_per_loop(k_long, c, (k_long + 1) * v_long)),
             once_short=tau[k_short] / (c + v_short), once_long=tau[k_long] / (c + v_long),
             xp_short=float(analytics.speedup(alpha, k_short, c, v_short + 1.0)),
             xp_long=float(analytics.speedup(alpha, k_long, c, v_long + 1.0)),
             best_v1=best_v1, other_v1=other_v1, s1_best=s1[best_v1], s1_other=s1[other_v1])
    pairs = [f"{n[a + '_short']:.2f} {n[a + '_long']:.2f}" for a in ("s", "s1", "nd", "kept", "pp", "once", "xp")]
    return n if _distinct(*pairs) and _distinct(*(p.split()[0] for p in pairs)) else None


@_retry
def share_kept(rng: random.Random) -> Names | None:
    """From τ and K, the share of drafted guesses kept, (τ − 1) / K. Wrong: τ / K (the +1 token counted as a kept
    guess), the per-slot α that the independent model would need for this τ (a chance, not a share), and
    τ / (K + 1) (the tokens written over the positions the pass checks); below the key, (τ − 1) / (K + 1) (the kept
    guesses over the positions checked), α^K (the chance that all K are kept, at the α of the first) and (τ − 2) / K
    (as if τ also counted the token the pass starts from)."""
    k, alpha = rng.choice((4, 5, 6, 8)), rng.choice(ALPHAS)
    if k == 4 and alpha == 0.7:
        return None
    tau = round(float(analytics.tokens_per_loop(alpha, k)), 2)
    slot_alpha = analytics.alpha_for_speedup(tau, k, 0.0, 1.0)
    if slot_alpha is None:
        return None
    n = dict(k=k, tau=tau, kept=tau - 1, answer=(tau - 1) / k, with_bonus=tau / k, slot_alpha=slot_alpha,
             per_position=tau / (k + 1), kept_per_position=(tau - 1) / (k + 1), all_kept=slot_alpha ** k,
             less_start=(tau - 2) / k)
    names = ("answer", "with_bonus", "slot_alpha", "per_position", "kept_per_position", "all_kept", "less_start")
    return n if n["with_bonus"] <= 1 and _apart([n[x] for x in names], 0.03) else None


@_retry
def moe_v(rng: random.Random) -> Names | None:
    """v at batch 1 for a mixture of experts, by bytes read (memory-bound): K + 1 tokens touch more experts than one.
    Wrong: 1 (a dense model's free check), the K guesses counted without the kept token that opens the pass (K tokens,
    not K + 1), no shared experts (each token reads its own, as if no two tokens chose the same), and K + 1 (each
    token priced as a pass of its own, as if the pass were compute-bound), and every expert read (the large batch's
    case taken for batch 1)."""
    experts, active, k = rng.choice((64, 128, 256)), rng.choice((2, 4, 8)), rng.choice((3, 5, 7))
    shared = rng.choice((0.1, 0.2, 0.3))  # the share of a token's reads that every token reads
    base = moe.DEEPSEEK_V3
    routed_active = base.moe_layers * active * base.expert_params
    always = shared / (1 - shared) * routed_active
    model = replace(base, name="drawn", total_params=always + base.moe_layers * experts * base.expert_params,
                    experts=experts, active=active)
    touched = model.experts_touched(k + 1)
    no_overlap = shared + (1 - shared) * min(experts, active * (k + 1)) / active
    n = dict(experts=experts, active=active, k=k, n=k + 1, shared=shared, routed=1 - shared,
             answer=model.read_ratio(k), touched=touched, dense=1.0, no_overlap=no_overlap,
             guesses_only=model.read_ratio(k - 1), touched_guesses=model.experts_touched(k), per_token=float(k + 1),
             every_expert=shared + (1 - shared) * experts / active)
    values = sorted(n[x] for x in ("answer", "dense", "guesses_only", "no_overlap", "per_token", "every_expert"))
    gaps = [b - a for a, b in zip(values, values[1:], strict=False)]
    return n if min(gaps) >= 0.4 else None  # "about" must tell them apart


@_retry
def batched_speedup(rng: random.Random) -> Names | None:
    """The speedup at batch B under the roofline, v = max(1, B(K + 1)/R) / max(1, B/R). Wrong: the batch-1 figure
    (v = 1), τ / v (the drafting forgotten), and τ (the loop's cost forgotten); below the key, v paid per position
    checked ((K + 1)·v), the kept guesses alone over the cost (the target's own token forgotten) and a pass of its own
    for the target's token (v + 1)."""
    ridge, batch, k = rng.choice((150, 200, 300, 400)), rng.choice((16, 32, 64, 128)), rng.choice((3, 5, 6))
    alpha, c = rng.choice(ALPHAS), rng.choice(DRAFT_COSTS)
    if not batch < ridge < batch * (k + 1):
        return None
    v = roofline.batched_verify_cost(batch, k, ridge)
    n = dict(ridge=ridge, batch=batch, k=k, alpha=alpha, c=c, v=v, tokens=batch * (k + 1),
             answer=roofline.batched_speedup(alpha, k, c, batch, ridge),
             batch_one=float(analytics.speedup(alpha, k, c, 1.0)),
             tau=float(analytics.tokens_per_loop(alpha, k)))
    n["no_drafting"] = n["tau"] / v
    n["per_position"] = n["tau"] / float(analytics.cost_per_loop(k, c, (k + 1) * v))
    n["kept_only"] = float(analytics.expected_accepted_prefix(alpha, k)) / float(analytics.cost_per_loop(k, c, v))
    n["extra_pass"] = float(analytics.speedup(alpha, k, c, v + 1.0))
    names = ("answer", "batch_one", "no_drafting", "tau", "per_position", "kept_only", "extra_pass")
    return n if _distinct(*(f"{n[x]:.2f}" for x in names)) else None


@_retry
def break_even(rng: random.Random) -> Names | None:
    """The α below which speculation is slower than plain decoding, speedup(α, K, c, v) = 1. Wrong: (K·c + v − 1) / K
    (the prefix rule forgotten: α·K guesses a loop), the check priced at one plain pass (v = 1), and the target's
    own token forgotten (α + … + α^K kept guesses against the loop's cost, above the key), the drafting forgotten
    (1 + α + … + α^K = v), and a draft pass counted for the target's own token too ((K + 1)·c + v, above)."""
    k, c, v = rng.choice((3, 5, 6, 8)), rng.choice(DRAFT_COSTS), rng.choice((1.1, 1.2, 1.3, 1.4))
    cost = float(analytics.cost_per_loop(k, c, v))
    alpha = analytics.alpha_for_speedup(1.0, k, c, v)
    free = analytics.alpha_for_speedup(1.0, k, c, 1.0)
    kept = analytics.alpha_for_speedup((cost + 1.0) / cost, k, c, v)  # 1 + α + … + α^K = cost + 1
    no_drafting = analytics.alpha_for_speedup(1.0, k, 0.0, v)
    extra_draft = analytics.alpha_for_speedup(1.0, k, c * (k + 1) / k, v)  # (K + 1)·c + v
    if None in (alpha, free, kept, no_drafting, extra_draft):
        return None
    n = dict(k=k, c=c, v=v, n=k + 1, answer=alpha, linear=(k * c + v - 1) / k, free_check=free, kept_only=kept,
             cost=cost, loss=cost - 1, no_drafting=no_drafting, draft_total=k * c, extra_draft=extra_draft,
             extra_draft_cost=(k + 1) * c + v)
    names = ("answer", "linear", "free_check", "kept_only", "no_drafting", "extra_draft")
    return n if _apart([n[x] for x in names], 0.03) else None


def _distribution(rng: random.Random) -> list[float]:
    """Four probabilities in steps of 0.05, each at least 0.05."""
    cuts = sorted(rng.sample(range(1, 20), 3))
    return [b / 20 - a / 20 for a, b in zip([0, *cuts], [*cuts, 20], strict=True)]


def _show(dist: list[float]) -> str:
    return "(" + ", ".join(f"{t} {x:.2f}" for t, x in zip(TOKENS, dist, strict=True)) + ")"


def _norm(xs: list[float]) -> list[float]:
    total = sum(xs)
    return [x / total for x in xs]


@_retry
def residual(rng: random.Random) -> Names | None:
    """The replacement after a refusal: norm(max(0, p − q)). Wrong: p itself (the refusal taken as a fresh start),
    norm(max(0, q − p)) (the difference the wrong way round), p without the refused token (the rule for distinct
    top-k candidates, applied to a sampled guess)."""
    p, q = _distribution(rng), _distribution(rng)
    refusable = [i for i in range(4) if q[i] > p[i] + 1e-9]
    if not refusable:
        return None
    x = rng.choice(refusable)
    res = _norm([max(0.0, a - b) for a, b in zip(p, q, strict=True)])
    rev = _norm([max(0.0, b - a) for a, b in zip(p, q, strict=True)])
    drop = _norm([0.0 if i == x else a for i, a in enumerate(p)])
    shown = [_show(d) for d in (res, p, rev, drop)]
    if not _distinct(*shown):
        return None
    return dict(p=_show(p), q=_show(q), token=TOKENS[x], accept=p[x] / q[x], answer=shown[0], target=shown[1],
                reversed=shown[2], dropped=shown[3])


@_retry
def temperature_overlap(rng: random.Random) -> Names | None:
    """α at one position under greedy decoding and at T = 1, for a p and q whose top tokens agree. Each option pairs a
    greedy figure, 1 or p(top) (the target's probability of the token taken for the chance to keep it), with a
    sampled one, Σ min(p, q) or Σ p·q (two independent draws agreeing): every figure stands in two options."""
    p, q = _distribution(rng), _distribution(rng)
    top_p, top_q = p.index(max(p)), q.index(max(q))
    if top_p != top_q or p.count(max(p)) > 1 or q.count(max(q)) > 1 or p == q:
        return None
    overlap = sum(min(a, b) for a, b in zip(p, q, strict=True))
    agree = sum(a * b for a, b in zip(p, q, strict=True))
    if not _distinct(f"{overlap:.2f}", f"{agree:.2f}", "1.00"):
        return None
    if not _distinct(f"{overlap:.2f}", f"{agree:.2f}", f"{p[top_p]:.2f}", "1.00"):
        return None
    return dict(p=_show(p), q=_show(q), top=TOKENS[top_p], overlap=overlap, agree=agree, p_top=p[top_p])


LEADING_NUMBER = re.compile(r"^\D*?(-?\d+(?:\.\d+)?)")


def shown_options(options: Sequence[str], answer: int, show: int, seed: str) -> list[int]:
    """Which of a question's options an attempt shows: the key and ``show`` − 1 distractors drawn at ``seed``, in the
    file's order (the page shuffles them). Where every option leads with a number, the key's rank among the shown
    numbers is drawn first, evenly among the ranks the pool allows (rank r needs r misconceptions below the key and
    ``show`` − 1 − r above it), so no rule by rank ("pick the largest", "the smallest", "drop the extremes") finds it
    much more often than chance."""
    rng = random.Random(f"{seed}:options")
    others = [i for i in range(len(options)) if i != answer]
    numbers = [LEADING_NUMBER.match(o) for o in options]
    if all(numbers):
        value = [float(m.group(1)) for m in numbers]  # type: ignore[union-attr]
        below = [i for i in others if value[i] < value[answer]]
        above = [i for i in others if value[i] > value[answer]]
        ranks = [r for r in range(show) if r <= len(below) and show - 1 - r <= len(above)]
        if ranks:
            rank = rng.choice(ranks)
            return sorted([answer, *rng.sample(below, rank), *rng.sample(above, show - 1 - rank)])
    return sorted([answer, *rng.sample(others, show - 1)])


MODELS: dict[str, Callable[[random.Random], Names]] = {
    m.__name__: m for m in (tokens_per_loop, speedup, k_choice, share_kept, moe_v, batched_speedup, break_even,
                            residual, temperature_overlap)
}


def draw(model: str, seed: int | str) -> Names:
    """The names of one attempt's draw of ``model``; the same seed gives the same draw."""
    return MODELS[model](random.Random(f"{seed}:{model}"))
