"""Shared test helpers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

MAIN = str(ROOT / "app" / "main.py")


def open_page(script: str | None = None, timeout: float = 120, query: dict | None = None):
    """Run the app through AppTest and switch to ``pages/<script>`` (home when None)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(MAIN, default_timeout=timeout)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    if script is not None:
        at.switch_page(str(ROOT / "pages" / script)).run()
    return at


# ---- models (engine tests) -------------------------------------------------------------------------


@pytest.fixture
def one_torch_thread():
    """Model tests run much faster without intra-op threads fighting over two busy cores."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def bundled_target():
    """The bundled SmolLM2-135M-Instruct target in float32 on the CPU, loaded once per test session."""
    from specsim.models import load_bundled_target

    return load_bundled_target(device="cpu", dtype="float32")


@pytest.fixture(scope="session")
def default_target():
    """The bundled target as the app runs it on this machine: bfloat16 with the position-invariant decode path
    where the CPU has native bfloat16 arithmetic (float32 elsewhere)."""
    from specsim.models import load_bundled_target

    return load_bundled_target(device="cpu")


@pytest.fixture(scope="session")
def bf16_targets():
    """The bundled target in bfloat16 twice: with the position-invariant decode path and without it."""
    from specsim.models import load_bundled_target

    return (load_bundled_target(device="cpu", dtype="bfloat16", invariant=True),
            load_bundled_target(device="cpu", dtype="bfloat16", invariant=False))


def pytest_collection_modifyitems(config, items):
    """Run the real-browser tests first.

    Playwright's sync API refuses to start inside a running asyncio loop, and some in-process
    Streamlit tests leave one behind; the browser session opened first is unaffected.
    """
    items.sort(key=lambda item: 0 if "tests/browser" in str(item.fspath) else 1)
