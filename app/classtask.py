"""Class mode for the pages' measurements: the verify page's v(n) and the variants comparison run as tasks on the
class queue (:mod:`specsim.classroom.tasks`), and the page follows one with a progress bar, as the live page follows a
run.

:func:`run_task` returns the task's value, or None after a problem it has shown. A click during the wait stops
the script run (Streamlit raises at the next progress update): the task is cancelled on the queue, and the stop
goes on, so the page's own "cancelled" mark explains it on the next run, as in-process.
"""

from __future__ import annotations

import time

import streamlit as st

from app import classqueue

try:  # the exceptions Streamlit raises in the script thread to stop or rerun it
    from streamlit.runtime.scriptrunner_utils.exceptions import ScriptControlException
except ImportError:  # pragma: no cover - older layouts
    from streamlit.runtime.scriptrunner.exceptions import ScriptControlException  # type: ignore


def active() -> bool:
    """Whether this app serves a class (SPECSIM_QUEUE_URL set): measurements then run on the class's workers."""
    return classqueue.queue_url() is not None


def run_task(kind: str, params: dict):
    """Submit a task of ``kind`` and wait for it with a progress bar; its value, or None after a message."""
    from redis.exceptions import ConnectionError as RedisConnectionError  # a class's install only (requirements-class)
    from redis.exceptions import RedisError

    from specsim.classroom import records, tasks

    url, token = classqueue.queue_url(), classqueue.session_token()
    try:
        job_id = tasks.submit(url, kind, params, token, queue=classqueue.queue_name(),
                              max_queued=classqueue.queue_limit())
    except records.JobError as error:
        st.error(str(error))
        return None
    except (OSError, RedisConnectionError) as error:
        st.error(f"The class queue at {url} cannot be reached ({error}). Ask whoever runs the class to start it.")
        return None
    except Exception as error:  # noqa: BLE001 - redis' own errors arrive as RedisError: a message, never a traceback
        st.error(f"The class queue refused the measurement: {type(error).__name__}: {error}.")
        return None
    bar = st.progress(0.0, text="Sent to the class queue…")
    try:
        return _follow(url, job_id, token, bar)
    except (OSError, RedisError, records.NotYourJob) as error:  # Redis went away, or came back empty after a restart
        bar.empty()
        st.error(f"The class queue at {url} stopped answering while this measurement was on it ({error}); a restarted "
                 "queue forgets what it held. Press the button to try again once it is back.")
        return None


def _follow(url: str, job_id: str, token: str, bar):
    """Poll the task until it ends; its value, or None after a message."""
    from redis.exceptions import RedisError

    from specsim.classroom import jobs, tasks

    away = None
    try:
        while True:
            try:
                status = jobs.status(url, job_id, token)
                if status.state == "queued":
                    bar.progress(0.0, text=status.message)
                elif status.state == "running":
                    fraction, text = tasks.progress(url, job_id, token) or (0.0, "Loading the bundled target")
                    bar.progress(min(1.0, max(0.0, fraction)), text=f"On a class worker: {text}")
                else:
                    break
                away = None
            except (OSError, RedisError):  # Redis restarting: wait for it a while (it comes back with the queue)
                away = away or time.monotonic()
                if time.monotonic() - away > classqueue.OUTAGE_S:
                    raise
                bar.progress(0.0, text=classqueue.QUEUE_AWAY)
            time.sleep(classqueue.POLL_S)
    except ScriptControlException:  # a click: leave the queue (or stop the task), then let the stop go on
        jobs.cancel(url, job_id, token)
        raise
    bar.empty()
    if status.state != "finished":
        getattr(st, "error" if status.state == "failed" else "warning")(
            f"{status.message} Press the button to try again.")
        return None
    value = tasks.result(url, job_id, token)
    if value is None:
        st.error("The class queue lost this measurement's result; press the button to try again.")
    return value


__all__ = ["ScriptControlException", "active", "run_task"]
