"""The live page's shipped recording, read once per server process."""

from __future__ import annotations

import streamlit as st

from specsim import recorded


@st.cache_resource(show_spinner=False)
def default_run() -> recorded.RecordedRun | None:
    """The recording of the default example in assets/live/, or None when it is missing or unreadable."""
    return recorded.load()
