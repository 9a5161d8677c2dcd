"""Under the hood: the mechanics of one speculative iteration (the pass, the caches, α, the costs), on a real run."""

import streamlit as st

from app import frame, state
from app.hood import trees, view

st.title("Under the hood")
frame.opening("hood.py")
st.caption("What happens inside one iteration, read off a real run: the recordings the live page opens on, or your "
           "own run from the live page. Nothing here runs a model.")

trace, plain = view.pick_run()
if trace is not None and not trace.iterations:
    view.no_loop_note(trace)
elif trace is not None:
    step = view.pick_step(trace)
    view.verification_section(trace, step)
    view.cache_section(trace, step)
    if trace.settings.tree is not None:  # a tree run: the tree rules right after its own tree
        trees.rules_section()
    view.overlap_section(trace)
    view.position_section(trace)
    view.closed_form_note(trace)
    view.cost_section(trace, plain)
    if trace.settings.tree is None:  # a tree run's size is the tree's settings: K policies come after the trees
        view.adaptive_section(trace)
if trace is None or not trace.iterations or trace.settings.tree is None:
    trees.rules_section()
if trace is not None and trace.iterations:
    trees.section(trace, plain, state.get(state.CALC_DRAFT_COST))
    if trace.settings.tree is not None:
        view.adaptive_section(trace)
frame.closing("hood.py")
