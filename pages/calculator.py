"""Speedup calculator: what K, acceptance and draft cost buy, from the closed forms."""

import streamlit as st

from app import frame, predict, state
from app.calculator import backsolve, by_position, one_pass, v_curve
from app.calculator import derivation as calc_derivation
from app.calculator import figures as figs
from app.calculator import numbers as calc_numbers
from app.calculator import params as calc_params
from app.calculator.controls import apply_url, controls, write_url
from app.calculator.text import (
    CalcNumbers,
    best_k_close,
    best_k_question,
    best_k_sentence,
    best_k_truth,
    best_k_verdict,
    ceiling_sentence,
    fmt,
    formula_line,
    heatmap_sentence,
    loop_sentence,
    useless_draft_sentence,
)
from app.charts import chart
from app.settings import CalcSettings

st.title("Speedup calculator")
frame.opening("calculator.py")
st.markdown(
    "Four numbers decide what speculative decoding buys you:\n\n"
    "- **K**, how many tokens the draft proposes per loop;\n"
    "- **α**, the chance that the target accepts a proposal (under greedy decoding, that the proposal is the "
    "target's own top token; under sampling, Σₓ min(p(x), q(x)), where p(x) and q(x) are the target's and the "
    "draft's probabilities of token x: *Why the output is unchanged* derives it). The formulas take every guess to "
    "be kept "
    "independently with the same chance, which *Under the hood* checks on a real run;\n"
    "- **c**, what one draft pass costs next to one target pass;\n"
    "- **v**, what the target's check of K + 1 tokens costs next to a plain one-token pass: 1 unless you calibrate it "
    "with measured costs below (or a link sets it), and measured on the next page.\n\n"
    "From them the page computes **τ**, the tokens one loop writes on average (the guesses kept plus the target's own "
    "+1 token), and the **speedup**, τ over what a loop costs in target passes: K·c for the draft plus v for the "
    "check.")
st.caption("The address bar keeps your settings, so a link reproduces this view.")


def one_loop(s: CalcSettings, n: CalcNumbers) -> None:
    chart(figs.iteration_figure(s.k, n.prefix), key=state.CALC_ITERATION_CHART)
    drawn = figs.expected_kept_slots(n.prefix, s.k)
    writes = ("The draft writes one guess; the target checks it in a single pass. " if s.k == 1 else
              f"The draft writes its {s.k} guesses one after another; the target checks them all in a single pass. ")
    text = writes + f"On average {fmt(n.prefix)} are kept, drawn here as {drawn}. "
    if drawn == s.k:  # nothing refused in the drawing: say what the +1 does here and what a refusal would cost
        text += ("Here every guess is kept, and the same target pass adds its own next token after the last (purple "
                 "+1), so a loop yields j + 1 tokens. A refused guess (✗) would be no loss either: the +1 takes its "
                 "place, so a loop never yields zero.")
    else:
        text += ("The first ✗ is not a loss: the same target pass already says which token belongs there (purple +1), "
                 "so a loop always yields j + 1 tokens and never zero. ")
        if drawn < s.k - 1:
            text += ("The pass scored the grey guesses after it too, but those scores are discarded: each grey guess "
                     "continues a rejected one, text that will not be written. ")
        text += "When every guess is kept, the +1 lands after the last."
    st.caption(text)
    chart(figs.prefix_distribution_figure(s.alpha, s.k), key=state.CALC_PREFIX_CHART)
    st.caption(backsolve.distribution_sentence(s.alpha, s.k))


GUESS_FIRST = "Make your guess of the best K above to see this chart."
_K = calc_params.BY_NAME["k"].number
K_FIELDS = (predict.Field("k", "best K", _K.lo, _K.hi, 1, whole=True),
            predict.Field("speedup", "its speedup, ×", 0.1, 10.0, 0.05))


def guessed_best_k(s: CalcSettings) -> bool:
    """Ask for the best K before the page shows it (per setting of α, c and v)."""
    return predict.ask("calc_best_k", (s.alpha_pct, s.draft_cost, s.verify_cost), best_k_question(s), K_FIELDS,
                       best_k_truth(s), lambda g: best_k_close(s, g), lambda made: best_k_verdict(s, made.guess))


def choosing_k(s: CalcSettings, shown: bool) -> None:
    st.markdown(
        "A longer draft means fewer target passes per token, but only if the guesses are kept. The target accepts "
        "each guess with probability α, and a guess is kept only when it and every guess before it were accepted, "
        "so slot i is kept with probability αⁱ: the chance shrinks "
        "geometrically along the draft. Past some K, the extra draft passes cost more than the few extra tokens "
        "they add. Where that point lies depends on α and c, so it is worth measuring rather than guessing."
    )
    if not shown:
        st.caption(GUESS_FIRST)
        return
    chart(figs.k_sweep_figure(s.alpha, s.draft_cost, s.verify_cost, s.k), key=state.CALC_SWEEP_CHART)
    hint = "Push K to the right" if s.alpha_pct == 50 else "Set α to 50 % and push K to the right"
    st.markdown(f"{ceiling_sentence(s)} {hint} to watch the green bars stall while the red ones keep growing.")
    chart(figs.waste_figure(s.alpha, s.k), key=state.CALC_WASTE_CHART)
    by_position.section(s)
    one_pass.section(s)


def pays_off(s: CalcSettings, shown: bool) -> None:
    if not shown:
        st.caption(GUESS_FIRST)
        return
    st.markdown(
        "Every cell is one (K, α) pair at your draft cost. Blue is faster than plain decoding, red is slower, and "
        f"the dotted line is break-even. {heatmap_sentence(s)}"
    )
    chart(figs.speedup_heatmap(s.draft_cost, s.verify_cost, s.k, s.alpha_pct), key=state.CALC_HEATMAP_CHART)
    st.markdown(f"**What a useless draft costs.** {useless_draft_sentence(s)}")


@st.fragment
def calculator() -> None:
    """Sliders, numbers and the open tab: moving a slider reruns this fragment, not the whole app.

    Only the open tab is drawn (the tabs rerun the fragment when another is picked), so a key press redraws
    the numbers and one or two charts, not all seven.
    """
    apply_url()
    s = controls()
    shown = guessed_best_k(s)  # until the learner has guessed, the speedup at the sliders' K stays hidden too
    if shown:
        n = calc_numbers.headline(s)
        st.markdown(loop_sentence(s))
        st.markdown(formula_line(s))
        st.info(best_k_sentence(s))
    else:
        n = CalcNumbers.of(s)

    tabs = st.tabs(state.CALC_TABS, key=state.bound(state.CALC_TAB), on_change="rerun")
    state.keep([state.CALC_TAB])  # the open tab is still open after a visit to another page
    sections = (lambda: one_loop(s, n), lambda: choosing_k(s, shown), lambda: v_curve.section(s),
                lambda: pays_off(s, shown),
                lambda: calc_derivation.section(s), lambda: backsolve.section(s))
    for tab, draw in zip(tabs, sections, strict=True):
        if tab.open:
            with tab:
                draw()

    write_url(s)


calculator()
frame.closing("calculator.py")
