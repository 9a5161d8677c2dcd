"""scripts/class_faults.py's reading of what a learner's page showed, and its table (the drill itself takes minutes
and real processes; it is not part of the test run)."""

from __future__ import annotations

import importlib.util
import sys

from app.live.classmode import FOUND_AGAIN, REATTACHED, RETRIED_NOTE
from tests.conftest import ROOT

_spec = importlib.util.spec_from_file_location("specsim_class_faults", ROOT / "scripts" / "class_faults.py")
faults = sys.modules.setdefault("specsim_class_faults", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(faults)


def _look(alerts=(), progress="", exceptions=(), dialogs=(), conn="CONNECTED"):
    return {"alerts": [list(a) for a in alerts], "progress": progress, "exceptions": list(exceptions),
            "dialogs": list(dialogs), "conn": conn, "script": "notRunning", "download": True}


def test_a_quiet_page_is_not_affected():
    seen = faults.Seen()
    seen.add(_look(progress="On a class worker. Speculative decoding: 3 of 16 tokens"))
    seen.add(_look())
    assert not any(faults.verdict(seen).values())


def test_each_notice_counts_once_under_its_own_name():
    seen = faults.Seen()
    seen.add(_look(alerts=[("info", RETRIED_NOTE)]))
    seen.add(_look(alerts=[("info", RETRIED_NOTE)]))  # seen again on the next look: one entry
    assert seen.alerts == [("info", RETRIED_NOTE)]
    assert faults.verdict(seen) == {"error": False, "cancelled": False, "retried": True, "found_again": False,
                                    "unreachable": False, "exception": False}
    seen.add(_look(alerts=[("warning", "Cancelled: the speculative run stopped after 2 iterations")]))
    seen.add(_look(alerts=[("error", "The class queue at redis://x stopped answering while your run was on it")]))
    verdict = faults.verdict(seen)
    assert verdict["cancelled"] and verdict["error"] and not verdict["found_again"]


def test_a_run_found_again_by_its_bar_or_its_notice():
    by_bar, by_notice = faults.Seen(), faults.Seen()
    by_bar.add(_look(progress=FOUND_AGAIN + "On a class worker. Speculative decoding: 1 of 16 tokens"))
    by_notice.add(_look(alerts=[("info", REATTACHED + "it had finished, and here it is.")]))
    assert faults.verdict(by_bar)["found_again"] and faults.verdict(by_notice)["found_again"]


def test_the_app_out_of_reach_and_exception_boxes():
    seen = faults.Seen()
    seen.add(_look(conn="PINGING_SERVER"))
    assert faults.verdict(seen)["unreachable"] and not faults.verdict(seen)["exception"]
    seen.add(_look(exceptions=["ValueError: boom"]))
    assert faults.verdict(seen)["exception"]


def test_tokens_streaming_only_from_the_first_token():
    assert not faults.streaming("On a class worker: loading the models and warming up…")
    assert not faults.streaming("On a class worker. Speculative decoding: 0 of 16 tokens")
    assert faults.streaming("On a class worker. Speculative decoding: 1 of 16 tokens")


def _learner(**flags):
    base = {"error": False, "cancelled": False, "retried": False, "found_again": False, "unreachable": False,
            "exception": False, "done": True, "pressed": 1, "vanished": False}
    return {**base, **flags}


def test_the_row_counts_lost_runs_and_runs_got_by_pressing_run_again():
    learners = [_learner(), _learner(retried=True), _learner(error=True, pressed=2),
                _learner(error=True, pressed=2, done=False),
                _learner(found_again=True, unreachable=True, download_failed=True)]
    r = faults.row("two", learners, 4.25, "0 800 → 810")
    assert (r["learners"], r["affected"], r["lost"], r["retried"], r["errors"], r["pressed_again"],
            r["found_again"], r["cancelled"], r["exceptions"]) == (5, 4, 1, 1, 2, 1, 1, 0, 0)
    lines = faults.table([r]).splitlines()
    assert len(lines) == 3 and lines[0].count("|") == lines[1].count("|") == lines[2].count("|")
    assert lines[2] == "| two | 5 | 4 | 1 | 0 | 1 | 1 | 0 | 2 | 1 | 0 | 1 | 4.2 s | 0 800 → 810 |"
    assert faults.table([faults.row("supervisord", [_learner(done=False)], None, "—")]).splitlines()[2].endswith(
        "| — | — |")


def test_worker_memory_from_proc_status():
    status = "Name:\tpython\nVmRSS:\t  900000 kB\nRssAnon:\t  781250 kB\nRssFile:\t  118750 kB\n"
    assert faults.rss_anon_mb(status) == 800.0
    assert faults.rss_anon_mb("Name:\tkthreadd\n") is None
    assert faults.memory_cell({"worker-0": 800.0, "worker-1": 812.4}, {"worker-0": 640.6, "worker-1": None}) == \
        "0 800 → 641, 1 812 → —"
