"""Playback of a recorded run: restart, step back and forward, jump, play and pause at a chosen speed.

Every control only moves an index in session state; the models never run again. Playing uses
``st.fragment(run_every=...)`` so only the replay redraws on each tick, and the page stays responsive.

Why the jump slider gets a new key for every iteration it shows (issue 12): the browser's timer
sends each tick with the widget values the browser holds at that moment, and these can be one
redraw behind the server (a tick fired while the previous redraw, or the full rerun that ends
playback, was still on its way). Streamlit takes any value that differs from what the server last
stored for that widget as a move by the user and calls its ``on_change``; it even does so for a
widget the last run did not draw, whose stored value it has dropped. With one key, that echo of
the previous iteration moved the step back; at the end of playback it arrived after the timer had
stopped, so the page settled on the last-but-one iteration with ▶ Play showing again. Now each
slider carries the value it was drawn with, and :func:`_from_slider` ignores a report of exactly
that value: a slider the learner never touched cannot move the step.

Why a button steps from the iteration the browser shows, not the one the server holds (issue 51): a timer
tick can move the step on the server while its redraw is still on the way, and a click sent before that
redraw arrived was about the iteration still on screen. ◀ Back stepped back from the server's step and left
that iteration on screen (2 of 12 trials); the same click could also reach the callbacks twice, once more
with the full rerun that stops the timer, and Back went back two. Every redraw now writes its step into a
hidden text box (:data:`~app.keys.LIVE_STEP_SEEN`); the browser reports the box's value with every request,
so a button's callback reads the step the learner saw when they pressed it, and a second delivery of the
same press lands on the same iteration.

Why ◀ Back and Forward ▶ get a new key on every tick while playing: the box was not enough under load (1 of 12 in a
full test run). Streamlit folds requests that reach a busy server into one, keeping a button's press from the older
and every other widget's value from the newer. A tick the browser sent after the click, carrying the next step in
the box, joined the click, and Back stepped back from one iteration further on: the iteration the learner had seen
stayed on screen. A button drawn with its step says which step it was pressed on, whatever it is folded with
(Streamlit still calls the callback of a button the last redraw replaced). While playing, that step is the only
evidence a Back or Forward press uses. The box can trail the header: Streamlit's page copies a value the server set
into what it sends only two React effect passes after it draws the label, and on a starved CPU a press sent 50 ms
after the header changed still carried the step before (Back then went back two, 1 of 20 presses under load). And
the header is drawn before the buttons: a redraw reaches the browser element by element, so a button on screen
never belongs to a step whose header has not been drawn. The other way round can happen: on a starved CPU the
buttons of the step before stayed on screen under the new header for more than 50 ms, and a press there steps from
the iteration its button belongs to.

Why a press must count once however often it arrives: the browser can send one press twice. Streamlit's page puts a
click into the next message it sends, and sends that message a moment later (a zero-delay timer); the playback timer's
request, sent in between, carries the press as well, and the server runs a callback for each request it does not fold
into the other (measured: the press arrived twice in about 1 of 5 presses while playing). ▶ Play and ❚❚ Pause were one
toggle, so a doubled press paused and played again: ❚❚ Pause left playback running in 1 of 20 presses. The box now
also says whether the page the learner pressed on was playing (:func:`seen_value`), so the button means what its label
said, and the same press arriving again does the same thing again; ❚❚ Pause stops on the step in the box, which can
trail the header by the effect passes above. Each playing-time Back or Forward press is applied once until ▶ Play
starts playback again (:data:`~app.keys.LIVE_PRESSES`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import streamlit as st

from app import state

SPEEDS = (0.5, 1.0, 2.0, 4.0)  # iterations per second


# ---- pure rules ----------------------------------------------------------------------------------
def clamp(step: int, n: int) -> int:
    return max(0, min(int(step), n - 1)) if n > 0 else 0


def tick(step: int, n: int, last_tick: float | None, now: float, interval: float) -> tuple[int, bool, float | None]:
    """One timer tick while playing: (new step, still playing, time of the last advance).

    Advance only when a full interval has passed since the last advance (a redraw of the page for
    any other reason must not skip ahead); stop on the last iteration.
    """
    if step >= n - 1:
        return clamp(step, n), False, last_tick
    if last_tick is not None and now - last_tick < 0.8 * interval:
        return step, True, last_tick
    step += 1
    return step, step < n - 1, now


# ---- callbacks (run before the rerun they trigger) -------------------------------------------
def _pause() -> None:
    """A step chosen by hand pauses playback: else the next timer tick, served right after the click, moved the
    step on again, and ◀ Back pressed while playing looked as if it did nothing (issue 39)."""
    state.put(state.LIVE_PLAYING, False)


def _go(n: int, step: int) -> None:
    _pause()
    state.put(state.LIVE_STEP, clamp(step, n))


PLAYING_MARK = " playing"  # after the step in the hidden box when the page drawn was playing


def seen_value(step: int, playing: bool) -> str:
    """What the hidden box holds for a page showing ``step``, playing or not (see the module docstring)."""
    return f"{step}{PLAYING_MARK if playing else ''}"


def read_seen(value: object) -> tuple[int, bool] | None:
    """(step, playing) from the box's value, or None when it holds no report (nothing drawn yet)."""
    text = str(value) if value is not None else ""
    playing = text.endswith(PLAYING_MARK)
    try:
        return int(text.removesuffix(PLAYING_MARK)), playing
    except ValueError:
        return None


def on_screen(n: int) -> int:
    """The step the browser showed when it sent this request (the hidden box drawn with it); before any redraw
    wrote the box, the step the server holds."""
    seen = read_seen(state.stored(state.LIVE_STEP_SEEN))
    return clamp(seen[0] if seen else state.get(state.LIVE_STEP), n)


def _shift(n: int, delta: int, drawn: int | None = None) -> None:
    """Step relative to the iteration the learner saw when they pressed the button (see the module docstring): while
    paused, the step in the box; while playing, ``drawn``, the step the pressed button was drawn with, once."""
    if drawn is not None:
        press = (delta, drawn)
        if press in state.get(state.LIVE_PRESSES):
            return  # the same press arriving again
        state.put(state.LIVE_PRESSES, (*state.get(state.LIVE_PRESSES), press))
    _pause()
    seen = on_screen(n) if drawn is None else drawn
    state.put(state.LIVE_STEP, clamp(seen + delta, n))


def slider_key(step: int) -> str:
    """The jump slider's widget key while iteration ``step`` is on screen (see the module docstring)."""
    return f"{state.LIVE_STEP_SLIDER}_{step}"


def _from_slider(key: str, drawn: int) -> None:
    """The learner moved the slider drawn (under ``key``) at value ``drawn``; a report of ``drawn`` is an echo."""
    value = int(state.get(key))
    if value != drawn:
        _pause()
        state.put(state.LIVE_STEP, value - 1)


def _play_or_pause(n: int) -> None:
    """▶ Play or ❚❚ Pause, whichever the page the learner pressed on showed (the box says; see the module docstring)."""
    seen = read_seen(state.stored(state.LIVE_STEP_SEEN))
    pressed_pause = seen[1] if seen else state.get(state.LIVE_PLAYING)
    if pressed_pause:
        state.put(state.LIVE_PLAYING, False)
        state.put(state.LIVE_STEP, on_screen(n))  # pause on the iteration the learner saw, not a tick ahead of it
        return
    if state.get(state.LIVE_PLAYING):
        return  # ▶ Play arriving again: playback has started already
    if state.get(state.LIVE_STEP) >= n - 1:
        state.put(state.LIVE_STEP, 0)  # play again from the start
    state.put(state.LIVE_PLAYING, True)
    state.put(state.LIVE_LAST_TICK, time.monotonic())
    state.put(state.LIVE_PRESSES, ())


def stop() -> None:
    """Pause and go back to the first iteration (after a new run)."""
    state.put(state.LIVE_PLAYING, False)
    state.put(state.LIVE_STEP, 0)


# ---- the widget -------------------------------------------------------------------------------
def player(n: int, render: Callable[[int], None], header: Callable[[int], str] | None = None) -> None:
    """▶ Play and the speed, then ``header(step)`` (Markdown, e.g. "**Iteration 3 of 9**"), the step controls and
    ``render(step)`` for the iteration on screen."""
    if n <= 0:
        st.info("This run has no iterations to replay.")
        return
    playing = bool(state.get(state.LIVE_PLAYING))
    cols = st.columns([1, 1.2, 2])
    cols[0].button("❚❚ Pause" if playing else "▶ Play", key=state.LIVE_PLAY_BUTTON, on_click=_play_or_pause, args=(n,),
                   width="stretch", disabled=n < 2)
    cols[1].select_slider("Speed (iterations/s)", SPEEDS, key=state.LIVE_SPEED, label_visibility="collapsed",
                          format_func=lambda s: f"{s:g} iterations/s")
    interval = 1.0 / float(state.get(state.LIVE_SPEED)) if playing else None
    st.fragment(_replay, run_every=interval)(n, render, interval, header)


def _replay(n: int, render: Callable[[int], None], interval: float | None,
            header: Callable[[int], str] | None = None) -> None:
    step = clamp(state.get(state.LIVE_STEP), n)
    if interval is not None and not state.get(state.LIVE_PLAYING):  # paused by a step chosen by hand
        st.rerun(scope="app")  # stop the timer and relabel the play button
    if interval is not None:
        step, playing, last = tick(step, n, state.get(state.LIVE_LAST_TICK), time.monotonic(), interval)
        state.put(state.LIVE_LAST_TICK, last)
        if not playing:
            state.put(state.LIVE_STEP, step)
            state.put(state.LIVE_PLAYING, False)
            st.rerun(scope="app")  # stop the timer and relabel the play button
    state.put(state.LIVE_STEP, step)
    _report_step(step, interval is not None, header(step) if header is not None else f"**Iteration {step + 1} of {n}**")
    cols = st.columns(4)
    cols[0].button("|◀ Restart", key=state.LIVE_RESTART_BUTTON, on_click=_go, args=(n, 0), width="stretch",
                   disabled=step == 0)
    if interval is None:  # paused: no tick can race a click, and a key that stays keeps the keyboard's focus
        back, forward, shift = state.LIVE_BACK_BUTTON, state.LIVE_FORWARD_BUTTON, (_shift, (n, -1), (n, 1))
    else:  # playing: each redraw's buttons are new widgets that carry the step they were drawn with
        back, forward = f"{state.LIVE_BACK_BUTTON}_{step}", f"{state.LIVE_FORWARD_BUTTON}_{step}"
        shift = (_shift, (n, -1, step), (n, 1, step))
    cols[1].button("◀ Back", key=back, on_click=shift[0], args=shift[1], width="stretch", disabled=step == 0)
    cols[2].button("Forward ▶", key=forward, on_click=shift[0], args=shift[2], width="stretch",
                   disabled=step >= n - 1)
    cols[3].button("End ▶|", key=state.LIVE_END_BUTTON, on_click=_go, args=(n, n - 1), width="stretch",
                   disabled=step >= n - 1)
    if n > 1:
        key = slider_key(step)
        st.slider("Jump to iteration", 1, n, value=step + 1, key=key, on_change=_from_slider,
                  args=(key, step + 1))
    render(step)


# The box itself is hidden; its label, the iteration's header, is what the learner reads. Header and step travel in
# one element, so the browser can never hold a step other than the one its header shows (issue 51: with the header
# drawn apart, a click between the two redraws stepped back from a step not yet on screen, 1 of 12 under load).
_HIDE_SEEN = (f"<style>.st-key-{state.LIVE_STEP_SEEN}_box [data-testid='stTextInputRootElement'] {{ display: none; }} "
              f".st-key-{state.LIVE_STEP_SEEN}_box label p {{ font-size: 1rem; }}</style>")


def _report_step(step: int, playing: bool, header: str) -> None:
    """Draw the iteration's header as the label of a hidden box that tells the server, with the browser's next
    request, which step is on screen and whether the page is playing."""
    state.put(state.LIVE_STEP_SEEN, seen_value(step, playing))
    with st.container(key=f"{state.LIVE_STEP_SEEN}_box"):
        st.html(_HIDE_SEEN)
        st.text_input(header, key=state.LIVE_STEP_SEEN)
