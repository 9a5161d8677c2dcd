"""One live run: an untimed warm-up, speculative decoding, then plain decoding as its baseline, timed as every
speedup in specsim is (:func:`specsim.timing.time_decoders`, each run paired with a plain run of the same length).

The live page calls :func:`run_live` inside its own process; a class-queue worker (:mod:`specsim.worker`) calls
it for a :class:`RunRequest` taken off the queue. Both get the same traces, the same progress reports and the
same way to stop between iterations (``should_stop``).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace

from specsim import defaults, methods, models
from specsim.kpolicy import LIVE_POLICIES, KPolicy, live_policy
from specsim.models import LoadedModel
from specsim.timing import PLAIN, Contender, time_decoders
from specsim.trace import Iteration, Trace

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
             seed: int, policy: KPolicy | None = None, top_p: float | None = None,
             on_progress: Callable[[Progress], None] | None = None,
             should_stop: Callable[[], bool] | None = None) -> LiveRun:
    """Warm up, then the speculative run and its plain baseline over as many tokens as it wrote.

    ``on_progress`` is called after every iteration of the two timed runs (never the warm-up's); it runs inside
    the timed loop, so it must be cheap. ``should_stop`` is asked between iterations; a True ends the run there,
    keeping the speculative trace recorded so far.
    """
    from specsim.engine import plain_generate, speculative_generate
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
        target, drafter, ids, k, n, temperature=temperature, top_p=top_p, seed=seed, on_iteration=on_iteration,
        should_stop=stop, schedule=policy.schedule, stop_below=policy.stop_below))

    def plain(ids, n: int) -> Trace:
        return plain_generate(target, ids, n, temperature=temperature, top_p=top_p, seed=seed,
                              on_iteration=on_iteration, should_stop=stop)

    timed = time_decoders([prompt_ids], [spec], plain, max_new_tokens, matched_plain=True, on_run=on_run,
                          should_stop=stop)
    spec_trace = timed.runs[SPECULATIVE][0] if timed.runs[SPECULATIVE] else None
    if stopped[0] is not None or spec_trace is None or spec_trace.n_generated == 0:
        return LiveRun(spec_trace, None, stopped[0])
    return LiveRun(spec_trace, timed.plains[SPECULATIVE][0])


# ---- a run described by plain data: what a queued job carries -------------------------------------------------


@dataclass(frozen=True)
class RunRequest:
    """Everything that decides a live run, as plain data (JSON), so another process can load the models and run it.

    ``target`` is "bundled", a hub id or a folder the caller has already allowed (the page checks custom paths
    before a request is made); ``local`` as for :func:`specsim.models.load_model`. ``device``, ``dtype`` and
    ``invariant`` None mean this machine's defaults; :meth:`resolved` fills them in. A page that has no model
    loaded (class mode) sends the prompt's text instead of its ids: ``prompt_ids`` empty and ``prompt`` set, and
    the process that loads the target encodes it (its chat template). ``early_exit_layers`` 0 means half the
    target's layers.
    """

    prompt_ids: tuple[int, ...]
    prompt: str = ""  # the prompt's text, encoded by whoever loads the target, when prompt_ids is empty
    target: str = defaults.DEFAULT_TARGET
    target_local: bool | None = None
    drafter: str = defaults.DEFAULT_DRAFTER
    draft: str = ""
    draft_local: bool | None = None
    early_exit_layers: int = defaults.DEFAULT_EARLY_EXIT_LAYERS
    k: int = defaults.DEFAULT_K
    policy: str = "fixed"  # specsim.kpolicy.LIVE_POLICIES
    temperature: float = 0.0
    top_p: float | None = None
    seed: int = defaults.SEED_MIN
    max_new_tokens: int = defaults.DEFAULT_MAX_NEW_TOKENS
    device: str | None = None
    dtype: str | None = None
    invariant: bool | None = None
    extra: dict = field(default_factory=dict, compare=False)  # free for the caller (e.g. the prompt's text)

    def problems(self) -> list[str]:
        """What is out of the live page's ranges (specsim.defaults), one sentence each; empty when it may run."""
        out = []
        if not self.prompt_ids and not self.prompt.strip():
            out.append("The prompt is empty.")
        if not defaults.K_MIN <= self.k <= defaults.K_MAX:
            out.append(f"K must be between {defaults.K_MIN} and {defaults.K_MAX}, not {self.k}.")
        if not 1 <= self.max_new_tokens <= defaults.MAX_NEW_TOKENS_LIMIT:
            out.append(f"New tokens must be between 1 and {defaults.MAX_NEW_TOKENS_LIMIT}, not {self.max_new_tokens}.")
        if not 0.0 <= self.temperature <= defaults.TEMPERATURE_MAX:
            out.append(f"Temperature must be between 0 and {defaults.TEMPERATURE_MAX}, not {self.temperature}.")
        if not defaults.SEED_MIN <= self.seed <= defaults.SEED_MAX:
            out.append(f"The seed must be between {defaults.SEED_MIN} and {defaults.SEED_MAX}, not {self.seed}.")
        if self.policy not in LIVE_POLICIES:
            out.append(f"Unknown K policy {self.policy!r}; choose one of {', '.join(LIVE_POLICIES)}.")
        if self.drafter not in methods.DRAFTER_KINDS:
            out.append(f"Unknown drafter {self.drafter!r}; choose one of {', '.join(methods.DRAFTER_KINDS)}.")
        return out

    def resolved(self) -> RunRequest:
        """The same request with device, dtype and decode path made explicit (this machine's defaults)."""
        device = self.device or models.default_device()
        dtype = models.parse_dtype(self.dtype, device)
        invariant = models.wants_invariant(device, dtype) if self.invariant is None else self.invariant
        return replace(self, device=device, dtype=str(dtype).removeprefix("torch."), invariant=invariant)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> RunRequest:
        data = dict(data)
        data["prompt_ids"] = tuple(int(i) for i in data["prompt_ids"])
        return cls(**data)


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
        from specsim import draft_loader

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


def run_request(request: RunRequest, shelf: ModelShelf, on_progress: Callable[[Progress], None] | None = None,
                should_stop: Callable[[], bool] | None = None) -> LiveRun:
    """Load the request's models (once per shelf) and run it."""
    target, drafter = shelf.pair(request)
    prompt_ids = list(request.prompt_ids) or models.format_prompt(target.tokenizer, request.prompt)
    return run_live(target, drafter, prompt_ids, request.k, request.max_new_tokens,
                    request.temperature, request.seed, live_policy(request.policy, request.k), top_p=request.top_p,
                    on_progress=on_progress, should_stop=should_stop)


__all__ = ["LiveRun", "ModelShelf", "PLAIN", "Progress", "RunRequest", "SPECULATIVE", "run_live", "run_request"]
