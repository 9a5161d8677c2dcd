"""The live page's settings form, kept in step with the URL.

Order within one script run: :func:`apply_url` (a link that arrived) → :func:`controls` (the
widgets) → :func:`write_url` (so the address bar always reproduces the settings).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import streamlit as st

from app import class_profile as app_profile
from app import state, urlcodec
from app.live import params as live_params
from app.live.params import DRAFTERS
from app.settings import LiveSettings
from specsim.core.defaults import DRAFT_MODEL
from specsim.core.prompt_sets import EXAMPLES


def apply_url(pairs: Mapping[str, str]) -> None:
    """Load settings from the URL once per session; unusable parameters fall back with a warning."""
    if state.get(state.LIVE_URL_READ):
        return
    state.put(state.LIVE_URL_READ, True)
    query = urlcodec.ours({key: st.query_params.get_all(key) for key in st.query_params}, live_params.NAMES)
    if not query:
        return
    starting = replace(LiveSettings(), k=app_profile.default_k()[0])  # the page starts at this machine's K
    settings, notices = live_params.parse_query(query, list(pairs), starting)
    for param in live_params.PARAMS:
        if param.name in query:
            value = getattr(settings, param.field)
            if param.field in live_params.TEXT_BOXES:  # those boxes hold text; a temperature as the link wrote it
                value = urlcodec.number_text(value) if isinstance(value, float) else str(value)
            state.show(param.state_key, value)
    if state.get(state.LIVE_K) is None:  # a link's settings, not the recording's, fill the form (controls())
        state.show(state.LIVE_K, str(starting.k))
    for notice in notices:
        st.warning(notice, icon="⚠️")


def _use_example(text: str) -> None:
    state.show(state.LIVE_PROMPT, text)


def controls(pairs: Mapping[str, str]) -> LiveSettings:
    """Draw the form; return what it is set to (validation happens when Run is pressed)."""
    state.init()
    if state.get(state.LIVE_K) is None:  # the first visit: the form shows the recording on screen, else this
        from app import recording  # machine's measured best K (read here, not at import)

        if state.get(state.LIVE_TRACE) is None and state.get(state.LIVE_RECORDING) in recording.shipped_runs():
            recording.show_settings_of(state.get(state.LIVE_RECORDING))
        else:
            state.show(state.LIVE_K, str(app_profile.default_k()[0]))
    left, right = st.columns([2, 1])
    with right:
        if state.get(state.LIVE_PAIR) not in pairs:
            state.show(state.LIVE_PAIR, next(iter(pairs)))
        pair = st.selectbox("Model pair", list(pairs), format_func=pairs.get, key=state.bound(state.LIVE_PAIR))
        if pair == "custom":
            st.text_input("Target: hub id or local folder", key=state.bound(state.LIVE_CUSTOM_TARGET),
                          placeholder="HuggingFaceTB/SmolLM2-360M-Instruct")
            st.text_input("Draft: hub id or local folder", key=state.bound(state.LIVE_CUSTOM_DRAFT),
                          placeholder="HuggingFaceTB/SmolLM2-135M-Instruct")
        if state.get(state.LIVE_DRAFTER) not in DRAFTERS:
            state.show(state.LIVE_DRAFTER, DRAFT_MODEL)
        st.radio("Drafter", list(DRAFTERS), format_func=DRAFTERS.get, key=state.bound(state.LIVE_DRAFTER))
        if state.get(state.LIVE_POLICY) not in live_params.POLICIES:
            state.show(state.LIVE_POLICY, "fixed")
        policy = st.selectbox(
            "K policy", list(live_params.POLICIES), format_func=live_params.POLICIES.get,
            key=state.bound(state.LIVE_POLICY),
            help="How many guesses each loop drafts: K every time, adapted from loop to loop, or a token tree with "
                 "several guesses for some positions. Greedy, the output is the same text under every policy; sampled, "
                 "the same distribution. Only the guesses change.")
        numbers = live_params.NUMBERS
        tree = policy == live_params.TREE
        if tree:  # the tree's size instead of a chain's K (greyed out below)
            a, b = st.columns(2)
            a.text_input(live_params.BOXES["tree_nodes"], key=state.bound(state.LIVE_TREE),
                         help=f"{numbers['tree_nodes'].describe()}: the guesses one loop's tree holds; the target "
                              "reads them all, and the context's last token, in one pass")
            b.text_input(live_params.BOXES["tree_depth"], key=state.bound(state.LIVE_TREE_DEPTH),
                         help=f"{numbers['tree_depth'].describe()}: how many levels the draft grows, one draft pass "
                              "each; the tree then keeps its best scored guesses, so the deepest levels may be "
                              "dropped")
            st.caption("How a tree is checked: the target scores every guess in one pass (each sees only the context "
                       "and the guesses above it). Greedy, it then walks down from the context's last token: at each "
                       "step it takes its own next token and keeps the guess that equals it; the walk stops where no "
                       "guess does, and the target adds its own token there, so the text is plain decoding's (on this "
                       "CPU's position-invariant path; a GPU gives no such guarantee). With a temperature, the guesses "
                       "at a step are tried in the draft's order, each kept with probability p(x), p renormalised "
                       "after each refusal, so the output has the target's own distribution (*Under the hood*, token "
                       "trees). A tree's guesses all come from the draft model: it does not copy repeated text, as "
                       "the bundled draft does in a chain.")
        # numbers in text boxes (live_params.TEXT_BOXES): what was typed stays, and a refusal names it; the
        # temperature shows itself as typed (0.0001, 1e-40), never a rounded 0.00 that reads as greedy. One row at a
        # time, so the boxes read in order
        a, b = st.columns(2)
        if not tree:  # a tree has no K: its size is set above
            a.text_input(live_params.BOXES["k"], key=state.bound(state.LIVE_K), help=numbers["k"].describe())
        (a if tree else b).text_input(
            live_params.BOXES["temperature"], key=state.bound(state.LIVE_TEMPERATURE),
            help=f"{numbers['temperature'].describe()}; any temperature above 0 samples, and a tiny one samples almost "
                 "always the top token")
        a, b = st.columns(2)
        a.text_input(live_params.BOXES["max_new_tokens"], key=state.bound(state.LIVE_MAX_NEW),
                     help=numbers["max_new_tokens"].describe())
        b.text_input(live_params.BOXES["seed"], key=state.bound(state.LIVE_SEED),
                     help=f"{numbers['seed'].describe()}; it fixes the random draws in sampling mode")
        # the cuts transformers applies after the temperature, in its order: top-k, top-p, then min-p
        st.caption("Sampled runs only (temperature above 0): cut both p and q before each check, left to right. The "
                   "acceptance rule then compares the cut p′ and q′, so the output has exactly the distribution of "
                   "plain sampling with the same cuts (the same distribution, not the same text for a seed). Greedy "
                   "runs ignore the cuts.")
        a, b = st.columns(2)
        a.text_input(live_params.BOXES["top_k"], key=state.bound(state.LIVE_TOP_K),
                     help=f"{numbers['top_k'].describe()}: keep only the k most likely tokens of p and of q before "
                          "drawing and checking (p′ and q′)")
        b.text_input(live_params.BOXES["top_p"], key=state.bound(state.LIVE_TOP_P),
                     help=f"{numbers['top_p'].describe()}: then keep the fewest most likely tokens whose "
                          "probabilities add up to this")
        a, _ = st.columns(2)
        a.text_input(live_params.BOXES["min_p"], key=state.bound(state.LIVE_MIN_P),
                     help=f"{numbers['min_p'].describe()}: then keep the tokens at least this share as likely as "
                          "the top one")
    with left:
        st.text_area("Prompt", key=state.bound(state.LIVE_PROMPT), height=150,
                     help=f"at most {live_params.MAX_PROMPT_CHARS} characters")
        cols = st.columns(len(EXAMPLES))
        for col, (name, text) in zip(cols, EXAMPLES.items(), strict=True):
            col.button(f"Example: {name.lower()}", key=f"{state.LIVE_EXAMPLE_BUTTON}{name}", on_click=_use_example,
                       args=(text,), width="stretch")
    state.keep(p.state_key for p in live_params.PARAMS)
    return current()


def current() -> LiveSettings:
    """The settings as they stand in session state."""
    values = {p.field: state.get(p.state_key) for p in live_params.PARAMS}
    for field in live_params.TEXT_BOXES:
        values[field] = live_params.from_text(field, values[field])
    return LiveSettings(**values)


def write_url(settings: LiveSettings) -> None:
    """Put ``settings`` in the address bar, touching only the live page's own parameters; a refused value
    leaves its parameter as the address has it."""
    current = urlcodec.ours(st.query_params.to_dict(), live_params.NAMES)
    from app import recording  # here, not at the top: app.recording reads the shipped runs when asked

    # what a new session opens with: the recording's settings where it loads, else this machine's K
    starting = recording.opening_settings() or replace(LiveSettings(), k=app_profile.default_k()[0])
    state.write_query(live_params.NAMES, live_params.to_query(settings, current), live_params.to_query(starting))
