"""Live decoding: run real speculative decoding once, then replay it iteration by iteration."""

import streamlit as st

from app import class_profile as app_profile
from app import classqueue, frame, glossary, recording, state
from app.live import be_the_draft, playback, run_guess, why_speed
from app.live import cache as live_cache
from app.live import pairs as live_pairs
from app.live import run as live_run
from app.live import view as live_view
from app.live.controls import apply_url, controls, write_url
from app.live.tokens import md_plain

st.title("Live decoding")
frame.opening("live.py")
st.caption(
    "A real draft proposes K tokens, the real target checks them in one pass, keeps the longest prefix it agrees "
    "with and adds one token of its own. Press Run once; the run is recorded, and every control below only replays "
    "the recording. The address bar keeps your settings."
)

glossary.expander()
pairs = live_pairs.choices()
apply_url(pairs)
settings = controls(pairs)
best_k, why_k = app_profile.default_k()
if state.get(state.LIVE_TRACE) is None and recording.shipped_runs():
    st.caption(f"The form shows the settings of the recording below: press Run to run them on this machine. "
               f"This machine's own best K for the default draft is {best_k}.")
    with st.expander("How this machine's best K was measured"):
        st.markdown(why_k)
else:
    st.caption(why_k)
live_run.wait_for_previous_run()  # a click during a run stops it; let it hand over its partial trace first

run_col, fresh_col = st.columns([1, 3], vertical_alignment="center")
pressed = run_col.button("Run", type="primary", key=state.LIVE_RUN_BUTTON)
if live_cache.store() is not None and classqueue.queue_url() is None:
    fresh_col.checkbox("Run fresh", key=state.LIVE_FRESH_BOX,
                       help="Settings that already ran on this machine replay that run from its run cache at once; "
                            "tick this to run the models again.")
live_run.resume_class_run(pressed)  # class mode: a job an interrupted script run left running
live_run.reattach_class_run(pressed)  # class mode: the run this browser started, seen from a new server session
if pressed or why_speed.take_autorun():
    live_run.start(settings)  # validates, loads the models, runs both decodings; problems become st.error
write_url(settings)

notice = state.get(state.LIVE_NOTICE)
if notice:
    getattr(st, notice[0])(notice[1])
spec, plain = state.get(state.LIVE_TRACE), state.get(state.LIVE_PLAIN)
shipped = None if spec is not None else recording.pick_shipped()
if shipped is not None:
    spec, plain = shipped.spec, shipped.plain
    st.caption("A real run of the models, recorded earlier and replayed here.")
    with st.expander("How this was measured"):
        st.markdown(shipped.label())
if spec is None:
    st.info("Pick a prompt (or an example) and press Run. The bundled models run offline on this machine.")
else:
    st.caption(md_plain(live_view.describe(spec)))  # a custom model's path may hold Markdown characters
if spec is not None:
    # the guess is asked first; the loops themselves are no answer, so they play either way, and the run's α, τ
    # and what its speed is made of wait for the guess
    guessed = run_guess.guessed_run(spec)
    st.subheader("Step through the run")
    st.caption("Each iteration is one loop (the other pages' word): the draft's guesses, the target's one pass over "
               "them, its verdicts and its +1 token.")
    live_view.prefill_note(spec)
    playback.player(len(spec.iterations), lambda step: live_view.iteration_view(spec, step),
                    lambda step: live_view.iteration_header(spec, step))
    if guessed:
        why_speed.panel(spec, plain)
        be_the_draft.section(spec, plain)
        st.subheader("The whole run")
        live_view.run_view(spec, plain)
        live_view.export_button(spec, plain)
    else:
        run_guess.waiting_note()
frame.closing("live.py")
