"""specsim.lesson.overlap: the accepted mass Σ min(p, q) as temperature rises, for a full-vocabulary draft and for a
reduced-vocabulary one, whose limit is its share of the target's vocabulary."""

from __future__ import annotations

import json
import re

import torch

from specsim.core.defaults import DEFAULT_DRAFT
from specsim.lesson import overlap
from tests.conftest import ROOT


def test_a_reduced_vocabulary_draft_overlaps_its_vocabulary_share_at_high_temperature():
    gen = torch.Generator().manual_seed(0)
    target, draft = torch.randn(50, generator=gen), torch.randn(10, generator=gen)
    vocab_map = torch.arange(0, 50, 5)  # the draft emits 10 of the target's 50 ids
    hot = overlap.accepted_mass_at_temperature(target, draft, 1e6, vocab_map=vocab_map)
    assert abs(hot - overlap.limit_overlap_at_high_temperature(50, 10)) < 1e-3
    full = overlap.accepted_mass_at_temperature(target, torch.randn(50, generator=gen), 1e6)
    assert abs(full - overlap.limit_overlap_at_high_temperature(50, 50)) < 1e-3


def test_the_docstrings_vocabulary_figures_are_the_shipped_drafts():
    config = json.loads((ROOT / DEFAULT_DRAFT / "draft.json").read_text())
    shares = re.search(r"emits ([\d,]+) of the\ntarget's ([\d,]+) tokens", overlap.__doc__)
    assert shares is not None
    assert [int(x.replace(",", "")) for x in shares.groups()] == [config["vocab"], config["target_vocab"]]
