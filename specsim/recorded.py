"""The recorded run the live page opens on, so a learner can step through a real run before any model loads.

``python -m app.record_default`` runs the live page's default example (bundled target, default drafter,
default prompt, K, temperature and length) through :func:`record`, warm-up first, speculative then
plain, and writes both traces with a label (machine, dtype, date) to ``assets/live/default_run.json``.
"""

from __future__ import annotations

import datetime
import json
import platform
from dataclasses import dataclass
from pathlib import Path

from specsim.trace import Trace

ASSET = Path(__file__).resolve().parent.parent / "assets" / "live" / "default_run.json"


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
                f"{self.dtype}: a real run of the default example, replayed from assets/live/.")

    def to_json(self) -> str:
        return json.dumps({"spec": json.loads(self.spec.to_json()), "plain": json.loads(self.plain.to_json()),
                           "machine": self.machine, "dtype": self.dtype, "date": self.date, "threads": self.threads},
                          ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> RecordedRun:
        data = json.loads(text)
        return cls(spec=Trace.from_json(json.dumps(data["spec"])), plain=Trace.from_json(json.dumps(data["plain"])),
                   machine=data["machine"], dtype=data["dtype"], date=data["date"], threads=int(data["threads"]))


def load(path: Path = ASSET) -> RecordedRun | None:
    """The shipped recording, or None when it is missing or unreadable (the page then just waits for Run)."""
    try:
        return RecordedRun.from_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def machine_name() -> str:
    """The CPU's model name (Linux), else what platform reports."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def record(prompt: str, k: int, max_new_tokens: int, drafter_kind: str, draft: str, dtype: str = "auto",
           threads: int = 1) -> RecordedRun:
    """Run the example once for real (after a warm-up) and label it."""
    import torch

    from specsim.build import build_drafter
    from specsim.engine import plain_generate, speculative_generate
    from specsim.models import format_prompt, load_bundled_target

    torch.set_num_threads(threads)
    target = load_bundled_target(device="cpu", dtype=dtype)
    drafter = build_drafter(drafter_kind, target, draft)
    ids = format_prompt(target.tokenizer, prompt)
    speculative_generate(target, drafter, ids, k, 2)  # warm-up, untimed
    plain_generate(target, ids, 2)
    spec = speculative_generate(target, drafter, ids, k, max_new_tokens)
    plain = plain_generate(target, ids, spec.n_generated)
    return RecordedRun(spec=spec, plain=plain, machine=machine_name(), dtype=str(target.dtype).removeprefix("torch."),
                       date=datetime.date.today().isoformat(), threads=torch.get_num_threads())


def write(run: RecordedRun, out: Path = ASSET) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(run.to_json(), encoding="utf-8")
