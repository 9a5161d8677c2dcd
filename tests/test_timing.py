"""The one timing driver (specsim.measure.timing): warm-up, interleaved order, pairing, matched plain runs, stopping."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from specsim.core.trace import Settings, Trace
from specsim.measure.timing import PLAIN, Contender, time_decoders

ROOT = Path(__file__).resolve().parents[1]


class Log:
    """Decoders that write down every call and return a trace of ``writes`` tokens (at most the budget)."""

    def __init__(self):
        self.calls: list[tuple[str, tuple[int, ...], int]] = []

    def decoder(self, name: str, writes: int | None = None):
        def decode(ids, n: int) -> Trace:
            self.calls.append((name, tuple(ids), n))
            count = n if writes is None else min(n, writes)
            return Trace(mode="plain" if name == PLAIN else "speculative", settings=Settings(k=1, max_new_tokens=n),
                         prompt="", prompt_ids=tuple(ids), generated_ids=tuple(range(count)), text="",
                         total_time_s=0.01 * (len(self.calls)), meta={"call": len(self.calls) - 1})
        return decode


def test_warm_up_first_then_rounds_in_alternating_order_each_run_paired_with_its_rounds_plain_run():
    log = Log()
    a, b = Contender("a", log.decoder("a")), Contender("b", log.decoder("b"))
    timed = time_decoders([[1], [2]], [a, b], log.decoder(PLAIN), 8, rounds=2, warmup_tokens=3)
    warm, timed_calls = log.calls[:3], log.calls[3:]
    assert warm == [("a", (1,), 3), ("b", (1,), 3), (PLAIN, (1,), 3)]
    names = [name for name, _, _ in timed_calls]
    assert names == [PLAIN, "a", "b", PLAIN, "a", "b", "b", "a", PLAIN, "b", "a", PLAIN]
    assert all(n == 8 for _, _, n in timed_calls)
    assert timed.rounds == 2 and timed.complete
    for name in ("a", "b"):
        pairs = timed.pairs(name)
        assert len(pairs) == 4
        for spec, plain in pairs:  # the same prompt, and the plain run of the same round
            assert spec.prompt_ids == plain.prompt_ids
            assert abs(spec.meta["call"] - plain.meta["call"]) <= 2
    assert len(timed.plain_runs()) == 4


def test_shuffled_order_runs_everything_once_per_prompt_and_round_and_depends_on_the_seed():
    def order(seed: int) -> list[str]:
        log = Log()
        contenders = [Contender(f"K={k}", log.decoder(f"K={k}")) for k in range(1, 6)]
        time_decoders([[1]], contenders, log.decoder(PLAIN), 4, rounds=3, order="shuffle", seed=seed,
                      warmup_tokens=0)
        return [name for name, _, _ in log.calls]

    first = order(0)
    assert first == order(0) and first != order(1)
    for r in range(3):
        assert sorted(first[6 * r: 6 * r + 6]) == sorted([PLAIN] + [f"K={k}" for k in range(1, 6)])


def test_matched_plain_follows_each_run_and_decodes_as_many_tokens_as_it_wrote():
    log = Log()
    timed = time_decoders([[7]], [Contender("spec", log.decoder("spec", writes=5))], log.decoder(PLAIN), 20,
                          matched_plain=True, warmup_tokens=0)
    assert log.calls == [("spec", (7,), 20), (PLAIN, (7,), 5)]
    (spec, plain), = timed.pairs("spec")
    assert spec.n_generated == plain.n_generated == 5 and timed.identical("spec")


def test_a_stop_keeps_the_runs_so_far_and_enough_ends_after_a_round():
    log = Log()
    calls = []
    timed = time_decoders([[1]], [Contender("spec", log.decoder("spec"))], log.decoder(PLAIN), 4,
                          matched_plain=True, warmup_tokens=0, should_stop=lambda: bool(calls.append(1)) or True)
    assert not timed.complete and len(timed.runs["spec"]) == 1 and timed.pairs("spec") == []
    log = Log()
    timed = time_decoders([[1]], [Contender("spec", log.decoder("spec"))], log.decoder(PLAIN), 4, rounds=50,
                          warmup_tokens=0, enough=lambda t: t.rounds >= 3)
    assert timed.rounds == 3 and len(log.calls) == 6


def test_bad_requests_are_refused():
    log = Log()
    with pytest.raises(ValueError, match="nothing to time"):
        time_decoders([], [Contender("a", log.decoder("a"))], log.decoder(PLAIN), 4)
    with pytest.raises(ValueError, match="distinct"):
        time_decoders([[1]], [Contender(PLAIN, log.decoder("a"))], log.decoder(PLAIN), 4)
    with pytest.raises(ValueError, match="order"):
        time_decoders([[1]], [Contender("a", log.decoder("a"))], log.decoder(PLAIN), 4, order="random")


TIMED_BY_THE_DRIVER = ("specsim/liverun.py", "specsim/measure/profile_timing.py", "specsim/lesson/recorded.py",
                       "specsim/measure/bench.py",
                       "specsim/distill/speed.py", "specsim/measure/compare_variants.py")


def _calls(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            names.add(func.id if isinstance(func, ast.Name) else getattr(func, "attr", ""))
    return names


CLOCKS = {"now", "perf_counter", "monotonic", "time", "fair_speedup", "wall_clock_speedup", "cost_model"}
RUN_TIMES = {"decode_time_s", "tokens_per_s", "total_time_s", "pass_times", "verify_time_s"}


def _functions(path: Path):
    """(name, calls, attributes read) of every function in the module, nested functions included in theirs."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            calls, attrs = set(), set()
            for sub in ast.walk(node):
                if isinstance(sub, ast.Call):
                    func = sub.func
                    calls.add(func.id if isinstance(func, ast.Name) else getattr(func, "attr", ""))
                if isinstance(sub, ast.Attribute):
                    attrs.add(sub.attr)
            yield node.name, calls, attrs


def test_every_module_that_times_speculative_against_plain_decoding_goes_through_the_driver():
    """One timing driver (issue 41): a function that runs both decodings and reads a clock or a run's times calls
    time_decoders. Comparing their tokens alone (specsim.lesson.kpolicy_runs,
    specsim.measure.hf_assisted.snippet_check) needs no
    clock."""
    offenders = []
    for folder in ("specsim", "app"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name == "methods.py":  # the registry: each runner runs one decoding; its callers time them
                continue
            for name, calls, attrs in _functions(path):
                both = "speculative_generate" in calls and "plain_generate" in calls
                timed = calls & CLOCKS or attrs & RUN_TIMES
                if both and timed and "time_decoders" not in calls:
                    offenders.append(f"{path.relative_to(ROOT)}: {name}")
    assert offenders == []
    for name in TIMED_BY_THE_DRIVER:
        assert "time_decoders" in _calls(ROOT / name), name
    assert "run_request" in _calls(ROOT / "specsim" / "measure" / "cli.py")  # the live run's timing, as the page's
    assert "time_decoders" in _calls(ROOT / "specsim" / "measure" / "bench.py") and "hf_assisted_trace" in (
        ROOT / "specsim" / "measure" / "bench.py").read_text()
