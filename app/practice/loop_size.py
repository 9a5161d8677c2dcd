"""How long the loop that runs is, counted from its source, for the "In practice" page. Pure: no Streamlit."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path

from specsim.engine import SpeculativeStep, decode_loop
from specsim.paths import REPO_ROOT
from specsim.verify import verify


@dataclass(frozen=True)
class Part:
    name: str  # as the code spells it
    file: str  # relative to the repository
    lines: int  # with its docstring and comments


def part(obj) -> Part:
    file = Path(inspect.getsourcefile(obj)).resolve().relative_to(REPO_ROOT.resolve())
    return Part(obj.__name__, file.as_posix(), len(inspect.getsource(obj).splitlines()))


def core_loop() -> tuple[Part, Part, Part]:
    """The acceptance rule, the speculative step and the loop that runs it: nothing else is the loop."""
    return part(verify), part(SpeculativeStep), part(decode_loop)


def sentence() -> str:
    rule, step, loop = core_loop()
    return (f"This app's loop is {rule.lines + step.lines + loop.lines} lines with docstrings and comments: the "
            f"acceptance rule `{rule.name}` in `{rule.file}` ({rule.lines} lines: keep a prefix, choose the +1 token), "
            f"the speculative step `{step.name}` ({step.lines} lines: draft, one target pass, accept, roll the caches "
            f"back) and, beside it in `{loop.file}`, the loop every decoder shares, `{loop.name}` ({loop.lines} "
            "lines, with the bookkeeping the replay needs). Plain decoding is the same loop with a drafter that "
            "proposes nothing.")
