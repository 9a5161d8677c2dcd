"""A live run leaves the server's process-wide torch settings alone (issue 23, item 4).

Every user's run goes through the same process, so a run that set the thread count or the default dtype
for its own needs would change every other user's runs. Two runs of the live page (greedy prompt lookup,
sampled early exit) must call none of torch's process-wide setters and leave their readings as they were.

Loading a model is not a run: transformers' ``from_config`` / ``from_pretrained`` set the default dtype to the
model's and back (``local_torch_dtype``), once per process, since the page caches its models. So each case
runs once unwatched, which loads what it needs, and is then watched in a second session.
"""

from __future__ import annotations

import pytest
import torch

from app import state
from tests.conftest import open_page
from tests.live_traces import one_torch_thread

_threads = pytest.fixture(scope="module", autouse=True)(one_torch_thread)

SETTERS = ("set_num_threads", "set_num_interop_threads", "set_default_dtype", "set_default_device",
           "set_flush_denormal", "use_deterministic_algorithms", "set_float32_matmul_precision")


def readings() -> dict[str, object]:
    return {"threads": torch.get_num_threads(), "interop threads": torch.get_num_interop_threads(),
            "default dtype": torch.get_default_dtype(), "deterministic": torch.are_deterministic_algorithms_enabled(),
            "matmul precision": torch.get_float32_matmul_precision()}


@pytest.mark.parametrize(("drafter", "k", "temperature", "seed"), [("prompt_lookup", 2, "0", "0"),
                                                                   ("early_exit", 3, "0.7", "5")])
def test_a_live_run_changes_no_process_wide_torch_setting(monkeypatch, drafter, k, temperature, seed):
    run_live(drafter, k, temperature, seed)  # loads the models this case needs (cached for the process)
    calls = []
    for name in SETTERS:
        real = getattr(torch, name)
        monkeypatch.setattr(torch, name, lambda *a, _n=name, _f=real, **kw: (calls.append((_n, a)), _f(*a, **kw))[1])
    before = readings()
    trace = run_live(drafter, k, temperature, seed)
    assert (trace.settings.drafter, trace.settings.k, trace.settings.temperature) == (drafter, k, float(temperature))
    assert calls == []
    assert readings() == before


def run_live(drafter: str, k: int, temperature: str, seed: str):
    """One run of the live page in a fresh session; its trace."""
    at = open_page("live.py", timeout=600)
    at.text_area(key=state.widget_key(state.LIVE_PROMPT)).set_value("one two three one two three one two")
    at.radio(key=state.widget_key(state.LIVE_DRAFTER)).set_value(drafter)
    for key, value in ((state.LIVE_K, str(k)), (state.LIVE_MAX_NEW, "4"), (state.LIVE_TEMPERATURE, temperature),
                       (state.LIVE_SEED, seed)):
        at.text_input(key=state.widget_key(key)).set_value(value)
    at.run()
    at.button(key="live_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at.session_state[state.LIVE_TRACE]


def test_loading_the_bundled_target_from_its_cache_sets_no_process_wide_dtype(monkeypatch, bundled_target):
    """A second user's model load must not flip the default dtype under a first user's run. (The first load of
    all converts the GGUF through transformers, which does; ``bundled_target`` has written the cache by now.)"""
    from specsim.core import models

    calls = []
    real = torch.set_default_dtype
    monkeypatch.setattr(torch, "set_default_dtype", lambda d: (calls.append(d), real(d))[1])
    loaded = models.load_bundled_target(device="cpu", dtype="bfloat16", invariant=False)
    assert loaded.dtype == torch.bfloat16 and calls == []
