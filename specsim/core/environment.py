"""Every setting the app and the library read from the environment, in one class (pydantic-settings).

Each field is read from the variable ``SPECSIM_`` + its name in capitals (:func:`env_name`); none is needed, and each
changes one thing. The README's table "Settings from the environment" lists the same variables with the same
descriptions (a test holds them equal). :func:`current` reads the environment at the moment it is called, so a
test's ``monkeypatch.setenv`` or a class's worker started with other values takes effect without a restart.

A value that does not parse (``SPECSIM_QUEUE_LIMIT=many``) raises :class:`SettingsError`, whose message names the
variable, what it must be and what it was.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Annotated

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

PREFIX = "SPECSIM_"


def _default_cache() -> Path:
    return Path.home() / ".cache" / "specsim"


class Environment(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=PREFIX, extra="ignore", frozen=True)

    cache: Path = Field(default_factory=_default_cache,
                        description="where converted weights and the run cache live (default `~/.cache/specsim`)")
    run_cache: str = Field("", description="another folder for the live page's run cache, or `off`")
    model_dirs: Annotated[tuple[Path, ...], NoDecode] = Field(
        (), description="folders (separated by `:`) a custom model path may come from")
    show_answers: bool = Field(False, description="`1`: every session starts with \"Show answers without guessing\" "
                                                  "on (a lecturer's demo)")
    queue_url: str | None = Field(None, description="the class queue's Redis URL: runs go to its workers (set by "
                                                    "`make class`)")
    queue_name: str | None = Field(None, description="the queue's name on that server (default `specsim-live`)")
    queue_limit: int | None = Field(None, ge=0, description="how many runs may wait in the class queue (default 20)")
    no_fused: bool = Field(False, description="`1`: no fused C++ kernels (the Python fallback)")
    no_target_pass: bool = Field(False, description="`1`: transformers' forward instead of the one-call target pass")
    draft_int8: bool = Field(True, description="`0`: the standalone draft reads its weights in bfloat16, not int8 "
                                               "(where the fused kernel runs)")

    @field_validator("cache", mode="before")
    @classmethod
    def _cache(cls, value):
        return value if str(value).strip() else _default_cache()

    @field_validator("model_dirs", mode="before")
    @classmethod
    def _folders(cls, value):
        if isinstance(value, str):
            return tuple(Path(p) for p in value.split(os.pathsep) if p.strip())
        return value

    @field_validator("run_cache", "queue_url", "queue_name", "queue_limit", "show_answers", "no_fused",
                     "no_target_pass", "draft_int8", mode="before")
    @classmethod
    def _blank_is_unset(cls, value, info):
        """Spaces around a value are dropped, and a blank value reads as the field's default (None, off, "")."""
        if not isinstance(value, str):
            return value
        value = value.strip()
        return value or cls.model_fields[info.field_name].default


class SettingsError(ValueError):
    """A ``SPECSIM_*`` variable whose value does not parse; the message names it."""


def env_name(field: str) -> str:
    """The environment variable a field is read from: ``queue_url`` -> ``SPECSIM_QUEUE_URL``."""
    return PREFIX + field.upper()


def current() -> Environment:
    """The settings as the environment gives them now; SettingsError for a value that does not parse.

    Read once per set of ``SPECSIM_*`` values (a page's script run asks dozens of times; parsing costs about a
    millisecond each time): a changed variable is a new set, read afresh. ``HOME`` too, where the cache's default
    lies."""
    names = {key: value for key, value in os.environ.items() if key.upper().startswith(PREFIX) or key == "HOME"}
    return _parsed(tuple(sorted(names.items())))


@functools.lru_cache(maxsize=16)
def _parsed(variables: tuple[tuple[str, str], ...]) -> Environment:
    """The settings for these ``SPECSIM_*`` variables (the frozen :class:`Environment` is safe to share)."""
    del variables  # the cache key: Environment reads os.environ, which holds exactly these
    try:
        return Environment()
    except ValidationError as error:
        problems = [f"{env_name(str(e['loc'][0]))}: {e['msg'][0].lower()}{e['msg'][1:]}, not {e['input']!r}"
                    for e in error.errors()]
        raise SettingsError("; ".join(problems) + ".") from None


__all__ = ["PREFIX", "Environment", "SettingsError", "current", "env_name"]
