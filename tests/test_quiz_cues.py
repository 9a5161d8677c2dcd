"""Issue 61, item 6: a cue audit of the knowledge check. Could someone who never read the lesson find each key by
its form alone?

For every question (and, for a transfer question, for several of its draws) the audit measures the key against its
best distractor:

- **stem overlap**: how many of the option's content words the stem also uses;
- **page overlap**: the share of the option's word trigrams that the lesson's pages print (the text a learner read
  and would recognise);
- **a page phrase**: five or more words in a row, at least two of them content words, that a page prints;
- **length**: the key longer than every distractor by a wide margin;
- **absolute words**: "only", "never", "always"... marking the distractors and not the key.

The pages' text is the union of a capture of the pages as a learner sees them (``tests/lesson_text/*.txt``,
rendered by ``scripts/review_shots.py``) and every string literal of the lesson's page scripts and ``app/`` modules
(so a phrase added to a page since the capture counts too). The quiz's own modules and the interview are left out.

Before the rebuild (issue 61), 8 of the 20 questions let the key stand out; the test allows at most 3.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

from specsim.lesson import quiz

ROOT = Path(__file__).resolve().parents[1]
CAPTURE = ROOT / "tests" / "lesson_text"
QUIZ_SOURCES = {"knowledge_quiz.py", "sequence_quiz.py", "interview.py"}
MAX_CUED = 3
DRAWS = range(8)  # the attempts' seeds each transfer question is audited at

WORD = re.compile(r"[a-zα-ωτ]+(?:'[a-z]+)?")
STOPWORDS = frozenset("""
a about above after again against all also an and any are as at be because been before being below between both but by
can could did do does doing down during each either else even few for from further had has have having here how if in
into is it its itself just like many may might more most much no nor not of off on once one or other our out over own
same should since so some such than that the their them then there these they this those through to too under until up
upon very was we were what when where which while who whom whose why will with within without would you your
""".split())
ABSOLUTE = frozenset(("always", "never", "only", "nothing", "none", "every", "all", "any", "exactly", "whatever",
                      "whenever", "everything", "completely", "entirely", "guaranteed", "cannot", "must"))


def words(text: str) -> list[str]:
    return WORD.findall(text.lower().replace("’", "'"))


def content(text: str) -> set[str]:
    """Words that carry meaning: 3 letters or more (or a Greek symbol), stopwords dropped, a plural 's' cut."""
    out = set()
    for w in words(text):
        if w in STOPWORDS or (len(w) < 3 and not re.match(r"[α-ωτ]", w)):
            continue
        out.add(w[:-1] if len(w) > 4 and w.endswith("s") and not w.endswith("ss") else w)
    return out


def ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    w = words(text)
    return {tuple(w[i:i + n]) for i in range(len(w) - n + 1)}


# ---- the pages' text ---------------------------------------------------------------------------------------------


def _literals(path: Path) -> list[str]:
    """The string literals of a module (the constant parts of f-strings included), joined where adjacent."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            out.append(" ".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value,
                                                                                                           str)))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append(node.value)
    return out


@cache
def page_text() -> str:
    texts = [p.read_text(encoding="utf-8") for p in sorted(CAPTURE.glob("*.txt"))]
    for path in sorted((ROOT / "pages").glob("*.py")):
        if path.name not in QUIZ_SOURCES:
            texts += _literals(path)
    for path in sorted((ROOT / "app").rglob("*.py")):
        if "quiz" not in path.parts:
            texts += _literals(path)
    texts.append((ROOT / "assets" / "lesson" / "path.json").read_text(encoding="utf-8"))
    return "\n".join(texts)


@cache
def page_ngrams(n: int) -> frozenset[tuple[str, ...]]:
    out: set[tuple[str, ...]] = set()
    for paragraph in page_text().split("\n"):
        out |= ngrams(paragraph, n)
    return frozenset(out)


# ---- the measures ------------------------------------------------------------------------------------------------


def stem_shared(option: str, stem: str) -> int:
    """How many of the option's content words the stem also uses."""
    return len(content(option) & content(stem))


def page_share(option: str) -> float:
    grams = ngrams(option, 3)
    return len(grams & page_ngrams(3)) / len(grams) if grams else 0.0


def page_phrase(option: str) -> tuple[str, ...] | None:
    """A phrase of five words or more that a page prints, two of its words or more content words (symbols such as
    p, x and σ do not count: a formula is what the question asks about); None if none."""
    for gram in sorted(ngrams(option, 5) & page_ngrams(5)):
        if len({w for w in content(" ".join(gram)) if re.fullmatch(r"[a-z']{3,}", w)}) >= 2:
            return gram
    return None


def _distractors(q: quiz.Question) -> list[str]:
    return [o for i, o in enumerate(q.options) if i != q.answer]


def cues(q: quiz.Question) -> list[str]:
    """What lets this question's key stand out from its distractors, in words; empty when nothing does."""
    key, others = q.correct_option, _distractors(q)
    found = []
    mine, best = stem_shared(key, q.prompt), max(stem_shared(o, q.prompt) for o in others)
    if mine >= best + 3 or (mine >= 2 and best == 0):
        found.append("echoes the stem")
    if page_share(key) - max(page_share(o) for o in others) > 0.3:
        found.append("echoes the pages")
    phrase = page_phrase(key)
    if phrase is not None:
        found.append(f"repeats a page's phrase: {' '.join(phrase)!r}")
    if len(key) > 1.25 * max(len(o) for o in others):
        found.append("longest by far")
    key_abs = set(words(key)) & ABSOLUTE
    marked = [bool(set(words(o)) & ABSOLUTE) for o in others]
    if not key_abs and sum(marked) >= 2:
        found.append("absolute words mark the distractors")
    return found


def audited_questions() -> list[quiz.Question]:
    """Every question as some attempt shows it: each static question once, each transfer question at several
    draws."""
    seen: dict[tuple[str, str, tuple[str, ...]], quiz.Question] = {}
    draw = getattr(quiz, "questions_for", None)
    for seed in DRAWS if draw else (0,):
        for q in draw(quiz.load_knowledge(), seed) if draw else quiz.load_knowledge():
            seen.setdefault((q.id, q.prompt, q.options), q)
    return list(seen.values())


def cued_ids() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for q in audited_questions():
        found = cues(q)
        if found:
            out.setdefault(q.id, []).extend(f for f in found if f not in out.get(q.id, []))
    return out


# ---- the audit can fail ------------------------------------------------------------------------------------------


def _cued() -> quiz.Question:
    """A question with every cue: the key echoes the stem and a page's sentence, is far the longest, and the
    distractors say "only" and "never"."""
    return quiz.Question(
        id="cued", topic="The loop", prompt="Why does one round of drafting and checking yield a token even when the "
                                           "check refuses the first guess?",
        options=("Because the pass already gives the target's own token at the first refused position, so a round "
                 "of drafting and checking yields a token even when the check refuses",
                 "Only the draft decides", "The round never ends", "It retries only once"),
        answer=0, explanation="…")


@pytest.mark.parametrize("cue", ["echoes the stem", "longest by far", "absolute words mark the distractors"])
def test_the_audit_flags_a_deliberately_cued_question(cue):
    assert any(f.startswith(cue) for f in cues(_cued())), cues(_cued())


def test_the_audit_flags_a_phrase_copied_from_a_page():
    sentence = "A causal language model returns a next-token distribution at every input position"
    assert sentence.lower() in page_text().lower(), "the capture no longer holds the sentence this test quotes"
    q = quiz.Question(id="copied", topic="Verification", prompt="What does the target's pass give?",
                      options=(sentence, "The draft's guesses, ranked by the target's score of each",
                               "One distribution, for the position after the last guess",
                               "The target's own guesses for the next K tokens, one by one"),
                      answer=0, explanation="…")
    found = cues(q)
    assert any(f.startswith("repeats a page's phrase") for f in found), found
    assert any(f.startswith("echoes the pages") for f in found), found


def test_the_pages_text_holds_every_lesson_page():
    text = page_text()
    for title in ("Speedup calculator", "Is verification free here?", "Why the output is unchanged", "Under the hood",
                  "Variants", "In practice"):
        assert title in text, title


# ---- the knowledge check passes it -------------------------------------------------------------------------------


def test_at_most_three_questions_let_the_key_stand_out():
    flagged = cued_ids()
    assert len(flagged) <= MAX_CUED, "\n".join(f"{qid}: {'; '.join(why)}" for qid, why in flagged.items())
