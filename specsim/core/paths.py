"""Where the repository's files live, found from the package so every entry point works from any folder.

The one module that knows the layout of ``assets/``; everything else asks it.
"""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
ASSETS = REPO_ROOT / "assets"
PAGES = REPO_ROOT / "pages"

DRAFTS = ASSETS / "drafts"
"""Trained drafts, one folder each (``draft.json`` + weights), written by ``python -m specsim.distill``."""

HELDOUT_PROMPTS = ASSETS / "prompts" / "heldout.json"
"""The held-out prompt set: ``{"prompts": [{"id", "domain", "prompt"}, ...]}``; never used for training."""

QUIZ = ASSETS / "quiz"
"""The two quizzes: ``sequence.json`` and ``knowledge.json`` (``specsim.lesson.quiz``)."""
INTERVIEW_QUESTIONS = ASSETS / "interview" / "questions.json"
"""The interview page's questions with worked answers (``specsim.lesson.interview``)."""
RECORDINGS = ASSETS / "live"
"""The live page's recorded runs, one JSON file each, replayed before the models load (``specsim.lesson.recorded``)."""
MEDUSA_HEADS = ASSETS / "medusa" / "smollm2-135m-medusa.pt"
HELDOUT_RESULTS = ASSETS / "variants" / "heldout_results.json"
"""The variant comparison over the held-out set, written by ``python -m specsim.measure.compare_variants --save``."""
OVERLAP_MEASURED = ASSETS / "measurements" / "overlap_by_temperature.json"
VERIFY_CURVE_RECORDED = ASSETS / "measurements" / "verify_curve.json"  # python -m specsim.measure.passcost --save
DOMAINS_RECORDED = ASSETS / "measurements" / "domains.json"  # python -m specsim.lesson.domains --save
DECODE_PATHS_MEASURED = ASSETS / "measurements" / "decode_paths.json"  # python -m specsim.bench --passes --save
"""A real pair's α against temperature (the bundled target, the default draft), written by
``scripts/measure_overlap.py``; the page *Why the output is unchanged* draws it beside its toy."""
CALC_INSTANT_JS = ASSETS / "calculator" / "instant_numbers.js"
"""The calculator's headline numbers recomputed in the browser while a slider moves (app.widgets.instant_numbers)."""


def resolve(path: str | Path) -> Path:
    """A path as given when absolute, otherwise relative to the repository root (not the working directory)."""
    path = Path(path)
    return path if path.is_absolute() else REPO_ROOT / path


def cache_dir() -> Path:
    """Where converted weights live: ``$SPECSIM_CACHE`` or ``~/.cache/specsim`` (:mod:`specsim.core.environment`)."""
    from specsim.core import environment

    return environment.current().cache
