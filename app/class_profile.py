"""The machine profile the pages show (:mod:`specsim.measure.machine`): this machine's, or in a class the one the
class's
workers published (:func:`specsim.classroom.records.publish_profile`). A class replica runs no model and never loads
torch, so it
neither measures nor reads a profile of its own: the runs, and so the best K they start from, are the workers'."""

from __future__ import annotations

from app import classqueue
from specsim.core.defaults import DEFAULT_K
from specsim.measure import machine

NO_CLASS_PROFILE = (f"K = {DEFAULT_K} is the lesson's example: the class's workers have not published a measured best "
                    "K (a worker publishes its machine's profile when it starts, once "
                    "`python -m specsim.measure.machine` has "
                    "measured that machine).")


def _class_url() -> str | None:
    return classqueue.queue_url()


def cached() -> machine.Profile | None:
    """The measured profile the pages use, or None when there is none."""
    url = _class_url()
    if url is None:
        return machine.cached()
    from specsim.classroom import records

    raw = records.class_profile(url)
    try:
        return None if raw is None else machine.Profile.from_json(raw)
    except (ValueError, KeyError, TypeError):
        return None


def default_k() -> tuple[int, str]:
    """The live page's starting K and why (:func:`specsim.measure.machine.default_k`), from :func:`cached`'s profile."""
    profile = cached()
    if profile is None and _class_url() is not None:
        return DEFAULT_K, NO_CLASS_PROFILE
    return machine.default_k(profile)
