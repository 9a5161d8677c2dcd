"""The calculator as a person uses it: sliders moved with the mouse and the keyboard, shared links, bad links.

Expected numbers come from :mod:`specsim.measure.analytics` for the values the sliders show on screen, and the
plots are read back from plotly's own data in the page, so a page wired to the wrong setting fails.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from specsim.measure import analytics
from tests.browser.conftest import (
    ALPHA_LABEL,
    C_LABEL,
    IDLE,
    K_LABEL,
    act,
    alerts,
    check_page_matches_sliders,
    drag,
    expected_metrics,
    goto,
    live_url,
    metrics,
    nav,
    open_tab,
    press_key,
    screenshot,
    settings,
    slider,
    svg_signature,
)

DOCS_SHOT = Path(__file__).resolve().parents[2] / "docs" / "screenshot-calculator.png"
def test_the_sliders_follow_bursts_of_keys_single_arrows_and_the_mouse(page):
    """The three sliders, on one page: a burst of arrow keys (issue 23 (2): it sometimes reset the sliders to an
    older URL while the address bar kept the moved values), one arrow at a time with every chart redrawn, End and
    Home, then the thumbs dragged with the mouse; after each, the sliders, the numbers, the charts and the address
    agree."""
    goto(page, "calculator")
    start = settings(page)
    thumb = slider(page, K_LABEL).locator("input[type='range']")
    for burst in range(3):
        thumb.focus()
        for _ in range(4):
            page.keyboard.press("ArrowRight" if burst != 1 else "ArrowLeft", delay=15)
        page.wait_for_timeout(1500)
        page.wait_for_function(IDLE, timeout=60_000)
    after_bursts = check_page_matches_sliders(page)  # sliders, numbers, charts and URL agree
    assert after_bursts == (start[0] + 4, start[1], start[2]), "a burst of keys snapped a slider back"

    drawn = page.locator("[data-testid='stPlotlyChart']").count()
    assert drawn == 2, "the open tab (One loop) draws its two charts, and the other tabs nothing"
    charts = [svg_signature(page, i) for i in range(drawn)]
    press_key(page, K_LABEL, "ArrowRight", 2)
    press_key(page, ALPHA_LABEL, "ArrowLeft", 3)
    press_key(page, C_LABEL, "ArrowRight")
    k, alpha_pct, c = check_page_matches_sliders(page)
    assert (k, alpha_pct, round(c, 3)) == (after_bursts[0] + 2, after_bursts[1] - 3, round(after_bursts[2] + 0.001, 3))
    after = [svg_signature(page, i) for i in range(drawn)]
    assert all(a != b for a, b in zip(charts, after, strict=True)), "every chart re-rendered with new data"
    press_key(page, K_LABEL, "End")
    assert check_page_matches_sliders(page)[0] == analytics.K_MAX
    press_key(page, ALPHA_LABEL, "Home")
    assert check_page_matches_sliders(page)[1] == 0

    before = metrics(page)
    drag(page, K_LABEL, 0.0)
    assert settings(page)[0] == 1
    drag(page, ALPHA_LABEL, 0.3)
    k, alpha_pct, c = check_page_matches_sliders(page)
    assert 25 <= alpha_pct <= 35, "the thumb lands where it was dropped"
    drag(page, C_LABEL, 0.0)
    k, alpha_pct, c = check_page_matches_sliders(page)
    assert c == 0.0 and k == 1
    assert metrics(page) != before


def test_each_tab_follows_the_sliders_and_the_link_keeps_the_settings(page):
    """A shared link opens with its settings and no message about them; only the open tab is drawn; opening another
    draws its charts for the sliders' current values, and a slider moved there redraws that tab."""
    goto(page, "calculator?k=6&alpha=55&c=0.2")
    assert settings(page) == (6, 55, 0.2)
    check_page_matches_sliders(page)
    assert not alerts(page) or all("URL parameter" not in a for a in alerts(page))
    for label in ("Choosing K", "Where it pays off"):
        open_tab(page, label)
        assert check_page_matches_sliders(page) == (6, 55, 0.2)
    press_key(page, K_LABEL, "ArrowLeft", 2)
    assert check_page_matches_sliders(page) == (4, 55, 0.2)
    open_tab(page, "Choosing K")
    press_key(page, ALPHA_LABEL, "ArrowRight")
    assert check_page_matches_sliders(page) == (4, 56, 0.2)
    for label in ("When v grows with K", "The formulas", "Backwards from a paper"):
        open_tab(page, label)
        page.wait_for_function(IDLE, timeout=30_000)
        assert page.get_by_role("tab", selected=True).inner_text().strip() == label
        assert metrics(page) == expected_metrics(4, 56, 0.2)
    open_tab(page, "One loop")
    assert check_page_matches_sliders(page) == (4, 56, 0.2)


def _history(page) -> int:
    return page.evaluate("history.length")


# Every change of the address, kept in the page, so a failed Back test says which write pushed an entry.
_LOG_HISTORY = """(() => {
  window.__history = [];
  const push = history.pushState.bind(history), replace = history.replaceState.bind(history);
  history.pushState = (s, t, u) => { push(s, t, u); window.__history.push(['push', String(u)]); };
  history.replaceState = (s, t, u) => { replace(s, t, u); window.__history.push(['replace', String(u)]); };
  addEventListener('popstate', () => window.__history.push(['back/forward', location.pathname + location.search]));
})();"""


def test_leaving_a_page_adds_one_entry_and_the_page_writes_its_settings_once(page):
    """Issue 23 (1): leaving /live for the calculator added four history entries (the page switch, then one
    per `st.query_params[...] =`). Now: the switch, and one entry with all of the page's settings.

    Back then walks those entries without adding any. A page switch makes one entry: the page's settings replace
    the entry its address made (issue 39, finding 8; it was one or two). Back onto the first of two once
    rewrote it with the page's settings; when the browser had lost its "history navigation" mark it pushed that
    as a new entry, and the next Back landed on the same entry again: a loop Back could not leave. Back onto the
    live page once kept the calculator's α and c in its address."""
    page.add_init_script(_LOG_HISTORY)
    goto(page, live_url(n=3, k=2))
    before = _history(page)
    act(page, lambda: nav(page, "Speedup calculator").click())
    check_page_matches_sliders(page)
    assert _history(page) - before == 1, page.evaluate("window.__history")
    before = _history(page)
    act(page, lambda: nav(page, "Order one round").click())
    page.get_by_text("Your order", exact=True).first.wait_for()
    assert _history(page) - before == 1, page.evaluate("window.__history")
    page.wait_for_timeout(300)
    page.evaluate("window.__history = []")
    landed = []
    while urlparse(page.url).path != "/live":
        assert len(landed) < 2, f"Back took more than one press per page: {landed}"
        act(page, page.go_back)
        page.wait_for_timeout(300)  # a page that rewrote its address after a Back would do so now
        page.wait_for_function(IDLE, timeout=60_000)
        landed.append(urlparse(page.url).path + ("?…" if urlparse(page.url).query else ""))
        if urlparse(page.url).path == "/calculator":
            assert check_page_matches_sliders(page, bare_address_ok=True) == (4, 70, 0.13)
        query = parse_qs(urlparse(page.url).query)
        if urlparse(page.url).path == "/live":
            assert not {"alpha", "c", "order"} & set(query), f"another page's parameters on /live: {page.url}"
    log = page.evaluate("window.__history")
    pushed = [entry for entry in log if entry[0] == "push"]
    assert not pushed, f"Back added history entries: {pushed} (landed on {landed})"
    rewritten = [entry for entry in log if entry[0] == "replace" and "/calculator" in entry[1]]
    assert not rewritten, f"the calculator rewrote an entry Back brought: {rewritten} (landed on {landed})"
    assert landed.count("/calculator") + landed.count("/calculator?…") >= 1, landed  # bare at the lesson's example


def test_at_other_settings_one_back_press_undoes_each_page_switch(page):
    """Issue 39 (8), the rest: a page whose settings differ from its defaults writes them to its address after the
    switch, and the browser took that write as a second history entry, so Back first undid the settings and only a
    second Back left the page. Now an address change that keeps the page replaces the current entry."""
    page.add_init_script(_LOG_HISTORY)
    goto(page, "calculator?k=6&alpha=80&c=0.2")
    assert check_page_matches_sliders(page) == (6, 80, 0.2)
    before = _history(page)
    act(page, lambda: nav(page, "Knowledge check").click())
    page.get_by_text("Question 1 of").first.wait_for()
    act(page, lambda: nav(page, "Speedup calculator").click())  # the session's K = 6 comes back with the page
    assert check_page_matches_sliders(page) == (6, 80, 0.2)
    page.wait_for_timeout(300)
    assert _history(page) - before == 2, page.evaluate("window.__history")
    assert _back(page) == "/quiz", page.evaluate("window.__history")
    assert _back(page).startswith("/calculator?"), page.evaluate("window.__history")
    assert check_page_matches_sliders(page) == (6, 80, 0.2)


def test_another_pages_settings_written_onto_this_path_are_dropped(page):
    """The race behind a failure in a full test run: Streamlit writes a page's settings to the path the address bar
    shows when they arrive, and moves the bar to the new page's path only once the switch is drawn. On a loaded
    machine the calculator's settings came first and were written onto /quiz, and Back landed on
    /quiz?k=6&alpha=80&c=0.20. Here the late write is made by hand, as Streamlit makes it."""
    goto(page, "quiz")
    page.get_by_text("Question 1 of").first.wait_for()
    before = _history(page)
    page.evaluate("history.pushState({}, '', location.pathname + '?k=6&alpha=80&c=0.20')")
    page.evaluate("history.replaceState({}, '', location.pathname + '?K=6')")
    assert urlparse(page.url).path == "/quiz" and not urlparse(page.url).query, page.url
    page.evaluate("history.pushState({}, '', location.pathname + '?kq=1')")  # the page's own: kept, in place
    assert urlparse(page.url).query == "kq=1" and _history(page) == before, page.url
    page.evaluate("history.pushState({}, '', '/calculator?k=6&alpha=80&c=0.20')")  # a switch: a new entry
    assert _history(page) == before + 1


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
    shot = screenshot(page, "calculator-readme", full_page=False, always=True)  # its size is checked
    assert shot.stat().st_size < 400_000
    if os.environ.get("SPECSIM_UPDATE_DOCS") == "1":
        DOCS_SHOT.parent.mkdir(exist_ok=True)
        shutil.copyfile(shot, DOCS_SHOT)


def test_backwards_box_refuses_impossible_speedups_and_never_shows_another_values_sentence(page):
    """Issue 39: typing 0, 25 or letters left the sentence on 1.92× with no word."""
    goto(page, "calculator")
    open_tab(page, "Backwards from a paper")
    box = page.get_by_role("textbox", name="Reported speedup (×)")
    for typed, limit in (("0", "above 1×"), ("25", "at most"), ("abc", "not a number"), ("2.2", None)):
        act(page, lambda typed=typed: (box.fill(typed), box.press("Enter")))
        body = page.inner_text("body")
        if limit is None:
            assert "a speedup of 2.20× means α =" in body and "is refused" not in body
        else:
            assert limit in " ".join(alerts(page)), (typed, alerts(page))
            assert "a speedup of" not in body and "1.92× means" not in body


def test_every_typed_v_is_used_everywhere_and_a_slider_moved_after_keeps_it(page):
    """v typed into its box, on one page, in the order a learner might:

    - out of range (issue 23 (4): the box kept 0.5 with a red outline while every number used 1.00): the box shows
      the value used, and a message names both;
    - one value after another (issue 39: after typing 10.5 the box and the notice said v = 10.00 while the metrics
      kept the v = 1 numbers, and typing 1 after another value left the previous v's numbers on screen): the box, the
      metrics and the address follow each;
    - then a slider moved: the browser-side copy of the numbers uses the v the server last drew, not the one it
      first saw."""
    goto(page, "calculator")
    page.get_by_text("Calibrate with measured costs").click()
    box = page.get_by_role("spinbutton", name="v: one verification pass", exact=False)
    act(page, lambda: (box.fill("0.5"), box.press("Tab")))
    message = " ".join(alerts(page))
    assert "0.5" in message and "1.00" in message, alerts(page)
    assert box.input_value() == "1.00"
    assert metrics(page) == expected_metrics(*settings(page), v=1.0)
    for typed, used in (("10.5", 10.0), ("1", 1.0), ("2.5", 2.5), ("1", 1.0), ("1.35", 1.35)):
        act(page, lambda typed=typed: (box.fill(typed), box.press("Enter")))
        page.wait_for_timeout(300)  # let any late re-render of the sliders land
        assert box.input_value() == f"{used:.2f}"
        assert metrics(page) == expected_metrics(*settings(page), v=used), typed
        query = parse_qs(urlparse(page.url).query)
        assert query.get("v", ["1.00"]) == [f"{used:.2f}"] or (used == 1.0 and "v" not in query)
        if used != float(typed):
            assert f"v = {used:.2f}" in " ".join(alerts(page))
    for typed in ("2.5", "1.4"):
        act(page, lambda typed=typed: (box.fill(typed), box.press("Enter")))
        for key in ("ArrowRight", "ArrowLeft"):
            press_key(page, K_LABEL, key)
            page.wait_for_function(IDLE, timeout=60_000)
            assert metrics(page) == expected_metrics(*settings(page), v=float(typed)), (typed, key)


def _back(page) -> str:
    act(page, page.go_back)
    page.wait_for_timeout(300)  # a page that rewrote its address after a Back would do so now
    page.wait_for_function(IDLE, timeout=60_000)
    return urlparse(page.url).path + ("?" + urlparse(page.url).query if urlparse(page.url).query else "")


def test_at_default_settings_one_back_press_undoes_each_page_switch(page):
    """Issue 39 (8): /live → calculator → Back took two presses, and home → calculator → knowledge check took four
    to get home, the first landing on /calculator?kq=… (the quiz's parameter on the calculator's address). A page
    at its default settings (or a quiz not yet begun) now writes nothing to the address, so each switch is one
    history entry."""
    page.add_init_script(_LOG_HISTORY)
    goto(page, "live")
    before = _history(page)
    act(page, lambda: nav(page, "Speedup calculator").click())
    check_page_matches_sliders(page, bare_address_ok=True)
    page.wait_for_timeout(300)
    assert _history(page) - before == 1, page.evaluate("window.__history")
    assert _back(page) == "/live"
    goto(page, "")
    act(page, lambda: nav(page, "Speedup calculator").click())
    check_page_matches_sliders(page, bare_address_ok=True)
    act(page, lambda: nav(page, "Knowledge check").click())
    page.get_by_text("Question 1 of").first.wait_for()
    page.wait_for_timeout(300)
    landed = [_back(page), _back(page)]
    assert landed[0] == "/calculator", landed  # no kq, nor the calculator's defaults written in a second entry
    assert landed[1] in ("/", "/home"), landed
    pushed = [url for kind, url in page.evaluate("window.__history") if kind == "push" and "kq=" in url]
    assert not pushed, pushed
