"""The sequencing quiz: a case of one round drawn per attempt (greedy or sampled, every guess kept or one refused);
drag its steps into order, or tap a card and then its slot, and leave the cards that are not its steps in the tray.
Every card is a step of some case, and the board has a slot per card, so neither the tray nor the board tells how
many steps this case has.

A check marks each placed card right or wrong where it stands; the whole order, and why each other card is not a
step here, shows only when the answer is right or when the learner asks to see it.

Both ways of answering read and write the same :class:`specsim.lesson.quiz_attempts.SequenceAttempt` kept under
``state.SEQ_ATTEMPT``, so a learner can switch between them halfway and the check is the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st
from streamlit_sortables import sort_items

from app import state
from app.quiz import params as quiz_params
from app.quiz.common import new_seed
from specsim.lesson.quiz import SequenceQuiz
from specsim.lesson.quiz_attempts import SequenceAttempt, fits, new_round

TRAY_HEADER = "Tray: drag the steps from here"
ANSWER_HEADER = "Your order: first step at the top"
ANSWER_LIST = ".sortable-container + .sortable-container"
"""CSS selector of the "Your order" list: the one after the tray. (The component puts a ``<style>`` element before
its first list, so ``.sortable-container:nth-child(2)`` is the tray.)"""
ITEM_STYLE = ".sortable-item, .sortable-item:hover { white-space: normal; line-height: 1.35; text-align: left; }"


# ---- state -----------------------------------------------------------------------------------------


def current_attempt(quiz: SequenceQuiz) -> SequenceAttempt:
    """The attempt in progress, drawn (a case, its cards shuffled) on first use or when the quiz data changed."""
    attempt = state.get(state.SEQ_ATTEMPT)
    if attempt is None:  # a new session (e.g. the page was reloaded): the address bar may hold the progress
        attempt = quiz_params.restore(quiz_params.SEQUENCE_PARAM,
                                      lambda text: quiz_params.decode_sequence(text, quiz))
    if attempt is None or not fits(quiz, attempt):
        attempt = new_round(quiz, new_seed())
    state.put(state.SEQ_ATTEMPT, attempt)
    return attempt


def _save(attempt: SequenceAttempt, remount_drag: bool = True) -> None:
    state.put(state.SEQ_ATTEMPT, attempt)
    if remount_drag:  # the drag widget keeps its own copy of the order: give it a fresh one
        state.put(state.SEQ_DRAG_VERSION, state.get(state.SEQ_DRAG_VERSION) + 1)


def _tap_tray(piece: str) -> None:
    selected = state.get(state.SEQ_SELECTED)
    state.put(state.SEQ_SELECTED, None if selected == piece else piece)


def _tap_slot(slot: int) -> None:
    attempt, selected = state.get(state.SEQ_ATTEMPT), state.get(state.SEQ_SELECTED)
    occupant = attempt.slots[slot]
    if occupant is not None:
        _save(attempt.remove(occupant))
    elif selected is not None:
        _save(attempt.place(selected, slot))
        state.put(state.SEQ_SELECTED, None)


def _check() -> None:
    _save(state.get(state.SEQ_ATTEMPT).check(), remount_drag=False)


def _show() -> None:
    _save(state.get(state.SEQ_ATTEMPT).show(), remount_drag=False)


def _reset(quiz: SequenceQuiz) -> None:
    _save(new_round(quiz, new_seed()))
    state.put(state.SEQ_SELECTED, None)


# ---- drag and drop ---------------------------------------------------------------------------------


def slot_numbers(attempt: SequenceAttempt) -> list[int]:
    """The slot number of each placed card, top to bottom: [2, 4] when slots 1 and 3 are empty."""
    return [slot + 1 for slot, piece in enumerate(attempt.slots) if piece is not None]


def drag_style(attempt: SequenceAttempt) -> str:
    """The sortable's CSS: the cards in "Your order" numbered with their slots, so an order with gaps keeps them."""
    numbers = slot_numbers(attempt)
    if numbers == list(range(1, len(numbers) + 1)):  # no gaps: a card dragged in below is numbered at once
        numbers = list(range(1, len(attempt.slots) + 1))
    return "\n".join([ITEM_STYLE] + [f'{ANSWER_LIST} .sortable-item:nth-child({i})::before {{ content: "{n}. "; }}'
                                     for i, n in enumerate(numbers, start=1)])


def gaps_note(attempt: SequenceAttempt) -> str | None:
    """What drag mode says about empty slots above a placed card (None without such gaps)."""
    numbers = slot_numbers(attempt)
    if numbers == list(range(1, len(numbers) + 1)):
        return None
    empty = [slot + 1 for slot in range(numbers[-1]) if attempt.slots[slot] is None]
    names = ", ".join(map(str, empty[:-1])) + f" and {empty[-1]}" if len(empty) > 1 else str(empty[0])
    return (f"Your order has empty slots: slot{'s' if len(empty) > 1 else ''} {names} "
            f"{'are' if len(empty) > 1 else 'is'} empty, and the list below numbers each card with its slot. "
            "An empty slot counts for nothing: the check reads your cards from the top. A drag list cannot hold an "
            "empty slot, so your next drag closes the gaps without changing your answer.")


def drag_containers(quiz: SequenceQuiz, attempt: SequenceAttempt) -> list[dict[str, Any]]:
    """What the sortable shows: the tray, and the answer list filled from the top."""
    text = {p.id: p.text for p in quiz.pieces}
    return [
        {"header": TRAY_HEADER, "items": [text[p] for p in attempt.left]},
        {"header": ANSWER_HEADER, "items": [text[p] for p in attempt.slots if p is not None]},
    ]


def order_from_drag(quiz: SequenceQuiz, value: Any, attempt: SequenceAttempt) -> list[str]:
    """The piece ids in the answer list of a value returned by the sortable; ValueError if malformed."""
    if not isinstance(value, Sequence) or not all(isinstance(c, Mapping) for c in value):
        raise ValueError("the drag-and-drop list sent back something that is not a list of containers")
    by_header = {c.get("header"): list(c.get("items") or []) for c in value}
    if set(by_header) != {TRAY_HEADER, ANSWER_HEADER}:
        raise ValueError("the drag-and-drop list sent back unknown containers")
    ids = {p.text: p.id for p in quiz.pieces if p.id in attempt.tray_order}
    everything = by_header[TRAY_HEADER] + by_header[ANSWER_HEADER]
    if sorted(everything, key=str) != sorted(ids, key=str):
        raise ValueError("the drag-and-drop list lost or duplicated a card")
    return [ids[t] for t in by_header[ANSWER_HEADER]]


def _drag_mode(quiz: SequenceQuiz, attempt: SequenceAttempt) -> SequenceAttempt:
    st.caption("Drag each step of this case from the tray into your list, and drag within the list to reorder. "
               "Leave the other cards in the tray.")
    note = gaps_note(attempt)
    if note:
        st.info(note)
    value = sort_items(
        drag_containers(quiz, attempt),
        multi_containers=True,
        direction="vertical",
        custom_style=drag_style(attempt),
        key=state.seq_drag_key(state.get(state.SEQ_DRAG_VERSION)),
    )
    try:
        order = order_from_drag(quiz, value, attempt)
        if order != [p for p in attempt.slots if p is not None]:
            attempt = attempt.arrange(order)
            _save(attempt, remount_drag=False)
    except ValueError as exc:
        st.warning(f"That move could not be read ({exc}); the order below is unchanged. Try Reset if it persists.")
        _save(attempt)  # a fresh list, showing the order as it stands
    return attempt


# ---- tap -------------------------------------------------------------------------------------------


def _tap_mode(quiz: SequenceQuiz, attempt: SequenceAttempt) -> None:
    selected = state.get(state.SEQ_SELECTED)
    if selected is not None and selected not in attempt.left:
        selected = None
        state.put(state.SEQ_SELECTED, None)
    st.caption("Tap a card in the tray, then the slot it goes in; tap a placed card to send it back. Place the steps "
               "of this case from the top and leave the other cards in the tray: slots left empty count for nothing.")
    st.markdown("**Tray**")
    for piece in attempt.left:
        st.button(quiz.piece(piece).text, key=state.SEQ_TRAY_BUTTON + piece, on_click=_tap_tray, args=(piece,),
                  type="primary" if piece == selected else "secondary", width="stretch")
    if not attempt.left:
        st.caption("Every card is placed.")
    st.markdown("**Your order**")
    for slot, piece in enumerate(attempt.slots):
        if piece is not None:
            label = f"{slot + 1}. {quiz.piece(piece).text}"
        else:
            label = f"{slot + 1}. " + ("Put the selected card here" if selected else "Empty: pick a card first")
        st.button(label, key=f"{state.SEQ_SLOT_BUTTON}{slot + 1}", on_click=_tap_slot, args=(slot,),
                  width="stretch", disabled=piece is None and selected is None,
                  help="Tap to send this card back to the tray" if piece is not None else None)


# ---- page ------------------------------------------------------------------------------------------


def _marks(quiz: SequenceQuiz, attempt: SequenceAttempt) -> None:
    """Right or wrong for each placed card where it stands, and no more: not where a card belongs, nor which cards
    are left out."""
    order = attempt.order_for(quiz.accepted_orders)  # of the orders that count as right, the nearest to the learner's
    marks = attempt.marks(order)
    if attempt.solved(order):
        st.success(f"Right: the {len(order)} steps of this case, in order, and no other card.")
        if attempt.shown:
            st.caption("You saw the answer before this check, so the sidebar does not count this case as solved. "
                       "Reset for a new case to solve one yourself.")
    else:
        right = sum(marks)
        st.error(f"Not yet: {right} of your {len(marks)} placed cards {'is' if right == 1 else 'are'} "
                 "in the right place.")
        if all(marks):
            st.markdown("Every card you placed is right, but the round is not complete: a step of this case is still "
                        "in the tray.")
    for n, (piece, ok) in enumerate(zip(attempt.placed, marks, strict=True), start=1):
        why = "" if ok else (" (a step of this case, but not at this place)" if piece in order
                             else " (not a step of this case)")
        st.markdown(f"{'✅' if ok else '❌'} **{n}.** {quiz.piece(piece).text}{why}")


def _answer(quiz: SequenceQuiz, attempt: SequenceAttempt) -> None:
    """The whole answer: the case's order with why each step happens, and why each other card is not a step here."""
    scenario = quiz.scenario(attempt.scenario)
    st.markdown("#### The order of this round")
    for n, piece in enumerate(scenario.order, start=1):
        st.markdown(f"{n}. **{quiz.piece(piece).text}.** {quiz.piece(piece).explanation}")
    for a, b in scenario.either:
        first, second = scenario.order.index(a) + 1, scenario.order.index(b) + 1
        st.caption(f"Steps {first} and {second} may come in either order: neither cache holds the new token until the "
                   "next round's pass reads it, so writing it and updating the caches do not depend on each other.")
    st.markdown("#### The cards that are not steps of this case")
    for piece in (p for p in attempt.tray_order if p not in scenario.order):
        left = piece in attempt.left
        verdict = "left in the tray, rightly" if left else "placed, but it is not a step of this case"
        st.markdown(f"{'✅' if left else '❌'} *{quiz.piece(piece).text}* ({verdict}). "
                    f"{quiz.why_left_out(scenario.id, piece)}")


def render(quiz: SequenceQuiz) -> None:
    """The whole sequencing quiz: the case, mode switch, board, count of cards placed, Check and Reset; after a
    check, the marks, and the answer once it is right or asked for."""
    attempt = current_attempt(quiz)
    st.write(quiz.prompt)
    st.info(f"**This round:** {quiz.scenario(attempt.scenario).setting}")
    mode = st.radio("How to answer", state.SEQ_MODES, key=state.bound(state.SEQ_MODE), horizontal=True,
                    format_func=lambda m: {"Tap": "👆 Tap a card, then its slot", "Drag": "✋ Drag and drop"}[m])
    state.put(state.SEQ_MODE, mode)
    if mode == "Drag":
        attempt = _drag_mode(quiz, attempt)
    else:
        _tap_mode(quiz, attempt)
    placed, cards = len(attempt.placed), len(attempt.tray_order)
    st.markdown(f"**{placed} of {cards} cards placed**")
    check, reset = st.columns(2)
    check.button("Check my order", key=state.SEQ_CHECK_BUTTON, on_click=_check, disabled=placed == 0, type="primary",
                 width="stretch")
    reset.button("Reset and reshuffle (a new case)", key=state.SEQ_RESET_BUTTON, on_click=_reset, args=(quiz,),
                 width="stretch")
    solved = attempt.solved(quiz.accepted_orders)
    if attempt.checked:
        _marks(quiz, attempt)
        if not solved and not attempt.shown:
            st.button("Show the answer", key=state.SEQ_SHOW_BUTTON, on_click=_show)
    if attempt.shown or (attempt.checked and solved):
        _answer(quiz, attempt)
    # after the board: the drag mode may have moved pieces in this very run
    pristine = not attempt.checked and not attempt.shown and not attempt.placed
    quiz_params.remember(quiz_params.SEQUENCE_PARAM, quiz_params.encode_sequence(attempt, quiz), pristine)
