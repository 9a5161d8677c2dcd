"""The calculator as a person uses it: sliders moved with the mouse and the keyboard, shared links, bad links.

Expected numbers come from :mod:`specsim.analytics` for the values the sliders show on screen, and the
plots are read back from plotly's own data in the page, so a page wired to the wrong setting fails.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from specsim import analytics
from tests.browser.conftest import (
    ALPHA_LABEL,
    C_LABEL,
    K_LABEL,
    alerts,
    check_page_matches_sliders,
    drag,
    goto,
    metrics,
    press_key,
    screenshot,
    settings,
    svg_signature,
)

DOCS_SHOT = Path(__file__).resolve().parents[2] / "docs" / "screenshot-calculator.png"
def test_keyboard_arrows_move_each_slider_one_step_and_everything_follows(page):
    goto(page, "calculator")
    start = check_page_matches_sliders(page)
    charts = [svg_signature(page, i) for i in range(4)]
    press_key(page, K_LABEL, "ArrowRight", 2)
    press_key(page, ALPHA_LABEL, "ArrowLeft", 3)
    press_key(page, C_LABEL, "ArrowRight")
    k, alpha_pct, c = check_page_matches_sliders(page)
    assert (k, alpha_pct, round(c, 2)) == (start[0] + 2, start[1] - 3, round(start[2] + 0.01, 2))
    after = [svg_signature(page, i) for i in range(4)]
    assert all(a != b for a, b in zip(charts, after, strict=True)), "every chart re-rendered with new data"
    press_key(page, K_LABEL, "End")
    assert check_page_matches_sliders(page)[0] == analytics.K_MAX
    press_key(page, ALPHA_LABEL, "Home")
    assert check_page_matches_sliders(page)[1] == 0


def test_dragging_the_thumbs_with_the_mouse(page):
    goto(page, "calculator")
    before = metrics(page)
    drag(page, K_LABEL, 1.0)
    assert settings(page)[0] == 16
    drag(page, ALPHA_LABEL, 0.3)
    k, alpha_pct, c = check_page_matches_sliders(page)
    assert 25 <= alpha_pct <= 35, "the thumb lands where it was dropped"
    drag(page, C_LABEL, 0.0)
    k, alpha_pct, c = check_page_matches_sliders(page)
    assert c == 0.0 and k == 16
    assert metrics(page) != before


def test_a_shared_link_opens_with_its_settings(page):
    goto(page, "calculator?k=6&alpha=55&c=0.2")
    assert settings(page) == (6, 55, 0.2)
    check_page_matches_sliders(page)
    assert not alerts(page) or all("URL parameter" not in a for a in alerts(page))



def test_screenshots_of_the_calculator(page):
    """The whole page, and the top of the page at the lesson's example for the README.

    The README's copy (docs/screenshot-calculator.png) is only rewritten with SPECSIM_UPDATE_DOCS=1,
    so a test run elsewhere (other fonts) never changes a tracked file.
    """
    goto(page, "calculator?k=4&alpha=70&c=0.13")
    check_page_matches_sliders(page)
    screenshot(page, "calculator")
    page.set_viewport_size({"width": 1280, "height": 1000})
    page.wait_for_timeout(500)
    shot = screenshot(page, "calculator-readme", full_page=False)
    assert shot.stat().st_size < 400_000
    if os.environ.get("SPECSIM_UPDATE_DOCS") == "1":
        DOCS_SHOT.parent.mkdir(exist_ok=True)
        shutil.copyfile(shot, DOCS_SHOT)
