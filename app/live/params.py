"""The live page's settings: limits, validation, and their round trip through the URL.

Pure functions (mappings of strings in, settings and notices out) so they are tested without
Streamlit. A bad URL value falls back to its default with a notice naming the parameter; a bad
value typed into the form is refused with a message when the user presses Run.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from urllib.parse import urlencode

from app import keys, urlcodec
from app.calculator import params as calc_params
from app.settings import CalcSettings, LiveSettings
from app.urlcodec import Number, Param, Reading, half_up, last, number_text, read_number, refused
from specsim import methods
from specsim.core import kpolicy
from specsim.core.defaults import DRAFT_MODEL, TREE_DRAFTERS, drafter_kind
from specsim.request import bounds, range_problem

MAX_PROMPT_CHARS = 2000
MAX_ID_CHARS = 200
DRAFTERS = methods.LIVE_DRAFTERS  # drafter kind -> how the page describes it (specsim.methods registers them)
TREE = "tree"
POLICIES = {**kpolicy.LIVE_POLICIES, TREE: "a token tree of alternative guesses"}
"""K policy -> how the page describes it; "tree" drafts a token tree each loop (specsim.core.trees) instead."""
TREE_FIELDS = ("tree_nodes", "tree_depth")
"""The tree's numbers: read only when the policy is "tree"."""



# The numbers' ranges are the run request's (specsim.request.RANGES): checked there, offered here.
PARAMS: tuple[Param, ...] = (
    Param("pair", "pair", keys.LIVE_PAIR),
    Param("target", "target", keys.LIVE_CUSTOM_TARGET),
    Param("draft", "draft", keys.LIVE_CUSTOM_DRAFT),
    Param("drafter", "drafter", keys.LIVE_DRAFTER),
    Param("prompt", "prompt", keys.LIVE_PROMPT),
    Param("k", "k", keys.LIVE_K, Number("k", *bounds("k"), 0, whole_only=True)),
    # exact: the page, the run and the link agree on the temperature as typed
    Param("t", "temperature", keys.LIVE_TEMPERATURE, Number("t", *bounds("temperature"), 2, exact=True)),
    Param("n", "max_new_tokens", keys.LIVE_MAX_NEW,
          Number("n", *bounds("max_new_tokens"), 0, whole_only=True)),
    Param("seed", "seed", keys.LIVE_SEED, Number("seed", *bounds("seed"), 0, whole_only=True)),
    Param("policy", "policy", keys.LIVE_POLICY),
    Param("top_k", "top_k", keys.LIVE_TOP_K, Number("top_k", *bounds("top_k"), 0, whole_only=True)),
    Param("top_p", "top_p", keys.LIVE_TOP_P, Number("top_p", *bounds("top_p"), 2)),
    Param("min_p", "min_p", keys.LIVE_MIN_P, Number("min_p", *bounds("min_p"), 2)),
    Param("tree", "tree_nodes", keys.LIVE_TREE, Number("tree", *bounds("tree_nodes"), 0, whole_only=True)),
    Param("depth", "tree_depth", keys.LIVE_TREE_DEPTH, Number("depth", *bounds("tree_depth"), 0, whole_only=True)),
)
NAMES: tuple[str, ...] = tuple(p.name for p in PARAMS)
BY_FIELD: dict[str, Param] = {p.field: p for p in PARAMS}
NUMBERS: dict[str, Number] = {p.field: p.number for p in PARAMS if p.number is not None}  # field -> range and step


BOXES: dict[str, str] = {"k": "K: proposals per loop", "temperature": "Temperature (0 = greedy)",
                         "max_new_tokens": "Max new tokens", "seed": "Seed", "top_k": "Top-k (blank = off)",
                         "top_p": "Top-p (blank = off)", "min_p": "Min-p (blank = off)",
                         "tree_nodes": "Tree: guesses", "tree_depth": "Tree: depth"}
"""The label of each number's box on the page: the form shows it, and a refusal names it (the URL's notices name
the URL's parameter instead)."""
LABELS: dict[str, str] = {field: f"“{box}”" for field, box in BOXES.items()}
"""How a refusal names each number: its box's label, quoted (specsim.request.range_problem's ``label``)."""
OPTIONAL = ("top_k", "top_p", "min_p")
"""Numbers a learner may leave blank: the cut is then off (None)."""
TEXT_BOXES = tuple(BOXES)
"""Numbers typed into text boxes, not number boxes: a browser number box drops digits past 2**53 (issue 12)
and turns letters into 0 (issue 23), so the page would refuse a number the user never typed, or run a
temperature of 0 that nobody typed."""


def from_text(field: str, text: object) -> int | float | str:
    """A number box holds text, so whatever was typed stays on screen: a number in range becomes the value (a whole
    number for a whole-only field, the temperature exactly as written), anything else is kept as typed and refused
    by :func:`validate`, which names it and the allowed range. The rule is :meth:`Number.parse`, the one a link's
    value meets, so "4.0" typed into K is 4, as ``k=4.0`` in a link is."""
    number = NUMBERS[field]
    if field in OPTIONAL and (text is None or isinstance(text, str) and not text.strip()):
        return None
    if not isinstance(text, bool) and (isinstance(text, int) or isinstance(text, float) and not number.whole_only):
        return text
    value = number.parse(str(text))  # the rule a link's value meets: "4.0" is the whole number 4 in both
    if value is None:
        return str(text)
    return int(value) if number.whole_only else value


def parse_query(query: Mapping[str, str | Sequence[str]], pairs: Sequence[str],
                defaults: LiveSettings | None = None) -> tuple[LiveSettings, list[str]]:
    """Settings from the URL (a name in other letter case, ``K``, read as ours), and a notice for every parameter
    that was refused or rounded; a refused one takes its value from ``defaults`` (the page's starting settings)."""
    query = urlcodec.ours(query, NAMES)
    values: dict[str, object] = {}
    notices: list[str] = []
    defaults = defaults or LiveSettings()
    for param in PARAMS:
        field, name = param.field, param.name
        if name not in query:
            continue
        raw = last(query[name])
        reading = read_number(NUMBERS[field], raw, getattr(defaults, field)) if field in NUMBERS \
            else _read_text(field, name, raw, pairs, getattr(defaults, field))
        notices += [note for note in (reading.problem, reading.adjustment) if note]
        if reading.value is not None:
            values[field] = reading.value
    return replace(defaults, **values), notices


def _read_text(field: str, name: str, raw: str, pairs: Sequence[str], default: str) -> Reading:
    """A text setting from the URL: a pair, a drafter kind, the prompt or a model id."""
    if field == "pair":
        ok, expected = raw in pairs, "one of " + ", ".join(pairs)
    elif field == "drafter":
        raw = drafter_kind(raw)  # a link made before a drafter kind was renamed still opens
        ok, expected = raw in DRAFTERS, "one of " + ", ".join(DRAFTERS)
    elif field == "policy":
        ok, expected = raw in POLICIES, "one of " + ", ".join(POLICIES)
    elif field == "prompt":
        ok, expected = bool(raw.strip()) and len(raw) <= MAX_PROMPT_CHARS, \
            f"a non-empty text of at most {MAX_PROMPT_CHARS} characters"
    else:
        ok = len(raw) <= MAX_ID_CHARS and not _control_characters(raw)
        expected = f"a model id of at most {MAX_ID_CHARS} characters, without control characters"
        raw = raw.strip() if ok else raw
    return Reading(raw) if ok else refused(name, raw, expected, repr(default))


def to_query(settings: LiveSettings, current: Mapping[str, str] | None = None) -> dict[str, str]:
    """Query parameters that reproduce ``settings`` (custom ids only for a custom pair).

    A value :func:`validate` refuses is never written: its parameter keeps the value the address carries now
    (``current``) when that one reads without a notice, and is left out otherwise.
    """
    refused, current = problems(settings), current or {}
    query = {}
    for param in PARAMS:
        field, name = param.field, param.name
        value = getattr(settings, field)
        if field in ("target", "draft") and settings.pair != "custom" or value is None and field in OPTIONAL:
            continue
        if field in TREE_FIELDS and settings.policy != TREE:  # a chain's link carries no tree
            continue
        if field in refused:
            if name in current and _reads_cleanly(field, current[name]):
                query[name] = current[name]
            continue
        query[name] = number_text(value) if isinstance(value, float) else str(value)
    return query


def _reads_cleanly(field: str, raw: str) -> bool:
    """Whether a URL value for ``field`` would be taken as it stands (no refusal, no rounding)."""
    name, default = BY_FIELD[field].name, getattr(LiveSettings(), field)
    reading = read_number(NUMBERS[field], raw, default) if field in NUMBERS \
        else _read_text(field, name, raw, (), default)
    return reading.problem is None and reading.adjustment is None


def _control_characters(text: str) -> list[str]:
    """The control characters in ``text`` (a NUL byte, a tab…), as escapes people can read: ``\\x00``."""
    return sorted({repr(ch)[1:-1] for ch in text if unicodedata.category(ch) == "Cc"})


def problems(settings: LiveSettings) -> dict[str, str]:
    """What stops a run, by the field at fault, each a sentence for the user (empty when the settings are fine)."""
    found = {}
    if not settings.prompt.strip():
        found["prompt"] = "The prompt is empty: type something for the models to continue, or pick an example."
    elif len(settings.prompt) > MAX_PROMPT_CHARS:
        found["prompt"] = (f"The prompt has {len(settings.prompt)} characters; the limit is {MAX_PROMPT_CHARS}. "
                           "Shorten it and press Run again.")
    for field in NUMBERS:
        value = getattr(settings, field)
        if value is None and field in OPTIONAL or field in TREE_FIELDS and settings.policy != TREE:
            continue
        if field == "k" and settings.policy == TREE:  # a tree has no K: its box is greyed out
            continue
        problem = range_problem(field, value, LABELS[field])  # the run request's sentence, naming the box
        if problem:
            found[field] = problem
    if settings.drafter not in DRAFTERS:
        found["drafter"] = f"Unknown drafter kind {settings.drafter!r}; choose one of {', '.join(DRAFTERS)}."
    if settings.policy not in POLICIES:
        found["policy"] = f"Unknown K policy {settings.policy!r}; choose one of {', '.join(POLICIES)}."
    if settings.policy == TREE and settings.drafter not in TREE_DRAFTERS:
        found["policy"] = ("A token tree needs a drafter that runs a model (a draft model or early exit): choose "
                           "one of them, or a chain's K policy.")
    if settings.pair == "custom" and not settings.target.strip():
        found["target"] = "A custom pair needs a target id (a hub id such as owner/name, or a local folder)."
    if settings.pair == "custom" and settings.drafter == DRAFT_MODEL and not settings.draft.strip():
        found["draft"] = "The draft-model drafter needs a draft id too (a hub id or a local folder)."
    for field, box in (("target", "Target"), ("draft", "Draft")):
        bad = _control_characters(getattr(settings, field)) if settings.pair == "custom" else []
        if bad and field not in found:
            found[field] = (f"The {box} box holds a control character ({', '.join(bad)}), which no hub id or folder "
                            "name has: retype the id.")
    return found


def validate(settings: LiveSettings) -> list[str]:
    """Problems that stop a run, each a sentence for the user (empty when the settings are fine)."""
    return list(problems(settings).values())


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
        settings = CalcSettings(self.k, self.alpha_pct, self.draft_cost, self.verify_cost)
        return "/calculator?" + urlencode(calc_params.to_query(settings, every=True))


def calculator_link(alpha: float, k: int, draft_cost: float, verify_cost: float) -> CalculatorLink:
    """Where to open the calculator for measured alpha, K, c and v (the calculator reads these query names)."""
    k_range, c_range, v_range = (calc_params.BY_NAME[n].number for n in ("k", "c", "v"))
    notes = []
    c = min(c_range.hi, max(c_range.lo, draft_cost))
    v = min(v_range.hi, max(v_range.lo, verify_cost))
    if c != draft_cost:
        notes.append(f"the calculator's draft cost slider stops at {c_range.hi:.2f}×; measured {draft_cost:.2f}×")
    if v != verify_cost:
        notes.append(f"the calculator's verification factor spans {v_range.lo:g} to {v_range.hi:g} (a pass over "
                     f"K + 1 tokens never costs less than a one-token pass); measured {verify_cost:.2f}")
    k = int(min(k_range.hi, max(k_range.lo, k)))
    return CalculatorLink(k, int(half_up(alpha * 100, 0)), half_up(c, 3), half_up(v, 2), tuple(notes))
