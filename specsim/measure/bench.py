"""Benchmark: the bundled target with each drafter and K, against plain decoding and transformers.

    python -m specsim.bench                      # the default draft, prompt lookup, early exit; K = 1..8
    python -m specsim.bench --k 1 2 4 --prompts 2 --max-new-tokens 24
    python -m specsim.bench --heldout 14 --k 2 3 4 --draft assets/drafts/A assets/drafts/B --dtype bfloat16
    python -m specsim.bench --heldout 42 --k 1 2 3 --no-hf --drafters model --stock-draft
    python -m specsim.bench --heldout 8 --k 2 4 --drafters model --policies fixed heuristic confidence
    python -m specsim.bench --passes --heldout 8 --max-new-tokens 48 --drafters model --no-hf
    python -m specsim.bench --trees --heldout 8 --max-new-tokens 48 --drafters model

Per row: plain and speculative tokens/s (decode only), measured alpha, tokens per loop, the measured
wall-clock speedup, the cost model's speedup (:mod:`specsim.measure.costmodel`: tokens per loop / (K·c + v + o)
from median pass times), "fair" (the median wall-clock speedup when it agrees with the cost model, else
the cost model marked *), transformers' assisted generation (constant K, no confidence threshold) in
tokens/s end to end, our end-to-end tokens/s over theirs, whether our speculative run wrote plain decoding's
tokens (greedy), and whether transformers' run did too (HF=plain). Each speculative run is timed next to its
own plain run (:mod:`specsim.measure.timing`), so slow drifts in machine load hit both alike.

``--policies`` adds rows for adaptive K (:mod:`specsim.core.kpolicy`): transformers' heuristic schedule starting at
each K, and the confidence stop with each K as its cap; their K column is the first iteration's K, and the
'identical' column checks that they too write plain decoding's tokens. transformers runs only beside the fixed K.

``--heldout N`` runs N prompts of the held-out set (``assets/prompts/heldout.json``, spread over its
domains) instead of the built-in ones, and adds, for each drafter at its best K, the acceptance per
domain and per draft position (P(position j accepted | the chain reached j)).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from specsim.core.defaults import (
    BENCH_MAX_NEW_TOKENS,
    DRAFT_MODEL,
    drafter_kind,
)
from specsim.core.draft_loader import load_draft_model
from specsim.core.engine import plain_generate, speculative_generate
from specsim.core.kpolicy import LIVE_POLICIES, KPolicy, live_policy
from specsim.core.model_checks import TokenizerMismatch
from specsim.core.model_drafters import ModelDrafter
from specsim.core.models import ModelUnavailable, format_prompt, load_model
from specsim.core.prompt_sets import builtin_prompts, heldout_prompts
from specsim.core.trace import Trace, acceptance_given_reached, pooled_acceptance_rate
from specsim.measure import analytics, fairtime, flags, machine
from specsim.measure.hf_assisted import hf_assisted_trace
from specsim.measure.passcost import format_pass_costs, measure_pass_costs, plain_tokens_per_s
from specsim.measure.tables import render
from specsim.measure.timing import Contender, time_decoders
from specsim.methods import DRAFTER_KINDS, build_drafter
from specsim.request import range_problem

OURS, HF = "specsim", "transformers"  # the two contenders of a row
COLUMNS = ("drafter", "K", "plain tok/s", "spec tok/s", "alpha", "tok/loop", "speedup", "cost model", "fair",
           "HF tok/s", "ours/HF", "same text", "identical", "HF=plain")
NOISY_NOTE = "* the plain baseline was noisy, or the wall clock and the cost model disagreed"
"""The footnote's opening, printed under a table where a row's 'fair' cell carries the mark."""


def stock_drafter(lean_drafter) -> ModelDrafter:
    """The same trained draft, its passes run by its transformers Llama module instead of the lean forward."""
    return ModelDrafter(lean_drafter.model, f"{lean_drafter.name}, stock transformers forward",
                        vocab_map=lean_drafter.model.id_map.tolist())


def bf16_drafter(lean_drafter):
    """The same trained draft with its matrices read in bfloat16 instead of int8 (where the app reads int8: the fused
    kernel's AVX2 route), copying repeated text as the shipped drafter does."""
    from specsim.core.trained_drafters import LeanStandaloneDrafter

    twin = LeanStandaloneDrafter(lean_drafter.model, f"{lean_drafter.name}, bfloat16 weights",
                                 dtype=lean_drafter.model.llama.model.embed_tokens.weight.dtype, int8=False)
    twin.copy_from = lean_drafter.copy_from
    return twin


def bench_row(target, drafter, k: int, prompts: list[list[int]], max_new_tokens: int, with_hf: bool,
              label: str | None = None, policy: KPolicy | None = None, rounds: int = 1) -> dict:
    """Every prompt decoded plainly, speculatively (K as ``policy`` says; fixed ``k`` by default) and through
    transformers (fixed K only), timed by :func:`specsim.measure.timing.time_decoders` (after its warm-up); the
    figures pooled."""
    policy = policy or KPolicy(k)
    assistant = getattr(drafter, "model", None)
    # transformers' assisted generation needs a full-vocabulary HF model; the distilled drafts speak a
    # reduced vocabulary (q = 0 outside it), so for them the HF columns stay empty.
    with_hf = with_hf and policy == KPolicy(k) and (assistant is None or hasattr(assistant, "generation_config"))
    contenders = [Contender(OURS, lambda ids, n: speculative_generate(target, drafter, ids, policy, n))]
    if with_hf:
        contenders.append(Contender(HF, lambda ids, n: hf_assisted_trace(target, ids, k, n, assistant)))
    timed = time_decoders(prompts, contenders, lambda ids, n: plain_generate(target, ids, n), max_new_tokens,
                          rounds=rounds)
    spec = timed.runs[OURS]
    identical = timed.identical(OURS)
    m, fair = timed.costs(OURS), timed.fair(OURS)
    n_tokens = sum(t.n_generated for t in timed.runs.get(HF, []))
    hf_time = sum(t.total_time_s for t in timed.runs.get(HF, []))
    ours_e2e = sum(t.total_time_s for t in spec)
    same = same_text_ratio(spec, timed.runs.get(HF, []))
    return {
        "drafter": label or drafter.kind, "K": k,
        "plain tok/s": m.plain_tokens_per_s, "spec tok/s": m.spec_tokens_per_s,
        "alpha": m.alpha, "tok/loop": m.tokens_per_loop, "speedup": m.wall_clock_speedup,
        "cost model": m.speedup, "fair": f"{fair.headline:.2f}{'' if fair.agrees else '*'}",
        "HF tok/s": n_tokens / hf_time if with_hf else float("nan"),
        # three decimals: whether a ratio near 1 is above or below it is the question these columns answer
        "ours/HF": f"{hf_time / ours_e2e:.3f}" if with_hf else "nan",
        "same text": f"{same[0]:.3f}[{same[1]}/{len(spec)}]" if with_hf and same[1] else "-",
        "identical": "yes" if identical else "NO",
        "HF=plain": ("yes" if timed.identical(HF) else "NO") if with_hf else "-",
        "c": m.draft_cost, "v": m.verify_cost, "traces": spec,
    }


def same_text_ratio(ours: list[Trace], theirs: list[Trace]) -> tuple[float, int]:
    """ours/HF end to end over the runs where the two wrote the same tokens (the same work, so the ratio compares
    the loops alone), and how many runs that was; run i of each list is the same prompt and round."""
    same = [(o, t) for o, t in zip(ours, theirs, strict=False) if o.generated_ids == t.generated_ids]
    ours_s = sum(o.total_time_s for o, _ in same)
    return (sum(t.total_time_s for _, t in same) / ours_s if ours_s > 0 else float("nan")), len(same)


def acceptance_by(traces: list[Trace], groups: list[str]) -> dict[str, float]:
    """α per group (one group name per trace): accepted over checked proposals; NaN where none were checked."""
    by_group: dict[str, list[Trace]] = {}
    for trace, group in zip(traces, groups, strict=True):
        by_group.setdefault(group, []).append(trace)
    return {g: pooled_acceptance_rate(ts) if sum(t.n_checked for t in ts) else float("nan")
            for g, ts in by_group.items()}


def format_table(rows: list[dict]) -> str:
    def cell(value) -> str:
        return f"{value:.2f}" if isinstance(value, float) else str(value)

    return render([list(COLUMNS)] + [[cell(row[c]) for c in COLUMNS] for row in rows])


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m specsim.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--drafters", nargs="+", type=drafter_kind, choices=DRAFTER_KINDS,
                        default=[DRAFT_MODEL, "prompt_lookup", "early_exit"])
    flags.add_models(parser, drafts=True)
    parser.add_argument("--k", nargs="+", type=int, default=list(range(1, 9)))
    parser.add_argument("--prompts", type=int, default=3, help="how many built-in prompts (1-8)")
    parser.add_argument("--max-new-tokens", type=int, default=BENCH_MAX_NEW_TOKENS)
    flags.add_machine(parser)
    parser.add_argument("--no-hf", action="store_true", help="skip transformers' assisted generation")
    parser.add_argument("--passes", action="store_true",
                        help="time the target's two decode-pass paths against each other (previous: transformers' "
                             "forward; one call: specsim.core.target_pass) and print only that table")
    parser.add_argument("--trees", action="store_true",
                        help="chains of K = 1..4 against the machine profile's token trees of 4..16 guesses "
                             "(specsim.measure.treebench), and where the profile's choice stands among them, "
                             "interleaved, with the first model drafter; print only that table")
    parser.add_argument("--bf16-draft", action="store_true",
                        help="also run each trained standalone draft that reads int8 weights with its bfloat16 "
                             "weights (rows 'NAME bf16'): held-out alpha and c before and after int8")
    parser.add_argument("--save", metavar="JSON", default=None,
                        help="with --passes: also write the run where the pages read it "
                             "(assets/measurements/decode_paths.json)")
    parser.add_argument("--no-passes", action="store_true",
                        help="skip the v(n) table and the float32 / default-dtype plain decoding speeds")
    parser.add_argument("--machine", action="store_true",
                        help="measure this machine's settings (decode path, v(n), best K) if not cached; print them")
    parser.add_argument("--rounds", type=int, default=1,
                        help="timed rounds over the prompts, in alternating order (more rounds: less noise)")
    parser.add_argument("--heldout", type=int, default=0, metavar="N",
                        help="use N prompts of the held-out set instead of the built-in ones")
    parser.add_argument("--no-copy", action="store_true",
                        help="also run each distilled standalone draft without copying repeated text (rows "
                             "'NAME no copy'), next to the shipped drafter that copies")
    parser.add_argument("--policies", nargs="+", choices=tuple(LIVE_POLICIES), default=["fixed"],
                        help="K policies to run at each K (adaptive ones start at K, or stop drafting early "
                             "within it): " + "; ".join(LIVE_POLICIES.values()))
    parser.add_argument("--stock-draft", action="store_true",
                        help="also run each trained standalone draft through its transformers Llama module "
                             "(rows 'NAME stock'), next to the written-out forward pass the app uses")
    args = parser.parse_args(argv)
    for k in args.k:  # the run request's range and sentence (specsim.request), naming the flag
        if problem := range_problem("k", k, "--k"):
            parser.error(problem)
    if not 1 <= args.prompts <= len(builtin_prompts()):
        parser.error(f"--prompts must be between 1 and {len(builtin_prompts())}")
    if args.heldout < 0:
        parser.error("--heldout must be 0 (built-in prompts) or a positive count")
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.max_new_tokens < 1:
        parser.error("--max-new-tokens must be at least 1")
    if DRAFT_MODEL in args.drafters and not [d for d in args.draft if d]:
        parser.error("the model drafter needs --draft PATH_OR_ID")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # transformers' own deprecation chatter from inside generate()
    flags.apply_threads(args.threads)
    try:
        target = load_model(args.target, device=args.device, dtype=args.dtype)
        drafters = []  # (label, drafter)
        for kind in args.drafters:
            for draft in (args.draft if kind == DRAFT_MODEL else [""]):
                label = Path(draft).name if kind == DRAFT_MODEL and Path(draft).is_dir() else kind
                drafters.append((label, build_drafter(kind, target, draft, args.early_exit_layers)))
                shipped = drafters[-1][1]
                if args.no_copy and getattr(drafters[-1][1], "copy_from", None) is not None:
                    drafters.append((f"{label} no copy", load_draft_model(draft, target, copy=False)))
                if args.stock_draft and hasattr(drafters[-1][1], "lean"):
                    drafters.append((f"{label} stock", stock_drafter(drafters[-1][1])))
                if args.bf16_draft and getattr(getattr(shipped, "lean", None), "int8", False):
                    drafters.append((f"{label} bf16", bf16_drafter(shipped)))
    except (ModelUnavailable, TokenizerMismatch, ValueError) as error:
        print(f"python -m specsim.bench: error: {error}", file=sys.stderr)
        return 2
    if args.heldout:
        held = heldout_prompts(args.heldout)
        texts, domains = [h["prompt"] for h in held], [h["domain"] for h in held]
    else:
        texts = builtin_prompts(args.prompts)
        domains = ["built-in"] * len(texts)
    prompts = [format_prompt(target.tokenizer, text) for text in texts]
    where = "held-out" if args.heldout else "built-in"
    print(f"target {target.name} ({str(target.dtype).removeprefix('torch.')} on {target.device}, "
          f"{torch.get_num_threads()} threads); {len(prompts)} {where} prompts x {args.max_new_tokens} new tokens, "
          "greedy")
    print(f"dtype: {target.dtype_reason}")
    if args.passes:
        return path_report(target, drafters, prompts, args)
    if args.trees:  # chains against token trees, with the first drafter that drafts with a model
        from specsim.measure import treebench

        model = next(((label, d) for label, d in drafters if hasattr(d, "tree_pass")), None)
        if model is None:
            print("--trees needs a drafter that drafts with a model (--drafters model)", file=sys.stderr)
            return 2
        print(f"drafter: {model[1].name}\n\n" + treebench.report(target, model[1], prompts, args.max_new_tokens,
                                                                  args.rounds, machine.cached()))
        return 0
    if not args.no_passes:
        print("\n" + pass_cost_report(target, args) + "\n", flush=True)
    rows = []
    for label, drafter in drafters:
        print(f"drafter: {drafter.name}", flush=True)
        for k in args.k:
            for name in args.policies:
                row_label = label if name == "fixed" else f"{label}/{name}"
                rows.append(bench_row(target, drafter, k, prompts, args.max_new_tokens, not args.no_hf, row_label,
                                      live_policy(name, k), args.rounds))
                print(f"  K={k} {name}: {rows[-1]['spec tok/s']:.1f} tok/s, cost model {rows[-1]['cost model']:.2f}x",
                      flush=True)
    print()
    print(format_table(rows))
    if any(row["fair"].endswith("*") for row in rows):  # the footnote only where a row carries its mark
        print(f"\n{NOISY_NOTE} by more than {fairtime.TOLERANCE:.0%}, so 'fair' shows the cost model. On a shared "
              "CPU that means the machine was too busy to time fairly; a gap that stays run after run (as bfloat16 "
              "drafting on a GPU showed) is the cost model missing a cost")
    if any(row["HF=plain"] == "NO" for row in rows):
        print("\nHF=plain NO: transformers' prompt lookup wrote other tokens than plain decoding. specsim's plain "
              "decoding writes what transformers' own plain greedy generate writes (both prefill the whole prompt; "
              "tests/test_engine_greedy.py checks it), so the split is inside transformers: its first pass reads the "
              "prompt and the first K guesses together, that longer pass rounds the last prompt position differently "
              "from a prefill over the prompt alone, and a near-tied argmax flips. specsim's prefill reads the prompt "
              "alone in every decoder and verifies guesses only in the position-invariant decode path, so its "
              "'identical' holds by construction.")
    if any(row["ours/HF"] != "nan" for row in rows):  # transformers ran beside some row
        print("\nours/HF is end to end, prefill included. Both loops prefill the whole prompt; specsim's prefill "
              "chooses the first token, as plain decoding's does, and transformers' also verifies the first K "
              "guesses. 'same text' is ours/HF over the runs where the two wrote the same tokens (how many in "
              "square brackets): the same work, so it compares the loops alone; where HF=plain says NO the other runs "
              "decode different texts.")
    print("\nc, v (draft and verification cost in target passes): "
          + "; ".join(f"{r['drafter']} K={r['K']}: {r['c']:.3f}, {r['v']:.2f}" for r in rows))
    if args.heldout:
        print("\n" + format_breakdown(rows, domains * args.rounds))  # each round ran every prompt once
    verdict = chosen_k_report(rows, machine.cached())
    if verdict:
        print("\n" + verdict)
    return 0


def chosen_k_report(rows: list[dict], profile) -> str | None:
    """The machine profile's chosen K beside the best K these rows measured (fair speedups), for the first
    drafter's rows: does the live page start where the measurement says it should?"""
    if profile is None or not rows:
        return None
    first = rows[0]["drafter"]
    fair = {row["K"]: float(str(row["fair"]).rstrip("*")) for row in rows if row["drafter"] == first}
    best = analytics.best_k(fair)
    predicted = profile.speedup_by_k.get(profile.best_k, 0.0)
    head = f"K: the machine profile chose K = {profile.best_k} (predicted {predicted:.2f}x)"
    if profile.best_k not in fair:
        return f"{head}; measured best here K = {best} at {fair[best]:.2f}x (K = {profile.best_k} was not run)."
    gap = 1 - fair[profile.best_k] / fair[best]
    agree = "the same K" if profile.best_k == best else (
        f"within {gap:.1%} of the best" if gap <= 0.03 else f"{gap:.1%} below the best, more than 3 %")
    return (f"{head}; measured best here K = {best} at {fair[best]:.2f}x, K = {profile.best_k} at "
            f"{fair[profile.best_k]:.2f}x: {agree}.")


def path_report(target, drafters, prompts, args: argparse.Namespace) -> int:
    """``--passes``: both decode-pass paths timed in one run (:mod:`specsim.measure.pathbench`), speculative decoding
    with the first drafter at the machine profile's K (the first ``--k`` where this machine has no profile)."""
    from specsim.core import target_pass
    from specsim.measure import pathbench

    why_not = target_pass.why_not(target.model)
    if why_not is not None:
        print(f"--passes: the one-call path does not run here ({why_not}); nothing to compare", file=sys.stderr)
        return 2
    profile = machine.cached()
    k = profile.best_k if profile is not None else args.k[0]
    label, drafter = drafters[0]
    print(f"speculative decoding: {label} at K = {k} ({'the machine profile' if profile else 'the first --k'})",
          flush=True)
    rows = pathbench.compare_paths(target, drafter, prompts, k, args.max_new_tokens, rounds=args.rounds)
    print("\n" + pathbench.format_paths(rows, k))
    if args.save:
        import datetime

        from specsim.core.cpu import machine_id

        run = pathbench.PathRun(machine=machine_id(str(target.device)), when=datetime.date.today().isoformat(),
                                prompts=len(prompts), max_new_tokens=args.max_new_tokens, rounds=args.rounds, k=k,
                                rows=tuple(rows))
        pathbench.save(run, args.save)
        print(f"saved to {args.save}")
    return 0


def pass_cost_report(target, args: argparse.Namespace) -> str:
    """This machine's measured settings (when measured), v(n) for n = 1..17 in the active dtype, and plain
    decoding speed in float32 and in the active dtype."""
    profile = machine.load_or_measure(log=lambda _: None) if args.machine else machine.cached()
    lines = ["settings measured on this machine (python -m specsim.measure.machine):\n"
             + machine.format_profile(profile)
             if profile else "settings: this machine has not been measured (add --machine)"]
    costs = measure_pass_costs(target)
    lines += ["one target pass over n new tokens (median of 7 after 2 warm-ups, n interleaved):",
             format_pass_costs([costs])]
    speeds = {str(target.dtype).removeprefix("torch."): plain_tokens_per_s(target)}
    if target.dtype != torch.float32:
        fp32 = load_model(args.target, device=args.device, dtype="float32")
        speeds["float32"] = plain_tokens_per_s(fp32)
        del fp32
    lines.append("plain decoding: " + ", ".join(f"{name} {rate:.1f} tok/s" for name, rate in speeds.items()))
    return "\n".join(lines)


def format_breakdown(rows: list[dict], domains: list[str]) -> str:
    """Per drafter at its best K: acceptance per domain, then per draft position."""
    best: dict[str, dict] = {}
    for row in rows:
        if row["drafter"] not in best or row["speedup"] > best[row["drafter"]]["speedup"]:
            best[row["drafter"]] = row
    names = sorted(set(domains), key=domains.index)
    k_max = max(r["K"] for r in best.values())
    head = ["drafter", "K"] + names + [f"pos {j}" for j in range(1, k_max + 1)]
    table = [head]
    for label, row in best.items():
        by_domain = acceptance_by(row["traces"], domains)
        by_pos = acceptance_given_reached(row["traces"], row["K"])
        table.append([label, str(row["K"])] + [f"{by_domain[d]:.2f}" for d in names]
                     + [f"{p:.2f}" for p in by_pos] + [""] * (k_max - row["K"]))
    return "acceptance per domain and per draft position, each drafter at its best K:\n" + render(table)


if __name__ == "__main__":
    sys.exit(main())
