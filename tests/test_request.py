"""One run request (issue 53): every range checked once, with the sentences the pages show; the K policy and the
sampling settings ride inside; it travels as JSON and comes back equal."""

from __future__ import annotations

import pytest

from specsim.core import defaults
from specsim.core.kpolicy import LIVE_POLICIES
from specsim.request import RANGES, BadRequest, RunRequest, bounds


def test_a_request_out_of_range_cannot_be_built_and_says_why_in_the_pages_words():
    fields = {"prompt": "the dog", "k": 0, "max_new_tokens": 100_000, "policy": "sometimes", "top_k": 0}
    problems = RunRequest.problems(**fields)
    assert problems == [
        f"K must be between {defaults.K_MIN} and {defaults.K_MAX}, not 0.",
        f"Unknown K policy 'sometimes'; choose one of {', '.join(LIVE_POLICIES)}.",
        f"Top-k must be between 1 and {defaults.TOP_K_MAX}, not 0.",
        f"New tokens must be between 1 and {defaults.MAX_NEW_TOKENS_LIMIT}, not 100000.",
    ]
    with pytest.raises(BadRequest) as refused:
        RunRequest.checked(**fields)
    assert str(refused.value) == " ".join(problems)
    with pytest.raises(ValueError):  # pydantic's own error is a ValueError too
        RunRequest(**fields)
    assert RunRequest.problems(prompt="  \n") == ["The prompt is empty."]
    assert RunRequest.problems(prompt="hi", temperature=2.5)[0].startswith("Temperature must be between 0 and 2")
    assert RunRequest.problems(prompt="hi", top_p=0.0) == ["Top-p must be between 0.01 and 1, not 0."]
    assert RunRequest.problems(prompt="hi", drafter="oracle")[0].startswith("Unknown drafter 'oracle'")
    assert RunRequest.problems(prompt="hi", k=4, top_k=40, top_p=0.9, temperature=0.7) == []


def test_the_bounds_the_pages_and_command_lines_read_are_the_ones_it_checks():
    for field, (lo, hi, _name) in RANGES.items():
        assert bounds(field) == (lo, hi)
        base = {"prompt": "hi"}
        assert RunRequest.problems(**base, **{field: lo}) == RunRequest.problems(**base, **{field: hi}) == []
        step = 1 if isinstance(hi, int) else 0.01
        assert RunRequest.problems(**base, **{field: hi + step}) and RunRequest.problems(**base, **{field: lo - step})


def test_the_policy_and_the_sampling_ride_inside_and_json_round_trips():
    request = RunRequest(prompt_ids=(5, 6, 7), k=3, policy="heuristic", temperature=0.8, top_p=0.9, top_k=20, seed=4)
    assert (request.kpolicy.k, request.kpolicy.schedule) == (3, "heuristic")
    assert (request.sampling.temperature, request.sampling.top_p, request.sampling.top_k) == (0.8, 0.9, 20)
    again = RunRequest.from_dict(request.to_dict())
    assert again == request and again.prompt_ids == (5, 6, 7)
    assert request.changed(seed=5).seed == 5 and request.seed == 4
    with pytest.raises(BadRequest):
        request.changed(k=defaults.K_MAX + 1)
    with pytest.raises(ValueError):  # frozen
        request.k = 2


def test_a_trace_reads_back_through_pydantic_older_and_newer_keys_included():
    """The trace's JSON reader is pydantic's (no hand-written type map): nested records come back as their classes,
    a key an older trace lacks takes its default, a key a newer one adds is ignored."""
    import json

    from specsim.core.trace import Iteration, Trace
    from specsim.lesson.recorded import RecordedRun
    from tests.conftest import ROOT

    run = RecordedRun.from_json((ROOT / "assets" / "live" / "prose_run.json").read_text(encoding="utf-8"))
    data = json.loads(run.spec.to_json())
    assert Trace.from_json(json.dumps(data)) == run.spec
    data["from_a_newer_release"] = 1
    del data["settings"]["top_k"], data["iterations"][0]["caches"]
    older = Trace.from_json(json.dumps(data))
    assert older.settings.top_k is None and older.iterations[0].caches is None
    assert isinstance(older.iterations[1], Iteration) and older.iterations[1] == run.spec.iterations[1]
    one = run.spec.iterations[2]
    assert Iteration.from_json(one.to_json()) == one
