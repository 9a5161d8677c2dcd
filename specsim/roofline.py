"""The batch-size caveat, as a model: a roofline's ridge point, and what it makes of v at batch size B.

A pass over n tokens (summed over the batch) costs max(1, n / R) one-token passes
(:func:`roofline_pass_cost`): free while it waits on reading the weights, and dearer once its
arithmetic takes longer, past the ridge point R. Pure arithmetic, so the pages that explain it load no model
library (:mod:`specsim.passcost` is the measurement).
"""

from __future__ import annotations

from dataclasses import dataclass

from specsim import analytics
from specsim.defaults import GPU_RIDGE  # noqa: F401  (readers take roofline.GPU_RIDGE beside A100 and H100)


def roofline_pass_cost(tokens: float, ridge: float) -> float:
    """A pass over ``tokens`` tokens (summed over the batch), in one-token passes: max(1, tokens / R), where R is
    the ridge point (tokens per pass before the pass becomes compute-bound)."""
    return max(1.0, tokens / ridge)


@dataclass(frozen=True)
class Accelerator:
    """A datasheet's dense bfloat16 arithmetic and memory bandwidth, enough to place a roofline's ridge."""

    name: str
    tflops: float  # dense bf16 tensor-core TFLOP/s
    tb_per_s: float  # memory bandwidth, TB/s

    @property
    def ridge_tokens(self) -> float:
        """R: tokens one pass can carry before arithmetic, not reading the weights, sets its time.

        Per token a pass does 2 FLOPs per weight (multiply and add) and reads each bf16 weight (2 bytes) once,
        whatever the number of tokens: the pass is memory-bound while tokens · 2 FLOPs / 2 bytes stays below
        the chip's FLOPs per byte, so R = FLOP/s ÷ bytes/s.
        """
        return self.tflops / self.tb_per_s


A100 = Accelerator("A100 SXM (80 GB)", 312.0, 2.04)
H100 = Accelerator("H100 SXM", 989.0, 3.35)
# GPU_RIDGE (from specsim.defaults) lies between A100.ridge_tokens and H100.ridge_tokens.


def batched_verify_cost(batch: int, k: int, ridge: float) -> float:
    """v at batch size B: a pass over B·(K+1) tokens against a plain pass over B tokens (both batched)."""
    return roofline_pass_cost(batch * (k + 1), ridge) / roofline_pass_cost(batch, ridge)


def batched_speedup(alpha: float, k: int, draft_cost: float, batch: int, ridge: float) -> float:
    """Model: the calculator's speedup with v from the roofline at batch size B (c kept as given)."""
    return float(analytics.speedup(alpha, k, draft_cost, batched_verify_cost(batch, k, ridge)))
