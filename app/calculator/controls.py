"""The calculator's sliders, kept in step with the URL's query parameters.

Order within one script run: :func:`apply_url` (a link that arrived) → :func:`controls` (the
widgets) → :func:`write_url` (so the address bar always reproduces the view).
"""

from __future__ import annotations

import streamlit as st

from app import state
from app.calculator import params as calc_params
from app.layout import script_path
from app.settings import CalcSettings

_KEYS = {p.field: p.state_key for p in calc_params.PARAMS}
SLIDER_LABELS = ("K: tokens the draft proposes per loop", "α: chance the target accepts a proposal",
                 "c: one draft pass, in target passes")


def _store(settings: CalcSettings) -> None:
    for field, key in _KEYS.items():
        state.show(key, getattr(settings, field))
    state.put(state.CALC_V_NOTICE, None)  # a link's v is in range: a note about a typed one no longer applies


def apply_url() -> None:
    """Load settings from the URL when the page is opened (and after Back or Forward); the sliders win after.

    Rejected parameters fall back to their defaults with a warning that names them; values off a
    slider's step are rounded with a note.
    """
    if not state.read_url_now(state.CALC_URL_VISIT):
        return
    query = calc_params.ours(st.query_params.to_dict())
    if not query:
        return
    result = calc_params.parse_query(query)
    _store(result.settings)
    for problem in result.problems:
        st.warning(problem, icon="⚠️")
    for note in result.adjustments:
        st.info(note, icon="ℹ️")


def _use_v(v: float) -> None:
    """Put ``v`` in the box, or the nearest value the calculator takes with a notice saying why."""
    param = calc_params.BY_NAME["v"].number
    used = round(min(param.hi, max(param.lo, float(v))), param.decimals)
    notice = None
    if used != round(float(v), param.decimals):
        why = ("a pass over K + 1 tokens never costs less than a one-token pass" if v < param.lo
               else f"the calculator's plots stop at {param.limit(param.hi)}")
        notice = (f"v = {v:g} is refused: v takes a number from {param.limit(param.lo)} to {param.limit(param.hi)} "
                  f"({why}). Every number on this page uses v = {param.format(used)}.")
    state.put(state.CALC_V_NOTICE, notice)
    state.show(state.CALC_VERIFY_COST, used)


def _typed_v() -> None:
    _use_v(state.widget_value(state.CALC_VERIFY_COST))


def controls() -> CalcSettings:
    """Draw the three sliders and the calibration expander; return what they are set to."""
    k_, alpha_, c_, v_ = (p.number for p in calc_params.PARAMS)
    left, mid, right = st.columns(3)
    k_label, alpha_label, c_label = SLIDER_LABELS
    k = left.slider(k_label, k_.lo, k_.hi, step=1, key=state.bound(state.CALC_K))
    alpha_pct = mid.slider(alpha_label, alpha_.lo, alpha_.hi, step=1, format="%d%%",
                           key=state.bound(state.CALC_ALPHA_PCT))
    c = right.slider(c_label, c_.lo, c_.hi, step=0.001, format="%g×",
                     key=state.bound(state.CALC_DRAFT_COST))
    with st.expander("Calibrate with measured costs"):
        st.markdown(
            "The lesson assumes that checking K + 1 tokens in one target pass costs the same as generating "
            "one token (v = 1). That holds roughly on a GPU serving one request, where a pass waits on memory; "
            "on a CPU a pass over several tokens can cost well above one. The page *Is verification free here?* "
            "measures **v** on this machine and sends it here, and the live page measures it during a run. "
            "It is treated as the same for every K in the plots."
        )
        curve = state.get(state.VERIFY_CURVE)
        if curve is not None and int(k) + 1 <= max(curve.ns):
            measured = round(curve.v_at(int(k) + 1), 2)
            st.button(f"Use v({int(k) + 1}) = {measured:.2f}, measured on this machine",
                      key=state.CALC_USE_MEASURED_V_BUTTON, on_click=_use_v, args=(measured,))
        elif curve is None:
            st.page_link(script_path("verify.py"), label="Measure v on this machine",
                         icon=":material/speed:")
        # no min or max on the box: the browser would keep an out-of-range value on screen, unused and unexplained
        v = st.number_input("v: one verification pass over K + 1 tokens, in one-token target passes",
                            step=0.05, format="%.2f", key=state.bound(state.CALC_VERIFY_COST), on_change=_typed_v,
                            help=v_.describe())
        notice = state.get(state.CALC_V_NOTICE)
        if notice:
            st.warning(notice, icon="⚠️")
    settings = CalcSettings(k=int(k), alpha_pct=int(alpha_pct), draft_cost=round(float(c), 3),
                            verify_cost=round(float(v), 2))
    for field, key in _KEYS.items():
        state.put(key, getattr(settings, field))
    return settings


def write_url(settings: CalcSettings) -> None:
    """Put ``settings`` in the address bar, touching only the calculator's own parameters."""
    state.write_query(calc_params.NAMES, calc_params.to_query(settings), calc_params.to_query(CalcSettings()))
