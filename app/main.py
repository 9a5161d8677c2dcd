"""Entry point: ``streamlit run app/main.py``. One navigation entry per part of the lesson."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from app import state  # noqa: E402
from app.layout import PAGES  # noqa: E402

st.set_page_config(page_title="specsim: speculative decoding", page_icon=":material/bolt:", layout="wide")
state.init()
nav = st.navigation(
    {
        section: [
            st.Page(str(ROOT / "pages" / p.script), title=p.title, icon=p.icon, url_path=p.url_path,
                    default=p.default)
            for p in pages
        ]
        for section, pages in PAGES.items()
    }
)
state.note_page(nav.url_path)
nav.run()
