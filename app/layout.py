"""The lesson's outline: which page teaches what, in which order."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "assets"


@dataclass(frozen=True)
class PageSpec:
    script: str
    title: str
    icon: str
    url_path: str
    default: bool = False


PAGES: dict[str, list[PageSpec]] = {
    "Learn": [
        PageSpec("home.py", "The idea", ":material/lightbulb:", "home", default=True),
        PageSpec("calculator.py", "Speedup calculator", ":material/calculate:", "calculator"),
        PageSpec("why_unchanged.py", "Why the output is unchanged", ":material/balance:", "unchanged"),
        PageSpec("live.py", "Live decoding", ":material/play_circle:", "live"),
        PageSpec("verify_free.py", "Is verification free here?", ":material/speed:", "verify"),
        PageSpec("variants.py", "Four variants", ":material/account_tree:", "variants"),
        PageSpec("in_practice.py", "In practice", ":material/public:", "practice"),
    ],
    "Test yourself": [
        PageSpec("sequence_quiz.py", "Order one round", ":material/swap_vert:", "sequence"),
        PageSpec("knowledge_quiz.py", "Knowledge check", ":material/quiz:", "quiz"),
    ],
}


def all_pages() -> list[PageSpec]:
    return [p for pages in PAGES.values() for p in pages]
