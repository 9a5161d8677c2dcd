"""AppTest for the two quiz pages: tap and drag answers, the 20-question run, feedback, page switches."""

from __future__ import annotations

import json
import re

import pytest
import streamlit as st

from app import state
from app.quiz import knowledge as knowledge_view
from app.quiz.sequence import ANSWER_HEADER, TRAY_HEADER
from specsim.lesson import quiz, quiz_attempts
from tests.conftest import ROOT, open_page

SEQ = quiz.load_sequence()
QUESTIONS = quiz.load_knowledge()
TEXT = {p.id: p.text for p in SEQ.pieces}


def _markdown(at) -> list[str]:
    return [m.value for m in at.markdown]


def _everything(at) -> str:
    """Every text element the run drew, joined: what the learner can read on the page now."""
    kinds = ("markdown", "caption", "info", "success", "error", "warning", "text")
    return "\n".join(str(e.value) for kind in kinds for e in at.get(kind))


def _switch_away_and_back(at, page: str):
    at.switch_page(str(ROOT / "pages" / "home.py")).run()
    assert not at.exception
    return at.switch_page(str(ROOT / "pages" / page)).run()


# ---- sequencing: tap mode -------------------------------------------------------------------------


def _placed(at) -> str:
    return next(m for m in _markdown(at) if m.endswith("cards placed**"))


def _order(at) -> tuple[str, ...]:
    """The steps of the case this session's attempt drew, in order."""
    return SEQ.correct_order[at.session_state[state.SEQ_ATTEMPT].scenario]


def _cards(at) -> int:
    return len(at.session_state[state.SEQ_ATTEMPT].tray_order)


def _extra(at) -> list[str]:
    """The cards of this attempt that do not belong to its case."""
    attempt = at.session_state[state.SEQ_ATTEMPT]
    return [p for p in attempt.tray_order if p not in _order(at)]


def _tap_place(at, order, first_slot=1):
    for slot, piece in enumerate(order, start=first_slot):
        at.button(key=state.SEQ_TRAY_BUTTON + piece).click().run()
        at.button(key=f"{state.SEQ_SLOT_BUTTON}{slot}").click().run()
        assert not at.exception
    return at


def _slots(at) -> list:
    return [b for b in at.button if b.key.startswith(state.SEQ_SLOT_BUTTON)]


def _marks(at) -> list[str]:
    return [m for m in _markdown(at) if m.startswith(("✅", "❌"))]


def _sidebar_progress(at) -> str:
    return next(c.value for c in at.sidebar.caption if c.value.startswith("Your path"))


ANSWER_HEADING = "#### The order of this round"


def test_tap_mode_has_a_slot_per_card_so_the_board_does_not_count_the_steps():
    """The human form audit: five slots for five steps told the learner how many cards to place."""
    at = open_page("sequence.py")
    attempt, cards = at.session_state[state.SEQ_ATTEMPT], _cards(at)
    assert SEQ.scenario(attempt.scenario).setting in at.info[0].value  # the case is stated
    assert len(_slots(at)) == cards == len(SEQ.pieces) > len(_order(at))
    assert len([b for b in at.button if b.key.startswith(state.SEQ_TRAY_BUTTON)]) == cards
    assert _placed(at) == f"**0 of {cards} cards placed**"
    assert at.button(key=state.SEQ_CHECK_BUTTON).disabled
    assert not any(str(len(_order(at))) in m for m in _markdown(at) + [c.value for c in at.caption])


def test_tap_mode_correct_order_is_marked_right_and_explained_with_the_strangers_left_out():
    at = open_page("sequence.py")
    attempt, order, cards = at.session_state[state.SEQ_ATTEMPT], _order(at), _cards(at)
    _tap_place(at, order[:2])
    assert _placed(at) == f"**2 of {cards} cards placed**" and not at.button(key=state.SEQ_CHECK_BUTTON).disabled
    _tap_place(at, order[2:], first_slot=3)
    at.button(key=state.SEQ_CHECK_BUTTON).click().run()
    assert [s.value for s in at.success] == [f"Right: the {len(order)} steps of this case, in order, and no other "
                                             "card."]
    marks = _marks(at)
    assert len(marks) == len(order) + len(_extra(at)) and all(m.startswith("✅") for m in marks)
    assert all("left in the tray, rightly" in m for m in marks[len(order):])
    text = " ".join(_markdown(at))
    assert ANSWER_HEADING in _markdown(at)
    assert all(SEQ.piece(p).explanation in text for p in order)  # the case's order, explained
    assert all(SEQ.why_left_out(attempt.scenario, p) in text for p in _extra(at))  # and why the others do not belong
    assert state.SEQ_SHOW_BUTTON not in [b.key for b in at.button]
    assert "order one round: solved" in _sidebar_progress(at)


def test_a_wrong_order_marks_each_placed_card_and_keeps_the_answer_until_asked():
    """A check says which placements are right, not where the others go, nor which cards are left out; the order
    shows when the learner asks for it."""
    at = open_page("sequence.py")
    order = list(_order(at))
    stranger = _extra(at)[0]
    placed = [order[1], order[0], order[2], stranger]  # two steps swapped, a card of another case, two steps missing
    at = _tap_place(at, placed)
    at.button(key=state.SEQ_CHECK_BUTTON).click().run()
    assert at.error[0].value == "Not yet: 1 of your 4 placed cards is in the right place."
    marks = _marks(at)
    assert [m[0] for m in marks] == ["❌", "❌", "✅", "❌"]
    assert marks[0].endswith("(a step of this case, but not at this place)")
    assert marks[3].endswith("(not a step of this case)")
    text = "\n".join(_markdown(at))
    assert ANSWER_HEADING not in text and "slot" not in text.split("cards placed**")[-1]
    assert not any(SEQ.piece(p).explanation in text for p in order)
    assert "order one round: not solved yet" in _sidebar_progress(at)
    at.button(key=state.SEQ_SHOW_BUTTON).click().run()
    assert at.session_state[state.SEQ_ATTEMPT].shown and ANSWER_HEADING in _markdown(at)
    text = "\n".join(_markdown(at))
    assert all(SEQ.piece(p).explanation in text for p in order)
    assert any(m.startswith("❌") and "placed, but it is not a step of this case" in m for m in _marks(at))
    for piece in placed:  # put the order right after seeing it: right, but not counted as solved
        slot = at.session_state[state.SEQ_ATTEMPT].slots.index(piece) + 1
        at.button(key=f"{state.SEQ_SLOT_BUTTON}{slot}").click().run()
    at = _tap_place(at, order)
    at.button(key=state.SEQ_CHECK_BUTTON).click().run()
    assert at.success and "order one round: not solved yet" in _sidebar_progress(at)
    assert any("You saw the answer" in c.value for c in at.caption)


def test_a_right_start_with_a_step_missing_is_not_solved_and_says_so():
    at = open_page("sequence.py")
    at = _tap_place(at, _order(at)[:-1])
    at.button(key=state.SEQ_CHECK_BUTTON).click().run()
    assert all(m.startswith("✅") for m in _marks(at)) and at.error
    assert any("a step of this case is still in the tray" in m for m in _markdown(at))
    assert ANSWER_HEADING not in _markdown(at) and "order one round: not solved yet" in _sidebar_progress(at)


def test_tapping_a_placed_piece_sends_it_back_to_the_tray():
    at = open_page("sequence.py")
    first = _order(at)[0]
    at = _tap_place(at, [first])
    assert state.SEQ_TRAY_BUTTON + first not in [b.key for b in at.button]
    assert at.button(key=f"{state.SEQ_SLOT_BUTTON}1").label == f"1. {TEXT[first]}"
    at.button(key=f"{state.SEQ_SLOT_BUTTON}1").click().run()
    assert state.SEQ_TRAY_BUTTON + first in [b.key for b in at.button]
    assert _placed(at) == f"**0 of {_cards(at)} cards placed**"


def test_reset_empties_the_slots_and_draws_a_new_round():
    at = open_page("sequence.py")
    at = _tap_place(at, _order(at)[:3])
    before = at.session_state[state.SEQ_ATTEMPT]
    at.button(key=state.SEQ_RESET_BUTTON).click().run()
    after = at.session_state[state.SEQ_ATTEMPT]
    assert _placed(at) == f"**0 of {_cards(at)} cards placed**" and after.slots == (None,) * _cards(at)
    assert after != before and set(_order(at)) <= set(after.tray_order)


# ---- sequencing: drag mode, through the value the sortable would return ----------------------------


def _drag(at, answer, tray=()):
    key = state.seq_drag_key(at.session_state[state.SEQ_DRAG_VERSION])
    at.session_state[key] = [
        {"header": TRAY_HEADER, "items": [TEXT[p] for p in tray]},
        {"header": ANSWER_HEADER, "items": [TEXT[p] for p in answer]},
    ]
    return at.run()


def _drag_page():
    at = open_page("sequence.py")
    return at.radio(key=state.SEQ_MODE_WIDGET).set_value("Drag").run()


def test_drag_mode_correct_order_is_marked_right():
    at = _drag_page()
    order, extra = _order(at), _extra(at)
    at = _drag(at, order[:2], tray=[*order[2:], *extra])
    assert _placed(at) == f"**2 of {_cards(at)} cards placed**"
    at = _drag(at, order, tray=extra)
    assert not at.exception and _placed(at) == f"**{len(order)} of {_cards(at)} cards placed**"
    at.button(key=state.SEQ_CHECK_BUTTON).click().run()
    assert len(at.success) == 1 and at.success[0].value.startswith("Right:")


def test_a_drag_list_holding_every_card_is_taken_and_marked():
    """The answer list may hold every card (the board does not say how many belong); the check marks the strangers."""
    at = _drag_page()
    order, extra = _order(at), _extra(at)
    at = _drag(at, [*order, *extra])
    assert not at.exception and not at.warning and _placed(at) == f"**{_cards(at)} of {_cards(at)} cards placed**"
    at.button(key=state.SEQ_CHECK_BUTTON).click().run()
    assert [m[0] for m in _marks(at)] == ["✅"] * len(order) + ["❌"] * len(extra)
    assert all(m.endswith("(not a step of this case)") for m in _marks(at)[len(order):])


def test_drag_mode_wrong_order_is_marked_wrong_and_tap_mode_sees_the_same_answer():
    at = _drag_page()
    order = list(_order(at))
    order[0], order[1] = order[1], order[0]
    at = _drag(at, order, tray=_extra(at))
    at.button(key=state.SEQ_CHECK_BUTTON).click().run()
    assert at.error[0].value == f"Not yet: {len(order) - 2} of your {len(order)} placed cards are in the right place."
    assert [m[0] for m in _marks(at)] == ["❌", "❌"] + ["✅"] * (len(order) - 2)
    at.radio(key=state.SEQ_MODE_WIDGET).set_value("Tap").run()
    labels = [at.button(key=f"{state.SEQ_SLOT_BUTTON}{n}").label for n in range(1, len(order) + 1)]
    assert labels == [f"{n}. {TEXT[p]}" for n, p in enumerate(order, start=1)]


def test_a_malformed_drag_value_gives_a_warning_not_a_traceback():
    at = _drag_page()
    at.session_state[state.seq_drag_key(at.session_state[state.SEQ_DRAG_VERSION])] = [{"header": "?", "items": []}]
    at.run()
    assert not at.exception
    assert "could not be read" in at.warning[0].value
    assert _placed(at) == f"**0 of {_cards(at)} cards placed**"


def test_sequence_progress_survives_a_page_switch():
    at = open_page("sequence.py")
    at = _tap_place(at, _order(at)[:2])
    at.radio(key=state.SEQ_MODE_WIDGET).set_value("Drag").run()
    at = _switch_away_and_back(at, "sequence.py")
    assert not at.exception
    assert _placed(at) == f"**2 of {_cards(at)} cards placed**"
    assert at.radio(key=state.SEQ_MODE_WIDGET).value == "Drag"


# ---- knowledge check ------------------------------------------------------------------------------


def _current(at):
    attempt = at.session_state[state.KQ_ATTEMPT]
    return attempt, quiz.questions_for(QUESTIONS, attempt.seed)[attempt.current]  # with this attempt's numbers


def test_answering_all_twenty_right_scores_twenty():
    at = open_page("quiz.py")
    for n in range(1, 21):
        attempt, q = _current(at)
        assert at.subheader[0].value == f"Question {n} of 20"
        assert f"**Score: {n - 1}**" in _markdown(at)
        shown = [b.label for b in at.button if b.key.startswith(state.KQ_OPTION_BUTTON)]
        assert shown == [q.options[i] for i in quiz_attempts.option_order(q, attempt.seed)]
        at.button(key=f"{state.KQ_OPTION_BUTTON}{q.answer}").click().run()
        assert [s.value for s in at.success] == ["Right."]
        assert q.explanation not in _everything(at)  # no explanation before the review: it could give a later key
        at.button(key=state.KQ_NEXT_BUTTON).click().run()
        assert not at.exception
    assert at.subheader[0].value == "You scored 20 / 20"
    review = [m for m in _markdown(at) if m.startswith(("✅", "❌"))]
    assert len(review) == 20 and all(m.startswith("✅") for m in review)
    seed = at.session_state[state.KQ_ATTEMPT].seed
    assert all(q.explanation in _everything(at) for q in quiz.questions_for(QUESTIONS, seed))  # now every one


def test_a_wrong_answer_shows_the_right_one_and_keeps_the_explanation_for_the_review():
    at = open_page("quiz.py")
    _, q = _current(at)
    wrong = (q.answer + 1) % len(q.options)
    at.button(key=f"{state.KQ_OPTION_BUTTON}{wrong}").click().run()
    assert q.correct_option in at.error[0].value
    assert q.explanation not in _everything(at)
    assert knowledge_view.EXPLANATIONS_LATER in [c.value for c in at.caption]
    assert "**Score: 0**" in _markdown(at)
    assert f"❌ {q.options[wrong]}" in _markdown(at) and f"✅ {q.correct_option}" in _markdown(at)


def test_knowledge_progress_survives_a_page_switch():
    at = open_page("quiz.py")
    for _ in range(3):
        _, q = _current(at)
        at.button(key=f"{state.KQ_OPTION_BUTTON}{q.answer}").click().run()
        at.button(key=state.KQ_NEXT_BUTTON).click().run()
    _, q = _current(at)
    at.button(key=f"{state.KQ_OPTION_BUTTON}{(q.answer + 1) % len(q.options)}").click().run()
    at = _switch_away_and_back(at, "quiz.py")
    assert not at.exception
    assert at.subheader[0].value == "Question 4 of 20"
    assert "**Score: 3**" in _markdown(at)
    assert q.correct_option in at.error[0].value  # the answered question still shows its verdict


def test_retake_starts_over_with_a_new_shuffle():
    at = open_page("quiz.py")
    for _ in range(20):
        _, q = _current(at)
        at.button(key=f"{state.KQ_OPTION_BUTTON}{(q.answer + 1) % len(q.options)}").click().run()
        at.button(key=state.KQ_NEXT_BUTTON).click().run()
    assert at.subheader[0].value == "You scored 0 / 20"
    # every wrong answer names the page and the section to read again, and the sections are linked once each
    revisits = [m for m in _markdown(at) if m.startswith("Revisit: ")]
    assert len(revisits) == 20
    for q in QUESTIONS:
        assert f"Revisit: {knowledge_view.revisit_label(q.revisit)}" in revisits
    links = [link.proto.label for link in at.get("page_link")]
    assert len(links) == len({q.revisit for q in QUESTIONS})
    assert links[0].startswith(knowledge_view.revisit_label(QUESTIONS[0].revisit))
    old_seed = at.session_state[state.KQ_ATTEMPT].seed
    at.button(key=state.KQ_RETAKE_BUTTON).click().run()
    attempt = at.session_state[state.KQ_ATTEMPT]
    assert at.subheader[0].value == "Question 1 of 20" and "**Score: 0**" in _markdown(at)
    assert attempt.seed != old_seed and attempt.answers == (None,) * 20


def test_a_right_answer_names_nothing_to_revisit_and_a_transfer_question_shows_the_attempts_numbers():
    at = open_page("quiz.py")
    for _ in range(20):
        attempt, q = _current(at)
        if q.transfer is not None:
            assert f"##### {q.prompt}" in _markdown(at)
        at.button(key=f"{state.KQ_OPTION_BUTTON}{q.answer}").click().run()
        at.button(key=state.KQ_NEXT_BUTTON).click().run()
    assert not [m for m in _markdown(at) if m.startswith(("Revisit: ", "**What to read again**"))]


# ---- bad data -------------------------------------------------------------------------------------


@pytest.fixture
def fresh_cache():
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()


@pytest.mark.parametrize(("page", "attr", "broken"), [
    ("quiz.py", "KNOWLEDGE_FILE", {"questions": [{"id": "only-one"}]}),
    ("sequence.py", "SEQUENCE_FILE", {"prompt": "?", "pieces": []}),
])
def test_a_malformed_quiz_file_gives_an_error_message_not_a_traceback(page, attr, broken, tmp_path, monkeypatch,
                                                                      fresh_cache):
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(broken))
    monkeypatch.setattr(quiz, attr, path)
    at = open_page(page)
    assert not at.exception
    assert "could not be loaded" in at.error[0].value


# ---- a reload keeps the progress (issue 12): the attempt travels in the address bar ------------------


def test_knowledge_progress_survives_a_reload():
    at = open_page("quiz.py")
    for step in range(2):
        _, q = _current(at)
        pick = q.answer if step == 0 else (q.answer + 1) % len(q.options)
        at.button(key=f"{state.KQ_OPTION_BUTTON}{pick}").click().run()
        if step == 0:
            at.button(key=state.KQ_NEXT_BUTTON).click().run()
    before = at.session_state[state.KQ_ATTEMPT]
    reloaded = open_page("quiz.py", query={"kq": at.query_params["kq"]})  # a new session
    assert not reloaded.exception and not reloaded.warning
    assert reloaded.session_state[state.KQ_ATTEMPT] == before
    assert reloaded.subheader[0].value == "Question 2 of 20" and "**Score: 1**" in _markdown(reloaded)
    assert any("Not quite" in e.value for e in reloaded.error)  # the second answer's feedback is back


def test_sequence_progress_survives_a_reload():
    at = open_page("sequence.py")
    at = _tap_place(at, _order(at)[:2])
    before = at.session_state[state.SEQ_ATTEMPT]
    reloaded = open_page("sequence.py", query={"order": at.query_params["order"]})
    assert not reloaded.exception and not reloaded.warning
    assert reloaded.session_state[state.SEQ_ATTEMPT] == before
    assert _placed(reloaded) == f"**2 of {_cards(reloaded)} cards placed**"


def test_a_checked_attempt_with_the_answer_shown_survives_a_reload():
    at = open_page("sequence.py")
    at = _tap_place(at, list(reversed(_order(at)))[:2])
    at.button(key=state.SEQ_CHECK_BUTTON).click().run()
    at.button(key=state.SEQ_SHOW_BUTTON).click().run()
    reloaded = open_page("sequence.py", query={"order": at.query_params["order"]})
    assert not reloaded.exception and not reloaded.warning
    assert reloaded.session_state[state.SEQ_ATTEMPT] == at.session_state[state.SEQ_ATTEMPT]
    assert reloaded.error and ANSWER_HEADING in _markdown(reloaded)


@pytest.mark.parametrize("page,param,value", [("quiz.py", "kq", "12.3.abc"),
                                              ("quiz.py", "kq", "1.0." + "9" * 20),
                                              ("sequence.py", "order", "0.00000.-----.0"),
                                              ("sequence.py", "order", "43210.-2-4-.0"),  # an old link
                                              ("sequence.py", "order", "<script>")])
def test_a_bad_saved_progress_starts_a_new_attempt_with_a_note(page, param, value):
    at = open_page(page, query={param: value})
    assert not at.exception
    assert any("could not be read" in w.value for w in at.warning)
    assert at.query_params[param] != value  # the new attempt replaced it


# ---- issue 23 --------------------------------------------------------------------------------------------


def _link(scenario: str, slots: dict[int, int]) -> tuple[str, tuple]:
    """A link to a round of ``scenario`` with step ``i`` of its order in slot ``slots[i]`` (from 0), and those slots."""
    from app.quiz import params as quiz_params

    sc = SEQ.scenario(scenario)
    attempt = quiz_attempts.new_round(SEQ, 0, scenario)
    for step, slot in slots.items():
        attempt = attempt.place(sc.order[step], slot)
    return quiz_params.encode_sequence(attempt, SEQ), attempt.slots


def test_the_drag_numbers_go_on_your_order_not_on_the_tray():
    """Issue 23 (3): the sortable puts a <style> element before its first list, so `:nth-child(2)` numbered
    the tray. Every numbering rule now names the list after the tray."""
    from app.quiz.sequence import ANSWER_LIST, drag_style

    sc = SEQ.scenarios[0]
    attempt = quiz_attempts.new_round(SEQ, 0, sc.id).arrange(sc.order[:2])
    style = drag_style(attempt)
    rules = [r.strip() for r in style.split("}") if "::before" in r]
    assert len(rules) == len(attempt.slots) and all(r.startswith(ANSWER_LIST) for r in rules), rules
    assert ANSWER_LIST == ".sortable-container + .sortable-container"


def test_a_link_with_gaps_keeps_them_in_drag_mode_and_says_what_a_drag_does():
    """Issue 23 (3): a link with steps in slots 2 and 4 only; drag mode showed them as 1 and 2 and closed the gaps
    on the next drag without a word. An empty slot counts for nothing now (the check reads the cards from the top),
    and the note names only the empty slots above a card."""
    from app.quiz.sequence import drag_style, slot_numbers

    link, gapped = _link("sampling-refusal", {2: 1, 4: 3})
    c = SEQ.scenario("sampling-refusal").order
    at = open_page("sequence.py", query={"order": link})
    assert gapped == (None, c[2], None, c[4]) + (None,) * (len(gapped) - 4)
    assert at.session_state[state.SEQ_ATTEMPT].slots == gapped
    at.radio(key=state.SEQ_MODE_WIDGET).set_value("Drag").run()
    assert not at.exception
    attempt = at.session_state[state.SEQ_ATTEMPT]
    assert attempt.slots == gapped, "opening drag mode keeps the gaps"
    assert slot_numbers(attempt) == [2, 4]
    assert 'content: "2. "' in drag_style(attempt) and 'content: "4. "' in drag_style(attempt)
    notes = [i.value for i in at.info]
    assert any("slots 1 and 3 are empty" in n and "counts for nothing" in n for n in notes), notes
    at.radio(key=state.SEQ_MODE_WIDGET).set_value("Tap").run()
    labels = [at.button(key=f"{state.SEQ_SLOT_BUTTON}{n}").label for n in range(1, 6)]
    assert labels[1] == f"2. {TEXT[c[2]]}" and labels[3] == f"4. {TEXT[c[4]]}" and labels[0].startswith("1. Empty")
    assert at.query_params["order"] == link


def test_a_wrong_case_progress_parameter_is_read():
    """Issue 23 (a)."""
    link, gapped = _link("greedy-refusal", {2: 1, 4: 3})
    at = open_page("sequence.py", query={"Order": link})
    assert not at.exception and not at.warning
    assert at.session_state[state.SEQ_ATTEMPT].slots == gapped
    assert at.query_params == {"order": link}


# ---- issue 61, item 7: each question names a page and a section that exists on it --------------------------------


def _page_sources(script: str) -> str:
    """A page script's text and the text of the app modules it imports, two levels deep."""
    import ast

    seen, todo, texts = set(), [ROOT / "pages" / script], []
    for _ in range(3):
        nxt = []
        for path in todo:
            if path in seen or not path.exists():
                continue
            seen.add(path)
            text = path.read_text(encoding="utf-8")
            texts.append(text)
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("app"):
                    base = ROOT / node.module.replace(".", "/")
                    nxt.append(base.with_suffix(".py"))
                    nxt += [base / f"{alias.name}.py" for alias in node.names]
        todo = nxt
    return "\n".join(texts)


@pytest.mark.parametrize("q", QUESTIONS, ids=lambda q: q.id)
def test_every_question_names_a_lesson_page_and_a_heading_on_it(q):
    from app.layout import PAGES

    assert q.revisit is not None, q.id
    lesson = {p.url_path: p for p in PAGES["Learn"]}
    assert q.revisit.page in lesson, (q.id, q.revisit.page)
    source = _page_sources(lesson[q.revisit.page].script)
    assert re.search(rf'"(#+ )?{re.escape(q.revisit.section)}"', source), (q.id, q.revisit)  # a heading or a tab


def test_the_heading_check_can_fail():
    assert '"The proof in three lines"' in _page_sources("unchanged.py")
    assert '"The proof in three lines"' not in _page_sources("calculator.py")
