"""Every ``st.session_state`` key specsim uses, with its default, in one place.

Pages never spell a session-state key as a string: they use the constants here, and call
:func:`init` once per script run so every key exists with its default.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

# ---- calculator ------------------------------------------------------------------------------
CALC_K = "calc_k"
CALC_ALPHA_PCT = "calc_alpha_pct"
CALC_DRAFT_COST = "calc_draft_cost"
CALC_VERIFY_COST = "calc_verify_cost"  # one target pass over K+1 tokens, in one-token passes
CALC_URL_LAST = "calc_url_last"  # the calculator's query parameters as last written to the URL

DEFAULTS: dict[str, Any] = {
    CALC_K: 4,
    CALC_ALPHA_PCT: 70,
    CALC_DRAFT_COST: 0.13,
    CALC_VERIFY_COST: 1.0,
    CALC_URL_LAST: None,
}


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


def widget_key(key: str) -> str:
    """The key of the widget that edits ``key``.

    Streamlit forgets a widget's state when its page is not shown, so a page copies the value into
    the widget before drawing it and stores it back under ``key`` after, which survives navigation.
    """
    return f"widget_{key}"
