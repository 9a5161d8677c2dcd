"""AppTest for "Is verification free here?": before measuring, after a measurement, and the calculator feed."""

from __future__ import annotations

from app import state
from specsim.measure.passcost import VerifyCurve
from tests.conftest import ROOT, open_page

CURVE = VerifyCurve(ns=(1, 2, 3, 4, 6, 8), seconds=(0.010, 0.0102, 0.0104, 0.013, 0.019, 0.025), context=20,
                    repeats=3, dtype="float32", device="cpu", threads=1)


def test_page_opens_before_any_measurement():
    at = open_page("verify.py")
    assert not at.exception and not at.error
    assert any("Press the button" in i.value for i in at.info)
    assert "When many requests share a pass" in [h.value for h in at.subheader]  # the model is on its own page


def _with_curve():
    at = open_page(None)
    at.session_state[state.VERIFY_CURVE] = CURVE
    at.switch_page(str(ROOT / "pages" / "verify.py")).run()
    assert not at.exception
    return at


def test_a_measured_curve_is_explained_and_linked_to_the_calculator():
    at = _with_curve()
    text = " ".join(m.value for m in at.markdown)
    assert f"n ≤ {CURVE.flat_until()}" in text
    k = at.slider(key="verify_k").value
    v = CURVE.v_at(k + 1)
    assert f"v = {v:.2f}" in text and f"v={round(v, 2):.2f}" in text  # shown and in the calculator link
    at.slider(key="verify_k").set_value(5).run()
    assert f"v = {CURVE.v_at(6):.2f}" in " ".join(m.value for m in at.markdown)


def test_calculator_offers_the_measured_v():
    at = open_page(None)
    at.session_state[state.VERIFY_CURVE] = CURVE
    at.switch_page(str(ROOT / "pages" / "calculator.py")).run()
    k = at.session_state[state.CALC_K]
    at.button(key="calc_use_measured_v").click().run()
    assert not at.exception
    assert at.session_state[state.CALC_VERIFY_COST] == round(CURVE.v_at(k + 1), 2)


def test_measure_button_runs_the_real_measurement():
    at = open_page("verify.py", timeout=600)
    at.button(key=state.VERIFY_BUTTON).click().run()
    assert not at.exception and not at.error
    curve = at.session_state[state.VERIFY_CURVE]
    assert curve is not None and curve.ns[0] == 1 and len(curve.seconds) == len(curve.ns)


def test_leaving_mid_measurement_and_coming_back_says_it_was_cancelled(monkeypatch):
    """Issue 39 (6): leaving the page mid-measurement dropped the result with no notice."""
    from streamlit.runtime.scriptrunner_utils.exceptions import StopException

    from app import loaders, state
    from tests.conftest import ROOT, open_page

    def interrupted():
        raise StopException()  # what Streamlit raises in the script thread when the user leaves mid-run

    monkeypatch.setattr(loaders, "bundled_target", interrupted)
    at = open_page("verify.py")
    at.button(key=state.VERIFY_BUTTON).click().run()
    at.switch_page(str(ROOT / "pages" / "calculator.py")).run()
    at.switch_page(str(ROOT / "pages" / "verify.py")).run()
    assert not at.exception
    assert any(w.value.startswith("Cancelled: the last measurement of v(n)") for w in at.warning)
    at.run()  # said once: the next visit starts clean
    assert not any(w.value.startswith("Cancelled") for w in at.warning)


def test_verify_page_explains_prefill_the_kv_cache_and_the_ridge_before_measuring():
    from specsim.lesson import roofline

    at = open_page("verify.py")
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "**KV cache**" in text and "**Prefill**" in text
    assert "*ridge point*" in text and "*Serving many requests*" in text
    serving = " ".join(m.value for m in open_page("serving.py").markdown)  # the datasheets' R, worked out once
    assert f"R = {roofline.GPU_RIDGE}" in serving
    assert f"{roofline.H100.ridge_tokens:.0f}" in serving and f"{roofline.A100.ridge_tokens:.0f}" in serving
