"""The target's two decode-pass paths timed against each other: ``python -m specsim.bench --passes``.

The previous path is transformers' forward on the position-invariant model (every operator called from Python);
the one-call path is :mod:`specsim.core.target_pass` (the same operators in one C++ call, bitwise the same
logits). Everything is measured in one run, interleaved, on the same loaded model, switching
:data:`specsim.core.target_pass.ENABLED` between runs:

- one pass over n new tokens: rounds of :func:`specsim.measure.passcost.time_pass_rounds`, the two paths taking
  turns round by round; the one-token pass's median, and v(n) by the one estimator
  (:func:`specsim.measure.passcost.v_from_rounds`);
- plain and speculative decoding of the prompts through the one timing driver
  (:func:`specsim.measure.timing.time_decoders`): the previous path's plain decoding is the baseline every other
  run is paired with, so "plain speedup" is the one-call path's plain decoding over the previous path's (the median
  of the paired runs' ratios); each path's speculative speedup pairs its runs with that path's own plain runs of the
  same prompt and round;
- "same tokens": whether the one-call path's plain decoding wrote the previous path's tokens, prompt for prompt,
  and whether each path's speculative decoding wrote its plain decoding's.
"""

from __future__ import annotations

import contextlib
import random
import statistics
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from specsim.core.kpolicy import KPolicy
from specsim.core.trace import Trace, pooled_acceptance_rate
from specsim.measure.costmodel import cost_model
from specsim.measure.fairtime import fair_speedup
from specsim.measure.passcost import time_pass_rounds, v_from_rounds
from specsim.measure.timing import Contender, time_decoders

PATHS = ("previous", "one call")
"""The two paths, as the table names them: transformers' forward, and :mod:`specsim.core.target_pass`."""
NS = tuple(range(1, 10))
"""Pass sizes timed: one token, and the K + 1 = 2..9 tokens of a verification pass."""


@contextlib.contextmanager
def on_path(path: str) -> Iterator[None]:
    """Run the body on one path (:data:`PATHS`), restoring the switch after."""
    from specsim.core import target_pass  # here: the pages read saved runs without loading torch

    before = target_pass.ENABLED
    target_pass.ENABLED = path == "one call"
    try:
        yield
    finally:
        target_pass.ENABLED = before


@dataclass(frozen=True)
class PathRow:
    """What one path measured."""

    path: str
    pass_ms: float  # median one-token pass
    v: dict[int, float]  # v(n), n = 2..9
    plain_tok_s: float  # median decode tokens/s of plain decoding
    plain_speedup: float  # plain decoding over the previous path's (median paired ratio); 1 for the previous path
    spec_tok_s: float
    spec_speedup: float  # speculative over this path's own plain decoding (fair)
    alpha: float
    draft_cost: float  # c: a draft pass in this path's one-token target passes (the cost model's)
    verify_cost: float  # v(K + 1) in the speculative runs (the cost model's)
    tokens_per_loop: float
    same_plain: bool  # plain decoding wrote the previous path's tokens on every prompt
    same_spec: bool  # speculative decoding wrote this path's plain tokens on every run


def pass_rounds(target, rounds: int, seed: int = 0) -> dict[str, list[dict[int, float]]]:
    """``rounds`` rounds of passes over n = 1..9 new tokens per path, the paths taking turns (after one warm-up
    round each)."""
    timings = {}
    for path in PATHS:
        with on_path(path):
            timings[path] = time_pass_rounds(target, NS, random.Random(seed), warmup=1)
    measured: dict[str, list[dict[int, float]]] = {path: [] for path in PATHS}
    for r in range(rounds):
        for path in PATHS if r % 2 == 0 else PATHS[::-1]:
            with on_path(path):
                measured[path].append(next(timings[path]))
    for timing in timings.values():
        timing.close()
    return measured


def compare_paths(target, drafter, prompts: Sequence[Sequence[int]], k: int, max_new_tokens: int,
                  rounds: int = 1, pass_rounds_count: int = 15) -> list[PathRow]:
    """Both paths measured in one run (module docstring); the drafter is the default draft at the profile's K."""
    from specsim.core.engine import plain_generate, speculative_generate

    passes = pass_rounds(target, pass_rounds_count)

    def plain_on(path: str):
        def decode(ids: Sequence[int], n: int) -> Trace:
            with on_path(path):
                return plain_generate(target, ids, n)
        return decode

    def spec_on(path: str):
        def decode(ids: Sequence[int], n: int) -> Trace:
            with on_path(path):
                return speculative_generate(target, drafter, ids, KPolicy(k), n)
        return decode

    contenders = [Contender("one call plain", plain_on("one call")), Contender("previous spec", spec_on("previous")),
                  Contender("one call spec", spec_on("one call"))]
    timed = time_decoders(prompts, contenders, plain_on("previous"), max_new_tokens, rounds=rounds)
    previous_plain = [plain for _, plain in timed.pairs("one call plain")]
    plains = {"previous": previous_plain, "one call": timed.runs["one call plain"]}
    specs = {"previous": timed.runs["previous spec"], "one call": timed.runs["one call spec"]}
    rows = []
    for path in PATHS:
        seconds = [r[1] for r in passes[path]]
        v = v_from_rounds(passes[path])
        pairs = list(zip(specs[path], plains[path], strict=True))  # same prompt and round
        # plain over plain: the median of the paired wall-clock ratios (the cost model's ceiling, one token per
        # pass, would cap it at 1); speculative: the fair speedup, wall clock checked against the cost model
        plain_speedup = 1.0 if path == "previous" else fair_speedup(timed.pairs("one call plain")).measured
        costs = cost_model(specs[path], plains[path])
        rows.append(PathRow(
            path=path, pass_ms=statistics.median(seconds) * 1e3, v={n: v[n] for n in NS if n > 1},
            plain_tok_s=statistics.median(t.tokens_per_s for t in plains[path]), plain_speedup=plain_speedup,
            spec_tok_s=statistics.median(t.tokens_per_s for t in specs[path]),
            spec_speedup=fair_speedup(pairs).headline, alpha=pooled_acceptance_rate(specs[path]),
            draft_cost=costs.draft_cost, verify_cost=costs.verify_cost, tokens_per_loop=costs.tokens_per_loop,
            same_plain=all(a.generated_ids == b.generated_ids for a, b in zip(plains[path], previous_plain,
                                                                                strict=True)),
            same_spec=all(s.generated_ids == p.generated_ids for s, p in pairs)))
    return rows


def format_paths(rows: Sequence[PathRow], k: int) -> str:
    """The table ``--passes`` prints: one row per path, then how the one-call path compares."""
    head = ["path", "pass ms", *(f"v({n})" for n in NS if n > 1), "plain tok/s", "plain speedup",
            f"spec tok/s (K={k})", "spec speedup", "alpha", "same tokens"]
    table = [head]
    for row in rows:
        table.append([row.path, f"{row.pass_ms:.2f}", *(f"{row.v[n]:.2f}" for n in NS if n > 1),
                      f"{row.plain_tok_s:.1f}", f"{row.plain_speedup:.2f}x", f"{row.spec_tok_s:.1f}",
                      f"{row.spec_speedup:.2f}x", f"{row.alpha:.2f}",
                      "yes" if row.same_plain and row.same_spec else "NO"])
    widths = [max(len(line[i]) for line in table) for i in range(len(head))]
    lines = ["  ".join(cell.rjust(w) for cell, w in zip(line, widths, strict=True)) for line in table]
    previous, one_call = rows[0], rows[-1]
    lines.append(f"\none-token pass: {previous.pass_ms:.2f} -> {one_call.pass_ms:.2f} ms "
                 f"({previous.pass_ms / one_call.pass_ms:.2f}x); plain decoding {one_call.plain_speedup:.2f}x the "
                 f"previous path's (median of the paired runs); speculative decoding {previous.spec_speedup:.2f}x -> "
                 f"{one_call.spec_speedup:.2f}x over each path's own plain decoding.")
    lines.append("same tokens: the one-call path's plain decoding wrote the previous path's tokens on every prompt, "
                 "and each path's speculative decoding wrote its own plain decoding's" if all(
                     r.same_plain and r.same_spec for r in rows) else
                 "same tokens NO: a path wrote other tokens (a bug: the one-call pass is bitwise the forward)")
    return "\n".join(lines)


@dataclass(frozen=True)
class PathRun:
    """One ``--passes`` run as the pages read it (assets/measurements/decode_paths.json): where it ran, the
    speculative settings, and each path's row."""

    machine: str
    when: str
    prompts: int
    max_new_tokens: int
    rounds: int
    k: int
    rows: tuple[PathRow, ...]

    def row(self, path: str) -> PathRow:
        return next(row for row in self.rows if row.path == path)


def save(run: PathRun, path) -> None:
    """Write a run as JSON (pydantic's dataclass support, so :func:`load` checks every field)."""
    from pathlib import Path

    from pydantic import TypeAdapter

    Path(path).write_bytes(TypeAdapter(PathRun).dump_json(run, indent=1) + b"\n")


def load(path) -> PathRun | None:
    """A saved run, or None when the file is missing or no longer has this shape."""
    from pathlib import Path

    from pydantic import TypeAdapter, ValidationError

    try:
        return TypeAdapter(PathRun).validate_json(Path(path).read_bytes())
    except (OSError, ValidationError):
        return None

