"""The interactive p-versus-q widget: one slider per token sets the draft's q; presets set them all."""

from __future__ import annotations

import streamlit as st

from app import state

LABELS = ("␣the", "␣a", "␣cat", "␣dog", "␣sat")
TARGET_P = (0.45, 0.25, 0.15, 0.10, 0.05)  # a fixed target distribution over five tokens
PRESETS = {  # name -> draft weights (normalised to q)
    "draft agrees (q = p)": (45, 25, 15, 10, 5),
    "draft too sure of one token": (5, 85, 5, 3, 2),
    "draft flat": (20, 20, 20, 20, 20),
    "draft skips a token": (50, 30, 20, 0, 0),
}


def _apply(weights: tuple[int, ...]) -> None:
    state.put(state.PQ_WEIGHTS, tuple(weights))
    for i, w in enumerate(weights):
        state.put(state.pq_slider_key(i), int(w))


def weights() -> tuple[int, ...]:
    """Draw the presets and the sliders; return the draft's weights (not yet normalised)."""
    stored = state.get(state.PQ_WEIGHTS)
    for i, w in enumerate(stored):
        state.put_default(state.pq_slider_key(i), int(w))
    cols = st.columns(len(PRESETS))
    for col, (name, preset) in zip(cols, PRESETS.items(), strict=True):
        col.button(name, key=f"{state.PQ_PRESET_BUTTON}{name}", on_click=_apply, args=(preset,),
                   width="stretch")
    sliders = st.columns(len(LABELS))
    out = tuple(int(col.slider(f"q weight of {label}", 0, 100, step=1, key=state.pq_slider_key(i)))
                for i, (col, label) in enumerate(zip(sliders, LABELS, strict=True)))
    state.put(state.PQ_WEIGHTS, out)
    return out
