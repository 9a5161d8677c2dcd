"""The live page's settings: limits, validation, and their round trip through the URL.

Pure functions (mappings of strings in, settings and notices out) so they are tested without
Streamlit. A bad URL value falls back to its default with a notice naming the parameter; a bad
value typed into the form is refused with a message when the user presses Run.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from app import state

K_RANGE = (1, 16)
TEMPERATURE_RANGE = (0.0, 2.0)
MAX_NEW_RANGE = (1, 256)
SEED_RANGE = (0, 2**31 - 1)
MAX_PROMPT_CHARS = 2000
MAX_ID_CHARS = 200
DRAFTERS = {"model": "a draft model", "prompt_lookup": "prompt lookup (no second model)",
            "early_exit": "early exit (the target's first layers)"}

EXAMPLES: dict[str, str] = {
    "Prose": "Write a short story about a lighthouse keeper who finds a message in a bottle.",
    "Code": "Write a Python function that returns the n-th Fibonacci number.",
    "Repeats its input": ("Repeat this sentence exactly, three times: The quick brown fox jumps over the lazy "
                          "dog near the quiet river bank."),
}


@dataclass(frozen=True)
class LiveSettings:
    """What the user asked for on the live page."""

    pair: str = state.DEFAULTS[state.LIVE_PAIR]
    target: str = ""  # custom hub id or local folder (pair == "custom")
    draft: str = ""
    drafter: str = state.DEFAULTS[state.LIVE_DRAFTER]
    prompt: str = state.DEFAULTS[state.LIVE_PROMPT]
    k: int = state.DEFAULTS[state.LIVE_K]
    temperature: float = state.DEFAULTS[state.LIVE_TEMPERATURE]
    max_new_tokens: int = state.DEFAULTS[state.LIVE_MAX_NEW]
    seed: int | str = 0  # the seed box's text when it is not a whole number (validate() then says so)


# field -> (URL name, session-state key)
FIELDS: dict[str, tuple[str, str]] = {
    "pair": ("pair", state.LIVE_PAIR),
    "target": ("target", state.LIVE_CUSTOM_TARGET),
    "draft": ("draft", state.LIVE_CUSTOM_DRAFT),
    "drafter": ("drafter", state.LIVE_DRAFTER),
    "prompt": ("prompt", state.LIVE_PROMPT),
    "k": ("k", state.LIVE_K),
    "temperature": ("t", state.LIVE_TEMPERATURE),
    "max_new_tokens": ("n", state.LIVE_MAX_NEW),
    "seed": ("seed", state.LIVE_SEED),
}
NUMBERS: dict[str, tuple[float, float, bool]] = {  # field -> (low, high, whole numbers only)
    "k": (*K_RANGE, True),
    "temperature": (*TEMPERATURE_RANGE, False),
    "max_new_tokens": (*MAX_NEW_RANGE, True),
    "seed": (*SEED_RANGE, True),
}
_NUMBER = re.compile(r"\+?([0-9]{1,10}(\.[0-9]{0,6})?|\.[0-9]{1,6})")  # ASCII digits only, like the calculator
# A temperature is read back exactly as :func:`number_text` wrote it (1e-05, 0.123456789): no rounding.
_REAL = re.compile(r"\+?([0-9]{1,10}(\.[0-9]{0,20})?|\.[0-9]{1,20})([eE][-+]?[0-9]{1,3})?")
_WHOLE = re.compile(r"\s*\+?[0-9]{1,10}\s*")
_SHOWN = re.compile(r"[^0-9A-Za-z.+\-_/ ]")


def _limit(value: float, whole: bool) -> str:
    """A range end as people read it: 2147483647, not 2.14748e+09."""
    return str(int(value)) if whole else f"{value:g}"


def _shown(raw: str, limit: int = 24) -> str:
    """A short, harmless rendering of a raw value for a notice (no markup survives; an empty code span
    would show as two literal backticks, so an empty or blank value is named)."""
    if not raw.strip():
        return "(blank)" if raw else "(empty)"
    clean = _SHOWN.sub("?", raw)
    return clean if len(clean) <= limit else clean[:limit] + "…"


def _last(value: str | Sequence[str]) -> str:
    if isinstance(value, str):
        return value
    values = list(value)
    return str(values[-1]) if values else ""


def parse_number(field: str, raw: str) -> float | int | None:
    """The number in a URL value, or None when it is not one the field allows.

    Fractions are kept exactly (the page shows, runs and links the same temperature); a text whose
    digits are not all zero but whose value underflows to 0.0 (1e-400) is refused, not turned greedy.
    """
    lo, hi, whole = NUMBERS[field]
    text = raw.strip()
    if not (_NUMBER if whole else _REAL).fullmatch(text):
        return None
    value = float(text)
    if value == 0 and any(c in "123456789" for c in text.lower().split("e")[0]):
        return None
    if not math.isfinite(value) or not lo <= value <= hi or (whole and value != int(value)):
        return None
    return int(value) if whole else value


def number_text(value: float) -> str:
    """The shortest text that reads back as exactly ``value``: 0, 0.7, 0.0001, 1e-40."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def seed_from_text(text: object) -> int | str:
    """The seed box holds text, so any number typed stays on screen: a whole number in range becomes the seed,
    anything else is kept as typed and refused by :func:`validate` with the allowed range."""
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    text = str(text)
    if _WHOLE.fullmatch(text) and SEED_RANGE[0] <= int(text) <= SEED_RANGE[1]:
        return int(text)
    return text


def parse_query(query: Mapping[str, str | Sequence[str]], pairs: Sequence[str]) -> tuple[LiveSettings, list[str]]:
    """Settings from the URL, and a notice for every parameter that was present but unusable."""
    values: dict[str, object] = {}
    notices: list[str] = []
    defaults = LiveSettings()
    for field, (name, _) in FIELDS.items():
        if name not in query:
            continue
        raw = _last(query[name])
        value: object | None
        if field in NUMBERS:
            value = parse_number(field, raw)
            lo, hi, whole = NUMBERS[field]
            expected = f"{'a whole number' if whole else 'a number'} from {_limit(lo, whole)} to {_limit(hi, whole)}"
        elif field == "pair":
            value = raw if raw in pairs else None
            expected = "one of " + ", ".join(pairs)
        elif field == "drafter":
            value = raw if raw in DRAFTERS else None
            expected = "one of " + ", ".join(DRAFTERS)
        elif field == "prompt":
            value = raw if raw.strip() and len(raw) <= MAX_PROMPT_CHARS else None
            expected = f"a non-empty text of at most {MAX_PROMPT_CHARS} characters"
        else:
            value = raw.strip() if len(raw) <= MAX_ID_CHARS else None
            expected = f"a model id of at most {MAX_ID_CHARS} characters"
        if value is None:
            notices.append(f"URL parameter `{name}` = `{_shown(raw)}` is not {expected}; "
                           f"using the default {getattr(defaults, field)!r}.")
        else:
            values[field] = value
    return replace(defaults, **values), notices


def to_query(settings: LiveSettings) -> dict[str, str]:
    """Query parameters that reproduce ``settings`` (custom ids only for a custom pair)."""
    query = {}
    for field, (name, _) in FIELDS.items():
        value = getattr(settings, field)
        if field in ("target", "draft") and settings.pair != "custom":
            continue
        query[name] = number_text(value) if isinstance(value, float) else str(value)
    return query


def validate(settings: LiveSettings) -> list[str]:
    """Problems that stop a run, each a sentence for the user (empty when the settings are fine)."""
    problems = []
    if not settings.prompt.strip():
        problems.append("The prompt is empty: type something for the models to continue, or pick an example.")
    elif len(settings.prompt) > MAX_PROMPT_CHARS:
        problems.append(f"The prompt has {len(settings.prompt)} characters; the limit is {MAX_PROMPT_CHARS}. "
                        "Shorten it and press Run again.")
    for field, (lo, hi, whole) in NUMBERS.items():
        value = getattr(settings, field)
        bad_type = whole and (not isinstance(value, int) or isinstance(value, bool))
        if bad_type or not isinstance(value, int | float) or not lo <= value <= hi:
            kind = "a whole number" if whole else "a number"
            problems.append(f"{FIELDS[field][0]} must be {kind} from {_limit(lo, whole)} to {_limit(hi, whole)}, "
                            f"not {value!r}.")
    if settings.drafter not in DRAFTERS:
        problems.append(f"Unknown drafter kind {settings.drafter!r}; choose one of {', '.join(DRAFTERS)}.")
    if settings.pair == "custom" and not settings.target.strip():
        problems.append("A custom pair needs a target id (a hub id such as owner/name, or a local folder).")
    if settings.pair == "custom" and settings.drafter == "model" and not settings.draft.strip():
        problems.append("The draft-model drafter needs a draft id too (a hub id or a local folder).")
    return problems


@dataclass(frozen=True)
class CalculatorLink:
    """The calculator's settings for a measured run (rounded to its sliders' steps) and the link to them."""

    k: int
    alpha_pct: int
    draft_cost: float
    verify_cost: float
    notes: tuple[str, ...] = ()  # values the calculator cannot show and had to clamp

    @property
    def url(self) -> str:
        return (f"/calculator?k={self.k}&alpha={self.alpha_pct}&c={self.draft_cost:.2f}"
                f"&v={self.verify_cost:.2f}")


def _half_up(x: float, decimals: int) -> float:
    return math.floor(x * 10**decimals + 0.5) / 10**decimals


def calculator_link(alpha: float, k: int, draft_cost: float, verify_cost: float) -> CalculatorLink:
    """Where to open the calculator for measured alpha, K, c and v (the calculator reads these query names)."""
    notes = []
    c = min(1.0, max(0.0, draft_cost))
    v = min(10.0, max(1.0, verify_cost))
    if c != draft_cost:
        notes.append(f"the calculator's draft cost slider stops at 1.00×; measured {draft_cost:.2f}×")
    if v != verify_cost:
        notes.append(f"the calculator's verification factor spans 1 to 10 (a pass over K + 1 tokens never costs "
                     f"less than a one-token pass); measured {verify_cost:.2f}")
    return CalculatorLink(min(16, max(1, k)), int(_half_up(alpha * 100, 0)), _half_up(c, 2), _half_up(v, 2),
                          tuple(notes))
