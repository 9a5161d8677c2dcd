"""The calculator's settings in the URL: parse query parameters, validate them, write them back.

A link such as ``/calculator?k=6&alpha=55&c=0.2&v=1.1`` reproduces a view. Parsing is pure (a
mapping of strings in, settings and human-readable notices out) so it can be tested without
Streamlit; anything that is not a plain number in range falls back to its default with a notice
that names the parameter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from app import keys, urlcodec
from app.settings import CalcSettings
from app.urlcodec import Number, Param, last, read_number
from specsim.core.defaults import K_MAX, K_MIN

PARAMS: tuple[Param, ...] = (
    Param("k", "k", keys.CALC_K, Number("k", K_MIN, K_MAX, 0, "draft tokens per loop", whole_only=True)),
    Param("alpha", "alpha_pct", keys.CALC_ALPHA_PCT, Number("alpha", 0, 100, 0, "acceptance rate in percent")),
    Param("c", "draft_cost", keys.CALC_DRAFT_COST, Number("c", 0.0, 1.0, 3, "draft pass cost in target passes")),
    Param("v", "verify_cost", keys.CALC_VERIFY_COST,
          Number("v", 1.0, 10.0, 2, "verification pass cost in target passes")),
)
NAMES: tuple[str, ...] = tuple(p.name for p in PARAMS)
BY_NAME: dict[str, Param] = {p.name: p for p in PARAMS}


@dataclass(frozen=True)
class ParseResult:
    """Settings read from a URL, the parameters that were rejected, and notices to show the user."""

    settings: CalcSettings
    rejected: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()  # rejected parameters, one sentence each
    adjustments: tuple[str, ...] = ()  # accepted but rounded to the slider's step


def parse_query(query: Mapping[str, str | Sequence[str]]) -> ParseResult:
    """Read the calculator's settings from query parameters; unknown parameters are ignored, and a name in
    other letter case (``K``) is read as the calculator's own.

    Missing parameters take their defaults silently; present but unacceptable ones take their
    defaults with a notice; acceptable ones off the slider's step are rounded with a notice.
    """
    query = urlcodec.ours(query, NAMES)
    defaults = CalcSettings()
    values: dict[str, float | int] = {}
    rejected: list[str] = []
    problems: list[str] = []
    adjustments: list[str] = []
    for param in PARAMS:
        if param.name not in query:
            continue
        reading = read_number(param.number, last(query[param.name]), getattr(defaults, param.field))
        if reading.problem:
            rejected.append(param.name)
            problems.append(reading.problem)
            continue
        if reading.adjustment:
            adjustments.append(reading.adjustment)
        values[param.field] = reading.value
    return ParseResult(replace(defaults, **values), tuple(rejected), tuple(problems), tuple(adjustments))


def to_query(settings: CalcSettings, every: bool = False) -> dict[str, str]:
    """Query parameters that reproduce ``settings``; ``v`` only when it differs from its default (or ``every``)."""
    defaults = CalcSettings()
    query: dict[str, str] = {}
    for param in PARAMS:
        value = getattr(settings, param.field)
        if param.name == "v" and value == defaults.verify_cost and not every:
            continue
        query[param.name] = param.number.format(value)
    return query


def ours(query: Mapping[str, str | Sequence[str]]) -> dict[str, str]:
    """The calculator's own parameters in ``query`` (last value of each, any letter case), leaving others out."""
    return {name: last(value) for name, value in urlcodec.ours(query, NAMES).items()}

