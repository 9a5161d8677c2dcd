"""Reading settings from a page's query parameters and writing them back: the rules every page shares.

A query value is accepted only as a plain decimal number in range (no exponent, nan, inf, hex or
non-ASCII digits) and rounded half-up to the setting's step, exactly, in decimal. A rejected value
is shown back to the user defanged and shortened. Pure, no Streamlit.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import TypeVar

KNOWLEDGE_PARAM = "kq"  # the knowledge check's answers (app.quiz.params)
SEQUENCE_PARAM = "order"  # the sequence quiz's order (app.quiz.params)

PLAIN_NUMBER = re.compile(r"\+?([0-9]{1,10}(\.[0-9]{0,8})?|\.[0-9]{1,8})")
"""A plain decimal number: ASCII digits, an optional point and sign; short enough to read."""
REAL_NUMBER = re.compile(r"\+?([0-9]{1,10}(\.[0-9]{0,20})?|\.[0-9]{1,20})([eE][-+]?[0-9]{1,3})?")
"""A number read back exactly as :func:`number_text` wrote it (1e-05, 0.123456789): ASCII, an exponent allowed."""
WHOLE_NUMBER = re.compile(r"\s*\+?[0-9]{1,10}\s*")
"""A whole number as typed into a text box."""
UNSAFE = re.compile(r"[^0-9A-Za-z.+\-]")  # anything else could be markup, a path or a command
V = TypeVar("V")


@dataclass(frozen=True)
class Number:
    """One numeric query parameter: its URL name, its range, its step (decimals) and what it means."""

    name: str
    lo: float
    hi: float
    decimals: int  # 0 for whole numbers
    meaning: str = ""
    whole_only: bool = False  # reject fractions instead of rounding them
    exact: bool = False  # keep the value exactly as written (an exponent allowed, no rounding to ``decimals``)

    def describe(self) -> str:
        kind = "a whole number" if self.whole_only else "a number"
        meaning = f" ({self.meaning})" if self.meaning else ""
        return f"{kind} from {self.limit(self.lo)} to {self.limit(self.hi)}{meaning}"

    def limit(self, value: float) -> str:
        """A range end as people read it: 2147483647, not 2.14748e+09; 2, not 2.00."""
        return f"{int(value)}" if self.decimals == 0 else f"{value:g}"

    def format(self, value: float) -> str:
        """A value as the URL and the notices write it, at the setting's step: 0.13, not 0.13000000000000000444."""
        if self.exact:
            return number_text(value)
        if self.decimals == 0:
            return f"{int(value)}"
        text = f"{value:.{self.decimals}f}"
        while len(text.split(".")[1]) > 2 and text.endswith("0"):  # a finer step shows only the digits it needs
            text = text[:-1]
        return text

    def parse(self, raw: str) -> float | None:
        """The value of ``raw`` before rounding, or None when it is not acceptable."""
        text = raw.strip()
        if not (REAL_NUMBER if self.exact else PLAIN_NUMBER).fullmatch(text):
            return None
        value = float(text)
        if value == 0 and any(c in "123456789" for c in text.lower().split("e")[0]):
            return None  # 1e-400 underflows to 0.0: refused, not silently turned into 0
        if not math.isfinite(value):
            return None
        if self.whole_only and value != int(value):
            return None  # K counts tokens: 6.5 is not a K
        if not self.lo <= value <= self.hi:
            return None
        return value

    def rounded(self, raw: str) -> int | float:
        """A parsed value rounded half-up to the step, the way people round (0.125 -> 0.13); exact ones as written."""
        if self.exact:
            return float(raw.strip())
        step = Decimal(1).scaleb(-self.decimals)
        value = Decimal(raw.strip()).quantize(step, rounding=ROUND_HALF_UP)
        return int(value) if self.decimals == 0 else float(value)


@dataclass(frozen=True)
class Param:
    """One query parameter, in the table shape every page uses: its URL name, the settings field it fills, the
    session-state key that holds it, and, for a number, its range and step (None for a text setting)."""

    name: str
    field: str
    state_key: str
    number: Number | None = None

    def __post_init__(self) -> None:
        if self.number is not None and self.number.name != self.name:
            raise ValueError(f"parameter {self.name!r} carries the range of {self.number.name!r}")


@dataclass(frozen=True)
class Reading:
    """One query value read for a setting: the value to use (None: keep the default) and what to tell the user."""

    value: object | None
    problem: str | None = None  # the value was refused
    adjustment: str | None = None  # the value was accepted but rounded to the setting's step


def refused(name: str, raw: str, expected: str, default: str) -> Reading:
    """A value that does not fit: keep the default and say so, naming the parameter."""
    return Reading(None, f"URL parameter `{name}` = `{shown(raw)}` is not {expected}; using the default {default}.")


def read_number(number: Number, raw: str, default: float) -> Reading:
    """A numeric query value, rounded half-up to its step (with a note when that changed it)."""
    value = number.parse(raw)
    if value is None:
        return refused(number.name, raw, number.describe(), "(off)" if default is None else number.format(default))
    rounded = number.rounded(raw)
    if abs(rounded - value) <= 1e-12:
        return Reading(rounded)
    return Reading(rounded, adjustment=f"URL parameter `{number.name}` = `{shown(raw)}` was rounded to "
                                       f"{number.format(rounded)} to fit the setting's step.")


def number_text(value: float) -> str:
    """The shortest text that reads back as exactly ``value``: 0, 0.7, 0.0001, 1e-40."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def half_up(x: float, decimals: int) -> float:
    """A measured float rounded half-up to ``decimals`` (as :meth:`Number.rounded` rounds a URL value)."""
    return float(Decimal(repr(x)).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP))


def ours(query: Mapping[str, V], names: Iterable[str]) -> dict[str, V]:
    """The page's own parameters in ``query``, under their own names, however the link spells them (``K`` for
    ``k``); a name spelled exactly wins over another spelling of it. Everything else is left out."""
    by_lower = {name.lower(): name for name in names}
    found: dict[str, V] = {}
    for key, value in query.items():
        name = by_lower.get(key.lower())
        if name is not None and (key == name or name not in query):
            found[name] = value
    return found


def last(value: str | Sequence[str]) -> str:
    """The value a browser uses when a name repeats: the last one ("" when there is none)."""
    if isinstance(value, str):
        return value
    values = list(value)
    return str(values[-1]) if values else ""


def shown(raw: str, limit: int = 24) -> str:
    """A short, harmless rendering of a raw value for a notice (no markup survives; an empty code span
    would show as two literal backticks, so an empty or blank value is named)."""
    if not raw.strip():
        return "(blank)" if raw else "(empty)"
    clean = UNSAFE.sub("?", raw)
    return clean if len(clean) <= limit else clean[:limit] + "…"
