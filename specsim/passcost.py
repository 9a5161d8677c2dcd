"""Is verification free here? The cost of one target pass over n new tokens, measured on this machine.

v(n) = time of a pass over n new tokens / time of a pass over one, both on top of the same cached
context, which is what a verification pass of K = n − 1 guesses costs in the calculator's units.
On a memory-bound accelerator the curve stays flat near 1 for small n (the weights are read once
whatever n is, and the arithmetic units have room to spare); where compute runs out it climbs with
a slope. A CPU runs out of arithmetic much sooner than a GPU.

The batch-size caveat is a *model* (a roofline), not a measurement: a pass over B sequences of n
tokens takes max(1, B·n / R) one-token passes, where R is how many tokens one pass can process
before arithmetic, not memory, sets its time. Larger batches use up the spare arithmetic that made
verification free, so the gain shrinks.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from specsim import analytics

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

    @property
    def one_token_s(self) -> float:
        return self.seconds[self.ns.index(1)]

    @property
    def v(self) -> tuple[float, ...]:
        """v(n): each pass in one-token passes."""
        return tuple(s / self.one_token_s for s in self.seconds)

    def v_at(self, n: int) -> float:
        """v at n new tokens, interpolated linearly between measured n (clamped at the ends)."""
        return float(np.interp(n, self.ns, self.v))

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

    def to_dict(self) -> dict:
        return {"ns": list(self.ns), "seconds": list(self.seconds), "context": self.context, "repeats": self.repeats,
                "dtype": self.dtype, "device": self.device, "threads": self.threads}


def measure_verify_curve(target, context_ids: Sequence[int], ns: Sequence[int] = DEFAULT_NS, repeats: int = 5,
                         seed: int = 0) -> VerifyCurve:
    """Time target passes over n new tokens on a cached ``context_ids``, every n once per round in a
    shuffled order (so slow spells hit all n alike), after one untimed warm-up round; medians per n."""
    import torch
    from transformers import DynamicCache

    from specsim.drafters import crop_cache

    if 1 not in ns:
        raise ValueError("the curve needs n = 1, the pass every other n is compared with")
    if len(context_ids) < 2:
        raise ValueError("the context needs at least two tokens")
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    model, device = target.model, target.device
    ids = torch.tensor([list(context_ids)], dtype=torch.long, device=device)
    filler = ids[:, -1:].repeat(1, max(ns))  # the new tokens' values do not change a pass's cost
    order = list(ns)
    rng = random.Random(seed)
    times: dict[int, list[float]] = {n: [] for n in ns}
    with torch.inference_mode():
        cache = DynamicCache()
        model(input_ids=ids, past_key_values=cache, use_cache=True, logits_to_keep=1)
        base = ids.shape[1]
        for round_ in range(repeats + 1):
            rng.shuffle(order)
            for n in order:
                start = time.perf_counter()
                model(input_ids=filler[:, :n], past_key_values=cache, use_cache=True)
                if str(device).startswith("cuda"):
                    torch.cuda.synchronize()
                elapsed = time.perf_counter() - start
                crop_cache(cache, base)
                if round_ > 0:  # round 0 is the warm-up
                    times[n].append(elapsed)
    return VerifyCurve(
        ns=tuple(ns), seconds=tuple(statistics.median(times[n]) for n in ns), context=int(ids.shape[1]),
        repeats=repeats, dtype=str(getattr(target, "dtype", "")).removeprefix("torch."), device=str(device),
        threads=torch.get_num_threads())


# ---- the batch-size caveat (a model) ----------------------------------------------------------------
def roofline_pass_cost(tokens: float, ridge: float) -> float:
    """A pass over ``tokens`` tokens (summed over the batch), in one-token passes: max(1, tokens / R)."""
    return max(1.0, tokens / ridge)


def batched_verify_cost(batch: int, k: int, ridge: float) -> float:
    """v at batch size B: a pass over B·(K+1) tokens against a plain pass over B tokens (both batched)."""
    return roofline_pass_cost(batch * (k + 1), ridge) / roofline_pass_cost(batch, ridge)


def batched_speedup(alpha: float, k: int, draft_cost: float, batch: int, ridge: float) -> float:
    """Model: the calculator's speedup with v from the roofline at batch size B (c kept as given)."""
    return float(analytics.speedup(alpha, k, draft_cost, batched_verify_cost(batch, k, ridge)))
