"""Interview questions: open questions with worked answers, each pointing to the page that teaches it.

The questions live in ``assets/interview/questions.json``. An answer never types a figure: it names
it in braces (``{best_k_lesson}``) and :func:`figures` computes it from :mod:`specsim.analytics`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from specsim import analytics
from specsim.paths import INTERVIEW_QUESTIONS

LESSON = {"alpha": 0.7, "k": 4, "c": 0.13}  # the lesson's example


@dataclass(frozen=True)
class Question:
    id: str
    topic: str
    page: str  # url path of the page that teaches it
    question: str
    answer: str


def figures() -> dict[str, str]:
    """Every figure an answer may name, computed."""
    a, k, c = LESSON["alpha"], LESSON["k"], LESSON["c"]
    best = analytics.optimal_k(a, c)
    return {
        "best_k_lesson": str(best),
        "best_speedup_lesson": f"{float(analytics.speedup(a, best, c)):.2f}",
        "speedup_below": f"{float(analytics.speedup(a, best - 1, c)):.2f}",
        "speedup_above": f"{float(analytics.speedup(a, best + 1, c)):.2f}",
        "speedup_lesson": f"{float(analytics.speedup(a, k, c)):.2f}",
        "ceiling_70": f"{float(analytics.prefix_limit(a)):.2f}",
        "useless_loss_lesson": f"{float(analytics.useless_draft_loss(k, c, 1.0)):.2f}",
    }


def load(path: Path = INTERVIEW_QUESTIONS) -> list[Question]:
    """The questions with their figures filled in; a figure that is not defined is an error, never a gap."""
    data = json.loads(path.read_text(encoding="utf-8"))
    values = figures()
    return [Question(q["id"], q["topic"], q["page"], q["question"].format(**values), q["answer"].format(**values))
            for q in data["questions"]]
