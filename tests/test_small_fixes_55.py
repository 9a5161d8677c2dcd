"""Issue 55's small fixes: the reduced-vocabulary limit of the overlap at high temperature, the cut chart's p′/q′
names, and MagicDec's authors."""

from __future__ import annotations

import json
import re

import torch

from app.unchanged.figures import pq_figure
from specsim.core import published
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


def test_the_cut_chart_names_the_cut_distributions():
    fig = pq_figure(["a", "b"], [0.5, 0.5], [0.4, 0.6], cut=True)
    names = [trace.name for trace in fig.data]
    assert names[0].startswith("target p′") and names[1].startswith("draft q′") and "min(p′, q′)" in names[2]
    assert "Σ min(p′, q′)" in fig.layout.title.text
    assert [trace.name for trace in pq_figure(["a"], [1.0], [1.0]).data][0] == "target p"


def test_the_verify_pages_context_default_is_its_settings():
    from app import keys
    from app.settings import VerifySettings
    from specsim.core.defaults import BATCH_CONTEXT, BATCH_CONTEXTS

    assert VerifySettings().context == BATCH_CONTEXT in BATCH_CONTEXTS
    assert keys.DEFAULTS[keys.VERIFY_CONTEXT] == VerifySettings().context


def test_the_drafts_section_computes_its_shares_from_the_papers_figures():
    """Issue 55, item 6: depth against parameters, and DistillSpec, every figure from published.py or draft.json."""
    from app.practice import drafts

    c = published.CHEN_2023
    text = drafts.depth_text()
    assert f"{c.draft_ms_per_token / c.target_ms_per_token:.1%} of its time per token" in text
    assert f"{c.draft_params_b / c.target_params_b:.1%} of the target's parameters" in text
    assert f"{c.draft_layers / c.target_layers:.0%} of its layers" in text
    # the claim the section makes: time follows depth more than parameters
    time_share = c.draft_ms_per_token / c.target_ms_per_token
    assert abs(time_share - c.draft_layers / c.target_layers) < abs(time_share - c.draft_params_b / c.target_params_b)
    config = json.loads((ROOT / DEFAULT_DRAFT / "draft.json").read_text())
    distill = drafts.distill_text(config)
    assert published.DISTILLSPEC.figure in distill and "on-policy" in distill and "α = 1 − TV(p, q)" in distill
    assert f"{config['answer_tokens'] / 1e6:.0f} million tokens" in distill and f"{config['val_top1']:.0%}" in distill
    assert f"{config['answer_tokens']:,} training tokens" in drafts.distill_provenance(config)  # the exact count


def test_the_in_practice_page_shows_the_drafts_section():
    from tests.conftest import open_page

    at = open_page("in_practice.py")
    assert not at.exception
    assert "Choosing a draft: depth sets its cost, distillation its acceptance" in [h.value for h in at.subheader]
