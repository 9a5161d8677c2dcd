"""The CUDA path, checked where it can be without a GPU (issue 39): the device and dtype choice, the guarantee's
wording on a GPU, and that the CPU-only invariant path is never switched on for a GPU's tensors."""

from __future__ import annotations

import pytest
import torch

from specsim.core import models
from specsim.core.trace import Settings
from specsim.lesson.replay import identity_guarantee


def test_the_invariant_path_is_for_the_cpu_only():
    assert models.wants_invariant("cpu", torch.bfloat16)
    assert not models.wants_invariant("cuda", torch.bfloat16) and not models.wants_invariant("cuda:0", torch.float32)


def test_asking_for_the_invariant_path_on_a_gpu_keeps_the_stock_kernels(monkeypatch):
    """Its kernels are C++ for the CPU: on CUDA tensors they must never run, even when asked for."""
    called = []
    monkeypatch.setattr("specsim.core.invariant.make_position_invariant", lambda model: called.append(model) or ())

    class Model(torch.nn.Module):
        def to(self, device):  # no GPU here: moving is what a CUDA machine would do
            return self

    _, invariant, changes = models._finish(Model(), "cuda", torch.bfloat16, True, lambda *_: None)
    assert invariant is False and changes == () and not called
    _, invariant, _ = models._finish(Model(), "cpu", torch.bfloat16, True, lambda *_: None)
    assert invariant is True and called


def test_a_model_loaded_for_cuda_keeps_attention_off_cudnn():
    """cuDNN's attention builds a graph per sequence length: 2 ms a decoding call on an H200 in bfloat16 against
    0.12 ms for float32's kernels (docs/measurements/gpu-h200-2026-12-04.md). The switch needs no GPU to flip."""

    class Model(torch.nn.Module):
        def to(self, device):
            return self

    before = torch.backends.cuda.cudnn_sdp_enabled()
    try:
        torch.backends.cuda.enable_cudnn_sdp(True)
        models._finish(Model(), "cpu", torch.float32, False, lambda *_: None)
        assert torch.backends.cuda.cudnn_sdp_enabled()  # a CPU run leaves the process's choice alone
        models._finish(Model(), "cuda", torch.bfloat16, None, lambda *_: None)
        assert not torch.backends.cuda.cudnn_sdp_enabled()
    finally:
        torch.backends.cuda.enable_cudnn_sdp(before)


@pytest.mark.parametrize("invariant", [False, True])
def test_a_gpu_run_is_called_observed_never_guaranteed(invariant):
    text = identity_guarantee(Settings(4, 8, dtype="bfloat16", device="cuda", invariant=invariant))
    assert text.startswith("Usual but not guaranteed") and "GPU" in text
    assert identity_guarantee(Settings(4, 8, dtype="bfloat16", device="cpu", invariant=True)).startswith("Guaranteed")


def test_asking_for_cuda_without_a_gpu_gives_a_message_not_a_traceback(capsys):
    from specsim.measure import cli

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: the message is for machines without one")
    with pytest.raises(SystemExit) as stopped:
        cli.main(["--prompt", "hi", "--device", "cuda"])
    assert stopped.value.code == 2
    assert "argument --device: must be cpu, or cuda on a machine with a CUDA GPU" in capsys.readouterr().err


def test_the_cpu_kernels_refuse_a_tensor_on_another_device():
    """No CPU-only kernel ever sees a GPU's tensor: the entry points check the device before the C++ runs (meta
    tensors stand in for CUDA ones here)."""
    from specsim.core import fused

    meta = torch.empty(1, 1, 1, 2, 4, device="meta")
    keys_t = torch.empty(1, 1, 4, 3)
    with pytest.raises(ValueError, match="CPU only; got a tensor on meta"):
        fused.attend(meta, keys_t, torch.empty(1, 1, 3, 4), None)
    with pytest.raises(ValueError, match="CPU only"):
        fused.rows_linear(torch.empty(2, 8, device="meta"), torch.empty(4, 8))
    with pytest.raises(ValueError, match="CPU only"):
        fused.rows_linear(torch.empty(2, 8), torch.empty(4, 8, dtype=torch.bfloat16, device="meta"))
