"""The first GPU run's identity results (issue 39): the asset the hood page reads is what the raw bench outputs
say, and the page's sentence is counted from it."""

from __future__ import annotations

import json

from specsim.lesson import gpu_identity
from tests.conftest import open_page


def test_the_asset_is_what_the_raw_bench_outputs_say():
    assert gpu_identity.load() == json.loads(json.dumps(gpu_identity.build()))


def test_the_rows_are_read_from_the_bench_table_and_the_sentence_counts_them():
    text = (gpu_identity.RAW / "bench.txt").read_text(encoding="utf-8")
    rows, prompts, tokens = gpu_identity.parse_bench(text)
    assert (prompts, tokens) == (8, 32) and {r.dtype for r in rows} == {"bfloat16"}
    assert [(r.drafter, r.k) for r in rows][:2] == [("standalone-L2-W384-v8k", 1), ("standalone-L2-W384-v8k", 2)]
    data = gpu_identity.build()
    before = gpu_identity.sentence(data)
    assert "in bfloat16, 5 of the 10 drafter-and-K settings" in before and "in float32, 0 of 4 did" in before
    flipped = dict(data, rows=[dict(r, identical=False) if r["dtype"] == "float32" else r for r in data["rows"]])
    assert "in float32, 4 of 4 did" in gpu_identity.sentence(flipped)


def test_the_hood_page_says_identity_on_a_gpu_is_observed_not_guaranteed():
    at = open_page("under_the_hood.py")
    assert not at.exception
    assert any("On a GPU, identity is observed, not guaranteed" in m.value for m in at.markdown)
