"""The calculator's four headline numbers, with a browser-side copy that updates them while a slider moves.

The numbers on screen come from :class:`app.calculator.text.CalcNumbers` (specsim.measure.analytics) in every script
run. A
run takes a round trip to the server and longer than a frame, so a small component
(assets/calculator/instant_numbers.js) recomputes the same closed forms in the browser the moment a slider
moves and writes them into these metrics; the run that follows draws specsim's numbers over them. The browser
tests check the copy against specsim.measure.analytics at every slider position.
"""

from __future__ import annotations

import streamlit as st

from app.calculator.controls import SLIDER_LABELS
from app.calculator.text import CalcNumbers, fmt
from app.settings import CalcSettings
from specsim.core.paths import CALC_INSTANT_JS

KEY = "calc_instant_numbers"
LABELS = ("guesses kept per loop, E[j]", "tokens per loop, E[j] + 1", "cost per loop, in target passes",
          "speedup vs plain decoding")


@st.cache_resource(show_spinner=False)
def _instant():
    # it draws nothing of its own: hidden, it takes no room (and no gap) in the page's layout
    return st.components.v2.component("specsim_calc_instant_numbers", js=CALC_INSTANT_JS.read_text(),
                                      css=f".st-key-{KEY} {{ display: none; }}", isolate_styles=False)


def texts(n: CalcNumbers) -> tuple[str, str, str, str]:
    """The four numbers as the metrics show them."""
    return fmt(n.prefix), fmt(n.tokens), fmt(n.cost), f"{fmt(n.speedup)}×"


def headline(s: CalcSettings) -> CalcNumbers:
    """Draw the four metrics for ``s`` (and the component that updates them in the browser); return the numbers."""
    n = CalcNumbers.of(s)
    for col, label, text in zip(st.columns(4), LABELS, texts(n), strict=True):
        col.metric(label, text)
    _instant()(data={"sliders": list(SLIDER_LABELS), "metrics": list(LABELS), "v": s.verify_cost},
               key=KEY)
    return n
