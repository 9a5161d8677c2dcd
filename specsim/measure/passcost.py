"""What one target pass costs as a function of how many new tokens it carries: v(n).

The lesson's third fact: checking K + 1 tokens costs about one pass, because decoding a token is
memory-bound (the weights are read once whatever the number of tokens). v(n) = time of a pass over
n new tokens / time of a one-token pass measures how true that is on this machine: flat (v near 1)
while the pass is memory-bound, then a slope once arithmetic dominates.

Timing on a shared machine (docs/timing.md): one timing loop, :func:`time_pass_rounds` (warm-up passes first,
then rounds in which every n runs once, in a new random order each round, so a burst of load hits them alike),
and one estimator, :func:`v_from_rounds` (each round's passes divided by the same round's one-token pass, the
median over rounds). The verify page (:func:`measure_pass_costs`) and the machine profile
(:func:`specsim.measure.profile_timing.time_v`) both use them.

:class:`VerifyCurve` is how the "Is verification free here?" page reads a measurement: the flat part,
the slope, a roofline fit. The batch-size caveat is a *model* (a roofline), not a measurement: a pass
over B sequences of n tokens takes max(1, B·n / R) one-token passes, where R is how many tokens one
pass can process before arithmetic, not memory, sets its time. Larger batches use up the spare
arithmetic that made verification free, so the gain shrinks.
"""

from __future__ import annotations

import itertools
import random
import statistics
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from specsim.core.clock import now
from specsim.core.models import LoadedModel, format_prompt

CONTEXT_TEXT = "Explain, in a few sentences, why the sky looks blue during the day but red at sunset."
"""About 45 tokens through the chat template: the context every measured pass appends to."""


def v_from_rounds(rounds: Sequence[Mapping[int, float]]) -> dict[int, float]:
    """v(n) from rounds of timed passes (:func:`time_pass_rounds`): in each round, the pass over n new tokens divided
    by the same round's one-token pass; the median over the rounds. The one estimator of v in specsim."""
    return {n: 1.0 if n == 1 else statistics.median(r[n] / r[1] for r in rounds) for n in rounds[0]}


@dataclass(frozen=True)
class PassCosts:
    """Median seconds of one target pass over n new tokens, for each measured n, and v(n) by
    :func:`v_from_rounds` (``ratios``; empty for costs made by hand, which then divide the medians)."""

    seconds: dict[int, float]
    dtype: str
    repeats: int
    ratios: dict[int, float] = field(default_factory=dict)

    def v(self, n: int) -> float:
        """Cost of a pass over n new tokens, in one-token passes."""
        return self.ratios[n] if self.ratios else self.seconds[n] / self.seconds[1]


def measure_pass_costs(target: LoadedModel, ns: Sequence[int] = tuple(range(1, 18)), repeats: int = 7,
                       warmup: int = 2, context_text: str = CONTEXT_TEXT,
                       on_round: Callable[[int, int], None] | None = None, seed: int = 0) -> PassCosts:
    """Time target passes over n new tokens after the same context (n = 1 always), ``repeats`` rounds of
    :func:`time_pass_rounds` after ``warmup``. ``on_round(done, total)`` is called between rounds, outside the
    timed passes (a class worker reports progress there)."""
    ns = sorted({1, *ns})
    rounds: list[dict[int, float]] = []
    timing = time_pass_rounds(target, ns, random.Random(seed), warmup=warmup, context_text=context_text)
    for times in itertools.islice(timing, repeats):
        rounds.append(times)
        if on_round is not None:
            on_round(warmup + len(rounds), warmup + repeats)
    timing.close()
    return PassCosts({n: statistics.median(r[n] for r in rounds) for n in ns},
                     str(target.dtype).removeprefix("torch."), repeats, v_from_rounds(rounds))


def time_pass_rounds(target: LoadedModel, ns: Sequence[int], rng, warmup: int = 1,
                     context_text: str = CONTEXT_TEXT) -> Iterator[dict[int, float]]:
    """Endless rounds of passes over each n new tokens after the same context, in a new random order every round
    (``rng.shuffle``), so no size always runs right after another; yields each round's seconds by n."""
    import torch
    from transformers import DynamicCache

    from specsim.core.drafters import crop_cache
    ids = format_prompt(target.tokenizer, context_text)
    device = target.device
    order = list(ns)
    with torch.inference_mode():
        cache = DynamicCache()
        target.model(input_ids=torch.tensor([ids], device=device), past_key_values=cache, use_cache=True)
        round_ = 0
        while True:
            rng.shuffle(order)
            times = {}
            for n in order:
                crop_cache(cache, len(ids))
                new = torch.tensor([(ids * (n // len(ids) + 1))[:n]], device=device)
                start = now(device)
                target.model(input_ids=new, past_key_values=cache, use_cache=True)
                times[n] = now(device) - start
            round_ += 1
            if round_ > warmup:
                yield times


def plain_tokens_per_s(target: LoadedModel, max_new_tokens: int = 32, repeats: int = 3,
                       context_text: str = CONTEXT_TEXT) -> float:
    """Plain greedy decoding speed (decode only, after one warm-up run): median over the repeats."""
    from specsim.core.engine import plain_generate
    ids = format_prompt(target.tokenizer, context_text)
    plain_generate(target, ids, 4)
    rates = []
    for _ in range(repeats):
        trace = plain_generate(target, ids, max_new_tokens)
        rates.append(trace.tokens_per_s)
    return statistics.median(rates)


def format_pass_costs(costs: Sequence[PassCosts]) -> str:
    """One row per dtype: ms of a pass over n new tokens, and v(n) beneath it."""
    ns = sorted(costs[0].seconds)
    head = ["n new tokens", *map(str, ns)]
    rows = [head]
    for c in costs:
        rows.append([f"{c.dtype} ms", *(f"{c.seconds[n] * 1e3:.1f}" for n in ns)])
        rows.append([f"{c.dtype} v(n)", *(f"{c.v(n):.2f}" for n in ns)])
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return "\n".join("  ".join(cell.rjust(w) for cell, w in zip(r, widths, strict=True)) for r in rows)


def monotone_v(medians: dict[int, float]) -> dict[int, float]:
    """v(n) fitted non-decreasing in n and never below 1 (isotonic regression): a pass over more tokens never
    costs less, so a measured dip is noise."""
    from scipy.optimize import isotonic_regression

    ns = sorted(medians)
    fit = isotonic_regression([max(1.0, medians[n]) for n in ns], increasing=True).x
    return {n: float(max(1.0, x)) for n, x in zip(ns, fit, strict=True)}


# ---- reading a measurement: the "Is verification free here?" page ------------------------------------
DEFAULT_NS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16)
FLAT_TOLERANCE = 0.10  # v(n) within 10 % of 1 counts as "free"


@dataclass(frozen=True)
class VerifyCurve:
    """Median seconds of a pass over n new tokens, for each n, after a warm-up."""

    ns: tuple[int, ...]
    seconds: tuple[float, ...]
    context: int  # cached tokens each pass attends to
    repeats: int
    dtype: str = ""
    device: str = ""
    threads: int = 0
    fitted: tuple[float, ...] = ()  # v_fitted, computed where the curve was measured (:meth:`of`)
    ratios: tuple[float, ...] = ()  # v(n) by :func:`v_from_rounds` (:meth:`of`); empty: the medians divided

    @property
    def one_token_s(self) -> float:
        return self.seconds[self.ns.index(1)]

    @property
    def v(self) -> tuple[float, ...]:
        """v(n): each pass in one-token passes (:func:`v_from_rounds`, when the curve came from a measurement)."""
        return self.ratios or tuple(s / self.one_token_s for s in self.seconds)

    @property
    def v_fitted(self) -> tuple[float, ...]:
        """v(n) fitted non-decreasing and never below 1 (:func:`monotone_v`): what the page offers the calculator.
        Fitted once by :meth:`of`, where the curve is measured: a class replica that shows a worker's curve never
        imports scipy.optimize (36 MB)."""
        if self.fitted:
            return self.fitted
        fit = monotone_v(dict(zip(self.ns, self.v, strict=True)))
        return tuple(fit[n] for n in self.ns)

    def v_at(self, n: int) -> float:
        """The fitted v at n new tokens, interpolated linearly between measured n (clamped at the ends): never below
        1, and never less for more tokens (a measured dip, such as v = 0.94, is noise)."""
        return float(np.interp(n, self.ns, self.v_fitted))

    def flat_until(self, tolerance: float = FLAT_TOLERANCE) -> int:
        """The largest n up to which every v stays within ``tolerance`` of 1 (1 when even n = 2 costs more)."""
        last = 1
        for n, v in zip(self.ns, self.v, strict=True):
            if v > 1 + tolerance:
                break
            last = n
        return last

    def slope(self) -> float:
        """Least-squares extra cost per extra token, over n from the end of the flat part on."""
        start = self.flat_until()
        pts = [(n, v) for n, v in zip(self.ns, self.v, strict=True) if n >= start]
        if len(pts) < 2:
            return 0.0
        x, y = np.array(pts, dtype=float).T
        return float(np.polyfit(x, y, 1)[0])

    def ridge(self) -> float:
        """R of the roofline model fitted to this curve: v(n) ≈ max(1, n / R), least squares over n > flat part."""
        pts = [(n, v) for n, v in zip(self.ns, self.v, strict=True) if n > self.flat_until() and v > 1]
        if not pts:
            return float(max(self.ns))  # never left the flat part: R is at least the largest n tried
        # v = n / R  =>  1/R = Σ n v / Σ n² (least squares through the origin)
        n, v = np.array(pts, dtype=float).T
        return float((n * n).sum() / (n * v).sum())

    def roofline_gap(self) -> float:
        """The largest gap, in one-token passes, between the measured v(n) and the fitted roofline max(1, n / R): small
        where the curve is flat and then turns a corner, large where it rises steadily from the start."""
        ridge = self.ridge()
        return max(abs(v - max(1.0, n / ridge)) for n, v in zip(self.ns, self.v, strict=True))

    def roofline_fits(self, tolerance: float = FLAT_TOLERANCE) -> bool:
        """Whether the roofline describes this curve to within ``tolerance`` of a one-token pass at every n."""
        return self.roofline_gap() <= tolerance

    @classmethod
    def of(cls, costs: PassCosts, context: int = 0, device: str = "", threads: int = 0) -> VerifyCurve:
        """The page's reading of a :func:`measure_pass_costs` result."""
        ns = tuple(sorted(costs.seconds))
        curve = cls(ns=ns, seconds=tuple(costs.seconds[n] for n in ns), context=context, repeats=costs.repeats,
                    dtype=costs.dtype, device=device, threads=threads, ratios=tuple(costs.v(n) for n in ns))
        return replace(curve, fitted=curve.v_fitted)

    def to_dict(self) -> dict:
        return {"ns": list(self.ns), "seconds": list(self.seconds), "context": self.context, "repeats": self.repeats,
                "dtype": self.dtype, "device": self.device, "threads": self.threads, "ratios": list(self.ratios),
                "fitted": list(self.fitted)}

    @classmethod
    def from_dict(cls, d: Mapping) -> VerifyCurve:
        """The curve :meth:`to_dict` wrote (a recording read back: the page shows it before a measurement)."""
        return cls(ns=tuple(int(n) for n in d["ns"]), seconds=tuple(float(x) for x in d["seconds"]),
                   context=int(d["context"]), repeats=int(d["repeats"]), dtype=str(d.get("dtype", "")),
                   device=str(d.get("device", "")), threads=int(d.get("threads", 0)),
                   ratios=tuple(float(x) for x in d.get("ratios", ())),
                   fitted=tuple(float(x) for x in d.get("fitted", ())))


@dataclass(frozen=True)
class RecordedCurve:
    """A v(n) curve measured once on a named machine and shipped with the app (``python -m specsim.measure.passcost
    --save``), shown until the learner measures their own."""

    curve: VerifyCurve
    machine: str
    when: str


def load_recorded(path) -> RecordedCurve | None:
    """The recording at ``path``, or None when it is missing or unreadable (the page then waits for the button)."""
    import json
    from pathlib import Path

    try:
        d = json.loads(Path(path).read_text(encoding="utf-8"))
        return RecordedCurve(VerifyCurve.from_dict(d["curve"]), str(d["machine"]), str(d["when"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m specsim.measure.passcost [--save]``: measure v(n) of the bundled target as the page does, print it,
    and with ``--save`` write the recording the page shows before its button is pressed."""
    import argparse
    import json
    import time

    import torch

    from specsim.core.models import load_bundled_target
    from specsim.core.paths import VERIFY_CURVE_RECORDED
    from specsim.measure.compare_variants import cpu_name

    parser = argparse.ArgumentParser(prog="python -m specsim.measure.passcost", description=main.__doc__)
    parser.add_argument("--repeats", type=int, default=9, help="timed rounds (the page uses 5)")
    parser.add_argument("--save", action="store_true", help=f"write {VERIFY_CURVE_RECORDED}")
    args = parser.parse_args(argv)
    target = load_bundled_target()
    costs = measure_pass_costs(target, ns=DEFAULT_NS, repeats=args.repeats, warmup=1)
    curve = VerifyCurve.of(costs, len(format_prompt(target.tokenizer, CONTEXT_TEXT)), str(target.device),
                           torch.get_num_threads())
    for n, v in zip(curve.ns, curve.v, strict=True):
        print(f"v({n}) = {v:.3f}")
    if args.save:
        VERIFY_CURVE_RECORDED.parent.mkdir(parents=True, exist_ok=True)
        VERIFY_CURVE_RECORDED.write_text(json.dumps({"machine": cpu_name(), "when": time.strftime("%Y-%m-%d"),
                                                     "curve": curve.to_dict()}, indent=1), encoding="utf-8")
        print(f"wrote {VERIFY_CURVE_RECORDED}")


if __name__ == "__main__":
    main()
