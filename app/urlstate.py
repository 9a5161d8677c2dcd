"""The calculator's settings in the URL: parse query parameters, validate them, write them back.

A link such as ``/calculator?k=6&alpha=55&c=0.2&v=1.1`` reproduces a view. Parsing is pure (a
mapping of strings in, settings and human-readable notices out) so it can be tested without
Streamlit; anything that is not a plain number in range falls back to its default with a notice
that names the parameter.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_UP, Decimal

from app import state


@dataclass(frozen=True)
class CalcSettings:
    """What the calculator shows: K, acceptance in percent, draft cost and verification cost factor."""

    k: int = state.DEFAULTS[state.CALC_K]
    alpha_pct: int = state.DEFAULTS[state.CALC_ALPHA_PCT]
    draft_cost: float = state.DEFAULTS[state.CALC_DRAFT_COST]
    verify_cost: float = state.DEFAULTS[state.CALC_VERIFY_COST]

    @property
    def alpha(self) -> float:
        """Per-token acceptance rate as a probability."""
        return self.alpha_pct / 100.0


@dataclass(frozen=True)
class Param:
    """One query parameter: its name in the URL, the settings field it fills, its range and step."""

    name: str
    field: str
    state_key: str
    lo: float
    hi: float
    decimals: int  # 0 for whole numbers
    meaning: str
    whole_only: bool = False  # reject fractions instead of rounding them

    def describe(self) -> str:
        kind = "a whole number" if self.whole_only else "a number"
        return f"{kind} from {self.format(self.lo)} to {self.format(self.hi)} ({self.meaning})"

    def format(self, value: float) -> str:
        return f"{int(value)}" if self.decimals == 0 else f"{value:.{self.decimals}f}"


PARAMS: tuple[Param, ...] = (
    Param("k", "k", state.CALC_K, 1, 16, 0, "draft tokens per loop", whole_only=True),
    Param("alpha", "alpha_pct", state.CALC_ALPHA_PCT, 0, 100, 0, "acceptance rate in percent"),
    Param("c", "draft_cost", state.CALC_DRAFT_COST, 0.0, 1.0, 2, "draft pass cost in target passes"),
    Param("v", "verify_cost", state.CALC_VERIFY_COST, 1.0, 10.0, 2, "verification pass cost in target passes"),
)
NAMES: tuple[str, ...] = tuple(p.name for p in PARAMS)
# A plain decimal number: no exponent, no nan/inf, no hex, and short enough to read.
_NUMBER = re.compile(r"\+?([0-9]{1,6}(\.[0-9]{0,8})?|\.[0-9]{1,8})")
_SHOWN = re.compile(r"[^0-9A-Za-z.+\-]")


@dataclass(frozen=True)
class ParseResult:
    """Settings read from a URL, the parameters that were rejected, and notices to show the user."""

    settings: CalcSettings
    rejected: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()  # rejected parameters, one sentence each
    adjustments: tuple[str, ...] = ()  # accepted but rounded to the slider's step


def _shown(raw: str, limit: int = 12) -> str:
    """A short, harmless rendering of a raw value for a notice (no markup survives)."""
    if not raw:
        return "(empty)"
    clean = _SHOWN.sub("?", raw)
    return clean if len(clean) <= limit else clean[:limit] + "…"


def _last(value: str | Sequence[str]) -> str | None:
    if isinstance(value, str):
        return value
    values = list(value)
    return str(values[-1]) if values else None


def _round_half_up(text: str, decimals: int) -> int | float:
    """Round a validated decimal string the way people do (0.125 -> 0.13), exactly, not in binary."""
    step = Decimal(1).scaleb(-decimals)
    value = Decimal(text.strip()).quantize(step, rounding=ROUND_HALF_UP)
    return int(value) if decimals == 0 else float(value)


def parse_value(param: Param, raw: str) -> float | None:
    """The value of ``raw`` for ``param`` before rounding, or None when it is not acceptable."""
    text = raw.strip()
    if not _NUMBER.fullmatch(text):
        return None
    value = float(text)
    if param.whole_only and value != int(value):
        return None  # K counts tokens: 6.5 is not a K
    if not param.lo <= value <= param.hi:
        return None
    return value


def parse_query(query: Mapping[str, str | Sequence[str]]) -> ParseResult:
    """Read the calculator's settings from query parameters; unknown parameters are ignored.

    Missing parameters take their defaults silently; present but unacceptable ones take their
    defaults with a notice; acceptable ones off the slider's step are rounded with a notice.
    """
    defaults = CalcSettings()
    values: dict[str, float | int] = {}
    rejected: list[str] = []
    problems: list[str] = []
    adjustments: list[str] = []
    for param in PARAMS:
        if param.name not in query:
            continue
        raw = _last(query[param.name])
        default = getattr(defaults, param.field)
        value = None if raw is None else parse_value(param, raw)
        if value is None:
            rejected.append(param.name)
            problems.append(
                f"URL parameter `{param.name}` = `{_shown(raw or '')}` is not {param.describe()}; "
                f"using the default {param.format(default)}."
            )
            continue
        rounded = _round_half_up(raw or "", param.decimals)
        if abs(rounded - value) > 1e-12:
            adjustments.append(
                f"URL parameter `{param.name}` = `{_shown(raw or '')}` was rounded to {param.format(rounded)} "
                "to fit the slider's step."
            )
        values[param.field] = rounded
    return ParseResult(replace(defaults, **values), tuple(rejected), tuple(problems), tuple(adjustments))


def to_query(settings: CalcSettings) -> dict[str, str]:
    """Query parameters that reproduce ``settings``; ``v`` only when it differs from its default."""
    defaults = CalcSettings()
    query: dict[str, str] = {}
    for param in PARAMS:
        value = getattr(settings, param.field)
        if param.name == "v" and value == defaults.verify_cost:
            continue
        query[param.name] = param.format(value)
    return query


def ours(query: Mapping[str, str | Sequence[str]]) -> dict[str, str]:
    """The calculator's own parameters in ``query`` (last value of each), leaving any others out."""
    found: dict[str, str] = {}
    for name in NAMES:
        if name in query:
            value = _last(query[name])
            found[name] = "" if value is None else value
    return found

