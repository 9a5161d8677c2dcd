"""A small built-in set of varied prompts for tests, the CLI and the benchmark.

The draft-evaluation prompt set lives in ``assets/prompts/heldout.json`` (owned by the
distillation work, which never trains on it); :func:`heldout_items` is the one reader of it.
"""

from __future__ import annotations

import json
from pathlib import Path

from specsim.core.paths import HELDOUT_PROMPTS

BUILTIN_PROMPTS: tuple[tuple[str, str], ...] = (
    ("prose", "Write a short paragraph about a lighthouse keeper during a storm."),
    ("code", "Write a Python function that returns the n-th Fibonacci number, with a docstring."),
    ("repeat", "Repeat this sentence exactly three times: The quick brown fox jumps over the lazy dog."),
    ("qa", "What is the capital of France, and what river runs through it?"),
    ("list", "List the first ten prime numbers, separated by commas."),
    ("explain", "Explain in two sentences why the sky is blue."),
    ("code", "Write a SQL query that counts the orders per customer in a table named orders."),
    ("repeat", "Copy this list back to me: apples, pears, plums, cherries, apples, pears, plums, cherries."),
)


EXAMPLES: dict[str, str] = {
    "Prose": "Write a short story about a lighthouse keeper who finds a message in a bottle.",
    "Code": "Write a Python function that returns the n-th Fibonacci number.",
    "Repeats its input": ("Repeat the following text word for word: The lighthouse keeper climbed the stairs every "
                          "evening, lit the great lamp, and watched the ships pass safely by the rocks."),
}
"""The live page's example prompts, by button label."""


def builtin_prompts(n: int | None = None) -> list[str]:
    """The first n built-in prompts (all when n is None), cycling through the kinds above."""
    texts = [text for _, text in BUILTIN_PROMPTS]
    return texts if n is None else texts[:n]


def heldout_items(path: Path = HELDOUT_PROMPTS) -> list[dict]:
    """The held-out prompts, ``[{"id", "domain", "prompt"}, ...]`` in file order; empty when the file is absent."""
    if not path.is_file():
        return []
    return json.loads(path.read_text(encoding="utf-8"))["prompts"]


def load_heldout(path: Path = HELDOUT_PROMPTS) -> list[str]:
    """The held-out prompts' texts, in file order; empty when the file is absent."""
    return [item["prompt"] for item in heldout_items(path)]


def heldout_prompts(n: int) -> list[dict]:
    """``n`` held-out prompts spread over the domains (round robin over domains, file order within one)."""
    items = heldout_items()
    by_domain: dict[str, list[dict]] = {}
    for item in items:
        by_domain.setdefault(item["domain"], []).append(item)
    out, queues = [], [list(v) for v in by_domain.values()]
    while len(out) < min(n, len(items)):
        for queue in queues:
            if queue and len(out) < n:
                out.append(queue.pop(0))
    return out
