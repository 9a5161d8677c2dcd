"""The calculator's "all K guesses in one pass" box: Medusa's heads and PARD's parallel draft pay one drafting pass
per loop, not K, so the K·c model of a chained draft does not price them."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from app import state
from app.calculator.text import fmt, fmt_c
from app.charts import chart
from app.palette import DRAFT, REJECTED, TARGET
from app.settings import CalcSettings
from specsim.measure import analytics


def one_pass_figure(alpha: float, draft_cost: float, pass_cost: float, verify_cost: float,
                    k_max: int = analytics.K_MAX) -> go.Figure:
    """Speedup against K: a chained draft (K·c + v) and a one-pass drafter (c₁ + v), at the same α and v."""
    ks = np.arange(analytics.K_MIN, k_max + 1)
    fig = go.Figure()
    fig.add_scatter(x=ks, y=analytics.speedup(alpha, ks, draft_cost, verify_cost), mode="lines+markers",
                    name=f"chained draft: K passes at c = {fmt_c(draft_cost)}", line={"color": DRAFT})
    fig.add_scatter(x=ks, y=analytics.speedup_one_pass(alpha, ks, pass_cost, verify_cost), mode="lines+markers",
                    name=f"all K in one pass at c₁ = {pass_cost:.2f}", line={"color": TARGET})
    fig.add_scatter(x=[ks[0], ks[-1]], y=[1, 1], mode="lines", name="break-even",
                    line={"color": REJECTED, "dash": "dash"})
    fig.update_layout(title="Drafting cost per loop: K passes, or one", height=340,
                      xaxis={"title": "K (draft tokens per loop)", "dtick": 1},
                      yaxis={"title": "speedup (model)", "rangemode": "tozero"},
                      margin={"l": 10, "r": 10, "t": 50, "b": 10}, legend={"orientation": "h", "y": -0.3})
    return fig


def one_pass_sentence(s: CalcSettings, pass_cost: float) -> str:
    chained = analytics.speedup_by_k(s.alpha, s.draft_cost, s.verify_cost)
    k_chain = analytics.best_k(chained)
    ks = range(analytics.K_MIN, analytics.K_MAX + 1)
    once = {k: float(analytics.speedup_one_pass(s.alpha, k, pass_cost, s.verify_cost)) for k in ks}
    limit = float(analytics.prefix_limit(s.alpha)) + 1
    ceiling = f"up to 1/(1 − α) = {fmt(limit)}" if limit < float("inf") else "without bound at α = 100 %"
    return (f"At α = {s.alpha_pct} % and v = {fmt(s.verify_cost)}, a chained draft is best at K = {k_chain} "
            f"({fmt(chained[k_chain])}×). A drafter that writes all K guesses in one pass of cost c₁ = "
            f"{pass_cost:.2f} reaches {fmt(once[4])}× at K = 4 and {fmt(once[max(ks)])}× at K = {max(ks)}: its "
            "drafting cost does not grow with K, so with one α for every slot the longest draft is never worse, "
            f"and tokens per loop creep {ceiling}. Two things stop that in practice. Its "
            "guesses cannot see each other: the head that guesses 3 tokens ahead does not know what the first two "
            "heads wrote, so acceptance falls with the distance faster than αⁱ (the *by position* box above prices "
            "that), and v grows with K + 1 (the next tab). PARD's parallel draft model (a small model that fills K "
            "masked positions at once) prices this way; Medusa's heads do too, with c₁ near 0, since they read the "
            "hidden state the target's own pass already computed. DeepSeek-V3's MTP does not: it ships one module, "
            "and drafting K > 1 reuses it in a chain, K sequential passes, the chained model.")


def section(s: CalcSettings) -> None:
    st.markdown("**Drafters that guess all K at once.** The calculator prices a draft that writes its guesses one "
                "after another, K passes at c each. Some drafters write all K in a single pass.")
    pass_cost = st.slider("c₁: the cost of that one drafting pass, in target passes", 0.0, 1.0, step=0.01,
                          key=state.bound(state.CALC_ONE_PASS_COST))
    state.keep([state.CALC_ONE_PASS_COST])
    chart(one_pass_figure(s.alpha, s.draft_cost, pass_cost, s.verify_cost), key=state.CALC_ONE_PASS_CHART)
    st.markdown(one_pass_sentence(s, pass_cost))
