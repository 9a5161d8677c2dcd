"""Class mode: with ``SPECSIM_QUEUE_URL`` set, a Run goes to the class's queue instead of this process.

Workers (``python -m specsim.classroom.worker --redis URL``, on this machine or others) hold the models and run the jobs
(:mod:`specsim.classroom.jobs`); this page only submits the learner's settings and follows the job: its place in the
queue
with an estimate from recent runs, then its tokens as the worker records them, then the finished traces, which
the page replays exactly as it replays a run made here. A request the class has already run on a worker's machine
is answered at once from the shared run cache, and the page says when and where it was recorded.

Without the variable (``make run``), runs stay in this process (:mod:`app.live.run`) and no server is needed.
Cancel, a new Run or leaving the page takes a waiting job off the queue, or stops a running one at the end of its
iteration and keeps what it recorded. Any other interruption of the script run that follows a job (a click elsewhere
on the page, a websocket reconnect after nginx restarts) leaves the job running, and the next script run follows it
again (:func:`follow`, from :func:`app.live.run.resume_class_run`): a reconnect never cancels a run. A page whose
server session is new (its replica was killed and nginx sent it to another, or a reload) finds the run its browser
last started through a cookie (:func:`remember`, :func:`reattach`).
"""

from __future__ import annotations

import re
import time
from datetime import datetime

import streamlit as st
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from app import state
from app.classqueue import OUTAGE_S, POLL_S, QUEUE_AWAY, queue_limit, queue_name, session_token
from app.live import view as live_view
from specsim.classroom import jobs, records
from specsim.liverun import SPECULATIVE
from specsim.request import RunRequest

STOP_WAIT_S = 60.0  # how long a cancelled running job may take to stop at the end of its iteration


# The browser keeps its latest class run in a cookie (job id and session token), so a page whose server session is
# new finds the run again: after its replica was killed and nginx sent it to another, or after a reload. Set by a
# script on the page (st.html), read from the websocket's handshake (st.context.cookies); it lasts as long as the
# job's records (records.KEEP_S) and never leaves this site (SameSite=Strict).
COOKIE = "specsim_run"


def remember(job_id: str, token: str) -> None:
    """Have the browser keep ``job_id`` and its token (the cookie above)."""
    value = f"{job_id}.{token}"
    if not re.fullmatch(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+", value):  # the queue's own ids: nothing a script could run
        return
    st.html(f'<script>document.cookie = "{COOKIE}={value}; path=/; max-age={records.KEEP_S}; SameSite=Strict";'
            "</script>", unsafe_allow_javascript=True)


def recall() -> tuple[str, str] | None:
    """The (job id, token) the browser keeps, or None."""
    try:
        value = st.context.cookies.get(COOKIE, "")
    except Exception:  # noqa: BLE001 - no browser behind this session (a bare script run)
        return None
    if not isinstance(value, str):  # AppTest's stand-in for the request
        return None
    job_id, dot, token = value.partition(".")
    return (job_id, token) if dot and job_id and token else None


REATTACHED = ("This page has a new server session (its app server restarted, or the page was reloaded), and your "
              "run was found in the class queue: ")


FOUND_AGAIN = "Your run, found again in the class queue after this page's server session changed. "


def recorded_note(result: jobs.JobResult) -> str:
    when = datetime.fromtimestamp(result.recorded_at).strftime("%Y-%m-%d %H:%M")
    return (f"Recorded on {when} on {result.machine}, served from the class cache: the class has run exactly these "
            "settings before, so the page replays that run (greedy output is fixed by the settings; its timings are "
            "that machine's). Change the seed or any setting for a fresh run.")


def run(box, request: RunRequest, url: str, interruptible) -> None:
    """Submit the page's run request to the class queue and follow it into ``box`` (an app.live.run.RunBox): a
    progress bar says where it is; ``interruptible`` (app.live.run._Interruptible's class) turns a click into a
    cancel."""
    token = session_token()
    try:
        job_id = jobs.submit(url, request, token, queue=queue_name(),
                             max_queued=queue_limit())
    except records.JobError as error:  # the queue is full
        box.notice = ("error", str(error))
        return
    except (OSError, RedisConnectionError) as error:  # no server at that address
        box.notice = ("error", f"The class queue at {url} cannot be reached ({error}). Ask whoever runs the class "
                               "to start it; your settings are kept.")
        return
    except Exception as error:  # noqa: BLE001 - redis' own errors (e.g. a refused login) arrive as RedisError
        box.notice = ("error", f"The class queue refused the run: {type(error).__name__}: {error}. Your settings are "
                               "kept.")
        return
    remember(job_id, token)
    follow(box, url, job_id, token, interruptible, "Sent to the class queue…")


def reattach(box, url: str, job_id: str, token: str, interruptible) -> bool:
    """A new session finding the browser's run: follow it into ``box`` while it waits or runs, or collect it when it
    has finished; False (nothing done) when it was cancelled, failed, expired or is not this token's."""
    try:
        status = jobs.status(url, job_id, token)
    except (OSError, RedisError, records.NotYourJob):
        return False
    if status.state in ("queued", "running"):
        follow(box, url, job_id, token, interruptible, REATTACHED + "following it again…", lead=FOUND_AGAIN)
        how = "it went on while the page was away, and here it is."
    elif status.state == "finished":
        _collect(box, url, job_id, token, status)
        how = "it had finished, and here it is."
    else:
        return False
    if box.notice is None or box.notice[0] == "info":
        box.notice = ("info", REATTACHED + how + ("" if box.notice is None else " " + box.notice[1]))
    return True


LOST_QUEUE = ("The class queue at {url} stopped answering while your run was on it ({error}); a restarted queue "
              "forgets the runs it held. Your settings and earlier runs are kept; press Run to try again once it is "
              "back.")


def _follow(box, url: str, job_id: str, token: str, bar, interruptible, lead: str = "") -> None:
    """Poll the job until it ends, keeping the bar up to date (each text after ``lead``); then move what it recorded
    into ``box``."""
    where = ["Sent to the class queue…", 0.0]
    progress = interruptible(bar, lambda: (where[1], lead + where[0]))
    seen, attempt, away = 0, 1, None
    while True:
        try:
            status = jobs.status(url, job_id, token)
            if status.attempt > attempt:  # its worker died and the run starts again on another: count afresh
                seen, attempt = 0, status.attempt
            if status.state == "queued":
                where[:] = [status.message, 0.0]
            elif status.state == "running":
                reports = jobs.iterations(url, job_id, token, start=seen)
                seen += len(reports)
                where[:] = running_where(reports[-1] if reports else None, seen, where)
            else:
                break
            away = None
        except (OSError, RedisError):  # Redis restarting: wait for it (it comes back with the queue), then give up
            away = away or time.monotonic()
            if time.monotonic() - away > OUTAGE_S:
                raise
            where[:] = [QUEUE_AWAY, where[1]]
        progress.update()
        if progress.should_stop():  # a click, a reconnect or a page switch: the job goes on without this script run
            box.detached = (url, job_id, token)
            raise progress.interruption
        time.sleep(POLL_S)
    _collect(box, url, job_id, token, status)
    if attempt == 2 and status.state == "finished" and box.notice is None:
        box.notice = ("info", RETRIED_NOTE)


RETRIED_NOTE = ("The class worker that first took this run stopped (killed or out of memory), so the run was put back "
                "at the front of the queue and ran again on another worker; what you see is that second run.")


def running_where(last, seen: int, where: list) -> list:
    """[text, fraction] of the progress bar while the job runs: the latest iteration's report; before the first,
    the warm-up; a poll that finds no new iteration keeps what the bar said."""
    if last is not None:
        run_name = "Speculative decoding" if last.phase == SPECULATIVE else "Plain decoding (the baseline)"
        return [f"On a class worker. {run_name}: {last.done} of {last.goal} tokens", last.done / max(1, last.goal)]
    if seen == 0:
        return ["On a class worker: loading the models and warming up…", 0.0]
    return list(where)


def _collect(box, url: str, job_id: str, token: str, status: jobs.JobStatus) -> None:
    """Move a job that has ended into ``box``: its traces and a notice saying what happened."""
    if status.state in ("failed", "cancelled"):
        box.notice = ("error" if status.state == "failed" else "warning",
                      f"{status.message} Your settings are kept; press Run to try again.")
        return
    result = jobs.result(url, job_id, token)
    if result is None:
        box.notice = ("error", "The class queue lost this run's result. Your settings are kept; press Run again.")
        return
    box.spec, box.plain = result.run.spec, result.run.plain
    if result.cached:
        box.notice = ("info", recorded_note(result))
    elif result.run.stopped_in is not None:
        box.notice = live_view.cancel_notice(result.run)
    elif status.shared:
        box.notice = ("info", "Another learner pressed Run with exactly these settings while this run was on its "
                              "way, so the class ran it once and both pages replay the same run.")


def follow(box, url: str, job_id: str, token: str, interruptible, first_text: str, lead: str = "") -> None:
    """Follow a job under a progress bar (first saying ``first_text``, then ``lead`` before each report) and its Cancel
    button until it ends; a job an interrupted script run left running is followed again the same way
    (:func:`app.live.run.resume_class_run`)."""
    holder = st.empty()
    with holder.container():
        bar = st.progress(0.0, text=first_text)
        st.button("Cancel", key=state.LIVE_CANCEL_BUTTON)
    try:
        _follow(box, url, job_id, token, bar, interruptible, lead)
    except (OSError, RedisError, records.NotYourJob) as error:  # Redis went away while the run was on it, or came
        # back empty after a restart (its jobs are gone)
        box.notice = ("error", LOST_QUEUE.format(url=url, error=error))
    holder.empty()


def cancel(box, url: str, job_id: str, token: str) -> None:
    """Cancel pressed (or a new Run, or another page opened): take the job off the queue, or stop it at the end of its
    iteration and keep what it recorded. No UI call here; the script run shows the notice."""
    answer = jobs.cancel(url, job_id, token)
    if answer == "left":
        box.notice = ("warning", f"{jobs.LEFT} Your settings are kept.")
        return
    if answer == "cancelled":
        box.notice = ("warning", "Cancelled while waiting in the class queue; your settings are kept.")
        return
    deadline = time.monotonic() + STOP_WAIT_S
    status = jobs.status(url, job_id, token)
    while status.state in ("queued", "running") and time.monotonic() < deadline:
        time.sleep(POLL_S)
        status = jobs.status(url, job_id, token)
    _collect(box, url, job_id, token, status)
