"""Interview questions: open questions with worked answers, each pointing to the page that teaches it.

The questions live in ``assets/interview/questions.json``. An answer never types a figure: it names
it in braces (``{best_k_lesson}``) and :func:`figures` computes it from :mod:`specsim.measure.analytics`,
:mod:`specsim.lesson.roofline` (the batching roofline) and :mod:`specsim.core.published` (the papers, e.g.
``{leviathan.when}``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specsim.core import published
from specsim.core.defaults import BATCH_CONTEXT
from specsim.core.paths import INTERVIEW_QUESTIONS
from specsim.lesson import moe, roofline
from specsim.measure import analytics

LESSON = {"alpha": 0.7, "k": 4, "c": 0.13}  # the lesson's example
BATCHING = {"batch": 64, "batch_big": 256}  # the batching question's batch, and a larger one
DRAFTS = {  # the draft-choice question: a 1B draft and a 100M one, with draft costs c as one might measure them
    "big": {"params": "1B", "params_b": 1.0, "alpha": 0.8, "c": 0.10},
    "small": {"params": "100M", "params_b": 0.1, "alpha": 0.6, "c": 0.05},
}

#: The papers' figures an answer may quote by name (``{leviathan.when}``, ``{medusa_2_speedup.figure}``).
PUBLISHED = {
    "chen": published.CHEN_2023, "leviathan": published.LEVIATHAN_2023,
    "medusa_1_speedup": published.MEDUSA_1_SPEEDUP, "medusa_2_speedup": published.MEDUSA_2_SPEEDUP,
    "magicdec": published.MAGICDEC_SPEEDUP, "eagle2_speedup": published.EAGLE2_SPEEDUP,
    "eagle3_speedup": published.EAGLE3_SPEEDUP, "deepseek_mtp": published.DEEPSEEK_MTP_SPEEDUP,
}


SHORT_WORDS = 150  # the longest a short model answer may be
POINTS = (3, 6)  # how many key points a learner ticks to grade an answer, at least and at most


@dataclass(frozen=True)
class Question:
    id: str
    topic: str
    page: str  # url path of the page that teaches it
    question: str
    answer: str  # the long worked answer
    short: str = ""  # a model answer of at most SHORT_WORDS words
    points: tuple[str, ...] = ()  # the key points a good answer makes, for the learner to tick


def _x(value: float) -> str:
    return f"{float(value):.2f}"


def _batching(a: float, k: int, c: float) -> dict[str, str]:
    """The roofline at the app's GPU ridge R: v and the speedup at B = 1 and at the question's batch sizes."""
    r = roofline.GPU_RIDGE
    out = {"ridge": str(r), "a100_ridge": f"{roofline.A100.ridge_tokens:.0f}",
           "h100_ridge": f"{roofline.H100.ridge_tokens:.0f}",
           "speedup_batch_1": _x(roofline.batched_speedup(a, k, c, 1, r))}
    for name, b in BATCHING.items():
        out[name] = str(b)
        out[f"{name}_tokens"] = str(b * (k + 1))  # what a verification pass carries: B·(K + 1)
        out[f"{name}_v"] = _x(roofline.batched_verify_cost(b, k, r))
        out[f"{name}_speedup"] = _x(roofline.batched_speedup(a, k, c, b, r))
        out[f"{name}_kv_v"] = _x(roofline.kv_verify_cost(b, k, r, BATCH_CONTEXT))  # with each sequence's cache
        out[f"{name}_kv_speedup"] = _x(roofline.kv_speedup(a, k, c, b, r, BATCH_CONTEXT))
        out[f"{name}_kv_gb"] = f"{roofline.kv_cache_gb(b, BATCH_CONTEXT):.0f}"
    m = roofline.LLAMA_31_8B
    out |= {"kv_model": m.name, "kv_context": f"{BATCH_CONTEXT:,}", "kv_kib": str(m.kv_bytes_per_token // 1024),
            "kv_weights_gb": f"{m.weight_bytes / 1e9:.0f}"}
    return out


def _drafts(v: float = 1.0) -> dict[str, str]:
    """Each draft's best K and speedup at its c, and the small one's had c scaled with its parameter count."""
    out: dict[str, str] = {}
    best: dict[str, float] = {}
    for name, d in DRAFTS.items():
        k = analytics.optimal_k(d["alpha"], d["c"], v)
        best[name] = float(analytics.speedup(d["alpha"], k, d["c"], v))
        out |= {f"{name}_params": d["params"], f"{name}_alpha": f"{d['alpha']:.0%}", f"{name}_c": f"{d['c']:.2f}",
                f"{name}_k": str(k), f"{name}_speedup": _x(best[name])}
    big, small = DRAFTS["big"], DRAFTS["small"]
    c_scaled = big["c"] * small["params_b"] / big["params_b"]
    k_scaled = analytics.optimal_k(small["alpha"], c_scaled, v)
    out |= {"small_c_scaled": f"{c_scaled:.2f}", "small_k_scaled": str(k_scaled),
            "small_speedup_scaled": _x(analytics.speedup(small["alpha"], k_scaled, c_scaled, v)),
            "draft_winner": big["params"] if best["big"] >= best["small"] else small["params"]}
    return out


CACHE = {"context": 100, "kept": 2}  # the cache question: a context of 100 tokens, 2 of the lesson's 4 guesses kept
OVERLAP = {"p": (0.6, 0.3, 0.1), "q": (0.3, 0.5, 0.2), "t_low": 0.5, "t_high": 2.0}  # the α = 1 − TV question


def _cache(k: int) -> dict[str, str]:
    """The target's cache through one iteration (the engine's convention, specsim.core.trace.CacheLengths)."""
    before = CACHE["context"] - 1  # the context minus its last token, the first input of the pass
    return {"cache_context": str(CACHE["context"]), "cache_kept_guesses": str(CACHE["kept"]),
            "cache_before": str(before), "cache_written": str(before + k + 1),
            "cache_after": str(before + 1 + CACHE["kept"]), "cache_dropped": str(k - CACHE["kept"]),
            "cache_next_context": str(CACHE["context"] + CACHE["kept"] + 1)}


def _overlap() -> dict[str, str]:
    """Σ min(p, q) for a three-token p and q, and again with both tempered (the engine's warp, in
    :mod:`specsim.lesson.unchanged`'s numpy)."""
    from specsim.lesson.unchanged import overlap_by_temperature, total_variation

    p, q = OVERLAP["p"], OVERLAP["q"]
    out = {"ov_p": ", ".join(f"{x:g}" for x in p), "ov_q": ", ".join(f"{x:g}" for x in q),
           "ov_tv": _x(total_variation(p, q)), "ov_alpha": _x(1 - total_variation(p, q)),
           "ov_t_low": f"{OVERLAP['t_low']:g}", "ov_t_high": f"{OVERLAP['t_high']:g}"}
    low, high, greedy = overlap_by_temperature(p, q, [OVERLAP["t_low"], OVERLAP["t_high"], 0.0])
    out["ov_alpha_t_low"], out["ov_alpha_t_high"], out["ov_alpha_greedy"] = _x(low), _x(high), _x(greedy)
    return out


def _measured_overlap() -> dict[str, str]:
    """The app's own pair, measured (``scripts/measure_overlap.py``): α greedy, at T = 1 and at T = 2."""
    from specsim.lesson.unchanged import measured_overlap

    m = measured_overlap()
    return {"ov_real_positions": f"{m.positions:,}", "ov_real_prompts": str(m.prompts),
            "ov_real_greedy": f"{m.greedy:.2f}", "ov_real_t1": f"{m.at(1.0):.2f}", "ov_real_t2": f"{m.at(2.0):.2f}"}


TAU = {"tau": 3.2, "k": 5, "k_other": 2}  # the τ question: a reported mean acceptance length, its K, another K


def _tau() -> dict[str, str]:
    """α behind a reported τ = E[j] + 1 at its K (bisection: τ rises with α), and the τ that α gives at another K."""
    tau, k = TAU["tau"], TAU["k"]
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if float(analytics.tokens_per_loop(mid, k)) < tau else (lo, mid)
    a = (lo + hi) / 2
    return {"tau_reported": f"{tau:g}", "tau_k": str(k), "tau_alpha": f"{a:.2f}", "tau_k_other": str(TAU["k_other"]),
            "tau_other": _x(analytics.tokens_per_loop(a, TAU["k_other"])),
            "tau_prefix": _x(analytics.expected_accepted_prefix(a, k))}


def _schedule(k: int) -> dict[str, str]:
    """transformers' heuristic K schedule (specsim.core.kpolicy) over kept, kept, refused, kept loops."""
    from specsim.core.kpolicy import KPolicy

    policy, ks = KPolicy(k, "heuristic"), [k]
    for all_kept in (True, True, False, True):
        ks.append(policy.next_k(ks[-1], ks[-1], ks[-1] if all_kept else 0))
    from specsim.core.kpolicy import TRANSFORMERS_DEFAULTS as hf

    return {"schedule_ks": ", ".join(str(x) for x in ks), "hf_max_k": str(hf["num_assistant_tokens"]),
            "hf_schedule": hf["num_assistant_tokens_schedule"],
            "hf_confidence": f"{hf['assistant_confidence_threshold']:g}"}


def _mtp() -> dict[str, str]:
    """DeepSeek-V3's MTP module as the draft: K = 1, its reported acceptance, and the loop's c and v in the three
    deployments the Variants page prices, from the same function (:func:`specsim.lesson.moe.mtp_loops`)."""
    low, high = published.DEEPSEEK_MTP_ACCEPTANCE
    one, many, spread = moe.mtp_loops(roofline.GPU_RIDGE)

    def span(loop: moe.MtpLoop, v: float | None = None) -> str:
        v = loop.v if v is None else v
        return f"{analytics.speedup(low, 1, loop.c, v):.2f}–{analytics.speedup(high, 1, loop.c, v):.2f}×"

    return {
        "mtp_acceptance": f"{low:.0%}–{high:.0%}",
        "mtp_tau": f"{analytics.tokens_per_loop(low, 1):.2f}–{analytics.tokens_per_loop(high, 1):.2f}",
        "mtp_c_layers": f"1/{published.DEEPSEEK_V3_LAYERS} = {spread.c:.3f}",
        "mtp_c": f"({published.DEEPSEEK_MTP_ACTIVE_PARAMS_B:g} − {published.DEEPSEEK_V3_EMBEDDING_PARAMS_B:g}) / "
                 f"{published.DEEPSEEK_V3_ACTIVE_PARAMS_B:g} = {one.c:.3f}",
        "mtp_active_b": f"{published.DEEPSEEK_V3_ACTIVE_PARAMS_B:g}B",
        "mtp_speedup": span(one, 1.0),
        "mtp_ridge": str(roofline.GPU_RIDGE),
        "mtp_moe_v": _x(one.v),
        "mtp_speedup_moe": span(one),
        # the report's figure read backwards: what a loop must cost for τ to give it (no batch size is stated)
        "mtp_loop_cost": (f"{analytics.tokens_per_loop(low, 1) / published.DEEPSEEK_MTP_SPEEDUP.high:.2f}–"
                          f"{analytics.tokens_per_loop(high, 1) / published.DEEPSEEK_MTP_SPEEDUP.high:.2f}"),
        "mtp_big_v": _x(many.v),
        "mtp_big_batch": str(many.batch),
        "mtp_big_loop": f"{many.c:.3f} + {many.v:.2f} = {many.cost:.2f}",  # the draft's c at the large batch added
        # spread over many GPUs by expert parallelism a step's time follows its layers: c by layers, v at best 1
        "mtp_gpus": str(published.DEEPSEEK_V3_DECODE_GPUS),
        "mtp_speedup_spread": span(spread),
    }


def figures() -> dict[str, str]:
    """Every figure an answer may name, computed."""
    a, k, c = LESSON["alpha"], LESSON["k"], LESSON["c"]
    best = analytics.optimal_k(a, c)
    return {
        "alpha_lesson": f"{a:.0%}",
        "k_lesson": str(k),
        "c_lesson": f"{c:g}",
        "best_k_lesson": str(best),
        "best_speedup_lesson": _x(analytics.speedup(a, best, c)),
        "speedup_below": _x(analytics.speedup(a, best - 1, c)),
        "speedup_above": _x(analytics.speedup(a, best + 1, c)),
        "speedup_lesson": _x(analytics.speedup(a, k, c)),
        "k_plus_1_lesson": str(k + 1),
        "tokens_per_loop_lesson": _x(analytics.tokens_per_loop(a, k)),
        "target_work_lesson": _x((k + 1) / analytics.tokens_per_loop(a, k)),
        "ceiling_70": _x(analytics.prefix_limit(a)),
        "useless_loss_lesson": _x(analytics.useless_draft_loss(k, c, 1.0)),
        "useless_speed_lesson": _x(analytics.speedup(0.0, k, c, 1.0)),
        **_batching(a, k, c),
        **_drafts(),
        **_cache(k),
        **_overlap(),
        **_measured_overlap(),
        **_tau(),
        **_mtp(),
        **_schedule(k),
    }


def names() -> dict[str, Any]:
    """What an answer's braces may name: the computed figures and the papers."""
    return {**PUBLISHED, **figures()}


def load(path: Path = INTERVIEW_QUESTIONS) -> list[Question]:
    """The questions with their figures filled in; a figure that is not defined is an error, never a gap."""
    data = json.loads(path.read_text(encoding="utf-8"))
    values = names()
    return [Question(q["id"], q["topic"], q["page"], q["question"].format(**values), q["answer"].format(**values),
                     q.get("short", "").format(**values), tuple(p.format(**values) for p in q.get("points", ())))
            for q in data["questions"]]
