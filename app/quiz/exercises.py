"""Worked exercises below the knowledge check: E[j] for given K and α, the residual for given p and q, and the better K
from measured τ and v(n).

The numbers come from :func:`specsim.lesson.exercises.draw` at the seed kept under ``state.EX_SEED``, so a rerun or a
page switch keeps them until the learner presses "New numbers". A checked answer leaves a verdict under
``state.EX_VERDICTS``: on a right one the worked solution, on a wrong one a hint that names the step to redo (never the
answer), on text that is not a number a message saying so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from app import state
from app.quiz.common import new_seed
from specsim.lesson.exercises import (
    TOKENS,
    Exercises,
    KChoiceExercise,
    PrefixExercise,
    ResidualExercise,
    close,
    draw,
    read_number,
)

PREFIX, RESIDUAL, K_CHOICE = "prefix", "residual", "k_choice"
RIGHT, WRONG, BAD = "right", "wrong", "bad"


def current() -> Exercises:
    """This session's exercises, drawn on first use."""
    seed = state.get(state.EX_SEED)
    if seed is None:
        seed = new_seed()
        state.put(state.EX_SEED, seed)
    return draw(seed)


def input_key(name: str, token: str | None = None) -> str:
    return f"{state.EX_INPUT}{name}" + (f"_{token}" if token else "")


def _new_numbers() -> None:
    state.put(state.EX_SEED, new_seed(state.get(state.EX_SEED)))
    state.put(state.EX_VERDICTS, {})
    for key in [k for k in st.session_state if str(k).startswith(state.EX_INPUT)]:
        st.session_state[key] = ""


def _verdict(name: str, verdict: str, message: str) -> None:
    state.put(state.EX_VERDICTS, {**state.get(state.EX_VERDICTS), name: (verdict, message)})


def _x(values: Sequence[float]) -> str:
    return "(" + ", ".join(f"{t} {v:.2f}" for t, v in zip(TOKENS, values, strict=True)) + ")"


# ---- E[j] ------------------------------------------------------------------------------------------


def prefix_hint(ex: PrefixExercise, given: float) -> str:
    """What to redo, by the slip the answer shows: never the answer itself."""
    if close(given, ex.alpha * ex.k):
        return ("Not yet. α·K treats every guess as kept with chance α. Guess i counts only when guesses 1 to i are "
                "all kept: what is the chance of that, and what do those chances add up to?")
    if close(given, ex.answer + 1):
        return ("Not yet. You counted the token the target writes itself at the end of the loop. E[j] counts only "
                "the draft's kept guesses.")
    return ("Not yet. Work guess by guess: guess i is kept only when every guess before it was, so with chance α "
            "multiplied i times. Add those chances for i = 1 to K.")


def prefix_solution(ex: PrefixExercise) -> str:
    terms = " + ".join(f"{t:.3f}" for t in ex.terms)
    return (f"Guess i is kept with chance α^i, so E[j] = α + α² + … + α^K = {terms} = **{ex.answer:.2f}**. "
            f"In closed form, α(1 − α^K) / (1 − α) = {ex.answer:.2f}. The loop writes E[j] + 1 = {ex.answer + 1:.2f} "
            "tokens: the kept guesses and the target's own token.")


def _check_prefix() -> None:
    ex = current().prefix
    given, problem = read_number(st.session_state.get(input_key(PREFIX), ""))
    if problem:
        _verdict(PREFIX, BAD, problem)
    elif close(given, ex.answer):
        _verdict(PREFIX, RIGHT, prefix_solution(ex))
    else:
        _verdict(PREFIX, WRONG, prefix_hint(ex, given))


# ---- the residual ----------------------------------------------------------------------------------


def residual_hint(ex: ResidualExercise, given: Sequence[float]) -> str:
    if all(close(g, e) for g, e in zip(given, ex.excess, strict=True)):
        return ("Not yet. You have the right differences, but a distribution sums to 1: what do yours sum to, and what "
                "do you divide by?")
    reverse = [max(0.0, b - a) for a, b in zip(ex.p, ex.q, strict=True)]
    if sum(reverse) > 0 and all(close(g, r / sum(reverse)) for g, r in zip(given, reverse, strict=True)):
        return ("Not yet. You subtracted p from q. The replacement must supply what p has and the kept guesses did "
                "not: which way round is that difference?")
    if abs(sum(given) - 1) > 0.02:
        return f"Not yet. Your four numbers sum to {sum(given):.2f}, and a distribution sums to 1."
    return ("Not yet. Go token by token: subtract q from p, put 0 wherever the result is negative, then rescale the "
            "four numbers so that they sum to 1.")


def residual_solution(ex: ResidualExercise) -> str:
    total = sum(ex.excess)
    return (f"max(0, p − q) = {_x(ex.excess)}, which sums to {total:.2f}; divided by {total:.2f} it is "
            f"**{_x(ex.answer)}**. Kept guesses supply min(p, q) of each token, and a refusal happens with chance "
            f"{total:.2f}, so the replacement adds {total:.2f} × residual = max(0, p − q): together, exactly p.")


def _check_residual() -> None:
    ex = current().residual
    given = []
    for token in TOKENS:
        value, problem = read_number(st.session_state.get(input_key(RESIDUAL, token), ""))
        if problem:
            _verdict(RESIDUAL, BAD, f"Token {token}: {problem}")
            return
        given.append(value)
    if all(close(g, e) for g, e in zip(given, ex.answer, strict=True)):
        _verdict(RESIDUAL, RIGHT, residual_solution(ex))
    else:
        _verdict(RESIDUAL, WRONG, residual_hint(ex, given))


# ---- the better K ----------------------------------------------------------------------------------


def k_choice_hint(ex: KChoiceExercise, given: int) -> str:
    more_tokens = ex.ks[ex.taus.index(max(ex.taus))]
    if given == more_tokens:
        return ("Not yet. That K writes more tokens a loop, but its loop also costs more: more draft passes and a "
                "dearer check. Divide each τ by what its loop costs, K·c + v(K + 1), and compare.")
    return "Not yet. For each K divide τ by the loop's cost, K·c + v(K + 1), and compare the two quotients."


def k_choice_solution(ex: KChoiceExercise) -> str:
    lines = [f"K = {k}: {tau:.2f} / ({k} × {ex.c:.2f} + {v:.2f}) = {tau:.2f} / {k * ex.c + v:.2f} = {s:.2f}×"
             for k, tau, v, s in zip(ex.ks, ex.taus, ex.vs, ex.speedups, strict=True)]
    return ("Speedup = τ / (K·c + v(K + 1)):  \n" + "  \n".join(lines)
            + f"  \nK = {ex.answer} is faster. More tokens a loop is not more speed once the drafting and the check "
              "are paid for.")


def _check_k_choice() -> None:
    ex = current().k_choice
    value, problem = read_number(st.session_state.get(input_key(K_CHOICE), ""))
    if problem is None and value not in ex.ks:
        problem = f"Answer with one of the two K of the exercise: {ex.ks[0]} or {ex.ks[1]}."
    if problem:
        _verdict(K_CHOICE, BAD, problem)
    elif int(value) == ex.answer:
        _verdict(K_CHOICE, RIGHT, k_choice_solution(ex))
    else:
        _verdict(K_CHOICE, WRONG, k_choice_hint(ex, int(value)))


# ---- the section -----------------------------------------------------------------------------------


def _feedback(name: str) -> None:
    verdict = state.get(state.EX_VERDICTS).get(name)
    if verdict is None:
        return
    kind, message = verdict
    if kind == RIGHT:
        st.success("Right.")
        st.markdown(message)
    elif kind == WRONG:
        st.warning(message)
    else:
        st.error(message)


def _check_button(name: str, check: Callable[[], None]) -> None:
    st.button("Check", key=f"{state.EX_CHECK_BUTTON}{name}", on_click=check)


def render() -> None:
    """The three exercises, each with its answer box, Check, and its verdict."""
    ex = current()
    st.header("Worked exercises")
    st.markdown("Work these out on paper, type the result, and press Check. A wrong answer gets a hint about the step "
                "to redo; a right one gets the worked solution. The numbers stay until you ask for new ones.")
    st.button("New numbers", key=state.EX_NEW_BUTTON, on_click=_new_numbers)

    p = ex.prefix
    st.subheader("1. The average kept run, E[j]")
    st.markdown(f"A draft proposes K = {p.k} guesses a loop. Each guess is kept with chance α = {p.alpha:.0%} when "
                "every guess before it was kept. What is E[j], the average number of guesses kept per loop (the "
                "token the target writes itself not counted)? Two decimals are enough.")
    st.text_input("E[j]", key=input_key(PREFIX))
    _check_button(PREFIX, _check_prefix)
    _feedback(PREFIX)

    r = ex.residual
    st.subheader("2. The distribution after a refusal")
    st.markdown(f"Over four tokens the target's distribution is p = {_x(r.p)} and the draft's q = {_x(r.q)}. The "
                "target samples, and it has just refused the draft's sampled guess. From which distribution must the "
                "replacement token be drawn, so that the token written follows p? Give its probability for each "
                "token.")
    for column, token in zip(st.columns(len(TOKENS)), TOKENS, strict=True):
        column.text_input(token, key=input_key(RESIDUAL, token))
    _check_button(RESIDUAL, _check_residual)
    _feedback(RESIDUAL)

    k = ex.k_choice
    st.subheader("3. The better K from measurements")
    st.markdown(f"A draft pass costs c = {k.c:.2f} of a target pass. Measured on this pair: at K = {k.ks[0]}, "
                f"τ = {k.taus[0]:.2f} tokens a loop and a check of {k.ks[0] + 1} tokens costs v = {k.vs[0]:.2f} plain "
                f"passes; at K = {k.ks[1]}, τ = {k.taus[1]:.2f} and a check of {k.ks[1] + 1} tokens costs "
                f"v = {k.vs[1]:.2f}. Which K gives the higher speedup?")
    st.text_input("K", key=input_key(K_CHOICE))
    _check_button(K_CHOICE, _check_k_choice)
    _feedback(K_CHOICE)
