"""Every ``st.session_state`` key specsim uses, with its default, in one place.

Pages never spell a session-state key as a string: they use the constants here, and call
:func:`init` once per script run so every key exists with its default.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from specsim import defaults

# ---- calculator ------------------------------------------------------------------------------
CALC_K = "calc_k"
CALC_ALPHA_PCT = "calc_alpha_pct"
CALC_DRAFT_COST = "calc_draft_cost"
CALC_VERIFY_COST = "calc_verify_cost"  # one target pass over K+1 tokens, in one-token passes
CALC_URL_LAST = "calc_url_last"  # the calculator's query parameters as last written to the URL

# ---- live decoding (pages/live.py) -------------------------------------------------------------
# The recorded runs: generation writes them once, every playback control only reads them.
LIVE_TRACE = "live_trace"  # specsim.trace.Trace of the speculative run, or None
LIVE_PLAIN = "live_plain"  # Trace of the plain baseline run, or None (not run, or cancelled)
LIVE_NOTICE = "live_notice"  # (level, message) shown above the replay, e.g. after a cancel
LIVE_RUN = "live_run_box"  # app.live_run.RunBox of the generation in progress or just stopped, else None
# Playback
LIVE_STEP = "live_step"  # index of the iteration on screen (0-based)
LIVE_STEP_SLIDER = "live_step_slider"  # prefix of the jump slider's widget key, one per step (app.widgets.playback)
LIVE_PLAYING = "live_playing"
LIVE_SPEED = "live_speed"  # iterations per second while playing
LIVE_LAST_TICK = "live_last_tick"  # time.monotonic() of the last automatic step
LIVE_SLOT = "live_slot"  # the slot t+i whose alternatives are charted
# Run settings (widget keys; the URL mirrors them)
LIVE_PAIR = "live_pair"
LIVE_CUSTOM_TARGET = "live_custom_target"
LIVE_CUSTOM_DRAFT = "live_custom_draft"
LIVE_DRAFTER = "live_drafter"
LIVE_PROMPT = "live_prompt"
LIVE_K = "live_k"
LIVE_TEMPERATURE = "live_temperature"
LIVE_MAX_NEW = "live_max_new"
LIVE_SEED = "live_seed"
LIVE_URL_READ = "live_url_read"  # the page's query parameters were applied once this session

DEFAULTS: dict[str, Any] = {
    CALC_K: 4,
    CALC_ALPHA_PCT: 70,
    CALC_DRAFT_COST: 0.13,
    LIVE_TRACE: None,
    LIVE_PLAIN: None,
    LIVE_NOTICE: None,
    LIVE_RUN: None,
    LIVE_STEP: 0,
    LIVE_PLAYING: False,
    LIVE_SPEED: 2.0,
    LIVE_LAST_TICK: None,
    LIVE_SLOT: 1,
    LIVE_URL_READ: False,
    LIVE_PAIR: "bundled",
    LIVE_CUSTOM_TARGET: "",
    LIVE_CUSTOM_DRAFT: "",
    LIVE_DRAFTER: defaults.DEFAULT_DRAFTER,
    LIVE_PROMPT: "The quick brown fox jumps over the lazy dog. The quick brown fox",
    LIVE_K: defaults.DEFAULT_K,
    LIVE_TEMPERATURE: 0.0,
    LIVE_MAX_NEW: 40,
    LIVE_SEED: "0",  # the seed box's text (app.live_params.seed_from_text)
    CALC_VERIFY_COST: 1.0,
    CALC_URL_LAST: None,
}

# ---- quiz (issue 5) ------------------------------------------------------------------------------
# Progress lives in plain keys, never widget keys: Streamlit drops the state of widgets that are not
# rendered, so widget-keyed progress would vanish when the learner visits another page.
SEQ_ATTEMPT = "quiz_seq_attempt"  # specsim.quiz.SequenceAttempt, None until the page first runs
SEQ_SELECTED = "quiz_seq_selected"  # piece id picked in the tray (tap mode), or None
SEQ_MODE = "quiz_seq_mode"  # one of SEQ_MODES
SEQ_DRAG_VERSION = "quiz_seq_drag_version"  # bumped when the order changes outside the drag widget
KQ_ATTEMPT = "quiz_kq_attempt"  # specsim.quiz.KnowledgeAttempt, None until the page first runs
SEQ_MODES = ("Tap", "Drag")
# Widget keys: their state may vanish between pages; no progress depends on them.
SEQ_MODE_WIDGET = "quiz_seq_mode_widget"
SEQ_TRAY_BUTTON = "quiz_seq_tray_"  # + piece id
SEQ_SLOT_BUTTON = "quiz_seq_slot_"  # + slot number, from 1
SEQ_CHECK_BUTTON = "quiz_seq_check"
SEQ_RESET_BUTTON = "quiz_seq_reset"
KQ_OPTION_BUTTON = "quiz_kq_option_"  # + the option's index in the data file, not its shown position
KQ_NEXT_BUTTON = "quiz_kq_next"
KQ_RETAKE_BUTTON = "quiz_kq_retake"


def seq_drag_key(version: int) -> str:
    """Key of the drag-and-drop widget; a new version remounts it showing the current order."""
    return f"quiz_seq_drag_{version}"


DEFAULTS.update(
    {
        SEQ_ATTEMPT: None,
        SEQ_SELECTED: None,
        SEQ_MODE: SEQ_MODES[0],
        SEQ_DRAG_VERSION: 0,
        KQ_ATTEMPT: None,
    }
)


# ---- variants (issue 7) ----------------------------------------------------------------------------
VAR_PROMPT = "var_prompt"  # label of the chosen demo prompt (a key of specsim.variants.compare.DEMO_PROMPTS)
VAR_MAX_NEW = "var_max_new"  # tokens generated per variant
VAR_RESULTS = "var_results"  # {(prompt label, max_new): VariantsPageData}: each prompt runs once per session
VAR_RUN_BUTTON = "var_run"
VAR_LOOKUP_BUTTON = "var_lookup_all"
VAR_STEP = "var_step"  # which Medusa / lookahead step the learner inspects

DEFAULTS.update({VAR_PROMPT: None, VAR_MAX_NEW: 24, VAR_RESULTS: dict, VAR_STEP: 1})


# ---- teaching panels (issue 14) ----------------------------------------------------------------------
LIVE_AUTORUN = "live_autorun"  # True for one script run after "run an example where it wins" was clicked
LIVE_WIN_BUTTON = "live_win_example"
VERIFY_CURVE = "verify_curve"  # specsim.measure.VerifyCurve measured on this machine, or None
VERIFY_BUTTON = "verify_measure"
VERIFY_BATCH = "verify_batch"  # the batch size of the batch-size model
DOMAIN_RESULTS = "domain_results"  # specsim.domains.DomainRun rows, or None
DOMAIN_BUTTON = "domain_measure"
PQ_WEIGHTS = "pq_weights"  # the why-unchanged page: the draft's weight for each token (a tuple of ints)
PQ_SEED = "pq_seed"  # seed of its 10,000 sampled speculative steps


def pq_slider_key(index: int) -> str:
    """Widget key of the why-unchanged page's slider for token ``index``."""
    return f"pq_q_{index}"

DEFAULTS.update({LIVE_AUTORUN: False, VERIFY_CURVE: None, VERIFY_BATCH: 1, DOMAIN_RESULTS: None,
                 PQ_WEIGHTS: (10, 40, 15, 5, 30), PQ_SEED: 0})


def init() -> None:
    """Create every missing key with its default (never overwrites what the user set)."""
    for key, value in DEFAULTS.items():
        if key not in st.session_state:
            st.session_state[key] = value() if callable(value) else value


def get(key: str) -> Any:
    init()
    return st.session_state[key]


def put(key: str, value: Any) -> None:
    st.session_state[key] = value


def widget_key(key: str) -> str:
    """The key of the widget that edits ``key``.

    Streamlit forgets a widget's state when its page is not shown, so a page copies the value into
    the widget before drawing it and stores it back under ``key`` after, which survives navigation.
    """
    return f"widget_{key}"
