"""Why the output is unchanged: the acceptance rule, its proof, and a sampled check on five tokens."""

import numpy as np
import streamlit as st

from app import state
from app.unchanged import figures as figs
from app.unchanged import pq
from app.urlcodec import Number
from specsim import defaults, unchanged

SEED = Number("seed", defaults.SEED_MIN, defaults.SEED_MAX, 0, whole_only=True)

st.title("Why the output is unchanged")
st.markdown(
    "When the models sample rather than take the top token, the target cannot simply say yes or no: its own "
    "next token is random too. The rule of Leviathan et al. (2023) and Chen et al. (2023) is: the draft samples "
    "a guess x from its distribution q; the target keeps it with probability **min(1, p(x)/q(x))**; after a "
    "rejection it draws a replacement from **norm(max(0, p − q))**, the part of p that q left uncovered, "
    "rescaled to sum to 1. The text that comes out then follows p exactly, however bad the draft is. "
    "Below, the target p over five tokens is fixed; drag the sliders (or pick a preset) to change the draft's q.")

weights = pq.weights()
if sum(weights) == 0:
    st.error("Give at least one token a positive weight: the draft has to propose something.")
    st.stop()
p = np.array(pq.TARGET_P)
q = unchanged.normalise(weights)
kept_mass = unchanged.accepted_mass(p, q)
cols = st.columns(3)
cols[0].metric("chance a guess is kept, Σ min(p, q)", f"{kept_mass:.3f}")
cols[1].metric("chance of a rejection, 1 − Σ min(p, q)", f"{1 - kept_mass:.3f}")
cols[2].metric("tokens the draft never proposes", sum(1 for x in q if x == 0))
st.plotly_chart(figs.pq_figure(pq.LABELS, p, q), key=state.PQ_BARS_CHART)
st.dataframe(figs.acceptance_rows(pq.LABELS, p, q), hide_index=True, width="stretch")
st.markdown(
    "Where q is above p (the draft is over-confident about x) a guess of x is kept only with chance p/q, so of "
    "the q(x) with which x is proposed, exactly p(x) = min(p(x), q(x)) is kept. Where q is below p the guess is "
    "always kept, but it is proposed too rarely: the shortfall p − q is exactly what the residual hands out "
    "after a rejection. Both cases are the black marks: min(p, q) is what every token gets from kept guesses."
)
st.plotly_chart(figs.output_parts_figure(pq.LABELS, p, q), key=state.PQ_PARTS_CHART)

st.subheader("The proof in three lines")
st.latex(r"P(\text{out}=x) = q(x)\,\min\!\left(1, \tfrac{p(x)}{q(x)}\right) + "
         r"\Big(1 - \textstyle\sum_y \min(p(y), q(y))\Big)\, "
         r"\frac{\max(0,\, p(x) - q(x))}{\sum_y \max(0,\, p(y) - q(y))}")
st.latex(r"= \min(p(x), q(x)) + \max(0,\, p(x) - q(x)) \qquad "
         r"\text{since } \textstyle\sum_y \max(0, p(y)-q(y)) = 1 - \sum_y \min(p(y), q(y))")
st.latex(r"= p(x).")
st.markdown(
    "The first term is a guess of x that was kept; the second is a rejection followed by a draw of x from the "
    "residual. The middle step uses the fact that the mass where p exceeds q and the mass the two share add up "
    "to 1. **Greedy decoding is the limit** of low temperature: p and q become one-hot, min(1, p/q) is 1 when "
    "the draft's top token is the target's and 0 otherwise, and the residual puts all its mass on the target's "
    "top token. So greedy speculative decoding writes exactly the tokens plain greedy decoding writes.")

st.subheader("Checked by sampling")
typed = st.text_input(f"Seed (a whole number from {SEED.limit(SEED.lo)} to {SEED.limit(SEED.hi)})",
                      key=state.bound(state.PQ_SEED_TEXT), on_change=state.keep, args=([state.PQ_SEED_TEXT],))
accepted = SEED.parse(typed)
if accepted is None:
    st.error(f"The seed must be {SEED.describe()}, not '{typed.strip()}'. The steps below still use seed "
             f"{state.get(state.PQ_SEED)}, the last one accepted.", icon="⚠️")
else:
    state.put(state.PQ_SEED, int(accepted))
seed = state.get(state.PQ_SEED)
n_draws = 10_000
draws = unchanged.speculative_draws(p, q, n_draws, seed=int(seed))
counts = np.bincount(draws, minlength=len(p))
raw = unchanged.chi_square(np.bincount(unchanged.draft_draws(q, n_draws, seed=int(seed)), minlength=len(p)), p)
test = unchanged.chi_square(counts, p)
st.plotly_chart(figs.sampled_figure(pq.LABELS, counts, p, q), key=state.PQ_SAMPLED_CHART)
verdict = ("consistent with p" if test.p_value >= 0.01 else
           "unusually far from p (this happens about 1 time in 100 by chance; try another seed)")
st.markdown(
    f"{n_draws:,} speculative steps with this q: χ² = {test.statistic:.2f} on {test.dof} degrees of freedom, "
    f"p-value {test.p_value:.3f}, so the counts are {verdict}. For contrast, {n_draws:,} of the draft's own "
    f"samples, with no check, give χ² = {raw.statistic:.1f} (p-value "
    f"{'below 10⁻¹²' if raw.p_value < 1e-12 else f'{raw.p_value:.3g}'}) against p.")
