"""The calculator's "where the formulas come from" section: αⁱ → E[j] → tokens per loop → speedup."""

from __future__ import annotations

import streamlit as st

from app import state
from app.calculator.derivation_figures import kept_share_figure
from app.calculator.text import fmt
from app.charts import chart
from app.settings import CalcSettings
from specsim.measure import analytics


def section(s: CalcSettings) -> None:
    """Draw the derivation with the current settings' numbers plugged in."""
    a, k, c, v = s.alpha, s.k, s.draft_cost, s.verify_cost
    prefix = float(analytics.expected_accepted_prefix(a, k))
    tokens = float(analytics.tokens_per_loop(a, k))
    cost = float(analytics.cost_per_loop(k, c, v))
    st.subheader("Where the formulas come from")
    st.markdown(
        "**Assumption:** the target accepts each guess with the same probability α, independently of the other "
        "guesses (Leviathan et al., 2023, make the same simplification). Real acceptance varies from token to "
        "token (easy tokens, hard tokens), so the formulas describe an average, not any one loop.")
    st.markdown("**1. One slot.** Guess i ends up in the output only if it and every guess before it were "
                "accepted, so")
    st.latex(rf"P(\text{{slot }} i \text{{ kept}}) = \alpha^i \qquad (\alpha = {a:.2f}:\ "
             + ", ".join(f"{a ** i:.2f}" for i in range(1, min(k, 4) + 1)) + (r", \dots" if k > 4 else "") + ")")
    st.markdown("**2. The accepted prefix.** The number kept, j, is the sum of the slots' 0/1 outcomes, and an "
                "expectation of a sum is the sum of the expectations:")
    st.latex(rf"E[j] = \sum_{{i=1}}^{{K}} \alpha^i = \frac{{\alpha\,(1-\alpha^K)}}{{1-\alpha}} = {fmt(prefix)}")
    st.markdown("**3. Tokens per loop, τ.** The target adds its own token whatever happened:")
    st.latex(rf"\tau = E[j] + 1 = \frac{{1-\alpha^{{K+1}}}}{{1-\alpha}} = {fmt(tokens)}")
    st.markdown(
        f"Papers and serving stacks report this number as the **mean acceptance length τ** (EAGLE and Medusa's "
        f"tables, vLLM's speculative-decoding metrics), not α: here α = {a:.2f} and τ = {fmt(tokens)} tokens per "
        "loop. τ counts the +1 token; some papers count only the kept guesses, E[j], so check which before "
        "comparing. Unlike α, τ depends on K (and on a tree's shape), so a τ is only comparable at the K it was "
        "measured with.")
    st.markdown("**4. Speedup.** A loop costs K draft passes at c each and one verification pass at v (both in "
                "target passes); plain decoding pays one target pass per token:")
    st.latex(rf"\text{{speedup}} = \frac{{E[j] + 1}}{{K c + v}} = \frac{{{fmt(tokens)}}}{{{k} \times {c:.2f} + "
             rf"{v:.2f}}} = \frac{{{fmt(tokens)}}}{{{fmt(cost)}}} = {fmt(tokens / cost)}\times")
    st.markdown(
        "**Acceptance rate falls as K grows.** α is the chance of accepting one guess that gets checked; the share "
        "of *all K* proposals that end up kept is E[j] / K, and it shrinks as K grows, because later slots are "
        "reached less and less often. This is what \"a larger K lowers the acceptance rate\" means: the rate per "
        "checked guess stays α, the share of proposals kept falls.")
    chart(kept_share_figure(a, k), key=state.CALC_KEPT_SHARE_CHART)
