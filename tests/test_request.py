"""One run request (issue 53): every range checked once, with the sentences the pages show; the K policy and the
sampling settings ride inside; it travels as JSON and comes back equal."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from specsim.core import defaults
from specsim.core.kpolicy import LIVE_POLICIES
from specsim.request import RANGES, BadRequest, RunRequest, bounds


def test_a_request_out_of_range_cannot_be_built_and_says_why_in_the_pages_words():
    fields = {"prompt": "the dog", "k": 0, "max_new_tokens": 100_000, "policy": "sometimes", "top_k": 0}
    problems = RunRequest.problems(**fields)
    assert problems == [
        f"K must be a whole number from {defaults.K_MIN} to {defaults.K_MAX}, not 0.",
        f"Unknown K policy 'sometimes'; choose one of {', '.join(LIVE_POLICIES)}.",
        f"Top-k must be a whole number from 1 to {defaults.TOP_K_MAX}, not 0.",
        f"New tokens must be a whole number from 1 to {defaults.MAX_NEW_TOKENS_LIMIT}, not 100000.",
    ]
    with pytest.raises(BadRequest) as refused:
        RunRequest.checked(**fields)
    assert str(refused.value) == " ".join(problems)
    with pytest.raises(ValueError):  # pydantic's own error is a ValueError too
        RunRequest(**fields)
    assert RunRequest.problems(prompt="  \n") == ["The prompt is empty."]
    assert RunRequest.problems(prompt="hi", temperature=2.5)[0].startswith("Temperature must be a number from 0 to 2")
    assert RunRequest.problems(prompt="hi", top_p=0.0) == ["Top-p must be a number from 0.01 to 1, not 0.0."]
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


# ---- each range written once (issue 63) ------------------------------------------------------------------------
ROOT = Path(__file__).resolve().parent.parent
BOUND_NAMES = {"K_MIN", "K_MAX", "MAX_NEW_TOKENS_LIMIT", "TEMPERATURE_MAX", "SEED_MIN", "SEED_MAX", "TOP_K_MAX",
               "TOP_P_MIN"}  # specsim.core.defaults' values for RANGES
RANGE_WORDS = re.compile(r"must be (between|a whole number from|a number from|at most)")
RUN_FIELD = re.compile(r"(?<![\w-])-{0,2}(k|temperature|top[-_ ]?[pk]|seed|max[-_ ]new[-_ ]tokens|new tokens)\b",
                       re.IGNORECASE)


def _refuses(statement: ast.stmt) -> bool:
    """Whether a statement refuses something: it raises, calls an ``error`` method or states a range."""
    for node in ast.walk(statement):
        if isinstance(node, ast.Raise) or isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "error":
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and RANGE_WORDS.search(node.value):
            return True
    return False


def range_copies(source: str) -> list[str]:
    """Where ``source`` writes a run's range again: a refusal that compares with one of the bounds RANGES is made
    of, or a sentence that states a run field's range. The engine's checks that a value has a meaning at all (a
    temperature of at least 0, a top-p share of the mass in (0, 1]) state no range the product chose: not copies."""
    found = set()
    tree = ast.parse(source)
    for statement in (n for n in ast.walk(tree) if isinstance(n, ast.stmt) and not hasattr(n, "body")):
        for node in ast.walk(statement):
            if isinstance(node, ast.Compare) and _refuses(statement):
                names = {getattr(n, "id", None) or getattr(n, "attr", None) for n in [node.left, *node.comparators]}
                found |= {f"line {node.lineno}: compares with {name}" for name in names & BOUND_NAMES}
    for statement in (n for n in ast.walk(tree) if isinstance(n, ast.If | ast.While)):
        for node in ast.walk(statement.test):
            if isinstance(node, ast.Compare) and any(_refuses(s) for s in statement.body):
                names = {getattr(n, "id", None) or getattr(n, "attr", None) for n in [node.left, *node.comparators]}
                found |= {f"line {node.lineno}: compares with {name}" for name in names & BOUND_NAMES}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if RANGE_WORDS.search(node.value) and RUN_FIELD.search(node.value):
                found.add(f"line {node.lineno}: {node.value.strip()[:60]!r}")
    return sorted(found)


def test_each_range_is_written_once():
    """The form, the URL, the command lines, the engine and the request once had five range checks for K, each with
    its own sentence. The ranges and the sentence live in specsim/request.py; everything else reads them."""
    copies = {}
    for folder in ("specsim", "app", "pages", "scripts"):
        for path in (ROOT / folder).rglob("*.py"):
            if path == ROOT / "specsim" / "request.py":
                continue
            if found := range_copies(path.read_text(encoding="utf-8")):
                copies[str(path.relative_to(ROOT))] = found
    assert copies == {}


def test_the_copy_finder_finds_the_copies_this_code_base_once_had():
    cli = "if not k_min <= args.k <= K_MAX:\n    parser.error(f\"-k must be between {k_min} and {k_max}\")\n"
    page = 'found["k"] = f"“K: proposals per loop” must be a whole number from 1 to 16, not {value!r}."\n'
    policy = 'raise ValueError(f"k must be at most {self.k_max}, got {self.k}")\n'
    listed = "problems = [(not 1 <= args.seed <= SEED_MAX, f\"--seed must be between 1 and {SEED_MAX}\")]\n"
    assert len(range_copies(cli)) == 2 and len(range_copies(page)) == 1 and len(range_copies(policy)) == 1
    assert len(range_copies(listed)) == 2
    assert range_copies('raise ValueError(f"--learners must be between 1 and 12")\n') == []
    assert range_copies('raise ValueError(f"temperature must be >= 0, got {t}")\n') == []
    assert range_copies("note = 'never measured' if len(rates) < analytics.K_MAX else ''\n") == []  # no refusal


def test_a_tree_rides_inside_a_request_and_needs_a_model_drafter():
    from specsim.core.trees import TreeShape

    chain = RunRequest(prompt="hi")
    assert chain.tree is None
    tree = RunRequest(prompt="hi", tree_nodes=8, tree_depth=4)
    assert tree.tree == TreeShape(8, 4, 3) and RunRequest(prompt="hi", tree_nodes=2).tree == TreeShape(2, 4, 2)
    assert RunRequest.from_dict(tree.to_dict()) == tree
    assert RunRequest.problems(prompt="hi", tree_nodes=0) == ["The tree's guesses must be a whole number from 1 to "
                                                              f"{defaults.TREE_NODES_MAX}, not 0."]
    assert RunRequest.problems({"tree_depth": "Depth"}, prompt="hi", tree_nodes=4, tree_depth=99) == [
        f"Depth must be a whole number from 1 to {defaults.K_MAX}, not 99."]
    assert RunRequest.problems(prompt="hi", tree_nodes=4, drafter="prompt_lookup") == [
        "A token tree needs a drafter that runs a model (a draft model or early exit), not prompt_lookup."]
    assert RunRequest.problems(prompt="hi", tree_nodes=4, policy="confidence") == [
        "A token tree has no K policy: its size is its guesses and its depth."]
