"""Replay helpers, figures and the cancel hook on traces the real engine records with the bundled target."""

import pytest

from app.live import figures as figs
from app.live import run as live_run
from app.live.tokens import chips_html
from specsim.core.drafters import PromptLookupDrafter
from specsim.core.engine import plain_generate, speculative_generate
from specsim.core.kpolicy import KPolicy
from specsim.core.model_drafters import EarlyExitDrafter
from specsim.core.sampling import SamplingConfig
from specsim.core.trace import Trace
from specsim.lesson import replay
from tests.live_traces import one_torch_thread

_threads = pytest.fixture(scope="module", autouse=True)(one_torch_thread)

PROMPT = "Monday, Tuesday, Wednesday. Monday, Tuesday,"


def _ids(target) -> list[int]:
    return list(target.tokenizer(PROMPT).input_ids)  # no chat template: a short prompt keeps the test fast


@pytest.fixture(scope="module")
def greedy_runs(bundled_target):
    ids = _ids(bundled_target)
    spec = speculative_generate(bundled_target, EarlyExitDrafter(bundled_target.model, 15), ids, KPolicy(3), 6)
    plain = plain_generate(bundled_target, ids, spec.n_generated)
    return spec, plain


@pytest.fixture(scope="module")
def sampled(bundled_target):
    ids = _ids(bundled_target)
    return speculative_generate(bundled_target, PromptLookupDrafter(), ids, KPolicy(4), 10,
                                sampling=SamplingConfig(0.9), seed=3)


def _check_replay(trace: Trace) -> None:
    emitted_so_far: list[int] = list(trace.generated_ids[: trace.n_prefilled])  # the prefill's token
    for i, it in enumerate(trace.iterations):
        chips = replay.chips_at(trace, i)
        assert [c.token_id for c in chips if c.role == "output"] == emitted_so_far
        current = [c for c in chips if c.role not in ("prompt", "output")]
        assert [c.token_id for c in current if c.role != "extra"] == [s.token_id for s in it.slots]
        extras = [c for c in current if c.role == "extra"]
        assert [c.token_id for c in extras] == ([it.extra.token_id] if len(it.emitted) > it.n_accepted else [])
        assert f"{len(it.emitted)} token" in replay.narrate(trace, i)
        assert "&lt;" in chips_html(chips) or "<" not in "".join(c.text for c in chips)
        for pos in range(1, it.k + 1):
            figs.alternatives_figure(it, pos)
        emitted_so_far += it.emitted
    assert tuple(emitted_so_far) == trace.generated_ids


def test_greedy_trace_replays_and_matches_plain(greedy_runs):
    spec, plain = greedy_runs
    _check_replay(spec)
    assert replay.identity(spec, plain).identical
    stats = replay.run_stats(spec, plain)
    assert stats.alpha == spec.acceptance_rate
    assert sum(stats.kept_counts) == len(spec.iterations)
    assert stats.kept_share[0] == pytest.approx(sum(it.n_accepted >= 1 for it in spec.iterations)
                                                 / sum(it.k >= 1 for it in spec.iterations))
    costs = stats.costs
    assert costs.speedup == pytest.approx(costs.tokens_per_loop / (costs.k * costs.draft_cost + costs.verify_cost
                                                                   + costs.other_cost))
    assert costs.wall_clock_speedup == pytest.approx(spec.tokens_per_s / plain.tokens_per_s)


def test_timeline_of_real_runs_spans_their_total_time(greedy_runs):
    spec, plain = greedy_runs
    f = figs.timeline_figure(spec, plain)
    for row, trace in (("speculative", spec), ("plain", plain)):
        ends = [b + w for bar in f.data for b, w, y in zip(bar.base, bar.x, bar.y, strict=True) if y == row]
        assert max(ends) == pytest.approx(trace.total_time_s * 1000, rel=1e-6)


def test_sampled_trace_replays_with_residuals(sampled):
    _check_replay(sampled)
    rejected = [it for it in sampled.iterations if it.residual is not None]
    for it in rejected:
        f = figs.residual_figure(it)
        assert sum(f.data[0].y) <= 1.0 + 1e-6
    restored = Trace.from_json(sampled.to_json())
    assert [replay.narrate(restored, i) for i in range(len(restored.iterations))] == [
        replay.narrate(sampled, i) for i in range(len(sampled.iterations))]


class _FakeBar:
    """Stands in for st.progress; raises Streamlit's stop on its ``fail_at``-th update, as a click would."""

    def __init__(self, fail_at: int):
        self.calls, self.fail_at = 0, fail_at

    def progress(self, *_args, **_kwargs):
        self.calls += 1
        if self.calls == self.fail_at:
            raise live_run.ScriptControlException()


def test_an_interruption_stops_the_engine_after_the_current_iteration(bundled_target, monkeypatch):
    monkeypatch.setattr(live_run, "UPDATE_EVERY_S", 0.0)
    hook = live_run._Interruptible(_FakeBar(fail_at=2), lambda: (0.5, "working"))
    trace = speculative_generate(bundled_target, PromptLookupDrafter(), _ids(bundled_target), KPolicy(2), 40,
                                 on_iteration=hook.update, should_stop=hook.should_stop)
    assert hook.interruption is not None
    assert trace.stop_reason == "cancelled" and len(trace.iterations) == 2
    _check_replay(trace)
