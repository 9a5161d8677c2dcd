"""One live run: an untimed warm-up, speculative decoding, then plain decoding as its baseline, timed as every
speedup in specsim is (:func:`specsim.measure.timing.time_decoders`, each run paired with a plain run of the same
length).

Every learner's run goes through :func:`run_request`: the live page calls it inside its own process, a class-queue
worker (:mod:`specsim.classroom.worker`) for a :class:`RunRequest` taken off the queue, and the command line
(:mod:`specsim.measure.cli`) for the request its flags make. All get the same traces, the same progress reports and
the same way to stop between iterations (``should_stop``).
"""

from __future__ import annotations

import copy
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from specsim import methods
from specsim.core import models, paths
from specsim.core.defaults import DRAFT_MODEL
from specsim.core.kpolicy import KPolicy
from specsim.core.models import LoadedModel
from specsim.core.trace import Iteration, Trace
from specsim.measure.timing import PLAIN, Contender, time_decoders
from specsim.request import RunRequest

if TYPE_CHECKING:  # torch stays out of a class replica, which imports this module for its records
    from specsim.core.sampling import SamplingConfig
    from specsim.core.trees import TreeShape

Loading = Callable[[float, str], None]
"""How far a model load is: (fraction done, what it is doing), for a page's progress bar."""

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


def run_live(target: LoadedModel, drafter, prompt_ids: list[int], policy: KPolicy, max_new_tokens: int,
             sampling: SamplingConfig | None = None, seed: int = 0,
             on_progress: Callable[[Progress], None] | None = None,
             should_stop: Callable[[], bool] | None = None, tree: TreeShape | None = None) -> LiveRun:
    """Warm up, then the speculative run and its plain baseline over as many tokens as it wrote.

    ``tree`` (optional): each iteration drafts a token tree of that shape (:mod:`specsim.core.trees`) instead of
    the chain ``policy`` sizes.

    ``on_progress`` is called after every iteration of the two timed runs (never the warm-up's); it runs inside
    the timed loop, so it must be cheap. ``should_stop`` is asked between iterations; a True ends the run there,
    keeping the speculative trace recorded so far.
    """
    from specsim.core.engine import GREEDY, plain_generate, speculative_generate
    sampling = sampling or GREEDY
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

    if tree is None:
        spec = Contender(SPECULATIVE, lambda ids, n: speculative_generate(
            target, drafter, ids, policy, n, sampling, seed, on_iteration=on_iteration, should_stop=stop))
    else:
        from specsim.core.trees import tree_generate

        spec = Contender(SPECULATIVE, lambda ids, n: tree_generate(
            target, drafter, ids, tree, n, sampling, seed, on_iteration=on_iteration, should_stop=stop))

    def plain(ids, n: int) -> Trace:
        return plain_generate(target, ids, n, sampling, seed, on_iteration=on_iteration, should_stop=stop)

    timed = time_decoders([prompt_ids], [spec], plain, max_new_tokens, matched_plain=True, on_run=on_run,
                          should_stop=stop)
    spec_trace = timed.runs[SPECULATIVE][0] if timed.runs[SPECULATIVE] else None
    if stopped[0] is not None or spec_trace is None or spec_trace.n_generated == 0:
        return LiveRun(spec_trace, None, stopped[0])
    return LiveRun(spec_trace, timed.plains[SPECULATIVE][0])


# ---- a run described by plain data (specsim.request): what a queued job carries --------------------------------


class ModelShelf:
    """The one shelf of loaded models in a process: a class worker's (:data:`specsim.classroom.running.SHELF`) and the
    pages' (:func:`app.loaders.shelf`, which passes progress bars). Targets are keyed by where they come from and how
    they run (the resolved request); at most :attr:`MAX_TARGETS` stay, the least recently used leaving first with
    its drafts. A draft model is loaded once per target; every pair hands out a fresh drafter (its KV cache is per
    run), the weights shared. ``loads`` names every model loaded, in order."""

    MAX_TARGETS = 4

    def __init__(self):
        self._lock = threading.RLock()
        self._targets: OrderedDict[tuple, LoadedModel] = OrderedDict()
        self._drafts: dict[tuple, object] = {}
        self.loads: list[str] = []

    def target(self, request: RunRequest, progress: Loading | None = None) -> LoadedModel:
        """The request's target, loading it (with ``progress(fraction, message)``) if it is not on the shelf."""
        r = request.resolved()
        key = (r.target, r.target_local, r.device, r.dtype, r.invariant)
        with self._lock:
            if key not in self._targets:
                loaded = models.load_model(r.target, device=r.device, dtype=r.dtype, invariant=r.invariant,
                                           local=r.target_local, **({"progress": progress} if progress else {}))
                self._remember(key, loaded)
            self._targets.move_to_end(key)
            return self._targets[key]

    def target_named(self, name: str, local: bool | None = None, progress: Loading | None = None) -> LoadedModel:
        """The target ``name`` as a run of it would load it (this machine's device, dtype and decode path)."""
        # a request for the target alone: only where it comes from is set, so there is no run to validate
        return self.target(RunRequest.model_construct(target=name, target_local=local), progress)

    def _remember(self, key: tuple, loaded: LoadedModel) -> None:
        self._targets[key] = loaded
        self.loads.append(loaded.name)
        while len(self._targets) > self.MAX_TARGETS:
            _, gone = self._targets.popitem(last=False)
            for draft_key in [k for k in self._drafts if k[2] == id(gone)]:
                del self._drafts[draft_key]

    def draft(self, name: str, local: bool | None, target: LoadedModel):
        """A fresh drafter around the draft model ``name`` loaded once for ``target``."""
        return copy.copy(self._draft_model(name, local, target))

    def _draft_model(self, name: str, local: bool | None, target: LoadedModel):
        """The draft model ``name`` for ``target``, loaded the first time it is asked for (the shelf's own copy)."""
        from specsim.core import draft_loader

        where = paths.resolve(name) if local is not False else None
        if where is not None and where.is_dir():  # a folder however it was named: one copy, not one per spelling
            name, local = os.path.realpath(where), True
        key = (name, local, id(target))
        with self._lock:
            if key not in self._drafts:
                self._drafts[key] = draft_loader.load_draft_model(name, target, local=local)
                self.loads.append(name)
            return self._drafts[key]

    def load(self, request: RunRequest, progress: Loading | None = None) -> LoadedModel:
        """Put the request's models on the shelf (its target, and its draft model's weights) without building a
        drafter: the run that follows builds its one drafter with :meth:`pair`. The target, which stays loaded."""
        target = self.target(request, progress)
        if request.drafter == DRAFT_MODEL and request.draft:
            self._draft_model(request.draft, request.draft_local, target)
        return target

    def pair(self, request: RunRequest, progress: Loading | None = None):
        """(target, a fresh drafter) for the request, loading what is not loaded yet (ModelUnavailable if not)."""
        target = self.target(request, progress)
        if request.drafter != DRAFT_MODEL:
            layers = request.early_exit_layers or max(1, len(target.model.model.layers) // 2)
            return target, methods.build_drafter(request.drafter, target, early_exit_layers=layers)
        if not request.draft:
            raise models.ModelUnavailable("No draft model given for the draft-model drafter.")
        return target, self.draft(request.draft, request.draft_local, target)


class Shelf(Protocol):
    """Where a run's models come from: a :class:`ModelShelf` (a worker's, or the pages' one), or a test's stand-in."""

    def pair(self, request: RunRequest) -> tuple[LoadedModel, object]:
        """(the target, a fresh drafter for one run)."""


def run_request(request: RunRequest, shelf: Shelf, on_progress: Callable[[Progress], None] | None = None,
                should_stop: Callable[[], bool] | None = None) -> LiveRun:
    """Load the request's models (once per shelf) and run it: the one way a live run runs, in the page's process
    and on a class worker alike."""
    target, drafter = shelf.pair(request)
    prompt_ids = list(request.prompt_ids) or models.format_prompt(target.tokenizer, request.prompt)
    return run_live(target, drafter, prompt_ids, request.kpolicy, request.max_new_tokens, request.sampling,
                    request.seed, on_progress=on_progress, should_stop=should_stop, tree=request.tree)


__all__ = ["LiveRun", "ModelShelf", "PLAIN", "Progress", "SPECULATIVE", "Shelf", "run_live", "run_request"]
