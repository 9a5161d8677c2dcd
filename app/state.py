"""Session state: read and write the keys of :mod:`app.keys`, and keep widgets in step with them.

The key constants and their defaults live in :mod:`app.keys` (importable without Streamlit);
they are re-exported here so a page writes ``state.LIVE_K``. Call :func:`init` once per script
run so every key exists with its default.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import streamlit as st

from app.keys import *  # noqa: F403  (every key constant, so pages write state.LIVE_K)
from app.keys import DEFAULTS, widget_key


def init() -> None:
    """Create every missing key with its default (never overwrites what the user set)."""
    for key, value in DEFAULTS.items():
        if key not in st.session_state:
            st.session_state[key] = value() if callable(value) else value


def get(key: str) -> Any:
    init()
    return st.session_state[key]


def put(key: str, value: Any) -> None:
    st.session_state[key] = value


def show(key: str, value: Any) -> None:
    """Store a setting and show it in the widget that edits it."""
    put(key, value)
    st.session_state[widget_key(key)] = value


def bound(key: str) -> str:
    """The widget key for setting ``key``, holding the stored value when the widget has none.

    Streamlit forgets a widget's value while its page is not shown; the plain key remembers it.
    """
    wkey = widget_key(key)
    if wkey not in st.session_state:
        st.session_state[wkey] = get(key)
    return wkey


def keep(keys: Iterable[str]) -> None:
    """Copy each widget's value back under its plain key, which survives navigation."""
    for key in keys:
        wkey = widget_key(key)
        if wkey in st.session_state:
            put(key, st.session_state[wkey])


def write_query(names: Iterable[str], wanted: Mapping[str, str]) -> None:
    """Make the address bar carry ``wanted`` for the page's own parameter ``names``, leaving others alone.

    The browser adds a history entry for every change of the address, so the page's parameters go in
    one update, and none at all when the address already says the same.
    """
    names = set(names)
    current = {key: st.query_params.get_all(key) for key in st.query_params}
    target = {key: values for key, values in current.items() if key not in names}
    target.update({name: [value] for name, value in wanted.items()})
    if target != current:
        st.query_params.from_dict(target)
