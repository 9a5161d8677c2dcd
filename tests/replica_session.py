"""One learner's session on a class replica, in a process of its own (issue 52, item 5): run by
``tests/test_live_classmode.py`` with ``SPECSIM_QUEUE_URL`` set, it opens every page through the app's navigation and
presses every button that runs a model (a live run, the verify page's v(n), the variants comparison, *Under the
hood*'s K policies and transformers snippet, *In practice*'s domains, the whole-block check), each served by a class
worker. It prints one JSON line: what each action produced, the page errors, the torch and transformers modules this
process imported, its own memory after each action (RssAnon) and, for information, its peak resident total (VmHWM)."""

from __future__ import annotations

import builtins
import json
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app import state  # noqa: E402
from app.urlcodec import number_text  # noqa: E402

MAIN = str(ROOT / "app" / "main.py")


def open_page(script: None = None, timeout: float = 300):
    """The app through AppTest, as tests.conftest.open_page opens it, without importing pytest (a replica does not)."""
    from streamlit.testing.v1 import AppTest

    return AppTest.from_file(MAIN, default_timeout=timeout).run()

PAGES = ("home.py", "calculator.py", "live.py", "hood.py", "unchanged.py", "verify.py",
         "variants.py", "practice.py", "interview.py", "quiz.py", "sequence.py")


FIRST_HEAVY_IMPORT: list[str] = []  # where this process first imported torch or transformers: the failure's reason
_import = builtins.__import__


def _watch(name, *args, **kwargs):
    if not FIRST_HEAVY_IMPORT and name.split(".")[0] in ("torch", "transformers"):
        FIRST_HEAVY_IMPORT.extend(f"{f.filename.removeprefix(str(ROOT) + '/')}:{f.lineno}"
                                  for f in traceback.extract_stack()[:-1] if f.filename.startswith(str(ROOT)))
    return _import(name, *args, **kwargs)


builtins.__import__ = _watch


MEMORY: dict[str, float] = {}  # the process's own resident memory (MB) after each action
SECONDS: dict[str, float] = {}  # wall seconds from the previous action's end to this one's (for -s runs)
_LAST = [time.perf_counter()]

# The process's own memory is its anonymous resident memory (RssAnon): what it allocated. Its resident total (VmRSS)
# also counts the pages of the shared libraries it maps, which every replica shares through the page cache, and how
# many of those count depends on what the page cache holds: the same session measured 167 MB in one checkout and
# 205 MB in a fresh clone whose libraries had just been written, with the same 88 MB of its own at that point.


def _problems(at, where: str) -> list[str]:
    MEMORY[where] = _status("RssAnon:")
    now = time.perf_counter()
    SECONDS[where], _LAST[0] = round(now - _LAST[0], 2), now
    return [f"{where}: {e.value}" for e in (*at.exception, *at.error)]


def _status(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def peak_mb() -> float:
    return _status("VmHWM:")


def main() -> dict:
    out: dict = {"problems": []}
    at = open_page(None, timeout=300)
    for page in PAGES:  # every page drawn once, as a learner clicking through the sidebar
        at.switch_page(str(ROOT / "pages" / page)).run()
        out["problems"] += _problems(at, page)

    at.switch_page(str(ROOT / "pages" / "live.py")).run()
    at.text_area(key=state.widget_key(state.LIVE_PROMPT)).set_value("red green blue red green blue red green")
    at.radio(key=state.widget_key(state.LIVE_DRAFTER)).set_value("prompt_lookup")
    for key, value in ((state.LIVE_K, "2"), (state.LIVE_MAX_NEW, "4"), (state.LIVE_TEMPERATURE, number_text(0.0))):
        at.text_input(key=state.widget_key(key)).set_value(value)
    at.button(key=state.LIVE_RUN_BUTTON).click().run(timeout=300)
    out["problems"] += _problems(at, "live run")
    spec = at.session_state[state.LIVE_TRACE]
    out["live"] = None if spec is None else {"tokens": spec.n_generated, "drafter": spec.settings.drafter}

    at.switch_page(str(ROOT / "pages" / "verify.py")).run()
    at.button(key=state.VERIFY_BUTTON).click().run(timeout=300)
    out["problems"] += _problems(at, "verify")
    curve = at.session_state[state.VERIFY_CURVE]
    caption = any(m.value.startswith("Measured on a class worker:") for m in at.markdown)  # in "How this was measured"
    out["verify"] = None if curve is None else {"ns": list(curve.ns), "v1": curve.v[0], "repeats": curve.repeats,
                                                "running": at.session_state[state.VERIFY_RUNNING], "caption": caption}

    at.session_state[state.VAR_MAX_NEW] = 8  # the slider's smallest: the worker runs every variant on 8 tokens
    at.switch_page(str(ROOT / "pages" / "variants.py")).run()
    at.button(key=state.VAR_RUN_BUTTON).click().run(timeout=600)
    out["problems"] += _problems(at, "variants")
    results = at.session_state[state.VAR_RESULTS]
    out["variants"] = {key[0]: sorted(r.key for r in data.comparison.results if r.identical)
                       for key, data in results.items()}
    out["jacobi_named"] = all(  # lookahead's windows, named with the texts the worker decoded
        t in data.comparison.texts for data in results.values()
        for s in data.comparison.by_key("lookahead").details.steps for t in s.window_before + s.window_after)

    at.switch_page(str(ROOT / "pages" / "hood.py")).run()
    at.button(key=state.HOOD_POLICIES_BUTTON).click().run(timeout=300)
    out["problems"] += _problems(at, state.HOOD_POLICIES_BUTTON)
    at.switch_page(str(ROOT / "pages" / "practice.py")).run()  # "Turn it on" and its snippet run live there
    at.button(key=state.HOOD_SNIPPET_BUTTON).click().run(timeout=300)
    out["problems"] += _problems(at, state.HOOD_SNIPPET_BUTTON)
    from specsim.measure import hf_assisted as hf

    _, snippet = at.session_state[state.HOOD_SNIPPET]
    out["snippet"] = {"tokens": sorted(snippet.tokens), "ours_identical": snippet.first_difference(
        hf.OURS_LOOKUP, hf.OURS_PLAIN) is None, "expected": sorted({hf.HF_LOOKUP, hf.HF_PLAIN, hf.OURS_LOOKUP,
                                                                     hf.OURS_PLAIN})}

    at.switch_page(str(ROOT / "pages" / "practice.py")).run()
    at.button(key=state.DOMAIN_BUTTON).click().run(timeout=300)
    out["problems"] += _problems(at, "domains")
    out["domains"] = [r.checked for r in at.session_state[state.DOMAIN_RESULTS] or []]

    at.switch_page(str(ROOT / "pages" / "unchanged.py")).run()
    at.button(key=state.PQ_BLOCK_BUTTON).click().run(timeout=300)
    out["problems"] += _problems(at, "whole-block check")
    check = at.session_state[state.PQ_BLOCK_CHECK]
    out["blockcheck"] = None if check is None else check.runs

    out["modules"] = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "transformers"))[:10]
    out["first_import"] = FIRST_HEAVY_IMPORT[-8:]
    out["peak_mb"], out["memory"], out["resident_peak_mb"] = max(MEMORY.values()), MEMORY, peak_mb()
    out["seconds"] = SECONDS
    return out


if __name__ == "__main__":
    print(json.dumps(main()))
