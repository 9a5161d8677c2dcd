"""The papers' figures (specsim.core.published) and how the app cites them: each figure as its paper reports it, and
Leviathan et al. dated as the module dates them wherever a learner reads the citation."""

from __future__ import annotations

import re

from specsim import methods
from specsim.core import published
from tests.conftest import ROOT, open_page, open_tab
from tests.page_text import page_text

PAPER_FIGURES = {  # what the papers report, checked against specsim.core.published
    "LEVIATHAN_SPEEDUP": ("2–3×", "T5-XXL"), "CHEN_SPEEDUP": ("2–2.5×", "Chinchilla 70B"),
    "FU_SPEEDUP": ("up to 1.8×", "Fu et al., 2024"), "MEDUSA_1_SPEEDUP": ("over 2.2×", "Medusa-1"),
}


def test_published_speedups_are_the_papers_figures():
    for name, (figure, where) in PAPER_FIGURES.items():
        speedup = getattr(published, name)
        assert speedup.figure == figure and where in speedup.claim


def test_nvidias_medusa_figure_names_the_405b_model():
    assert "405B" in published.NVIDIA_MEDUSA_SPEEDUP.setting
    assert "70B" in published.NVIDIA_MEDUSA_70B_SPEEDUP.setting
    claims = methods.method("medusa_tree").claimed_speedup()
    assert "405B" in claims and "70B" in claims


# ---- Leviathan et al.: ICML 2023, arXiv 2022, wherever it is cited ----------------------------------------------


def _question_text(q) -> str:
    return " ".join((q.topic, q.prompt, *q.options, q.explanation))


def test_leviathan_is_dated_as_the_published_module_dates_it_everywhere():
    """In the knowledge check and the interview answers, every "Leviathan et al." is followed by the module's date."""
    from specsim.lesson import interview, quiz

    when = published.LEVIATHAN_2023.when
    texts = [_question_text(q) for q in quiz.load_knowledge()]
    texts += [q.question + " " + q.answer for q in interview.load()]
    cited = [t for t in texts if "Leviathan" in t]
    assert cited  # the quiz cites it
    for t in cited:
        for m in re.finditer(r"Leviathan et al\.", t):
            assert t[m.end():m.end() + len(when) + 3].lstrip(" ,(").startswith(when), t[m.start():m.end() + 40]
    assert "{leviathan.year}" not in quiz.KNOWLEDGE_FILE.read_text(encoding="utf-8")


WRONG_YEAR = re.compile(r"Leviathan[^()\n]{0,40}\(?(?<!arXiv )2022")
"""Leviathan et al. dated 2022 alone (the preprint's year, not the venue's)."""


def _rendered_pages() -> dict[str, str]:
    """What every page shows as it opens, and each of the calculator's tabs (only the open tab is drawn)."""
    from app import state

    texts = {path.name: page_text(open_page(path.name)) for path in sorted((ROOT / "pages").glob("*.py"))}
    calculator = open_page("calculator.py")
    for tab in state.CALC_TABS[1:]:
        texts[f"calculator.py, {tab}"] = page_text(open_tab(calculator, tab))
    return texts


def test_leviathan_et_al_is_dated_icml_2023_and_arxiv_2022_everywhere():
    from specsim.lesson import quiz

    assert published.LEVIATHAN_2023.year == 2023 and "2023" in published.LEVIATHAN_2023.citation
    assert WRONG_YEAR.search("as Leviathan et al. (2022) show") and not WRONG_YEAR.search(
        "Leviathan et al. (ICML 2023; arXiv 2022)")  # the check can fail, and passes the module's date
    texts = {q.id: _question_text(q) for q in quiz.load_knowledge()}
    pages = _rendered_pages()
    assert sum("Leviathan" in text for text in pages.values()) >= 3  # the pages cite it
    texts.update(pages)
    wrong = [where for where, text in texts.items() if WRONG_YEAR.search(text)]
    assert not wrong
