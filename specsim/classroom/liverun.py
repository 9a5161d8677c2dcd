"""One live run: an untimed warm-up, speculative decoding, then plain decoding as its baseline, timed as every
speedup in specsim is (:func:`specsim.measure.timing.time_decoders`, each run paired with a plain run of the same
length).

The live page calls :func:`run_live` inside its own process; a class-queue worker (:mod:`specsim.classroom.worker`)
calls
it for a :class:`RunRequest` taken off the queue. Both get the same traces, the same progress reports and the
same way to stop between iterations (``should_stop``).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from specsim import methods
from specsim.core import models
from specsim.core.kpolicy import KPolicy
from specsim.core.models import LoadedModel
from specsim.core.trace import Iteration, Trace
from specsim.measure.timing import PLAIN, Contender, time_decoders
from specsim.request import RunRequest

SPECULATIVE = "speculative"  # the timed contender's name; plain decoding's runs are timing.PLAIN


@dataclass(frozen=True)
class Progress:
    """Where a live run is: the timed run under way (SPECULATIVE or timing.PLAIN), its tokens so far and goal,
    and the iteration just recorded."""

    phase: str
    done: int
    goal: int
    iteration: Iteration


@dataclass(frozen=True)
class LiveRun:
    """What a live run recorded. ``plain`` is None when the run was stopped or wrote nothing;
    ``stopped_in`` is the phase ``should_stop`` ended it in (None: not stopped; "warm-up" before the timed runs)."""

    spec: Trace | None
    plain: Trace | None
    stopped_in: str | None = None


def run_live(target: LoadedModel, drafter, prompt_ids: list[int], k: int, max_new_tokens: int, temperature: float,
             seed: int, policy: KPolicy | None = None, top_p: float | None = None, top_k: int | None = None,
             on_progress: Callable[[Progress], None] | None = None,
             should_stop: Callable[[], bool] | None = None) -> LiveRun:
    """Warm up, then the speculative run and its plain baseline over as many tokens as it wrote.

    ``on_progress`` is called after every iteration of the two timed runs (never the warm-up's); it runs inside
    the timed loop, so it must be cheap. ``should_stop`` is asked between iterations; a True ends the run there,
    keeping the speculative trace recorded so far.
    """
    from specsim.core.engine import plain_generate, speculative_generate
    policy = policy or KPolicy(k)
    phase: list[str | None] = [None]  # None during the untimed warm-up, then SPECULATIVE or PLAIN
    done, goal = [0], [max_new_tokens]
    stopped: list[str | None] = [None]

    def on_run(_round: int, _prompt: int, name: str, new_tokens: int) -> None:
        phase[0], done[0], goal[0] = name, 0, new_tokens

    def on_iteration(it: Iteration) -> None:
        if phase[0] is not None:  # the warm-up's iterations are not the run's
            done[0] = it.context_len - len(prompt_ids) + len(it.emitted)  # the prefill's token counts too
            if on_progress is not None:
                on_progress(Progress(phase[0], done[0], goal[0], it))

    def stop() -> bool:
        if stopped[0] is None and should_stop is not None and should_stop():
            stopped[0] = phase[0] or "warm-up"
        return stopped[0] is not None

    spec = Contender(SPECULATIVE, lambda ids, n: speculative_generate(
        target, drafter, ids, k, n, temperature=temperature, top_p=top_p, top_k=top_k, seed=seed,
        on_iteration=on_iteration, should_stop=stop, schedule=policy.schedule, stop_below=policy.stop_below))

    def plain(ids, n: int) -> Trace:
        return plain_generate(target, ids, n, temperature=temperature, top_p=top_p, top_k=top_k, seed=seed,
                              on_iteration=on_iteration, should_stop=stop)

    timed = time_decoders([prompt_ids], [spec], plain, max_new_tokens, matched_plain=True, on_run=on_run,
                          should_stop=stop)
    spec_trace = timed.runs[SPECULATIVE][0] if timed.runs[SPECULATIVE] else None
    if stopped[0] is not None or spec_trace is None or spec_trace.n_generated == 0:
        return LiveRun(spec_trace, None, stopped[0])
    return LiveRun(spec_trace, timed.plains[SPECULATIVE][0])


# ---- a run described by plain data (specsim.request): what a queued job carries --------------------------------


class ModelShelf:
    """Models loaded once per process, keyed by where they come from; drafters are fresh per run (their KV cache
    is per run), a draft model's weights shared."""

    def __init__(self):
        self._lock = threading.Lock()
        self._targets: dict[tuple, LoadedModel] = {}
        self._drafts: dict[tuple, object] = {}

    def target(self, request: RunRequest) -> LoadedModel:
        r = request.resolved()
        key = (r.target, r.target_local, r.device, r.dtype, r.invariant)
        with self._lock:
            if key not in self._targets:
                self._targets[key] = models.load_model(r.target, device=r.device, dtype=r.dtype,
                                                       invariant=r.invariant, local=r.target_local)
            return self._targets[key]

    def pair(self, request: RunRequest):
        """(target, a fresh drafter) for the request, loading what is not loaded yet (ModelUnavailable if not)."""
        from specsim.core import draft_loader

        target = self.target(request)
        if request.drafter != "model":
            layers = request.early_exit_layers or max(1, len(target.model.model.layers) // 2)
            return target, methods.build_drafter(request.drafter, target, early_exit_layers=layers)
        if not request.draft:
            raise models.ModelUnavailable("No draft model given for the draft-model drafter.")
        key = (request.draft, request.draft_local, id(target))
        with self._lock:
            if key not in self._drafts:
                self._drafts[key] = draft_loader.load_draft_model(request.draft, target, local=request.draft_local)
            return target, copy.copy(self._drafts[key])


class Shelf(Protocol):
    """Where a run's models come from: a class worker's :class:`ModelShelf`, or the page's
    (:class:`app.loaders.PageShelf`, with progress bars)."""

    def pair(self, request: RunRequest) -> tuple[LoadedModel, object]:
        """(the target, a fresh drafter for one run)."""


def run_request(request: RunRequest, shelf: Shelf, on_progress: Callable[[Progress], None] | None = None,
                should_stop: Callable[[], bool] | None = None) -> LiveRun:
    """Load the request's models (once per shelf) and run it: the one way a live run runs, in the page's process
    and on a class worker alike."""
    target, drafter = shelf.pair(request)
    prompt_ids = list(request.prompt_ids) or models.format_prompt(target.tokenizer, request.prompt)
    return run_live(target, drafter, prompt_ids, request.k, request.max_new_tokens, request.temperature,
                    request.seed, request.kpolicy, top_p=request.top_p, top_k=request.top_k,
                    on_progress=on_progress, should_stop=should_stop)


__all__ = ["LiveRun", "ModelShelf", "PLAIN", "Progress", "SPECULATIVE", "Shelf", "run_live", "run_request"]
