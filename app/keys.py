"""Every ``st.session_state`` key and widget key specsim uses, with the defaults, in one place. Pure: no Streamlit.

Pages and widgets never spell a key as a string: they use the constants here (through
:mod:`app.state`, which reads and writes them). Modules that must stay importable without
Streamlit (URL codecs, sentences) import this module instead of :mod:`app.state`. A page's settings and
their defaults are defined once, as dataclasses in :mod:`app.settings`; the defaults here are read from them.
"""

from __future__ import annotations

from typing import Any

from app.settings import CalcSettings, LiveSettings, UnchangedSettings, VariantsSettings, VerifySettings
from app.urlcodec import number_text
from specsim.core import environment, published

_CALC, _LIVE, _UNCHANGED = CalcSettings(), LiveSettings(), UnchangedSettings()
_VERIFY, _VARIANTS = VerifySettings(), VariantsSettings()


def widget_key(key: str) -> str:
    """The key of the widget that edits ``key``.

    Streamlit forgets a widget's state when its page is not shown, so a page copies the value into
    the widget before drawing it and stores it back under ``key`` after, which survives navigation.
    """
    return f"widget_{key}"


# ---- calculator ------------------------------------------------------------------------------
CALC_K = "calc_k"
CALC_ALPHA_PCT = "calc_alpha_pct"
CALC_DRAFT_COST = "calc_draft_cost"
CALC_VERIFY_COST = "calc_verify_cost"  # one target pass over K+1 tokens, in one-token passes
CALC_URL_VISIT = "calc_url_visit"  # the page visit (PAGE_VISIT) in which the calculator last read the URL
CALC_V_NOTICE = "calc_v_notice"  # why the v box shows another value than was typed into it, or None
CALC_TAB = "calc_tab"  # the calculator's open tab, by label (one of CALC_TABS)
CALC_TABS = ("One loop", "Choosing K", "When v grows with K", "Where it pays off", "The formulas",
             "Backwards from a paper")
# Charts (Streamlit needs a unique key per element)
CALC_ITERATION_CHART = "calc_iteration"
CALC_SWEEP_CHART = "calc_sweep"
CALC_WASTE_CHART = "calc_waste"
CALC_HEATMAP_CHART = "calc_heatmap"
CALC_PREFIX_CHART = "calc_prefix_distribution"
CALC_V_CURVE, CALC_V_CURVE_CHART = "calc_v_curve", "calc_v_curve_chart"  # the curve of v(K + 1) picked
CALC_POSITION_SOURCE = "calc_position_source"  # where the acceptance by position comes from (None: the first)
CALC_REPORTED_SPEEDUP = "calc_reported_speedup"  # the speedup a paper reported, for back-solving α
CALC_ONE_PASS_COST = "calc_one_pass_cost"  # a drafter that writes all K guesses in one pass: that pass's cost
CALC_ONE_PASS_CHART = "calc_one_pass"

# ---- live decoding (pages/live.py) -------------------------------------------------------------
# The recorded runs: generation writes them once, every playback control only reads them.
LIVE_TRACE = "live_trace"  # specsim.core.trace.Trace of the speculative run, or None
LIVE_PLAIN = "live_plain"  # Trace of the plain baseline run, or None (not run, or cancelled)
LIVE_NOTICE = "live_notice"  # (level, message) shown above the replay, e.g. after a cancel
LIVE_RUN = "live_run_box"  # app.live.run.RunBox of the generation in progress or just stopped, else None
LIVE_SESSION_TOKEN = "live_session_token"  # class mode: the secret this session's queued runs are bound to
# Playback
LIVE_STEP = "live_step"  # index of the iteration on screen (0-based)
LIVE_STEP_SLIDER = "live_step_slider"  # prefix of the jump slider's widget key, one per step (app.live.playback)
LIVE_PLAYING = "live_playing"
LIVE_SPEED = "live_speed"  # iterations per second while playing
LIVE_LAST_TICK = "live_last_tick"  # time.monotonic() of the last automatic step
LIVE_STEP_SEEN = "live_step_seen"  # hidden box holding the step drawn; the browser reports it with every click
LIVE_PRESSES = "live_presses"  # playing-time Back and Forward presses applied since ▶ Play (app.live.playback)
LIVE_SLOT = "live_slot"  # the slot t+i whose alternatives are charted
LIVE_RECORDING = "live_recording"  # name of the shipped recording on screen before a run (specsim.lesson.recorded)
GUESS_LOOPS = "guess_loops"  # Be the draft: {recording key: [specsim.lesson.guess.GuessLoop, ...]} of this session
GUESS_PICK = "guess_pick_"  # + slot number: the learner's pick for that slot
GUESS_CHECK_BUTTON, GUESS_RESET_BUTTON = "guess_check", "guess_reset"
# Run settings (widget keys; the URL mirrors them)
LIVE_PAIR = "live_pair"
LIVE_CUSTOM_TARGET = "live_custom_target"
LIVE_CUSTOM_DRAFT = "live_custom_draft"
LIVE_DRAFTER = "live_drafter"
LIVE_POLICY = "live_policy"  # the K policy (specsim.core.kpolicy.LIVE_POLICIES)
LIVE_PROMPT = "live_prompt"
LIVE_K = "live_k"
LIVE_TEMPERATURE = "live_temperature"
LIVE_MAX_NEW = "live_max_new"
LIVE_SEED = "live_seed"
LIVE_URL_READ = "live_url_read"  # the page's query parameters were applied once this session
# Buttons, outputs and charts
LIVE_RUN_BUTTON = "live_run"
LIVE_CANCEL_BUTTON = "live_cancel"
LIVE_FRESH_BOX = "live_fresh"  # "Run fresh": skip this machine's run cache for the next Run (app.live.cache)
LIVE_EXAMPLE_BUTTON = "live_example_"  # + the example's name
LIVE_PLAY_BUTTON = "live_play"
LIVE_RESTART_BUTTON = "live_restart"
LIVE_BACK_BUTTON = "live_back"
LIVE_FORWARD_BUTTON = "live_forward"
LIVE_END_BUTTON = "live_end"
LIVE_ALTERNATIVES_CHART = "live_alt_"  # + step and slot
LIVE_RESIDUAL_CHART = "live_residual_"  # + step
LIVE_KEPT_SHARE_CHART = "live_by_pos"
LIVE_KEPT_HISTOGRAM_CHART = "live_kept_hist"
LIVE_TIMELINE_CHART = "live_timeline"
LIVE_EXPORT_BUTTON = "live_export"
LIVE_EXPORT_PLAIN_BUTTON = "live_export_plain"

DEFAULTS: dict[str, Any] = {
    CALC_K: _CALC.k,
    CALC_REPORTED_SPEEDUP: f"{published.CHEN_XSUM.speedup:.2f}",  # a paper's figure to start from (as typed)
    CALC_V_CURVE: None,  # None: the first curve offered (the measured one when there is one)
    CALC_POSITION_SOURCE: None,
    CALC_ONE_PASS_COST: _CALC.draft_cost,
    CALC_ALPHA_PCT: _CALC.alpha_pct,
    CALC_DRAFT_COST: _CALC.draft_cost,
    LIVE_TRACE: None,
    LIVE_PLAIN: None,
    LIVE_NOTICE: None,
    LIVE_RUN: None,
    LIVE_SESSION_TOKEN: None,
    LIVE_STEP: 0,
    LIVE_PLAYING: False,
    LIVE_SPEED: 2.0,
    LIVE_LAST_TICK: None,
    LIVE_PRESSES: (),
    LIVE_SLOT: 1,
    LIVE_RECORDING: "prose_run",  # the typical run first (specsim.lesson.recorded.RECIPES)
    GUESS_LOOPS: dict,
    LIVE_URL_READ: False,
    LIVE_PAIR: _LIVE.pair,
    LIVE_CUSTOM_TARGET: _LIVE.target,
    LIVE_CUSTOM_DRAFT: _LIVE.draft,
    LIVE_DRAFTER: _LIVE.drafter,
    LIVE_POLICY: _LIVE.policy,
    LIVE_PROMPT: _LIVE.prompt,
    # the number boxes hold text (app.live.params.TEXT_BOXES)
    LIVE_K: None,  # None until the live page first runs: it starts at this machine's measured K
    LIVE_TEMPERATURE: number_text(_LIVE.temperature),
    LIVE_MAX_NEW: str(_LIVE.max_new_tokens),
    LIVE_SEED: str(_LIVE.seed),
    CALC_VERIFY_COST: _CALC.verify_cost,
    CALC_URL_VISIT: None,
    CALC_V_NOTICE: None,
    CALC_TAB: CALC_TABS[0],
}

# ---- navigation ------------------------------------------------------------------------------------
PAGE = "page"  # url path of the page the latest script run showed
PAGE_VISIT = "page_visit"  # counts page visits: a new one starts when another page runs than the run before
PAGES_SEEN = "pages_seen"  # url paths of the pages opened this session (the sidebar's progress)
DEFAULTS.update({PAGE: None, PAGE_VISIT: 0, PAGES_SEEN: frozenset})

# ---- quiz ----------------------------------------------------------------------------------------
# Progress lives in plain keys, never widget keys: Streamlit drops the state of widgets that are not
# rendered, so widget-keyed progress would vanish when the learner visits another page.
SEQ_ATTEMPT = "quiz_seq_attempt"  # specsim.lesson.quiz_attempts.SequenceAttempt, None until the page first runs
SEQ_SELECTED = "quiz_seq_selected"  # piece id picked in the tray (tap mode), or None
SEQ_MODE = "quiz_seq_mode"  # one of SEQ_MODES
SEQ_DRAG_VERSION = "quiz_seq_drag_version"  # bumped when the order changes outside the drag widget
KQ_ATTEMPT = "quiz_kq_attempt"  # specsim.lesson.quiz_attempts.KnowledgeAttempt, None until the page first runs
SEQ_MODES = ("Tap", "Drag")
# Widget keys: their state may vanish between pages; no progress depends on them.
SEQ_MODE_WIDGET = widget_key(SEQ_MODE)
SEQ_TRAY_BUTTON = "quiz_seq_tray_"  # + piece id
SEQ_SLOT_BUTTON = "quiz_seq_slot_"  # + slot number, from 1
SEQ_CHECK_BUTTON = "quiz_seq_check"
SEQ_RESET_BUTTON = "quiz_seq_reset"
KQ_OPTION_BUTTON = "quiz_kq_option_"  # + the option's index in the data file, not its shown position
KQ_NEXT_BUTTON = "quiz_kq_next"
KQ_RETAKE_BUTTON = "quiz_kq_retake"
IV_TICKED = "interview_ticked"  # {interview question id: frozenset of the key points the learner ticked}
IV_POINT_CHECKBOX = "interview_point_"  # + question id + "_" + the point's index (a widget key)
IV_SHOWN = "interview_shown"  # frozenset of the interview question ids whose model answer the learner has opened
IV_SHOW_BUTTON = "interview_show_"  # + question id: the button that opens a model answer
EX_SEED = "exercise_seed"  # the seed of the worked exercises' numbers, None until the knowledge check page first runs
EX_VERDICTS = "exercise_verdicts"  # {exercise name: (verdict, the learner's answer as read)}, cleared by new numbers
EX_INPUT = "exercise_input_"  # + exercise name (+ "_" + token for the residual): a learner's answer box (a widget)
EX_CHECK_BUTTON = "exercise_check_"  # + exercise name
EX_NEW_BUTTON = "exercise_new"


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
        IV_TICKED: dict,
        IV_SHOWN: frozenset,
        EX_SEED: None,
        EX_VERDICTS: dict,
    }
)


# ---- variants ------------------------------------------------------------------------------------
VAR_PROMPT = "var_prompt"  # label of the chosen demo prompt (a key of specsim.measure.compare_variants.DEMO_PROMPTS)
VAR_MAX_NEW = "var_max_new"  # tokens generated per variant
VAR_RESULTS = "var_results"  # {(prompt label, max_new): VariantsPageData}: each prompt runs once per session
VAR_RUN_BUTTON = "var_run"
VAR_LOOKUP_BUTTON = "var_lookup_all"
VAR_STEP = "var_step"  # which Medusa / lookahead step the learner inspects
VAR_RUNNING = "var_running"  # (prompt label, max_new) of the run in progress; a stopped run leaves it behind
VAR_NOTICE = "var_notice"  # what the page says about the last run (a cancel), shown until the next run

DEFAULTS.update({VAR_PROMPT: None, VAR_MAX_NEW: _VARIANTS.max_new, VAR_RESULTS: dict, VAR_STEP: _VARIANTS.step,
                 VAR_RUNNING: None, VAR_NOTICE: None})



# ---- teaching panels -----------------------------------------------------------------------------
LIVE_AUTORUN = "live_autorun"  # True for one script run after "run an example where it wins" was clicked
LIVE_WIN_BUTTON = "live_win_example"
VERIFY_CURVE = "verify_curve"  # specsim.measure.passcost.VerifyCurve measured on this machine, or None
VERIFY_BUTTON = "verify_measure"
VERIFY_BATCH = "verify_batch"  # the batch size of the batch-size model
VERIFY_CONTEXT = "verify_context"  # the batch-size model's context length (cached tokens per sequence)
VERIFY_RUNNING = "verify_running"  # True while v(n) is being measured; a measurement stopped midway leaves it behind
DOMAIN_RESULTS = "domain_results"  # specsim.lesson.domains.DomainResult rows, or None
DOMAIN_BUTTON = "domain_measure"
PQ_WEIGHTS = "pq_weights"  # the why-unchanged page: the draft's weight for each token (a tuple of ints)
PQ_SEED = "pq_seed"  # seed of its 10,000 sampled speculative steps (the last one accepted)
PQ_SEED_TEXT = "pq_seed_text"  # the seed box, as typed
# specsim.lesson.blockcheck.BlockCheck of the whole-block check, or None before it runs
PQ_BLOCK_CHECK = "pq_block_check"
PQ_BLOCK_BUTTON = "pq_block_run"
PQ_TOP_K, PQ_TOP_P = "pq_top_k", "pq_top_p"  # the why-unchanged page's cut: top-k and top-p sliders (widget keys)


# Buttons, inputs and charts of the teaching panels, page by page
HOME_LOOP_CHART = "home_loop"
HOME_ONE_PASS_CHART = "home_one_pass"  # one pass, a next-token prediction at every position
CALC_KEPT_SHARE_CHART, CALC_USE_MEASURED_V_BUTTON = "calc_kept_share", "calc_use_measured_v"
CALC_POSITION_CHART = "calc_position"
WHY_LOOP_COST_CHART = "why_loop_cost"
PQ_BARS_CHART, PQ_PARTS_CHART, PQ_SAMPLED_CHART = "pq_bars", "pq_parts", "pq_sampled"
PQ_TEMPERATURE_CHART, PQ_MEASURED_CHART = "pq_temperature", "pq_measured_temperature"
PQ_CUT_CHART = "pq_cut"  # p and q after top-k and top-p
PQ_PRESET_BUTTON = "pq_preset_"  # + the preset's name
VERIFY_CURVE_CHART, VERIFY_BATCH_CHART = "verify_curve_chart", "verify_batch_fig"
VERIFY_LOAD_CHART = "verify_load_chart"  # the best K by batch size (serving many requests at once)
VERIFY_MOE_CHART = "verify_moe_chart"  # v against K for a mixture-of-experts target
VERIFY_GPU_CHART = "verify_gpu_chart"  # v(n) measured on a GPU (the project's H200 runs)
VERIFY_PATHS_CHART = "verify_paths_chart"  # v(n) on the two decode-pass paths (the committed measurement)
VERIFY_K, VERIFY_GPU_R = "verify_k", "verify_gpu_r"
VARIANT_GUIDE_CHART = "variant_guide_"  # + the variant's index
DOMAIN_CHART = "domain_fig"


def pq_slider_key(index: int) -> str:
    """Widget key of the why-unchanged page's slider for token ``index``."""
    return f"pq_q_{index}"


DEFAULTS.update({LIVE_AUTORUN: False, VERIFY_CURVE: None, VERIFY_RUNNING: False, VERIFY_BATCH: _VERIFY.batch,
                 VERIFY_GPU_R: _VERIFY.gpu_ridge, VERIFY_CONTEXT: _VERIFY.context,
                 DOMAIN_RESULTS: None, PQ_BLOCK_CHECK: None, PQ_WEIGHTS: _UNCHANGED.weights, PQ_SEED: _UNCHANGED.seed,
                 PQ_SEED_TEXT: str(_UNCHANGED.seed)})


# ---- under the hood ------------------------------------------------------------------------------
HOOD_RUN = "hood_run"  # which run the page dissects: a shipped recording's name, or HOOD_LIVE for the live page's
HOOD_LIVE = "live"  # HOOD_RUN's value for the run made on the live page in this session
HOOD_STEP = "hood_step"  # the iteration dissected, counted from 1 as the slider shows it (None: not chosen)
HOOD_MASK_CHART, HOOD_ROWS_CHART, HOOD_CACHE_CHART = "hood_mask", "hood_rows", "hood_cache"
HOOD_OVERLAP_CHART, HOOD_POSITION_CHART = "hood_overlap", "hood_position"
HOOD_TREE_FIGURE = "hood_tree_figure"  # a tree run's iteration: its tree, as the live page draws it
HOOD_TREE_CHART = "hood_tree_economics"  # τ and speedup against nodes checked: a chain and the best tree
# (plain Trace, [specsim.lesson.kpolicy_runs.PolicyRun]) of the K-policy comparison, or None
HOOD_POLICIES = "hood_policies"
HOOD_POLICIES_BUTTON, HOOD_POLICIES_CHART = "hood_policies_run", "hood_policies_chart"
HOOD_SNIPPET = "hood_snippet"  # specsim.measure.hf_assisted.SnippetCheck of the transformers snippet run here, or None
HOOD_SNIPPET_PROMPT = "hood_snippet_prompt"  # its prompt: an index into app.practice.turn_on.snippet_prompts
HOOD_SNIPPET_BUTTON = "hood_snippet_run"
DEFAULTS.update({HOOD_RUN: None, HOOD_STEP: None, HOOD_POLICIES: None, HOOD_SNIPPET: None, HOOD_SNIPPET_PROMPT: 0})


# ---- predict, then see ---------------------------------------------------------------------------
PREDICTIONS = "predictions"  # {(question id, context): app.predict.Prediction}: the learner's guesses this session
SHOW_ANSWERS = "show_answers"  # True: answers show without a guess first (the sidebar's switch)
PREDICT_FORM = "predict_form_"  # + question id: the form a guess is typed into
PREDICT_BOX = "predict_box_"  # + question id + "_" + field name
# SPECSIM_SHOW_ANSWERS=1 starts every session with the switch on (a lecturer's demo; the browser tests)
DEFAULTS.update({PREDICTIONS: dict, SHOW_ANSWERS: lambda: environment.current().show_answers})

# ---- order one round: seeing the answer -------------------------------------------------------------
SEQ_SHOW_BUTTON = "quiz_seq_show"  # "Show the answer" after a check that is not right yet


# ---- the live page's top-k, top-p and min-p boxes (text: blank is off) ---------------------------------
LIVE_TOP_K = "live_top_k"
LIVE_TOP_P = "live_top_p"
LIVE_MIN_P = "live_min_p"
DEFAULTS.update({LIVE_TOP_K: "", LIVE_TOP_P: "", LIVE_MIN_P: ""})

# ---- the live page's token tree (the K policy "tree"): its guesses and its depth, typed --------------------------
LIVE_TREE = "live_tree"
LIVE_TREE_DEPTH = "live_tree_depth"
DEFAULTS.update({LIVE_TREE: str(_LIVE.tree_nodes), LIVE_TREE_DEPTH: str(_LIVE.tree_depth)})
LIVE_TREE_CHART = "live_tree_chart_"  # + step

# ---- class mode: a run kept by the browser ------------------------------------------------------------
LIVE_REATTACHED = "live_reattached"  # this session has looked for the browser's run in the class queue
DEFAULTS.update({LIVE_REATTACHED: False})


# every key is declared above this line: __all__ collects them

__all__ = [name for name in list(globals()) if name.isupper() and not name.startswith("_")] + [
    "widget_key", "seq_drag_key", "pq_slider_key"]
