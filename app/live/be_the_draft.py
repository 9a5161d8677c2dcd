"""Be the draft: the learner guesses the next K tokens of a recorded greedy run, and the target judges them.

The rule and the score are :mod:`specsim.lesson.guess`; this module only lays out the picks and the verdicts.
"""

from __future__ import annotations

import zlib

import streamlit as st

from app import state
from app.live.tokens import md_plain
from specsim.core.trace import Trace
from specsim.lesson import guess, replay
from specsim.measure import costmodel

NO_GUESS = "(stop here)"


def _key(spec: Trace) -> str:
    return f"{spec.prompt[-40:]}|{spec.settings.drafter}|{spec.n_generated}"


def _loops(spec: Trace) -> list[guess.GuessLoop]:
    return state.get(state.GUESS_LOOPS).setdefault(_key(spec), [])


def _check(spec: Trace, picks: list[int]) -> None:
    loops = _loops(spec)
    start = _next_start(spec, loops)
    loops.append(guess.check(list(spec.generated_ids), start, picks))


def _next_start(spec: Trace, loops: list[guess.GuessLoop]) -> int:
    """Where the learner's next guess goes: after the prefill's token and every token the loops so far wrote."""
    return spec.n_prefilled + sum(g.tokens for g in loops)


def pick_key(spec: Trace, start: int, slot: int) -> str:
    """The radio of guess t+``slot`` in the loop starting at ``start``: one key per recording and loop, so a new
    loop opens on "(stop here)" and a pick never carries over to another loop or another recording."""
    return f"{state.GUESS_PICK}{zlib.crc32(_key(spec).encode())}_{start}_{slot}"


def offered(spec: Trace, pos: int, target_top, draft_top) -> tuple:
    """The picks for position ``pos``, shuffled with a seed of their own (the same on every rerun)."""
    return guess.choices(target_top, draft_top, zlib.crc32(f"{_key(spec)}|{pos}".encode()))


def _reset(spec: Trace) -> None:
    state.get(state.GUESS_LOOPS)[_key(spec)] = []


def verdict_line(loop: guess.GuessLoop, texts: list[str], names: dict[int, str]) -> str:
    """One loop as the target judged it: ✓ kept guesses, ✗ the first wrong one, · never checked, +1 its own."""
    def name(i: int, token: int) -> str:
        return names.get(token, "?")

    parts = []
    for i, token in enumerate(loop.guesses):
        if i < loop.kept:
            parts.append(f"✓ {name(i, token)}")
        elif i == loop.kept:
            parts.append(f"✗ {name(i, token)} (the target wrote {replay.visible(texts[loop.start + i])})")
        else:
            parts.append(f"· {name(i, token)} (never checked)")
    if loop.extra is not None:
        parts.append(f"+1 {replay.visible(texts[loop.start + loop.kept])}")
    return "  ".join(parts)


def section(spec: Trace, plain: Trace) -> None:
    """The game, for a greedy recording with its plain baseline."""
    st.subheader("Be the draft")
    if not replay.is_greedy(spec) or plain is None or not spec.iterations:
        st.caption("Be the draft needs a finished greedy run (temperature 0): then the target's choices are known.")
        return
    if spec.settings.tree is not None:
        st.caption("Be the draft plays a chain of K guesses, so it needs a chain's run: choose a K policy other than "
                   "the token tree and press Run.")
        return
    k = spec.settings.k
    tokens, texts = list(spec.generated_ids), replay.spec_token_texts(spec)
    tops, drafts = guess.target_tops(spec), guess.draft_tops(spec)
    names = {t.token_id: replay.visible(t.text) for rows in (tops, drafts) for row in rows for t in row}
    loops = _loops(spec)
    start = _next_start(spec, loops)
    st.markdown(
        f"Guess the next {k} tokens yourself, as the draft model would. Each slot offers up to {guess.CHOICES} "
        "tokens in no particular order: the target's favourites mixed with the real draft's. The target then checks "
        "your guesses all at once, keeps your longest correct prefix (✓), rejects the first wrong guess (✗) and "
        "adds its own next token (+1). Greedy decoding makes this exact: the target's choices are the tokens of the "
        "recorded run.")
    for loop in loops:
        st.markdown(md_plain(verdict_line(loop, texts, names)))
    if start < len(tokens):
        st.markdown("**Text so far:** " + md_plain("".join(texts[:start]) or "(nothing yet)"))
        cols = st.columns(k)
        picks: list[int] = []
        stopped = False
        for i in range(k):
            pos = start + i
            picks_here = offered(spec, pos, tops[pos], drafts[pos]) if pos < len(tops) else ()
            options = [NO_GUESS] + [str(t.token_id) for t in picks_here]
            choice = cols[i].radio(f"guess t+{i + 1}", options, key=pick_key(spec, start, i + 1),
                                   format_func=lambda o: o if o == NO_GUESS else names[int(o)])
            stopped = stopped or choice == NO_GUESS  # guesses after a "stop" are not sent
            if not stopped:
                picks.append(int(choice))
        st.button("Check my guesses", key=state.GUESS_CHECK_BUTTON, on_click=_check, args=(spec, picks),
                  disabled=not picks, type="primary")
    else:
        st.success("You drafted the whole recorded text.")
    if loops:
        score = guess.score(loops)
        costs = costmodel.cost_model([spec], [plain])
        cols = st.columns(3)
        cols[0].metric("your acceptance α", f"{score.alpha:.0%}", help=f"{score.kept} kept of {score.checked} checked")
        cols[1].metric("your tokens per loop", f"{score.tokens_per_loop:.2f}")
        cols[2].metric("your speedup", f"{score.speedup(costs):.2f}×",
                       help="at this recording's measured c, v and o: tokens per loop ÷ (K·c + v + o)")
        st.caption(f"The real draft on the same text: α = {costs.alpha:.0%}, {costs.tokens_per_loop:.2f} tokens per "
                   f"loop, {costs.speedup:.2f}× from the same cost model.")
        st.button("Start again", key=state.GUESS_RESET_BUTTON, on_click=_reset, args=(spec,))
