"""The sequencing quiz: a case of one round drawn per attempt (greedy or sampled, every guess kept or one refused);
drag its steps into order, or tap a piece and then its slot, and leave the cards that do not belong in the tray.

Both ways of answering read and write the same :class:`specsim.lesson.quiz.SequenceAttempt` kept under
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
from specsim.lesson.quiz import SequenceAttempt, SequenceQuiz, new_round

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
    orders = quiz.correct_order
    if (attempt is None or attempt.scenario not in orders or len(attempt.slots) != len(orders[attempt.scenario])
            or not set(orders[attempt.scenario]) <= set(attempt.tray_order)):
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


def _reset(quiz: SequenceQuiz) -> None:
    _save(new_round(quiz, new_seed()))
    state.put(state.SEQ_SELECTED, None)


# ---- drag and drop ---------------------------------------------------------------------------------


def slot_numbers(attempt: SequenceAttempt) -> list[int]:
    """The slot number of each placed step, top to bottom: [2, 4] when slots 1, 3 and 5 are empty."""
    return [slot + 1 for slot, piece in enumerate(attempt.slots) if piece is not None]


def drag_style(attempt: SequenceAttempt) -> str:
    """The sortable's CSS: the steps in "Your order" numbered with their slots, so an order with gaps keeps them."""
    numbers = slot_numbers(attempt)
    if numbers == list(range(1, len(numbers) + 1)):  # no gaps: a step dragged in below is numbered at once
        numbers = list(range(1, len(attempt.slots) + 1))
    return "\n".join([ITEM_STYLE] + [f'{ANSWER_LIST} .sortable-item:nth-child({i})::before {{ content: "{n}. "; }}'
                                     for i, n in enumerate(numbers, start=1)])


def gaps_note(attempt: SequenceAttempt) -> str | None:
    """What drag mode says about an order with empty slots between or before its steps (None without gaps)."""
    numbers = slot_numbers(attempt)
    if numbers == list(range(1, len(numbers) + 1)):
        return None
    empty = [slot + 1 for slot, piece in enumerate(attempt.slots) if piece is None]
    names = ", ".join(map(str, empty[:-1])) + f" and {empty[-1]}" if len(empty) > 1 else str(empty[0])
    return (f"Your order has empty slots: slot{'s' if len(empty) > 1 else ''} {names} "
            f"{'are' if len(empty) > 1 else 'is'} empty, and the list below numbers each step with its slot. "
            "A drag list cannot hold an empty slot, so your next drag fills the slots from the top and closes the "
            "gaps. To fill a gap where it is, answer with Tap.")


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
        raise ValueError("the drag-and-drop list lost or duplicated a step")
    return [ids[t] for t in by_header[ANSWER_HEADER]]


def _drag_mode(quiz: SequenceQuiz, attempt: SequenceAttempt) -> SequenceAttempt:
    st.caption("Drag each step from the tray into your list, and drag within the list to reorder.")
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
    st.caption("Tap a step in the tray, then tap the slot it belongs in. Tap a placed step to send it back.")
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
            label = f"{slot + 1}. " + ("Put the selected step here" if selected else "Empty: pick a step first")
        st.button(label, key=f"{state.SEQ_SLOT_BUTTON}{slot + 1}", on_click=_tap_slot, args=(slot,),
                  width="stretch", disabled=piece is None and selected is None,
                  help="Tap to send this step back to the tray" if piece is not None else None)


# ---- page ------------------------------------------------------------------------------------------


def _result(quiz: SequenceQuiz, attempt: SequenceAttempt) -> None:
    scenario = quiz.scenario(attempt.scenario)
    marks = attempt.marks(quiz.correct_order)
    right = sum(marks)
    if right == len(marks):
        st.success(f"All {len(marks)} steps are in the right place.")
    else:
        st.error(f"{right} of {len(marks)} steps are in the right place.")
    position = {pid: n + 1 for n, pid in enumerate(scenario.order)}
    for slot, (piece, ok) in enumerate(zip(attempt.slots, marks, strict=True)):
        where = "" if ok else (f" (belongs in slot {position[piece]})" if piece in position
                               else " (does not belong in this case)")
        st.markdown(f"{'✅' if ok else '❌'} **{slot + 1}.** {quiz.piece(piece).text}{where}")
    extra = [p for p in attempt.tray_order if p not in position]
    st.markdown("#### The cards that do not belong here")
    for piece in extra:
        verdict = "left out, rightly" if piece in attempt.left else "placed, but it does not belong"
        st.markdown(f"{'✅' if piece in attempt.left else '❌'} *{quiz.piece(piece).text}* ({verdict}). "
                    f"{quiz.why_left_out(scenario.id, piece)}")
    st.markdown("#### The order of this round")
    for n, piece in enumerate(scenario.order, start=1):
        st.markdown(f"{n}. **{quiz.piece(piece).text}.** {quiz.piece(piece).explanation}")


def render(quiz: SequenceQuiz) -> None:
    """The whole sequencing quiz: the case, mode switch, board, count of slots left, Check and Reset."""
    attempt = current_attempt(quiz)
    st.write(quiz.prompt)
    st.info(f"**This round:** {quiz.scenario(attempt.scenario).setting}")
    mode = st.radio("How to answer", state.SEQ_MODES, key=state.bound(state.SEQ_MODE), horizontal=True,
                    format_func=lambda m: {"Tap": "👆 Tap a step, then its slot", "Drag": "✋ Drag and drop"}[m])
    state.put(state.SEQ_MODE, mode)
    if mode == "Drag":
        attempt = _drag_mode(quiz, attempt)
    else:
        _tap_mode(quiz, attempt)
    left = attempt.empty
    st.markdown(f"**{left} {'piece' if left == 1 else 'pieces'} left to place**")
    check, reset = st.columns(2)
    check.button("Check my order", key=state.SEQ_CHECK_BUTTON, on_click=_check, disabled=left > 0, type="primary",
                 width="stretch")
    reset.button("Reset and reshuffle (a new case)", key=state.SEQ_RESET_BUTTON, on_click=_reset, args=(quiz,),
                 width="stretch")
    if attempt.checked:
        _result(quiz, attempt)
    # after the board: the drag mode may have moved pieces in this very run
    pristine = not attempt.checked and all(slot is None for slot in attempt.slots)
    quiz_params.remember(quiz_params.SEQUENCE_PARAM, quiz_params.encode_sequence(attempt, quiz), pristine)
