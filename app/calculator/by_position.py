"""The calculator's "α by position" option: tokens per loop and speedup from acceptance measured at each draft
position, beside the closed form's one α for every slot."""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

from app import recording, state
from app.calculator import figures as figs
from app.charts import chart
from app.settings import CalcSettings
from specsim.core.trace import Trace, acceptance_given_reached
from specsim.measure import analytics, costmodel

DEFAULT_RECORDING = "prose_run"  # the box opens on it: a real draft that is refused, priced at its own c and v


def _measured(rates: list[float]) -> list[float]:
    """The rates up to the first position no check reached (NaN)."""
    out = []
    for rate in rates:
        if math.isnan(rate):
            break
        out.append(float(rate))
    return out


Source = tuple[list[float], float, "tuple[float, float] | None"]
"""(acceptance at draft positions 1, 2, …, the share of checked guesses kept, the run's own (c, v) or None)."""


def _from_trace(trace: Trace, plain: Trace | None = None) -> Source:
    own = None
    if plain is not None:
        model = costmodel.cost_model([trace], [plain])
        own = (model.draft_cost, model.verify_cost)
    return _measured(acceptance_given_reached([trace], trace.k_max)), trace.acceptance_rate, own


def recording_label(name: str, run) -> str:
    return f"the recording: {recording.choice_label(name, run)}"


def default_source(options: dict[str, Source]) -> str:
    """The prose recording where it loads (a real draft, refused now and then, with its own c), else the first."""
    run = recording.shipped_runs().get(DEFAULT_RECORDING)
    label = recording_label(DEFAULT_RECORDING, run) if run is not None else None
    return label if label in options else next(iter(options))


def sources() -> dict[str, Source]:
    """(acceptance at draft positions 1, 2, …, the overall share of checked guesses kept, the run's own (c, v)
    where a plain run of it was recorded) by source name."""
    from app import class_profile as app_profile  # here, not at the top: out of a class it imports torch (1.6 s)

    out: dict[str, tuple[list[float], float]] = {}
    profile = app_profile.cached()
    if profile is not None and profile.alpha_by_position:
        out[f"this machine's profile: the default draft on {profile.prompts} held-out prompts"] = (
            _measured(profile.alpha_by_position), profile.draft_alpha, None)
    live = state.get(state.LIVE_TRACE)
    if live is not None and live.n_checked:
        out["your run on the live page"] = _from_trace(live)
    for name, run in recording.shipped_runs().items():
        if run.spec.n_checked:
            out[recording_label(name, run)] = _from_trace(run.spec, run.plain)
    return {name: value for name, value in out.items() if value[0]}


def section(s: CalcSettings) -> None:
    st.markdown(
        "**When α is not the same at every slot.** The closed form keeps each guess with one chance α, "
        "independently, so slot i survives with αⁱ. Real drafts need not keep one rate: the chance rᵢ that guess i "
        "is kept when every guess before it was (the conditional acceptance) can rise along the draft or fall. A "
        "separate draft model guessed i from text the target had kept, so nothing compounds and rᵢ tends to rise "
        "(the loops that get that far are in easy stretches); drafters whose later guesses rest on their own "
        "outputs, heads that feed back their own features (EAGLE) or guess ahead blind (Medusa), compound their "
        "errors and rᵢ falls. With those rates a loop yields 1 + r₁ + r₁r₂ + … + r₁⋯r_K tokens.")
    options = sources()
    if not options:
        st.info("No measured acceptance by position yet: run the live page with a draft, or let `make run` "
                "measure this machine.")
        return
    if state.get(state.CALC_POSITION_SOURCE) not in options:
        state.show(state.CALC_POSITION_SOURCE, default_source(options))
    name = st.radio("Acceptance by position from", list(options), key=state.bound(state.CALC_POSITION_SOURCE),
                    on_change=state.keep, args=([state.CALC_POSITION_SOURCE],))
    rates, overall, own = options[name]
    c, v = own if own is not None else (s.draft_cost, s.verify_cost)
    ks = np.arange(analytics.K_MIN, analytics.K_MAX + 1)
    by_position = [analytics.tokens_per_loop_by_position(rates, int(k)) for k in ks]
    one_alpha = [float(analytics.tokens_per_loop(overall, int(k))) for k in ks]
    speed_pos = {int(k): analytics.speedup_by_position(rates, int(k), c, v) for k in ks}
    speed_one = analytics.speedup_by_k(overall, c, v)
    chart(figs.position_sweep_figure(ks, by_position, one_alpha, overall, len(rates), s.k),
          key=state.CALC_POSITION_CHART)
    k = s.k
    t_pos, t_one = by_position[k - analytics.K_MIN], one_alpha[k - analytics.K_MIN]
    error = t_one / t_pos - 1
    rising = len(rates) > 1 and all(a < b for a, b in zip(rates[:-1], rates[1:], strict=False))
    k_pos, k_one = analytics.best_k(speed_pos), analytics.best_k(speed_one)
    carried = (f" Positions past {len(rates)} were never measured there and take the last rate, "
               f"{rates[-1]:.2f}." if len(rates) < analytics.K_MAX else "")
    st.markdown(
        f"Measured on {name}: r = {' / '.join(f'{r:.2f}' for r in rates)} at positions 1 to {len(rates)}"
        f"{', rising along the draft' if rising else ''}, and {overall:.0%} of all checked guesses kept.{carried} "
        f"At your K = {k} that gives **{t_pos:.2f}** tokens per loop; one α = {overall:.2f} for every slot gives "
        f"{t_one:.2f}, {abs(error):.0%} {'more' if error > 0 else 'less'}. With "
        + (f"this run's own measured c = {c:.2f} and v = {v:.2f}" if own is not None else
           f"your c = {c:.2f} and v = {v:.2f}")
        + f", the best K is **{k_pos}** ({speed_pos[k_pos]:.2f}×) by position and {k_one} "
        f"({speed_one[k_one]:.2f}×) with one α.")
