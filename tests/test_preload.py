"""Issue 62 (1): on a fresh replica, learners whose first figures drew while another session imported pandas got
"partially initialized module 'pandas' has no attribute 'Series'". Sessions that start as app/main.py does
(:func:`app.preload.modules`) never see pandas half imported. Each case runs in a fresh interpreter, where pandas is
not imported yet: one thread imports it while four "sessions" build figures with numpy data until it is done."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT

RACE = """
import sys, threading
sys.path.insert(0, {root!r})
import numpy as np
import plotly.graph_objects as go
from app import preload
errors, done = [], threading.Event()

def importer():
    import pandas  # noqa: F401  (a session's first table)
    done.set()

def session():
    try:
        if {preload}:
            preload.modules()
        while not done.is_set():
            fig = go.Figure()
            fig.add_bar(x=np.array(["a", "b"]), y=np.array([1.0, 2.0]))
            fig.to_plotly_json()
    except Exception as error:
        errors.append(repr(error))

threads = [threading.Thread(target=importer)] + [threading.Thread(target=session) for _ in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(len(errors), errors[:1])
"""


def _race(preload: bool) -> str:
    out = subprocess.run([sys.executable, "-c", RACE.format(root=str(ROOT), preload=preload)], capture_output=True,
                         text=True, timeout=120, check=True)
    return out.stdout.strip()


def test_sessions_that_preload_never_see_pandas_half_imported():
    assert _race(preload=False).startswith(("1 ", "2 ", "3 ", "4 ")), "the race this guards against is real"
    for _ in range(3):
        assert _race(preload=True) == "0 []"

