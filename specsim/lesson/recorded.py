"""The recorded runs the live page opens on, so a learner steps through real runs before any model loads.

Two recordings (:data:`RECIPES`): the technique's easiest win on a CPU (prompt lookup on a prompt that asks
for its own words back) and the everyday case (the default draft on free prose), whose speedup depends on how
well the shipped draft guesses: below 1x with the drafts of 2026-12-01, above 1x since the draft trained
longer on the corpus (docs/distill.md). The page computes every figure from the trace it replays.
``python -m app.live.record_default`` runs each through :func:`record` (timed by :mod:`specsim.measure.timing`:
warm-up first, speculative then plain) and writes both traces with a label (CPU, threads, dtype, date) to
``assets/live/<name>.json``. A recording whose plain baseline is noisy
(:func:`specsim.measure.costmodel.baseline_noise`) is refused and run again: a page never opens on a speedup that is
noise.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from pathlib import Path

from specsim.core.cpu import machine_name
from specsim.core.defaults import DEFAULT_DRAFT, DEFAULT_DRAFTER, DEFAULT_K, DEFAULT_MAX_NEW_TOKENS
from specsim.core.kpolicy import KPolicy
from specsim.core.paths import RECORDINGS
from specsim.core.prompt_sets import EXAMPLES
from specsim.core.trace import Trace
from specsim.measure.costmodel import baseline_noise, plain_pass_times


@dataclass(frozen=True)
class Recipe:
    """What one shipped recording runs."""

    name: str  # file stem under assets/live/
    title: str  # what the learner picks
    drafter: str
    draft: str
    example: str  # key of specsim.core.prompt_sets.EXAMPLES
    k: int = DEFAULT_K
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS

    @property
    def path(self) -> Path:
        return RECORDINGS / f"{self.name}.json"

    @property
    def prompt(self) -> str:
        return EXAMPLES[self.example]


RECIPES: tuple[Recipe, ...] = (
    Recipe("prose_run", "Free prose, drafted by the default draft model", DEFAULT_DRAFTER, DEFAULT_DRAFT, "Prose"),
    Recipe("win_run", "Text that repeats its input, drafted by prompt lookup", "prompt_lookup", "",
           "Repeats its input"),
)
"""The typical run first (a real draft model on free prose, refused now and then, every loop drafting), the best
case one click away: a learner meets the technique as it usually is before its easiest win."""


class NoisyBaseline(RuntimeError):
    """Every attempt at a recording had a noisy plain baseline."""


@dataclass(frozen=True)
class RecordedRun:
    """A speculative run, its plain baseline, and where and when it was recorded."""

    spec: Trace
    plain: Trace
    machine: str
    dtype: str
    date: str  # ISO date
    threads: int

    def label(self) -> str:
        return (f"Recorded on {self.date} on {self.machine} ({self.threads} thread{'s' if self.threads != 1 else ''}), "
                f"{self.dtype}: a real run, replayed.")

    def to_json(self) -> str:
        return json.dumps({"spec": json.loads(self.spec.to_json()), "plain": json.loads(self.plain.to_json()),
                           "machine": self.machine, "dtype": self.dtype, "date": self.date, "threads": self.threads},
                          ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> RecordedRun:
        data = json.loads(text)
        return cls(spec=Trace.from_json(json.dumps(data["spec"])), plain=Trace.from_json(json.dumps(data["plain"])),
                   machine=data["machine"], dtype=data["dtype"], date=data["date"], threads=int(data["threads"]))


def load(path: Path) -> RecordedRun | None:
    """A shipped recording, or None when it is missing or unreadable (the page then just waits for Run)."""
    try:
        return RecordedRun.from_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def record(recipe: Recipe, dtype: str = "auto", threads: int = 1, attempts: int = 5, log=print) -> RecordedRun:
    """Run the recipe for real (after a warm-up) until its plain baseline is steady, and label it.

    Raises :class:`NoisyBaseline` when ``attempts`` runs in a row had a noisy baseline.
    """
    import torch

    from specsim.core.engine import plain_generate, speculative_generate
    from specsim.core.models import format_prompt, load_bundled_target
    from specsim.measure.timing import Contender, time_decoders
    from specsim.methods import build_drafter

    torch.set_num_threads(threads)
    target = load_bundled_target(device="cpu", dtype=dtype)
    drafter = build_drafter(recipe.drafter, target, recipe.draft)
    ids = format_prompt(target.tokenizer, recipe.prompt)
    contender = Contender(recipe.name, lambda p, n: speculative_generate(target, drafter, p, KPolicy(recipe.k), n))
    reasons = []
    for attempt in range(attempts):
        timed = time_decoders([ids], [contender], lambda p, n: plain_generate(target, p, n), recipe.max_new_tokens,
                              matched_plain=True, warmup_tokens=2 if attempt == 0 else 0)
        if not timed.pairs(recipe.name):
            raise NoisyBaseline(f"{recipe.name}: the speculative run wrote no token, so there is nothing to time")
        spec, plain = timed.pairs(recipe.name)[0]
        reason = baseline_noise(plain_pass_times([plain]))
        if reason is None:
            return RecordedRun(spec=spec, plain=plain, machine=machine_name(),
                               dtype=str(target.dtype).removeprefix("torch."),
                               date=datetime.date.today().isoformat(), threads=torch.get_num_threads())
        log(f"{recipe.name}: refused, the plain baseline was noisy ({reason}); recording again")
        reasons.append(reason)
    raise NoisyBaseline(f"{recipe.name}: {attempts} attempts, every plain baseline noisy; last: {reasons[-1]}")


def write(run: RecordedRun, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(run.to_json(), encoding="utf-8")
