"""A fused, position-invariant attention for CPU decode passes: one small C++ kernel, built once.

Each query row is computed by one thread with reductions in a fixed order that depends only on the
row itself: the score q·k of every visible key summed over 16 fixed lanes and then combined in a fixed
tree, the softmax over the visible keys in key order, and the weighted sum of values in key order. So a
row's result is bitwise the same whether it is computed alone (plain decoding) or among the K + 1 rows
of a verification pass, or as a node of a tree. It replaces the per-row Python loop of
:func:`specsim.invariant.invariant_attention`, which paid one small float32 attention per row and layer.

The kernel is compiled with ``torch.utils.cpp_extension.load_inline`` on first use (about 25 s with
g++) and cached under ``~/.cache/specsim/torch_extensions``; ``make run`` builds it ahead of time. Where
no compiler is at hand, :func:`kernel` returns None, :func:`status` says so in one line, and the
invariant path falls back to the Python loop, which gives the same guarantee at a higher cost.
"""

from __future__ import annotations

import logging
import os
import threading

import torch

LOG = logging.getLogger("specsim")

SOURCE = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

// exp(x) for x <= 0 as 2^i * 2^f, 2^f by a degree-6 polynomial (relative error about 2e-7). Elementwise,
// so the compiler vectorises it; the same input always gives the same output.
static inline float exp_nonpositive(float x) {
  x = x < -87.f ? -87.f : x;
  const float t = x * 1.4426950408889634f;
  const float whole = std::floor(t);
  const float f = t - whole;
  float p = 1.535336188319500e-4f;
  p = p * f + 1.339887440266574e-3f;
  p = p * f + 9.618437357674640e-3f;
  p = p * f + 5.550332471162809e-2f;
  p = p * f + 2.402264791363012e-1f;
  p = p * f + 6.931472028550421e-1f;
  p = p * f + 1.0f;
  const int32_t bits = (static_cast<int32_t>(whole) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

// q: (B, H, G, N, D) float32, pre-scaled; kt: (B, H, D, L) float32 (keys transposed); v: (B, H, L, D)
// float32; allowed: (B, N, L) bool, or empty for causal (row i sees keys 0 .. L - N + i).
// Per row: each score sums over d in order 0..D-1; the softmax total and the weighted sum of values run
// over the visible keys in key order. Nothing depends on N or on the other rows. Returns (B, H, G, N, D).
torch::Tensor attend(torch::Tensor q, torch::Tensor kt, torch::Tensor v, torch::Tensor allowed) {
  TORCH_CHECK(q.dtype() == torch::kFloat32 && kt.dtype() == torch::kFloat32 && v.dtype() == torch::kFloat32);
  q = q.contiguous(); kt = kt.contiguous(); v = v.contiguous();
  const int64_t B = q.size(0), H = q.size(1), G = q.size(2), N = q.size(3), D = q.size(4), L = kt.size(3);
  const bool causal = allowed.numel() == 0;
  torch::Tensor mask = causal ? allowed : allowed.to(torch::kBool).contiguous();
  auto out = torch::empty_like(q);
  const float* qp = q.data_ptr<float>();
  const float* kp = kt.data_ptr<float>();
  const float* vp = v.data_ptr<float>();
  const bool* ap = causal ? nullptr : mask.data_ptr<bool>();
  float* op = out.data_ptr<float>();
  at::parallel_for(0, B * H * G * N, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> w(L);
    for (int64_t row = begin; row < end; ++row) {
      const int64_t i = row % N, bh = row / (G * N), b = bh / H;
      const float* __restrict__ qr = qp + row * D;
      const float* __restrict__ kb = kp + bh * D * L;
      const float* __restrict__ vb = vp + bh * L * D;
      const bool* ar = causal ? nullptr : ap + (b * N + i) * L;
      const int64_t n_keys = causal ? L - N + i + 1 : L;
      float* __restrict__ s = w.data();
      for (int64_t j = 0; j < n_keys; ++j) s[j] = 0.f;
      for (int64_t t = 0; t < D; ++t) {
        const float qt = qr[t];
        const float* __restrict__ krow = kb + t * L;
#pragma GCC ivdep
        for (int64_t j = 0; j < n_keys; ++j) s[j] += qt * krow[j];
      }
      float top = -INFINITY;
      for (int64_t j = 0; j < n_keys; ++j)
        if (!ar || ar[j]) top = s[j] > top ? s[j] : top;
#pragma GCC ivdep
      for (int64_t j = 0; j < n_keys; ++j) s[j] = exp_nonpositive(s[j] - top);
      float total = 0.f;
      for (int64_t j = 0; j < n_keys; ++j)
        if (!ar || ar[j]) total += s[j];
      float* __restrict__ o = op + row * D;
      for (int64_t t = 0; t < D; ++t) o[t] = 0.f;
      for (int64_t j = 0; j < n_keys; ++j) {
        if (ar && !ar[j]) continue;
        const float a = s[j] / total;
        const float* __restrict__ vr = vb + j * D;
#pragma GCC ivdep
        for (int64_t t = 0; t < D; ++t) o[t] += a * vr[t];
      }
    }
  });
  return out;
}
"""

ENABLED = True
"""False routes the invariant path through the Python loop (for tests and benchmarks that compare the two)."""

_LOCK = threading.Lock()
_STATE: dict[str, object] = {}


def build_dir() -> str:
    """One folder per build (see :func:`extension_name`): torch writes its build files there, and two
    environments that share the cache must not rewrite each other's, which rebuilds the kernel every time."""
    from specsim.paths import cache_dir

    folder = cache_dir() / "torch_extensions" / extension_name()
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder)


def extension_name() -> str:
    """The build's name, keyed by the CPU model (``-march=native`` code must not run on another CPU) and by the
    torch it compiles against (its version and where it is installed, whose headers the build reads)."""
    import hashlib

    from specsim.host import machine_name

    key = "\n".join((machine_name(), torch.__version__, os.path.dirname(torch.__file__)))
    return "specsim_fused_attention_" + hashlib.sha1(key.encode()).hexdigest()[:10]


def kernel():
    """The compiled ``attend`` function, building it on first call; None when it cannot be built."""
    if not ENABLED:
        return None
    with _LOCK:
        if "kernel" not in _STATE:
            if os.environ.get("SPECSIM_NO_FUSED") == "1":
                _STATE["kernel"], _STATE["why"] = None, "switched off (SPECSIM_NO_FUSED=1)"
            else:
                try:
                    from torch.utils.cpp_extension import load_inline

                    module = load_inline(extension_name(), cpp_sources=SOURCE, functions=["attend"],
                                         extra_cflags=["-O3", "-march=native", "-fno-math-errno"],
                                         build_directory=build_dir(), verbose=False)
                    _STATE["kernel"], _STATE["why"] = module.attend, None
                except Exception as error:  # noqa: BLE001 - no compiler, no headers: fall back and say so
                    from specsim.errors import brief_error

                    LOG.warning("The fused attention kernel could not be built (%s); using the slower Python "
                                "loop for the position-invariant path.", brief_error(error))
                    _STATE["kernel"], _STATE["why"] = None, brief_error(error, 160)
        return _STATE["kernel"]


def status() -> str:
    """One line on which invariant attention runs here."""
    if kernel() is not None:
        return "fused C++ attention kernel"
    return f"Python loop over rows (the fused kernel is unavailable: {_STATE.get('why')})"


def attend(q: torch.Tensor, keys_t: torch.Tensor, values: torch.Tensor, allowed: torch.Tensor | None) -> torch.Tensor:
    """softmax(q kᵀ) v row by row: q (b, kvh, g, n, d) pre-scaled, keys_t (b, kvh, d, L) and values
    (b, kvh, L, d), all float32; ``allowed`` (b, n, L) bool, or None for causal. Needs :func:`kernel`."""
    empty = torch.empty(0, dtype=torch.bool)
    return kernel()(q, keys_t, values, empty if allowed is None else allowed)
