"""Entry point: ``streamlit run app/main.py``. One navigation entry per part of the lesson."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from app import a11y, frame, preload, state  # noqa: E402
from specsim.core import environment  # noqa: E402

preload.modules()  # before any figure: plotly must never see pandas half imported by another session
from app.layout import PAGES  # noqa: E402

st.set_page_config(page_title="specsim: speculative decoding", page_icon=":material/bolt:", layout="wide")
try:
    environment.current()  # every page reads these settings: a value that does not parse is told here, once
except environment.SettingsError as error:
    st.error(f"specsim cannot start with this environment. {error} Correct or unset the variable, then start the "
             "app again (the README's \"Settings from the environment\" lists them).")
    st.stop()
state.init()
state.back_undoes_page_switches()
a11y.install()
HOME = next(p for pages in PAGES.values() for p in pages if p.default)
LIVE_PATH = next(p.url_path for pages in PAGES.values() for p in pages if p.script == "live.py")


def home_alias() -> None:
    """/home, the path the first page declares: the first page itself lives at /, so go there."""
    st.switch_page(str(ROOT / "pages" / HOME.script))


sections = {
    section: [
        st.Page(str(ROOT / "pages" / p.script), title=p.title, icon=p.icon, default=p.default,
                url_path=f"{p.url_path}-default" if p.default else p.url_path)
        for p in pages
    ]
    for section, pages in PAGES.items()
}
# Streamlit serves the default page at / and answers its url_path with "Page not found", though the path stays
# reserved: the default page takes a path no link uses, and a hidden page answers the declared one (/home).
sections[next(iter(sections))].append(st.Page(home_alias, title=HOME.title, url_path=HOME.url_path,
                                              visibility="hidden"))
nav = st.navigation(sections)
state.note_page(nav.url_path)
if nav.url_path != LIVE_PATH and getattr(state.stored(state.LIVE_RUN), "detached", None) is not None:
    from app.live import run as live_run  # only then: the pages that never run a model stay light

    live_run.leave_class_run()  # leaving the live page cancels a class run it stopped following
if __name__ == "__main__":  # a script run (streamlit run, AppTest), not a test importing this module: the glossary
    frame.sidebar()        # reads the default draft's folder
nav.run()
