"""One run request: everything that decides a live run, validated once, as plain data another process can run.

A page builds a :class:`RunRequest` from what the learner set; the in-process run and a class worker both hand it
to :func:`specsim.liverun.run_request`. Every range is checked here, once, with the sentence a page shows
(:meth:`RunRequest.problems`); the pages' number boxes and the command lines read their bounds from
:data:`RANGES`. The K policy and the sampling settings ride inside it (:attr:`RunRequest.kpolicy`,
:attr:`RunRequest.sampling`), and it travels as JSON (:meth:`RunRequest.to_dict`, :meth:`RunRequest.from_dict`).

Adding a setting (as top-k and top-p were) is a field here with its range, its use in the engine, and the live page's
box that offers it (README, "Where to change what").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from specsim.core import defaults
from specsim.core.kpolicy import LIVE_POLICIES, KPolicy, live_policy

#: field -> (lowest, highest, how a sentence names it): the one place a run's ranges are written.
#: tests/test_request.py fails on a second copy (a comparison with one of these bounds, or a range sentence, written
#: anywhere else).
RANGES: dict[str, tuple[float, float, str]] = {
    "k": (defaults.K_MIN, defaults.K_MAX, "K"),
    "max_new_tokens": (1, defaults.MAX_NEW_TOKENS_LIMIT, "New tokens"),
    "temperature": (0.0, defaults.TEMPERATURE_MAX, "Temperature"),
    "seed": (defaults.SEED_MIN, defaults.SEED_MAX, "The seed"),
    "top_k": (1, defaults.TOP_K_MAX, "Top-k"),
    "top_p": (defaults.TOP_P_MIN, 1.0, "Top-p"),  # a nucleus narrower than 1 % of the mass is greedy in all but name
    "min_p": (0.0, 1.0, "Min-p"),  # 0 keeps every token, 1 only those as likely as the top one
    "tree_nodes": (1, defaults.TREE_NODES_MAX, "The tree's guesses"),
    "tree_depth": (1, defaults.K_MAX, "The tree's depth"),
}


WHOLE = frozenset({"k", "max_new_tokens", "seed", "top_k", "tree_nodes", "tree_depth"})
"""The fields that take whole numbers only."""


def describe(field: str) -> str:
    """What ``field`` takes, as a sentence says it: "a whole number from 1 to 16", "a number from 0 to 2"."""
    lo, hi, _ = RANGES[field]
    if field in WHOLE:
        return f"a whole number from {int(lo)} to {int(hi)}"
    return f"a number from {lo:g} to {hi:g}"


def range_problem(field: str, value: object, label: str | None = None) -> str | None:
    """The sentence that refuses ``value`` for ``field``, naming it as ``label`` (the box the learner typed into,
    the command's flag; by default the field's own name), or None when the value is a number of the right kind in
    range. The one range sentence in specsim: the pages, the command lines and the request itself all say this."""
    lo, hi, name = RANGES[field]
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if number and (field not in WHOLE or isinstance(value, int) or float(value).is_integer()) and lo <= value <= hi:
        return None  # (a NaN fails lo <= value)
    shown = value if number else str(value)
    return f"{label or name} must be {describe(field)}, not {shown!r}."


def _drafter_kinds() -> tuple[str, ...]:
    from specsim.methods import DRAFTER_KINDS  # here: methods names every drafter, and imports this module's users

    return DRAFTER_KINDS


class BadRequest(ValueError):
    """A request out of range; its message is the pages' sentences, joined."""


class RunRequest(BaseModel):
    """Everything that decides a live run.

    ``target`` is "bundled", a hub id or a folder the caller has already allowed (the page checks custom paths
    before a request is made); ``local`` as for :func:`specsim.core.models.load_model`. ``device``, ``dtype`` and
    ``invariant`` None mean the running machine's defaults; :meth:`resolved` fills them in. A page that has no
    model loaded (class mode) sends the prompt's text instead of its ids: ``prompt_ids`` empty and ``prompt`` set,
    and the process that loads the target encodes it (its chat template). ``early_exit_layers`` 0 means half the
    target's layers. ``extra`` is free for the caller and never decides the run.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt_ids: tuple[int, ...] = ()
    prompt: str = ""  # the prompt's text, encoded by whoever loads the target, when prompt_ids is empty
    target: str = defaults.DEFAULT_TARGET
    target_local: bool | None = None
    drafter: str = defaults.DEFAULT_DRAFTER
    draft: str = ""
    draft_local: bool | None = None
    early_exit_layers: int = Field(defaults.DEFAULT_EARLY_EXIT_LAYERS, ge=0)
    k: int = defaults.DEFAULT_K
    policy: str = "fixed"  # specsim.core.kpolicy.LIVE_POLICIES
    temperature: float = 0.0
    top_p: float | None = None
    top_k: int | None = None  # None: every token; else the k most likely, after the temperature, before top-p
    min_p: float | None = None  # None: every token; else those at least min_p times the top one's p, after top-p
    tree_nodes: int | None = None  # None: a chain of K guesses; else a token tree of this many guesses (trees.py)
    tree_depth: int = defaults.DEFAULT_TREE_DEPTH  # a tree's deepest level (with tree_nodes)
    seed: int = defaults.SEED_MIN
    max_new_tokens: int = defaults.DEFAULT_MAX_NEW_TOKENS
    device: str | None = None
    dtype: str | None = None
    invariant: bool | None = None
    extra: dict[str, Any] = Field(default_factory=dict)

    @field_validator("k", "max_new_tokens", "temperature", "seed", "top_k", "top_p", "min_p", "tree_nodes",
                     "tree_depth")
    @classmethod
    def _in_range(cls, value, info):
        problem = None if value is None else range_problem(info.field_name, value)
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("policy")
    @classmethod
    def _known_policy(cls, value):
        if value not in LIVE_POLICIES:
            raise ValueError(f"Unknown K policy {value!r}; choose one of {', '.join(LIVE_POLICIES)}.")
        return value

    @field_validator("drafter")
    @classmethod
    def _known_drafter(cls, value):
        value = defaults.drafter_kind(value)  # a request stored before a drafter kind was renamed
        if value not in _drafter_kinds():
            raise ValueError(f"Unknown drafter {value!r}; choose one of {', '.join(_drafter_kinds())}.")
        return value

    @model_validator(mode="after")
    def _has_a_prompt(self):
        if not self.prompt_ids and not self.prompt.strip():
            raise ValueError("The prompt is empty.")
        return self

    @model_validator(mode="after")
    def _a_tree_needs_a_model(self):
        if self.tree_nodes is not None and self.drafter not in defaults.TREE_DRAFTERS:
            raise ValueError(f"A token tree needs a drafter that runs a model (a draft model or early exit), "
                             f"not {self.drafter}.")
        if self.tree_nodes is not None and self.policy != "fixed":
            raise ValueError("A token tree has no K policy: its size is its guesses and its depth.")
        return self

    # ---- building one -----------------------------------------------------------------------------------------
    @classmethod
    def problems(cls, labels: Mapping[str, str] | None = None, **fields) -> list[str]:
        """What is wrong with a request of ``fields``, one sentence each; empty when it may run. ``labels`` names a
        field as its caller offers it (the page's box, the command's flag)."""
        labels = labels or {}
        try:
            cls(**fields)
        except ValidationError as error:
            found = []
            for e in error.errors():
                field = e["loc"][0] if e["loc"] else None
                # a number of the wrong kind or out of range: the range sentence, naming the field as the caller does
                sentence = range_problem(field, fields[field], labels.get(field)) if field in RANGES else None
                found.append(sentence or _sentence(e))
            return list(dict.fromkeys(found))  # once each (pydantic reports an optional field once per type)
        return []

    @classmethod
    def checked(cls, labels: Mapping[str, str] | None = None, **fields) -> RunRequest:
        """The request, or :class:`BadRequest` whose message is :meth:`problems`' sentences."""
        problems = cls.problems(labels, **fields)
        if problems:
            raise BadRequest(" ".join(problems))
        return cls(**fields)

    def changed(self, **fields) -> RunRequest:
        """This request with ``fields`` changed, validated again."""
        return type(self).checked(**{**self.model_dump(), **fields})

    # ---- what rides inside ------------------------------------------------------------------------------------
    @property
    def kpolicy(self) -> KPolicy:
        """How K moves from loop to loop (:func:`specsim.core.kpolicy.live_policy` of ``policy`` from ``k``)."""
        return live_policy(self.policy, self.k)

    @property
    def sampling(self):
        """How tokens are chosen (:class:`specsim.core.sampling.SamplingConfig`)."""
        from specsim.core.sampling import SamplingConfig  # here: it imports torch, which a class replica never loads

        return SamplingConfig(self.temperature, self.top_p, self.top_k, self.min_p)

    @property
    def tree(self):
        """The token tree each iteration drafts (:class:`specsim.core.trees.TreeShape`), or None for a chain."""
        if self.tree_nodes is None:
            return None
        from specsim.core.trees import TreeShape  # here: it imports torch, which a class replica never loads

        return TreeShape.live(self.tree_nodes, self.tree_depth)

    def resolved(self) -> RunRequest:
        """The same request with device, dtype and decode path made explicit (the running machine's defaults)."""
        from specsim.core import models  # here: a class replica builds requests and never loads torch

        device = self.device or models.default_device()
        dtype = models.parse_dtype(self.dtype, device)
        invariant = models.wants_invariant(device, dtype) if self.invariant is None else self.invariant
        return self.model_copy(update={"device": device, "dtype": str(dtype).removeprefix("torch."),
                                       "invariant": invariant})

    # ---- JSON -------------------------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return self.model_dump(mode="json")

    @classmethod
    def from_dict(cls, data: dict) -> RunRequest:
        return cls.model_validate(data)


def _sentence(error: dict) -> str:
    """A pydantic error as the page says it: our own sentences as they are, pydantic's prefixed with the field."""
    if error["type"] == "value_error":
        return str(error["ctx"]["error"])
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}."


def bounds(field: str) -> tuple[float, float]:
    """The lowest and highest value of a numeric field (what the pages' boxes and the command lines allow)."""
    lo, hi, _ = RANGES[field]
    return lo, hi


__all__ = ["RANGES", "WHOLE", "BadRequest", "RunRequest", "bounds", "describe", "range_problem"]
