"""Running the models once for the live page: speculative decoding, then the plain baseline.

Both runs show a progress bar and a Cancel button. A click anywhere on the page during a run makes
Streamlit stop this script run at its next UI call (here: the progress bar) and start a new one
at once. We catch that stop inside the progress callback, let the engine finish its current
iteration (``should_stop``), keep the partial trace in session state, and only then let the stop
go on. The new script run waits for that hand-over (:func:`wait_for_previous_run`) before it draws
the replay, so nothing recorded is lost and the page never shows a half-written state.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from app import classqueue, loaders, state
from app.classtask import ScriptControlException
from app.live import cache as live_cache
from app.live import pairs as live_pairs
from app.live import params as live_params
from app.live import playback
from app.live import view as live_view
from app.settings import LiveSettings
from specsim import liverun
from specsim.core.models import ModelUnavailable
from specsim.core.trace import Trace
from specsim.liverun import SPECULATIVE
from specsim.request import RunRequest

UPDATE_EVERY_S = 0.2  # progress updates sit inside the timed loop: keep them rare and the same for both runs


class _Interruptible:
    """A progress callback that turns a Streamlit interruption into ``should_stop() == True``."""

    def __init__(self, bar, describe: Callable[[], tuple[float, str]]):
        self.bar, self.describe = bar, describe
        self.interruption: BaseException | None = None
        self.last = 0.0

    def update(self, *_args) -> None:
        now = time.perf_counter()
        if self.interruption is not None or now - self.last < UPDATE_EVERY_S:
            return
        self.last = now
        fraction, text = self.describe()
        try:
            self.bar.progress(min(1.0, fraction), text=text)
        except ScriptControlException as exc:  # a click (rerun) or the Stop button
            self.interruption = exc

    def should_stop(self) -> bool:
        return self.interruption is not None


@dataclass
class RunBox:
    """Where a run leaves its results.

    A stopped script run may not touch ``st.session_state`` any more (every access raises the stop
    again), so the run writes into this plain object, which session state holds, and whichever
    script run comes next moves the results into session state (:func:`adopt`).
    """

    running: bool = True
    spec: Trace | None = None
    plain: Trace | None = None
    notice: tuple[str, str] | None = None
    # class mode: (queue URL, job id, session token) of a job this page stopped following when its script run was
    # interrupted; the next script run follows it again, or cancels it (Cancel, a new Run, another page)
    detached: tuple[str, str, str] | None = None


def adopt() -> None:
    """Move a finished run's results into session state (no-op while it is still running)."""
    box = state.get(state.LIVE_RUN)
    if box is None or box.running or box.detached is not None:
        return
    state.put(state.LIVE_RUN, None)
    notice = box.notice
    # A run stopped before its first loop recorded nothing to replay (no iteration, no baseline): the run that was
    # on screen stays there, and the notice says so, rather than an empty run taking its place (issue 62 (12)).
    stopped_empty = box.spec is not None and not box.spec.iterations and box.plain is None
    if box.spec is not None and not (stopped_empty and state.get(state.LIVE_TRACE) is not None):
        state.put(state.LIVE_TRACE, box.spec)
        state.put(state.LIVE_PLAIN, box.plain)
        playback.stop()
    elif stopped_empty and notice is not None:
        notice = (notice[0], f"{notice[1]} The run below is the one that was on screen before.")
    state.put(state.LIVE_NOTICE, notice)


def start(settings: LiveSettings) -> None:
    """The Run button: validate, load the models, run both decodings; every problem becomes an st.error."""
    problems = live_params.validate(settings)
    for problem in problems:
        st.error(problem)
    if problems:
        return
    try:
        request = live_pairs.request_for(settings)  # the one request: run here or on a class worker
        url = classqueue.queue_url()
        if url is not None:  # class mode: a worker runs it (app.live.classmode)
            _queued(request, url)
            return
        cache = live_cache.store()
        if cache is not None and not state.get(state.LIVE_FRESH_BOX) and _replay_cached(cache, request):
            return
        loaders.load_models(request)  # the models onto the shelf first, with their own progress bars
        generate(request, loaders.shelf())
        spec, plain = state.get(state.LIVE_TRACE), state.get(state.LIVE_PLAIN)
        if cache is not None and spec is not None and plain is not None and not state.get(state.LIVE_NOTICE):
            live_cache.keep(cache, request, spec, plain)  # a whole run, not a cancelled one
    except (ModelUnavailable, ValueError) as exc:
        st.error(str(exc))
    except Exception as exc:  # noqa: BLE001 - a failed run is reported on the page, never as a traceback
        st.error(f"The run failed: {type(exc).__name__}: {exc}. Your settings are kept; try a shorter prompt, "
                 "fewer tokens or another drafter.")


def _replay_cached(cache, request: RunRequest) -> bool:
    """Show the cached run of ``request`` as if it had just run, with a note saying so; False on a miss."""
    entry = live_cache.lookup(cache, request)
    if entry is None:
        return False
    state.put(state.LIVE_RUN, RunBox(running=False, spec=entry.spec, plain=entry.plain,
                                     notice=("info", live_cache.note(entry))))
    adopt()
    return True


def _queued(request: RunRequest, url: str) -> None:
    """Class mode's Run: the job's traces land in a RunBox as a run made here does; a click cancels the job."""
    from app.live import classmode  # a class only: it needs RQ and redis (requirements-class.txt)

    box = RunBox()
    state.put(state.LIVE_RUN, box)
    try:
        classmode.run(box, request, url, _Interruptible)
    except (ScriptControlException, KeyboardInterrupt):
        raise
    except Exception as exc:  # noqa: BLE001 - e.g. the queue's server went away mid-run: a message, never a traceback
        box.notice = ("error", f"The class queue stopped answering: {type(exc).__name__}: {exc}. Your settings are "
                               "kept; press Run to try again.")
    finally:
        box.running = False
    adopt()


def resume_class_run(pressed_run: bool) -> None:
    """Class mode: a script run interrupted while it followed a job left the job running (a reconnect or a click
    must not cancel it: issue 62 (5)). Follow it again here, or cancel it when the learner pressed Cancel or Run."""
    box = state.get(state.LIVE_RUN)
    if box is None or box.running or box.detached is None:
        return
    url, job_id, token = box.detached
    box.detached = None
    box.running = True
    from app.live import classmode  # a class only: it needs RQ and redis (requirements-class.txt)

    try:
        if pressed_run or state.stored(state.LIVE_CANCEL_BUTTON):
            classmode.cancel(box, url, job_id, token)
        else:
            classmode.follow(box, url, job_id, token, _Interruptible, "Following your run in the class queue…")
    except (ScriptControlException, KeyboardInterrupt):
        raise
    except Exception as exc:  # noqa: BLE001 - the queue went away meanwhile: a message, never a traceback
        box.notice = ("error", f"The class queue stopped answering: {type(exc).__name__}: {exc}. Your settings are "
                               "kept; press Run to try again.")
    finally:
        box.running = False
    adopt()


def reattach_class_run(pressed_run: bool) -> None:
    """Class mode, once per session: a page whose server session is new (its replica was killed, or a reload) shows
    the run its browser last started, following it while it runs (issue 62 (6)). The browser keeps the run's id and
    token (:func:`app.live.classmode.remember`); nothing happens when this session already has a run."""
    url = classqueue.queue_url()
    if url is None or pressed_run or state.get(state.LIVE_REATTACHED):
        return
    state.put(state.LIVE_REATTACHED, True)
    from app.live import classmode  # a class only: it needs RQ and redis (requirements-class.txt)

    kept = classmode.recall()
    if kept is None or state.get(state.LIVE_RUN) is not None or state.get(state.LIVE_TRACE) is not None:
        return
    job_id, token = kept
    box = RunBox()
    state.put(state.LIVE_RUN, box)
    state.put(state.LIVE_SESSION_TOKEN, token)  # the run's own: Cancel works on it, a new Run keeps the cookie right
    try:
        found = classmode.reattach(box, url, job_id, token, _Interruptible)
    except (ScriptControlException, KeyboardInterrupt):
        raise
    except Exception:  # noqa: BLE001 - the queue is away: the page opens as it would without the cookie
        found = False
    finally:
        box.running = False
    if found:
        adopt()
    else:
        state.put(state.LIVE_RUN, None)


def leave_class_run() -> None:
    """Another page opened while a class job was detached from the live page: leaving the page cancels it."""
    box = state.stored(state.LIVE_RUN)
    if box is None or box.running or box.detached is None:
        return
    url, job_id, token = box.detached
    box.detached = None
    from app.live import classmode  # a class only: it needs RQ and redis (requirements-class.txt)

    try:
        classmode.cancel(box, url, job_id, token)
    except Exception:  # noqa: BLE001 - the queue is away: the job ends with its learner gone, nothing to show
        box.notice = None
    adopt()


def wait_for_previous_run(timeout_s: float = 60.0) -> None:
    """Wait while a stopped run of this session finishes its iteration, then show what it recorded."""
    box = state.get(state.LIVE_RUN)
    if box is None:
        return
    if box.running:
        deadline = time.monotonic() + timeout_s
        with st.spinner("Stopping the run at the end of its current iteration…"):
            while box.running and time.monotonic() < deadline:
                time.sleep(0.1)
    if box.running:
        state.put(state.LIVE_RUN, None)
        st.warning("The previous run did not stop in time; its results are not shown.")
        return
    adopt()


def generate(request: RunRequest, shelf) -> None:
    """Run both decodings of ``request`` with the models on ``shelf`` and store their traces; partial results are
    kept on a cancel."""
    box = RunBox()
    state.put(state.LIVE_RUN, box)
    try:
        _generate(box, request, shelf)
    finally:
        box.running = False
    adopt()


def _generate(box: RunBox, request: RunRequest, shelf) -> None:
    """The run itself is :func:`specsim.liverun.run_request`, as on a class-queue worker; this adds the
    progress bar
    and the Cancel button."""
    holder = st.empty()
    with holder.container():
        bar = st.progress(0.0, text="Speculative decoding…")
        # Any click stops the run (see the module docstring); this button is the obvious one to click.
        st.button("Cancel", key=state.LIVE_CANCEL_BUTTON)
    latest: list[liverun.Progress | None] = [None]

    def describe() -> tuple[float, str]:
        now = latest[0]
        if now.phase == SPECULATIVE:
            return now.done / now.goal, f"Speculative decoding: {now.done} of {now.goal} tokens"
        return now.done / now.goal, f"Plain decoding (the baseline): {now.done} of {now.goal} tokens"

    progress = _Interruptible(bar, describe)

    def on_progress(now: liverun.Progress) -> None:
        latest[0] = now
        progress.update()

    run = liverun.run_request(request, shelf, on_progress=on_progress, should_stop=progress.should_stop)
    box.spec = run.spec
    if progress.interruption is not None:
        box.notice = live_view.cancel_notice(run)
        raise progress.interruption
    if box.spec is None or box.spec.n_generated == 0:
        return
    box.plain = run.plain
    holder.empty()
