"""Interview questions: open questions on speculative decoding, each with a worked answer and where it is taught."""

import streamlit as st

from app.layout import all_pages, script_path
from specsim.lesson import interview

st.title("Interview questions")
st.caption(
    "Questions of the kind asked in machine-learning systems interviews. Try each one aloud before opening its "
    "answer; every answer links to the page of this app that teaches the idea.")

pages = {p.url_path: p for p in all_pages()}
for number, q in enumerate(interview.load(), start=1):
    with st.expander(f"{number}. {q.question}"):
        st.markdown(q.answer)
        page = pages[q.page]
        st.page_link(script_path(page.script), label=f"Where it is taught: {page.title}", icon=page.icon)
