"""Run every variant on the same prompt and compare them with plain greedy decoding.

``python -m specsim.measure.compare_variants [--prompt TEXT | --heldout N] [--max-new-tokens T]`` prints the
table. Every number is measured here: tokens per target pass, acceptance of the checked guesses,
decode time (prefill excluded) and speedup against plain decoding timed the same way, extra
parameters, training cost, and whether the output equals plain greedy decoding token for token.

Timing is fair (:mod:`specsim.measure.timing`, :mod:`specsim.measure.fairtime`): every variant first decodes a few
tokens
untimed (warm-up), then plain decoding and the variants run in ``rounds`` interleaved rounds (the order
reversed every other round, so plain decoding is not always the first, coldest run), each variant paired
with the plain run of its round. The speedup shown is the median of those pairs when it agrees with the cost
model from median pass times, and the cost model otherwise; never more than tokens per target pass.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from specsim import methods
from specsim.core.models import LoadedModel, format_prompt, load_bundled_target
from specsim.core.prompt_sets import load_heldout
from specsim.core.trace import Trace, pooled_acceptance_rate, pooled_tokens_per_pass
from specsim.measure import fairtime, flags
from specsim.measure.timing import PLAIN, Contender, time_decoders
from specsim.methods import LABELS, VARIANTS, VariantRun
from specsim.request import BadRequest, RunRequest

if TYPE_CHECKING:

    from specsim.variants.medusa import MedusaHeads

DEMO_PROMPTS = {
    "Edit code (the answer copies the prompt)": (
        "Rename the variable `total` to `result` in this function and show the whole function:\n"
        "def add_all(numbers):\n    total = 0\n    for n in numbers:\n        total = total + n\n    return total"),
    "Summarise a passage (the answer reuses its words)": (
        "Summarise this passage in two sentences: \"The old lighthouse on the northern cliff was switched off in "
        "1998. Ships now rely on satellite navigation, but the town kept the lighthouse as a museum, and every "
        "summer volunteers repaint the lighthouse white and red.\""),
    "Open question (no overlap with the prompt)": "Why do cats purr? Answer in a few sentences.",
}

@dataclass(frozen=True)
class VariantResult:
    """One variant's run on one prompt, measured against plain decoding."""

    key: str
    label: str
    trace: Trace
    tokens_per_pass: float  # generated tokens per TARGET forward pass
    acceptance: float | None  # accepted / checked guesses; None when nothing is guessed (plain)
    decode_s: float
    speedup: float  # the fair figure (fairtime.FairSpeedup.headline); 1 for plain decoding
    extra_parameters: int
    training: str
    identical: bool  # same tokens as plain greedy decoding
    details: object = None  # LookaheadRun, MedusaTreeRun or the draft's name: plain data (specsim.variants.runs)
    fair: fairtime.FairSpeedup | None = None  # wall clock against cost model (None for plain decoding)
    pairs: tuple[tuple[Trace, Trace], ...] = ()  # (this variant, plain) per timed round


@dataclass
class Comparison:
    prompt: str
    max_new_tokens: int
    results: list[VariantResult] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)  # variant -> message when it could not run
    texts: dict[int, str] = field(default_factory=dict)  # token id -> text, for every token a page names (the
    # lookahead windows, the Medusa trees): decoded where the model is, so a class replica never loads one

    def text(self, token_id: int) -> str:
        return self.texts.get(token_id, f"<{token_id}>")

    def by_key(self, key: str) -> VariantResult | None:
        return next((r for r in self.results if r.key == key), None)


def token_texts(comparison: Comparison, tokenizer) -> dict[int, str]:
    """The text of every token the variants page shows beyond the traces: lookahead's windows, Medusa's trees."""
    ids: set[int] = set()
    for result in comparison.results:
        for step in getattr(result.details, "steps", ()):
            for name in ("window_before", "window_after", "tokens"):
                ids.update(getattr(step, name, ()))
            if isinstance(getattr(step, "extra", None), int):
                ids.add(step.extra)
    return {t: tokenizer.decode([t]) for t in sorted(ids)}


def run_variant(key: str, target: LoadedModel, prompt_ids: list[int], max_new_tokens: int,
                medusa_heads: MedusaHeads | None = None) -> VariantRun:
    """Run one variant (a key of :data:`specsim.methods.METHODS`) greedily: (trace, extra parameters, training
    cost, details)."""
    return methods.method(key).run(target, prompt_ids, max_new_tokens, medusa_heads)


ROUNDS = 3  # timed rounds per prompt
WARMUP_TOKENS = 4


class _VariantFailed(Exception):
    """A variant raised while it was timed: which one, and its message."""

    def __init__(self, key: str, error: Exception):
        super().__init__(f"{type(error).__name__}: {error}")
        self.key = key


def compare(
    target: LoadedModel, prompt: str, max_new_tokens: int = 32, variants: tuple[str, ...] = VARIANTS,
    medusa_heads: MedusaHeads | None = None, progress: Callable[[float, str], None] | None = None,
    rounds: int = ROUNDS, warmup_tokens: int = WARMUP_TOKENS,
) -> Comparison:
    """Plain decoding and each variant on one prompt (chat-formatted), warmed up, then timed in ``rounds``
    interleaved rounds by :func:`specsim.measure.timing.time_decoders`. A variant that fails is recorded in ``errors``
    with its message; the others still run."""
    if rounds < 1:
        raise ValueError("rounds must be at least 1")
    prompt_ids = format_prompt(target.tokenizer, prompt)
    comparison = Comparison(prompt, max_new_tokens)
    steps = ["plain", *variants]
    total = len(steps) * (rounds + 1)
    done = [0]

    def tick(text: str) -> None:
        if progress is not None:
            progress(done[0] / total, text)

    for key in list(steps):  # warm-up: first calls pay for allocations and kernel choices, untimed
        tick(f"Warming up {LABELS.get(key, key)}")
        try:
            run_variant(key, target, prompt_ids, min(warmup_tokens, max_new_tokens), medusa_heads)
        except (FileNotFoundError, ValueError, RuntimeError) as error:
            comparison.errors[key] = f"{type(error).__name__}: {error}"
            steps.remove(key)
        done[0] += 1
    if "plain" not in steps:
        return comparison
    first: dict[str, VariantRun] = {}  # each variant's first timed run: what the page shows

    def decoder(key: str):
        def decode(ids, n: int) -> Trace:
            try:
                run = run_variant(key, target, list(ids), n, medusa_heads)
            except (FileNotFoundError, ValueError, RuntimeError) as error:
                raise _VariantFailed(key, error) from error
            first.setdefault(key, run)
            return run[0]
        return decode

    def on_run(r: int, _prompt: int, name: str, _tokens: int) -> None:
        key = "plain" if name == PLAIN else name
        tick(f"Round {r + 1} of {rounds}: {LABELS.get(key, key)}")
        done[0] += 1

    while True:  # a variant that fails while timed is dropped and the timing starts again without it
        first.clear()
        try:
            timed = time_decoders([prompt_ids], [Contender(key, decoder(key)) for key in steps if key != "plain"]
                                  or [Contender("plain copy", decoder("plain"))], decoder("plain"), max_new_tokens,
                                  rounds=rounds, warmup_tokens=0, on_run=on_run)
            break
        except _VariantFailed as failed:
            comparison.errors[failed.key] = str(failed)
            steps.remove(failed.key)
            if failed.key == "plain":
                return comparison
    plains = timed.plain_runs()
    for key in steps:
        trace, params, training, details = first[key]
        pairs = [] if key == "plain" else timed.pairs(key)
        traces = plains if key == "plain" else [s for s, _ in pairs]
        fair = None if key == "plain" else timed.fair(key)
        comparison.results.append(VariantResult(
            key=key, label=LABELS[key], trace=trace, tokens_per_pass=trace.tokens_per_pass,
            acceptance=trace.acceptance_rate if trace.n_checked else None,
            decode_s=statistics.median(t.decode_time_s for t in traces),
            speedup=1.0 if fair is None else fair.headline, extra_parameters=params, training=training,
            identical=True if key == "plain" else timed.identical(key),
            details=details, fair=fair, pairs=tuple(pairs)))
    comparison.texts = token_texts(comparison, target.tokenizer)
    done[0] = total
    tick("Done")
    return comparison


def lesson_rows(rows: list[dict]) -> list[dict]:
    """The variants table with our measured numbers (:func:`summarise` rows) beside what papers report."""
    measured = {row["key"]: row for row in rows}
    out = []
    for m in methods.lesson_methods():
        row = measured.get(m.key)
        out.append({
            "variant": m.label, "reported speedup (papers)": m.claimed_speedup() or "none reported",
            "measured speedup (here)": None if row is None else round(row["speedup"], 2),
            "measured tokens per target pass": None if row is None else round(row["tokens per target pass"], 2),
            "identical to plain": None if row is None else row["identical to plain"],
        })
    return out


def heldout_prompts(limit: int | None = None) -> list[str]:
    """The held-out prompt set (assets/prompts/heldout.json), or the demo prompts if it is missing."""
    prompts = load_heldout() or list(DEMO_PROMPTS.values())
    return prompts[:limit] if limit else prompts


def summarise(comparisons: list[Comparison]) -> list[dict]:
    """One row per variant over several prompts: token-weighted means, total-time speedup, all identical."""
    rows = []
    keys = [r.key for r in comparisons[0].results] if comparisons else []
    for key in keys:
        runs = [r for c in comparisons for r in c.results if r.key == key]
        traces = [r.trace for r in runs]
        pairs = [pair for r in runs for pair in r.pairs]
        fair = fairtime.fair_speedup(pairs) if pairs else None
        rows.append({
            "key": key, "variant": runs[0].label, "prompts": len(runs),
            "tokens per target pass": pooled_tokens_per_pass(traces),
            "acceptance": pooled_acceptance_rate(traces) if sum(t.n_checked for t in traces) else None,
            "speedup": 1.0 if fair is None else fair.headline, "fair": fair,
            "extra parameters": runs[0].extra_parameters, "training": runs[0].training,
            "identical to plain": all(r.identical for r in runs),
        })
    return rows


def format_table(rows: list[dict]) -> str:
    """A Markdown table of :func:`summarise` rows."""
    head = ["variant", "prompts", "tokens per target pass", "acceptance", "speedup", "extra parameters",
            "training", "identical to plain"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        acc = "n/a" if row["acceptance"] is None else f"{row['acceptance']:.0%}"
        lines.append(f"| {row['variant']} | {row['prompts']} | {row['tokens per target pass']:.2f} | {acc} | "
                     f"{row['speedup']:.2f}x | {row['extra parameters']:,} | {row['training']} | "
                     f"{row['identical to plain']} |")
    return "\n".join(lines)


def cpu_name() -> str:
    """This machine's CPU as /proc/cpuinfo names it (:func:`specsim.core.cpu.machine_name`), for a saved result."""
    from specsim.core.cpu import machine_name

    return machine_name()


def main(argv: list[str] | None = None) -> None:
    import torch

    from specsim.variants.medusa import MedusaHeads
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompt", help="one prompt (default: the demo prompts)")
    parser.add_argument("--heldout", type=int, default=0, help="run the first N held-out prompts instead")
    parser.add_argument("--max-new-tokens", default="32", help="new tokens per run (default 32)")
    parser.add_argument("--dtype", choices=("float32", "bfloat16"), default=None,
                        help="the target's dtype (default: the loader's, the one the Variants page runs)")
    parser.add_argument("--save", type=Path, help="also write the summary rows as JSON (the page reads "
                        "assets/variants/heldout_results.json)")
    parser.add_argument("--threads", type=flags.positive_int, default=None,
                        help="torch CPU threads (default: torch's choice; 1 is best on a busy machine)")
    args = parser.parse_args(argv)
    prompts = [args.prompt] if args.prompt else heldout_prompts(args.heldout) if args.heldout else list(
        DEMO_PROMPTS.values())
    try:  # one request per prompt, checked as the live page and the CLI check theirs (the same range sentences)
        requests = [RunRequest.checked({"max_new_tokens": "--max-new-tokens", "prompt": "--prompt"}, prompt=prompt,
                                       max_new_tokens=args.max_new_tokens, device="cpu", dtype=args.dtype)
                    for prompt in prompts]
    except BadRequest as error:
        parser.error(str(error))
    args.max_new_tokens = requests[0].max_new_tokens
    flags.apply_threads(args.threads)
    target = load_bundled_target(device="cpu", dtype=args.dtype)  # None: the loader's default, as the page loads it
    try:
        heads = MedusaHeads.load()
    except FileNotFoundError:
        heads = None  # the Medusa row then reports the missing file
    comparisons = []
    started = time.perf_counter()
    for i, (prompt, request) in enumerate(zip(prompts, requests, strict=True)):
        comparison = compare(target, request.prompt, request.max_new_tokens, medusa_heads=heads)
        comparisons.append(comparison)
        print(f"[{i + 1}/{len(prompts)}] {prompt[:60]!r}: " + ", ".join(
            f"{r.key} {r.tokens_per_pass:.2f} tok/pass {r.speedup:.2f}x" for r in comparison.results), flush=True)
        for key, message in comparison.errors.items():
            print(f"    {key} failed: {message}")
    dtype = str(target.dtype).removeprefix("torch.")
    print(f"\n{len(prompts)} prompts, {args.max_new_tokens} new tokens each, greedy, {dtype}, "
          f"{torch.get_num_threads()} threads, {time.perf_counter() - started:.0f} s in all\n")
    rows = summarise(comparisons)
    print(format_table(rows))
    print(f"\nspeedup: warm-up, {ROUNDS} interleaved rounds per prompt, median wall clock when it agrees with the cost "
          f"model within ±{fairtime.TOLERANCE:.0%}, else the cost model; never above tokens per target pass")
    for row in rows:
        if row.get("fair") is not None:
            fair = row["fair"]
            print(f"  {row['variant']}: wall clock {fair.measured:.2f}x, cost model {fair.model:.2f}x, "
                  f"shown {fair.headline:.2f}x ({fair.source})")
    if args.save:
        args.save.parent.mkdir(parents=True, exist_ok=True)
        args.save.write_text(json.dumps({
            "machine": cpu_name(), "when": time.strftime("%Y-%m-%d"), "dtype": dtype,
            "prompts": len(prompts), "max_new_tokens": args.max_new_tokens, "threads": torch.get_num_threads(),
            "seconds": round(time.perf_counter() - started),
            "rows": [{k: v for k, v in r.items() if k != "fair"} for r in rows]}, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
