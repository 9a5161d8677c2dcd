"""How many tokens to draft in each iteration: a fixed K, transformers' heuristic schedule, a confidence stop.

Speculative decoding's output never depends on K (each slot is checked by the same rule), only its speed
does: a long draft pays off while the draft keeps guessing right and wastes draft passes once it guesses
wrong. Two adaptive rules are in common use, both from transformers' assisted generation:

- the **heuristic schedule** (``num_assistant_tokens_schedule="heuristic"``): start at K; after a draft whose
  every proposal was kept, draft 2 more next time, otherwise 1 fewer, never fewer than 1. transformers 5.x,
  ``generation/candidate_generator.py``, ``AssistedCandidateGenerator.update_candidate_strategy``::

      if num_matches == len(scores[0]) - 1:      # every candidate drafted this time was kept
          self.num_assistant_tokens += 2
      else:
          self.num_assistant_tokens = max(1, self.num_assistant_tokens - 1)

  "Every proposal" counts what was actually drafted (a draft cut short by the token budget or the confidence
  stop counts as fully kept when all of it was kept), and an empty draft counts as fully kept, as there.
  transformers sets no upper bound; this rule stops at ``k_max`` (specsim's K range ends at 16, the longest
  pass the position-invariant target covers is K + 1 = 17), and the token budget still caps each draft.
- the **confidence stop** (``assistant_confidence_threshold``): end the draft early, after a guess whose
  probability under the draft, q, is below a threshold. transformers' ``ConfidenceCriteria``
  (``generation/stopping_criteria.py``) runs after the guess is appended, so that guess is still checked;
  here too. transformers also retunes the threshold during a run when scikit-learn is installed; here it
  stays fixed.

Either rule leaves the output distribution unchanged: K depends only on what was drafted and kept before,
and every slot is checked by the same rule (greedy: token for token the target's own output).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from specsim.core.defaults import K_MAX

Schedule = Literal["fixed", "heuristic"]
SCHEDULES: tuple[Schedule, ...] = ("fixed", "heuristic")


@dataclass(frozen=True)
class KPolicy:
    """The number of proposals per iteration: ``KPolicy(4)`` is a fixed K = 4, the engine's default."""

    k: int  # the first iteration's K; with the fixed schedule, every iteration's
    schedule: Schedule = "fixed"
    stop_below: float = 0.0  # confidence stop: end the draft after a guess whose q is below this (0: never);
    # the drafter applies it (``propose(..., stop_below=...)``, see specsim.core.drafters.propose_by_passes)
    k_max: int = K_MAX  # the schedule never raises K above this

    def __post_init__(self) -> None:
        if self.k < 0:
            raise ValueError(f"k must be at least 0, got {self.k}")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}, got {self.schedule!r}")
        if not 0.0 <= self.stop_below <= 1.0:
            raise ValueError(f"stop_below must be in [0, 1], got {self.stop_below}")

    def next_k(self, k: int, proposed: int, kept: int) -> int:
        """The next iteration's K, after one that drafted ``proposed`` tokens (asked for ``k``) and kept ``kept``."""
        if self.schedule == "fixed":
            return k
        return min(self.k_max, k + 2) if kept == proposed else max(1, k - 1)


CONFIDENCE_STOP = 0.4  # transformers' default assistant_confidence_threshold

#: What transformers 5.x's assisted generation does when the caller sets nothing (GenerationConfig's defaults):
#: up to 20 guesses a loop, K not scheduled, and the confidence stop above (retuned during a run where
#: scikit-learn is installed). tests/test_kpolicy.py reads them from the installed transformers.
TRANSFORMERS_DEFAULTS = {"num_assistant_tokens": 20, "num_assistant_tokens_schedule": "constant",
                         "assistant_confidence_threshold": CONFIDENCE_STOP}


def live_policy(name: str, k: int) -> KPolicy:
    """The live page's K policy ``name`` ("fixed", "heuristic" or "confidence") starting from the form's K."""
    if name == "fixed":
        return KPolicy(k)
    if name == "heuristic":
        return KPolicy(k, "heuristic")
    if name == "confidence":
        return KPolicy(k, stop_below=CONFIDENCE_STOP)
    raise ValueError(f"unknown K policy {name!r}; choose one of {', '.join(LIVE_POLICIES)}")


LIVE_POLICIES: dict[str, str] = {  # the live page's choice: name -> how the page describes it
    "fixed": "fixed: the same K every loop",
    "heuristic": "transformers' heuristic schedule: +2 after a fully kept draft, −1 otherwise",
    "confidence": f"confidence stop: end a draft after a guess with q below {CONFIDENCE_STOP}",
}
