"""How long the loop that runs is, counted from its source, for the "In practice" page. Pure: no Streamlit."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from specsim.core.paths import REPO_ROOT

#: The loop's three parts, read from their source files (not imported: a class replica never loads torch).
CORE = (
    ("verify", "specsim/core/acceptance.py"),
    ("SpeculativeStep", "specsim/core/engine.py"),
    ("decode_loop", "specsim/core/engine.py"),
)


@dataclass(frozen=True)
class Part:
    name: str  # as the code spells it
    file: str  # relative to the repository
    lines: int  # with its docstring and comments


def part(name: str, file: str) -> Part:
    """The top-level function or class ``name`` in ``file`` (relative to the repository), as its source spells it:
    from its first decorator (or its ``def`` or ``class`` line) to its last line
    (as :func:`inspect.getsource` counts)."""
    tree = ast.parse((REPO_ROOT / file).read_text(encoding="utf-8"))
    node = next(n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name)
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    return Part(name, file, node.end_lineno - first + 1)


def core_loop() -> tuple[Part, Part, Part]:
    """The acceptance rule, the speculative step and the loop that runs it: nothing else is the loop."""
    rule, step, loop = (part(name, file) for name, file in CORE)
    return rule, step, loop


def sentence() -> str:
    """The loop's length, and its three parts by what they do (names, files and counts: :func:`parts_sentence`)."""
    rule, step, loop = core_loop()
    return (f"This app's loop is {rule.lines + step.lines + loop.lines} lines with docstrings and comments, in three "
            "parts: the acceptance rule (keep a prefix, choose the +1 token), the speculative step (draft, one "
            "target pass, accept, roll the caches back) and the loop every decoder shares, with the bookkeeping the "
            "replay needs. Plain decoding is the same loop with a drafter that proposes nothing.")


def parts_sentence() -> str:
    """Each part of the loop by its name in the code, its file and its length (for "How this was measured")."""
    rule, step, loop = core_loop()
    return (f"Counted from the source when the page opens, from each definition's first line to its last: the "
            f"acceptance rule `{rule.name}` in `{rule.file}` ({rule.lines} lines), the speculative step "
            f"`{step.name}` ({step.lines} lines) and, beside it in `{loop.file}`, the loop every decoder shares, "
            f"`{loop.name}` ({loop.lines} lines).")
