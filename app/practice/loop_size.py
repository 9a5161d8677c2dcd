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
    rule, step, loop = core_loop()
    return (f"This app's loop is {rule.lines + step.lines + loop.lines} lines with docstrings and comments: the "
            f"acceptance rule `{rule.name}` in `{rule.file}` ({rule.lines} lines: keep a prefix, choose the +1 token), "
            f"the speculative step `{step.name}` ({step.lines} lines: draft, one target pass, accept, roll the caches "
            f"back) and, beside it in `{loop.file}`, the loop every decoder shares, `{loop.name}` ({loop.lines} "
            "lines, with the bookkeeping the replay needs). Plain decoding is the same loop with a drafter that "
            "proposes nothing.")
