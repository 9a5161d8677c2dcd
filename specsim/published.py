"""Figures reported in the papers the lesson cites, kept as data so pages compute from them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PublishedSetup:
    """One draft/target pairing from a paper, with per-token times where the paper gives them."""

    citation: str
    target: str
    draft: str
    draft_ms_per_token: float | None = None
    target_ms_per_token: float | None = None
    note: str = ""

    @property
    def draft_cost(self) -> float | None:
        """The draft's time per token as a fraction of the target's: the calculator's c."""
        if self.draft_ms_per_token is None or self.target_ms_per_token is None:
            return None
        return self.draft_ms_per_token / self.target_ms_per_token


CHEN_2023 = PublishedSetup(
    citation="Chen et al., 2023, Accelerating Large Language Model Decoding with Speculative Sampling",
    target="Chinchilla 70B",
    draft="a 4B model of the same architecture",
    draft_ms_per_token=1.8,
    target_ms_per_token=14.1,
    note="overall response latency more than halved, with no loss of quality",
)
LEVIATHAN_2023 = PublishedSetup(
    citation="Leviathan et al., Fast Inference from Transformers via Speculative Decoding",
    target="T5-XXL",
    draft="smaller T5 models",
    note="a similar gain",
)
