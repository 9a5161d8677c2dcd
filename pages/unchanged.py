"""Why the output is unchanged: the acceptance rule, its proof, and a sampled check on five tokens."""

import numpy as np
import streamlit as st

from app import frame, predict, state
from app.charts import chart
from app.unchanged import block, pq, warp
from app.unchanged import figures as figs
from app.urlcodec import Number
from specsim.core import defaults
from specsim.core.published import LEVIATHAN_2023
from specsim.lesson import gpu_identity, unchanged

SEED = Number("seed", defaults.SEED_MIN, defaults.SEED_MAX, 0, whole_only=True)

st.title("Why the output is unchanged")
frame.opening("unchanged.py")
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
GUESS_FIRST = "Make your guess above to see this: the toy's chart passes through its answer at T = 1."
MASS_FIELD = (predict.Field("mass", "chance a guess is kept", 0.0, 1.0, 0.01),)


def mass_verdict(guess: float) -> str:
    gap = guess - kept_mass
    how = "spot on" if abs(gap) < 0.005 else f"{abs(gap):.2f} too {'high' if gap > 0 else 'low'}"
    return (f"You guessed {guess:.2f}; Σ min(p, q) = {kept_mass:.3f}, so your guess was {how}. Token by token, the "
            "smaller of p and q is the chance a guess of that token is proposed and kept; their sum is the chance "
            "the draft's guess is kept, whatever it is.")


def guessed_mass() -> bool:
    """Before the overlap shows: p and q as numbers, and a guess of the chance a guess is kept."""
    if predict.recorded("pq_mass", tuple(weights)) is None and not predict.answers_shown():
        st.dataframe([{"token": lab, "target p": round(float(pi), 3), "draft q": round(float(qi), 3)}
                      for lab, pi, qi in zip(pq.LABELS, p, q, strict=True)], hide_index=True)
    return predict.ask("pq_mass", tuple(weights), "With the target p and the draft q in this table, what is the "
                       "chance that the target keeps the draft's guess?", MASS_FIELD, {"mass": kept_mass},
                       lambda g: abs(g["mass"] - kept_mass) <= 0.05, lambda made: mass_verdict(made.guess["mass"]))


def overlap() -> None:
    """The overlap Σ min(p, q), its charts and its table."""
    cols = st.columns(3)
    cols[0].metric("chance a guess is kept, Σ min(p, q)", f"{kept_mass:.3f}")
    cols[1].metric("chance of a rejection, 1 − Σ min(p, q)", f"{1 - kept_mass:.3f}")
    cols[2].metric("tokens the draft never proposes", sum(1 for x in q if x == 0))
    tv = unchanged.total_variation(p, q)
    st.markdown(
        f"The chance a guess is kept is one minus the **total variation distance** between the two distributions: "
        f"TV(p, q) = ½ Σ |p − q| = {tv:.3f}, and 1 − {tv:.3f} = {1 - tv:.3f} = Σ min(p, q), because |p − q| = p + q − "
        "2·min(p, q) and each of p and q sums to 1. Averaged over the slots of a run, this overlap is the "
        "calculator's **α**: a draft is good exactly as far as its distribution covers the target's.")
    chart(figs.pq_figure(pq.LABELS, p, q), key=state.PQ_BARS_CHART)
    st.dataframe(figs.acceptance_rows(pq.LABELS, p, q), hide_index=True, width="stretch")
    st.markdown(
        "Where q is above p (the draft is over-confident about x) a guess of x is kept only with chance p/q, so of "
        "the q(x) with which x is proposed, exactly p(x) = min(p(x), q(x)) is kept. Where q is below p the guess is "
        "always kept, but it is proposed too rarely: the shortfall p − q is exactly what the residual hands out "
        "after a rejection. Both cases are the black marks: min(p, q) is what every token gets from kept guesses."
    )
    chart(figs.output_parts_figure(pq.LABELS, p, q), key=state.PQ_PARTS_CHART)


MASS_SHOWN = guessed_mass()  # False until the learner has guessed Σ min(p, q): nothing below may show it
if MASS_SHOWN:
    overlap()

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

st.subheader("Temperature moves α")
st.markdown(
    "p and q above are the models' distributions at temperature 1. A sampler at temperature T draws from "
    "softmax(log p / T) instead, and the draft samples at the same T, so both distributions change shape and their "
    "overlap with them. Low T sharpens both towards their top tokens: the overlap heads for 1 if the two top "
    "tokens agree and for 0 if they do not, which is greedy decoding's all-or-nothing check.")
measured = unchanged.measured_overlap()
peak_t, peak = measured.highest
fewer = "fewer" if measured.at(1.0) < measured.greedy else "more"
st.markdown(
    f"In the toy (the left chart{'' if MASS_SHOWN else ', drawn once you have guessed above'}) a high T makes both "
    "nearly uniform over the five tokens, so the overlap climbs "
    "towards 1, less whatever the draft never proposes: five tokens flatten quickly. **Real pairs usually go the "
    "other way** over the temperatures anyone samples at. Positions where the two models share a clear favourite "
    "are kept every time by greedy decoding; as T rises both spread mass over thousands of unlikely tokens, where a "
    "small draft's guesses are poor, and where a reduced-vocabulary draft puts nothing at all. Leviathan et al. "
    f"({LEVIATHAN_2023.when}) tabulate α lower at T = 1 than greedy for most of their pairs, and EAGLE and "
    "Medusa report smaller speedups at T = 1 than greedy. "
    "Measured on this app's own pair (the right chart: the default draft model's own q against the target; the "
    "copies of repeated text that it also proposes are left out"
    f"): α = {measured.greedy:.3f} greedy, {measured.at(1.0):.3f} at T = 1 and {measured.at(2.0):.3f} at "
    f"T = 2, highest ({peak:.3f}) at T = {peak_t:g}, so T = 1 keeps {fewer} guesses than greedy here. It is a proxy: "
    "at every T it scores the same text, the target's greedy answers, position by position (teacher-forced), not "
    "text sampled at that T. The kinds of prompt differ (the grey lines), one more reason to measure α at the "
    "temperature you will serve at.")
with st.expander("How this was measured"):
    st.markdown(f"The draft {measured.draft} against the target {measured.target}, over {measured.positions:,} "
                f"positions of the target's greedy answers to {measured.prompts} held-out prompts, the same text "
                "read at every T: at each position both models' scores are softened by T and Σ min(p_T, q_T) is "
                "averaged over the positions.")
temperatures = np.linspace(0.05, 2.0, 40)
toy_col, real_col = st.columns(2)
with toy_col:
    if MASS_SHOWN:
        chart(figs.temperature_figure(temperatures, unchanged.overlap_by_temperature(p, q, temperatures),
                                      float(unchanged.overlap_by_temperature(p, q, [0.0])[0]), kept_mass),
              key=state.PQ_TEMPERATURE_CHART)
    else:  # its curve passes through Σ min(p, q) at T = 1, the answer to the guess above
        st.caption(GUESS_FIRST)
with real_col:
    chart(figs.measured_temperature_figure(measured), key=state.PQ_MEASURED_CHART)

st.subheader("Top-k and top-p: the target must be cut, the draft may be")
warp.section(p, q, show_uncut=MASS_SHOWN)

st.subheader("From one guess to the whole block")
st.markdown(
    "The proof above covers one slot. A block checks K guesses in a row and adds the +1 token, and its guesses "
    "depend on each other, so the claim to prove is that every token the loop writes follows the target given "
    "**all the tokens written before it**. Induction over the positions of the output:\n\n"
    "1. **The first token.** The draft proposed guess 1 from q(· | prompt); the target's row 0 holds "
    "p(· | prompt). The one-slot rule above makes the token written p(· | prompt).\n"
    "2. **Token i + 1, given tokens 1 … i.** Two things can happen after token i. If token i was a kept guess, "
    "guess i + 1 of the same block comes next: it was drafted after exactly the tokens now written (kept guesses "
    "are the written tokens), and the target's row i holds p(· | those tokens), so the one-slot rule writes "
    "p(· | tokens 1 … i). If token i was a replacement, or the block's +1 token, a new block starts from the "
    "tokens written, and its first slot is step 1 again with a longer prompt. Either branch writes p(· | tokens "
    "1 … i), so their mixture does too.\n"
    "3. **The +1 token after a fully kept block** is drawn from the target's last row, p(· | all K kept "
    "guesses), directly: no draft is involved.\n\n"
    "Every branch uses fresh random numbers, so nothing but the tokens written decides what comes next. Multiplying "
    "the steps, P(y₁ … yₙ) = Π p(yᵢ | y₁ … yᵢ₋₁): exactly the target sampling alone. The proof never used how "
    "good q is, nor K, nor where the block boundaries fall.")
st.markdown(block.block_verification_text())
block.section()

st.subheader("In floating point")
st.markdown(
    "The proof is exact arithmetic. A computer rounds, and a pass over K + 1 tokens may round a position's scores "
    "differently from a one-token pass. Where the two likeliest tokens are almost tied, a greedy pick can then flip "
    "and the text goes its own way: the *distribution* is still the target's in every practical sense, but the "
    "tokens are not bit for bit those of plain decoding. This app's CPU decode path uses kernels whose result for "
    "a position does not depend on how many positions share the pass, so its greedy runs match plain decoding "
    "exactly; stock GPU kernels do not promise that.")
identity = gpu_identity.load()
if identity is not None:
    st.markdown(gpu_identity.sentence(identity))

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
chart(figs.sampled_figure(pq.LABELS, counts, p, q), key=state.PQ_SAMPLED_CHART)
verdict = ("consistent with p" if test.p_value >= 0.01 else
           "unusually far from p (this happens about 1 time in 100 by chance; try another seed)")
st.markdown(
    f"{n_draws:,} speculative steps with this q: χ² = {test.statistic:.2f} on {test.dof} degrees of freedom, "
    f"p-value {test.p_value:.3f}, so the counts are {verdict}. For contrast, {n_draws:,} of the draft's own "
    f"samples, with no check, give χ² = {raw.statistic:.1f} (p-value "
    f"{'below 10⁻¹²' if raw.p_value < 1e-12 else f'{raw.p_value:.3g}'}) against p.")
frame.closing("unchanged.py")
