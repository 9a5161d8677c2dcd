"""The one timer every measured pass goes through."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


def now(device: torch.device | str = "cpu") -> float:
    """``time.perf_counter()`` once the device has finished its queued work.

    CUDA kernels run asynchronously: without the sync a timed GPU pass would end when it was
    queued, not when it finished, and the measured draft cost c would be far too small.
    """
    if str(device).startswith("cuda"):
        import torch  # loaded already: a CUDA device is torch's

        torch.cuda.synchronize()
    return time.perf_counter()
