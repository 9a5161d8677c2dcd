"""Session state: read and write the keys of :mod:`app.keys`, and keep widgets in step with them.

The key constants and their defaults live in :mod:`app.keys` (importable without Streamlit);
they are re-exported here so a page writes ``state.LIVE_K``. Call :func:`init` once per script
run so every key exists with its default.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from app.keys import *  # noqa: F403  (every key constant, so pages write state.LIVE_K)
from app.keys import DEFAULTS, PAGE, PAGE_VISIT, PAGES_SEEN, widget_key


def init() -> None:
    """Create every missing key with its default (never overwrites what the user set)."""
    for key, value in DEFAULTS.items():
        if key not in st.session_state:
            st.session_state[key] = value() if callable(value) else value


def get(key: str) -> Any:
    if key not in st.session_state:  # a key no init() of this session created yet: its default
        value = DEFAULTS[key]
        st.session_state[key] = value() if callable(value) else value
    return st.session_state[key]


def put(key: str, value: Any) -> None:
    st.session_state[key] = value


def stored(key: str, default: Any = None) -> Any:
    """What is stored under ``key``, or ``default`` when nothing is (a widget key not drawn yet in this session)."""
    return st.session_state.get(key, default)


def put_default(key: str, value: Any) -> None:
    """Store ``value`` under ``key`` unless something is stored there already."""
    st.session_state.setdefault(key, value)


def forget(key: str) -> None:
    """Drop ``key`` (a widget's key: the widget then starts from its default)."""
    st.session_state.pop(key, None)


def show(key: str, value: Any) -> None:
    """Store a setting and show it in the widget that edits it."""
    put(key, value)
    st.session_state[widget_key(key)] = value


def widget_value(key: str) -> Any:
    """What the widget that edits setting ``key`` holds now (in its on_change, before the run reads it)."""
    return st.session_state[widget_key(key)]


def bound(key: str) -> str:
    """The widget key for setting ``key``, holding the stored value when the widget has none.

    Streamlit forgets a widget's value while its page is not shown; the plain key remembers it.
    """
    wkey = widget_key(key)
    if wkey not in st.session_state:
        st.session_state[wkey] = get(key)
    return wkey


def keep(keys: Iterable[str]) -> None:
    """Copy each widget's value back under its plain key, which survives navigation."""
    for key in keys:
        wkey = widget_key(key)
        if wkey in st.session_state:
            put(key, st.session_state[wkey])


def note_page(page: str) -> None:
    """Record which page this script run shows; another page than the run before starts a new visit."""
    if get(PAGE) != page:
        put(PAGE, page)
        put(PAGE_VISIT, get(PAGE_VISIT) + 1)
        put(PAGES_SEEN, get(PAGES_SEEN) | {page})


def read_url_now(key: str) -> bool:
    """Whether a page should read its settings from the address in this run: once per visit, and again when
    the browser's Back or Forward buttons brought the address. ``key`` remembers the visit it was read in.

    Later runs leave the widgets alone: a rerun sent right after a key press can still carry the address
    from before the previous run rewrote it, and reading that would snap the widgets back.
    """
    ctx = get_script_run_ctx()
    if get(key) == get(PAGE_VISIT) and not (ctx is not None and ctx.is_history_navigation):
        return False
    put(key, get(PAGE_VISIT))
    return True


@functools.cache
def params_by_path() -> dict[str, tuple[str, ...]]:
    """Each page's own query parameters (lower case), by the page's URL path; a page without settings owns none."""
    from app import urlcodec
    from app.calculator import params as calc_params
    from app.layout import all_pages
    from app.live import params as live_params

    owned = {"calculator.py": calc_params.NAMES, "live.py": live_params.NAMES,
             "quiz.py": (urlcodec.KNOWLEDGE_PARAM,), "sequence.py": (urlcodec.SEQUENCE_PARAM,)}
    return {p.url_path: tuple(sorted(name.lower() for name in owned.get(p.script, ()))) for p in all_pages()}


def _pages_params() -> frozenset[str]:
    """Every page's own query parameters, lower case."""
    return frozenset(name for names in params_by_path().values() for name in names)


def write_query(names: Iterable[str], wanted: Mapping[str, str], defaults: Mapping[str, str] | None = None) -> None:
    """Make the address bar carry ``wanted`` for the page's own parameter ``names``, leaving parameters no page
    owns alone (another spelling of one of ``names``, such as ``K`` for ``k``, is the page's too and goes). Another
    page's parameters go: Back from the calculator to the live page once arrived with the calculator's α and c
    still in the run's query (a race in Streamlit), and the live page would have kept them in its address.

    The browser adds a history entry for every change of the address, so the page's parameters go in
    one update, and none at all when the address already says the same, when Back or Forward brought an
    address without any of them, or when an address without any of them meets settings at their ``defaults``
    (the page's query for its default settings): a bare address already opens a new session there, so a
    page switch makes one history entry, and one Back undoes it.
    """
    names = {name.lower() for name in names}
    current = {key: st.query_params.get_all(key) for key in st.query_params}
    ctx = get_script_run_ctx()
    if ctx is not None and ctx.is_history_navigation and not any(key.lower() in names for key in current):
        # Back or Forward landed on the entry a page switch made before the page wrote its settings. The browser
        # is meant to overwrite that entry in place, but when another message clears its "history navigation" mark
        # first it pushes a new entry instead, and the next Back lands here again: a loop Back cannot leave. The
        # entry stays as it was; the next change the user makes writes the address.
        return
    if defaults is not None and dict(wanted) == dict(defaults) and not any(key.lower() in names for key in current):
        return
    drop = names | _pages_params()  # the page's own, to be rewritten, and any other page's
    target = {key: values for key, values in current.items() if key.lower() not in drop}
    target.update({name: [value] for name, value in wanted.items()})
    if target != current:
        st.query_params.from_dict(target)


# Streamlit's page pushes a history entry for every change of the address, a page's settings included, so after
# a switch to a page whose settings differ from its defaults, Back first undid the settings and only a second
# Back left the page (issue 39, finding 8). In this app Back undoes a page switch: an address change that keeps
# the path (settings written by the page or changed by the user) replaces the current entry instead.
#
# Streamlit writes a page's settings to the path the address bar shows at that moment, and it moves the bar to a
# new page's path only once the browser has drawn the switch; on a busy machine the new page's settings can arrive
# first, and they were written onto the page being left (/quiz?k=6&alpha=80&c=0.20), so Back landed there. An
# address change that keeps the path but carries another page's parameters is such a write, and is dropped: the
# address the switch then writes carries the same settings on the right path.
_HISTORY_KEY = "specsim_history"
_BACK_UNDOES_PAGE_SWITCHES = r"""<style>div:has(> .st-key-%(key)s) { display: none; }</style>
<script>
(() => {
  if (window.__specsimHistory) return;
  window.__specsimHistory = true;
  const owned = %(owned)s;  // each page's own parameters, by its path
  const every = new Set(Object.values(owned).flat());
  const push = window.history.pushState, replace = window.history.replaceState;
  const samePath = (url) => {
    const to = new URL(url, window.location.href);
    if (to.pathname !== window.location.pathname) return null;
    const mine = new Set(owned[to.pathname.replace(/\/+$/, "").split("/").pop()] || []);
    const theirs = (k) => every.has(k.toLowerCase()) && !mine.has(k.toLowerCase());
    return {to, foreign: [...to.searchParams.keys()].some(theirs)};
  };
  window.history.pushState = function (data, title, url) {
    try {
      const same = url == null ? null : samePath(url);
      if (same && same.foreign) return;  // another page's settings on this path: a write that lost the race
      if (same) return replace.call(window.history, data, title, url);
    } catch (error) { /* an address the browser cannot parse: leave it to pushState */ }
    return push.call(window.history, data, title, url);
  };
  window.history.replaceState = function (data, title, url) {
    try {
      const same = url == null ? null : samePath(url);
      if (same && same.foreign) return;
    } catch (error) { /* as above */ }
    return replace.call(window.history, data, title, url);
  };
})();
</script>"""


def history_script() -> str:
    """The history rule above, with each page's parameters filled in."""
    return _BACK_UNDOES_PAGE_SWITCHES % {"key": _HISTORY_KEY, "owned": json.dumps(params_by_path())}


def back_undoes_page_switches() -> None:
    """Install, once per browser tab, the history rule above (a script in the main page, in a hidden container
    that takes no room)."""
    with st.container(key=_HISTORY_KEY):
        st.html(history_script(), unsafe_allow_javascript=True)
