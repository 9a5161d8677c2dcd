"""The class queue as every page sees it: whether this app serves a class (``SPECSIM_QUEUE_URL``), which queue on
that server, how many runs may wait, and the session's secret that binds its jobs to it.

The live page (:mod:`app.live.classmode`) sends runs to the queue and the measuring pages (:mod:`app.classtask`)
send their measurements; both read these settings here, and none reaches into another page's package for them.
"""

from __future__ import annotations

import secrets

from specsim.core import environment

QUEUE_ENV = environment.env_name("queue_url")
QUEUE_NAME_ENV = environment.env_name("queue_name")  # the queue's name on that server (default records.QUEUE)
QUEUE_LIMIT_ENV = environment.env_name("queue_limit")  # how many runs may wait (default jobs.MAX_QUEUED)
POLL_S = 0.25  # how often a page asks the queue where its job is
OUTAGE_S = 20.0  # how long a page waits for the class queue to answer again (a restarting Redis) before giving up
QUEUE_AWAY = "The class queue is not answering (it may be restarting); waiting for it to come back…"


def queue_url() -> str | None:
    """The class queue's Redis URL, or None: runs stay in this process."""
    return environment.current().queue_url


def queue_name() -> str:
    """The queue's name on that server: the class's workers serve it."""
    from specsim.classroom import records  # here: a single learner's install has no RQ

    return environment.current().queue_name or records.QUEUE


def queue_limit() -> int:
    """How many runs may wait in the class queue before Run says it is full."""
    from specsim.classroom import jobs

    limit = environment.current().queue_limit
    return jobs.MAX_QUEUED if limit is None else limit


def session_token() -> str:
    """This session's secret: its jobs are bound to it, so no other learner can read or cancel them."""
    from app import state  # here: reading the queue's settings needs no Streamlit

    token = state.get(state.LIVE_SESSION_TOKEN)
    if not token:
        token = secrets.token_urlsafe(24)
        state.put(state.LIVE_SESSION_TOKEN, token)
    return token
