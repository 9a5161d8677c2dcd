"""The lesson's outline: which page teaches what, in which order."""

from __future__ import annotations

from dataclasses import dataclass

from specsim.core.paths import PAGES as PAGE_SCRIPTS


def script_path(script: str) -> str:
    """The path a page links to another by (``st.page_link`` takes the script's path)."""
    return str(PAGE_SCRIPTS / script)


@dataclass(frozen=True)
class PageSpec:
    script: str
    title: str
    icon: str
    url_path: str
    default: bool = False


PAGES: dict[str, list[PageSpec]] = {
    # The lecturer's order: every page uses only what the pages above it taught. The calculator's v is measured on
    # the next page before a real run (Live decoding) is explained by it; correctness comes before the live page so
    # a sampled run's ✗ and resample are understood when they appear (README, "The path through the lesson").
    "Learn": [
        PageSpec("home.py", "The idea", icon=":material/lightbulb:", url_path="home", default=True),
        PageSpec("calculator.py", "Speedup calculator", icon=":material/calculate:", url_path="calculator"),
        PageSpec("verify.py", "Is verification free here?", icon=":material/speed:", url_path="verify"),
        PageSpec("unchanged.py", "Why the output is unchanged", icon=":material/balance:", url_path="unchanged"),
        PageSpec("live.py", "Live decoding", icon=":material/play_circle:", url_path="live"),
        PageSpec("hood.py", "Under the hood", icon=":material/build:", url_path="hood"),
        PageSpec("variants.py", "Variants", icon=":material/account_tree:", url_path="variants"),
        PageSpec("serving.py", "Serving many requests", icon=":material/dns:", url_path="serving"),
        PageSpec("practice.py", "In practice", icon=":material/public:", url_path="practice"),
    ],
    "Test yourself": [
        PageSpec("sequence.py", "Order one round", icon=":material/swap_vert:", url_path="sequence"),
        PageSpec("quiz.py", "Knowledge check", icon=":material/quiz:", url_path="quiz"),
        PageSpec("interview.py", "Interview questions", icon=":material/record_voice_over:", url_path="interview"),
    ],
}


def all_pages() -> list[PageSpec]:
    return [p for pages in PAGES.values() for p in pages]
