"""The lesson's path: what each lesson page lets a learner do, and what to take away from it.

The texts live in ``assets/lesson/path.json``, keyed by page script; the order is the sidebar's
(:data:`app.layout.PAGES`). No figures here: a take-away states the idea, the pages compute the numbers.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass

from specsim.core.paths import ASSETS

PATH_FILE = ASSETS / "lesson" / "path.json"


@dataclass(frozen=True)
class PageFrame:
    """A lesson page's opening objectives (things the learner can do afterwards) and its closing take-away."""

    script: str
    learn: tuple[str, ...]
    take_away: str


@functools.cache
def frames() -> dict[str, PageFrame]:
    raw = json.loads(PATH_FILE.read_text(encoding="utf-8"))["pages"]
    return {script: PageFrame(script, tuple(entry["learn"]), entry["take_away"]) for script, entry in raw.items()}
