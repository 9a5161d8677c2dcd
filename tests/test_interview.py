"""Interview questions: the topics the issue asks for, computed figures, links to real pages, and the page itself."""

from __future__ import annotations

import re

from app.layout import all_pages
from specsim.core.paths import INTERVIEW_QUESTIONS
from specsim.lesson import interview
from specsim.measure import analytics
from tests.conftest import open_page

REQUIRED = ("why verification is parallel", "when verification is not free (batching)", "why the output is unchanged",
            "choosing K", "draft/target vocabulary mismatch", "tree attention",
            "serving it (vLLM, TensorRT-LLM, llama.cpp)")


def test_twelve_to_twenty_four_questions_cover_every_required_topic():
    """Issue 55 added production's methods (MTP, EAGLE-2 and EAGLE-3) to the required topics' 12."""
    questions = interview.load()
    assert 12 <= len(questions) <= 24
    assert len({q.id for q in questions}) == len(questions)
    topics = {q.topic for q in questions}
    assert set(REQUIRED) <= topics, set(REQUIRED) - topics


def test_every_answer_links_to_a_page_of_the_app_and_types_no_figure_it_could_compute():
    paths = {p.url_path for p in all_pages()}
    for q in interview.load():
        assert q.page in paths, q.id
        assert "{" not in q.answer and "}" not in q.answer  # every named figure was filled in
        assert len(q.answer.split()) >= 50, q.id  # a worked answer, not a one-liner


def test_the_k_answer_quotes_the_closed_form():
    answer = next(q for q in interview.load() if q.id == "choose_k").answer
    best = analytics.optimal_k(0.7, 0.13)
    assert f"K = {best} with {float(analytics.speedup(0.7, best, 0.13)):.2f}×" in answer
    raw = INTERVIEW_QUESTIONS.read_text(encoding="utf-8")
    assert not re.search(r"\d\.\d\d×", raw)  # no typed speedups in the data file


def test_the_page_shows_every_question_with_its_link():
    at = open_page("interview.py")
    assert not at.exception
    questions = interview.load()
    labels = [e.label for e in at.expander]
    assert labels == [f"{i}. {q.question}" for i, q in enumerate(questions, start=1)]


def test_the_two_eagle_answers_name_the_same_tree_rule():
    """Issue 60: the distinct top-k rule is what EAGLE's reference implementation does; the EAGLE papers describe
    multi-round speculative sampling. Q17 and Q21 say so alike."""
    from specsim.lesson import interview

    questions = {q.id: q for q in interview.load()}
    for qid in ("lossy_lossless", "eagle3"):
        answer = questions[qid].answer
        assert "EAGLE's reference implementation" in answer and "distinct top-k" in answer, qid
        assert "the EAGLE papers describe multi-round speculative sampling" in answer, qid
