"""Two small C++ kernels for position-invariant CPU decode passes, built once: attention and the linears.

The C++ lives in ``specsim/core/kernels/fused.cpp``; this module builds it, names the build, and decides where its
linear kernel is used.

**Attention** (``attend``). Each query row is computed by one thread with reductions in a fixed order
that depends only on the row itself: the score q·k of every visible key summed over the head dimension
in order, the softmax over the visible keys in key order, and the weighted sum of values in key order. So
a row's result is bitwise the same whether it is computed alone (plain decoding) or among the K + 1 rows
of a verification pass, or as a node of a tree. It replaces the per-row Python loop of
:func:`specsim.core.invariant.invariant_attention`, which paid one small float32 attention per row and layer.

**Linears** (``rows_linear``). ``x @ W.T`` for 1 to K + 1 rows, where each (row, output) sum runs through
the same instructions in the same order whatever the number of rows. It has three routes. On a CPU with AMX
tiles (Intel Sapphire Rapids and later) every row sits in a 16-row tile (padded with zeros) that meets the
weights as they are stored, so one row costs what 16 cost: checking K + 1 tokens costs one pass, and the
bitwise guarantee comes free. On a CPU with AVX2 but no bfloat16 arithmetic (AMD Zen 2/3, older Intel), where
the stock bfloat16 matmul costs about one pass per row, the AVX2 route reads each block of weights from memory
once, widens it to float32 and meets every row with it while it sits in registers, and fetches the next
block while this one computes: the pass is bound by reading the weights, and the arithmetic of up to about
four extra rows hides under that reading. On a CPU with AVX-512 BF16 but no AMX (AMD Zen 4 and later), the
AVX-512 BF16 route blocks the same way but multiplies bfloat16 pairs as stored (``VDPBF16PS``: 32 products an
instruction, no widening), so about eight extra rows hide under the reading (measured on a Zen 4 EPYC: a
576 x 1536 product at 1 row 14 µs against the stock linear's 77, at 9 rows 64 against 135; v(9) of the one-call
pass 1.19, against the AVX2 route's 1.89 on a Zen 3; docs/measurements/decode-paths-2026-12-08-zen4.md).
Without AVX2 the invariant path keeps the stock linears it has probed (see :func:`linear_kernel`).

The kernels are compiled with ``torch.utils.cpp_extension.load`` on first use (about 20 s with g++ on a 2-core
EPYC; the C++ includes ATen's tensor and pybind11's glue, not the whole of ``torch/extension.h``, which took 45) and
cached under ``~/.cache/specsim/torch_extensions``, one folder per build key (:func:`extension_name`: the CPU
flags ``-march=native`` compiles for, torch, the source); ``make run`` builds them ahead of time. Where no
compiler is at hand, or ``SPECSIM_NO_FUSED=1`` switches them off, :func:`kernel` returns None, :func:`status`
says so in one line, and the invariant path falls back to the Python loop and probed stock linears, which give
the same guarantee at a higher cost (``make test`` runs the engine tests that way too).
"""

from __future__ import annotations

import hashlib
import logging
import platform
import sysconfig
import threading
from collections.abc import Iterable
from pathlib import Path

import torch

from specsim.core import environment

LOG = logging.getLogger("specsim")

SOURCES = (Path(__file__).resolve().parent / "kernels" / "fused.cpp",)
"""The C++ the extension is built from (it defines its own Python module: ``attend``, ``rows_linear``,
``draft_pass``, ``linear_path``)."""

CFLAGS = ("-O3", "-march=native", "-fno-math-errno", "-fopenmp")
LDFLAGS = ("-fopenmp",)  # at::parallel_for is OpenMP

ISA_FLAGS = frozenset((
    # x86 (/proc/cpuinfo "flags"): what -march=native may compile for, from SSE to AMX
    "sse", "sse2", "pni", "ssse3", "sse4_1", "sse4_2", "sse4a", "popcnt", "abm", "movbe", "bmi1", "bmi2", "adx",
    "avx", "avx2", "fma", "fma4", "f16c", "xop", "avx_vnni", "avx512f", "avx512dq", "avx512cd", "avx512bw",
    "avx512vl", "avx512ifma", "avx512vbmi", "avx512_vbmi2", "avx512_vnni", "avx512_bitalg", "avx512_vpopcntdq",
    "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8", "amx_fp16",
    # Arm (/proc/cpuinfo "Features")
    "fp", "asimd", "asimdhp", "fphp", "asimddp", "sve", "sve2", "bf16", "i8mm",
))
"""The CPU features a build is keyed by: the instruction sets ``-march=native`` can use. Other flags (a VM's
``hypervisor``, power management) change nothing in the code, so they do not force a rebuild."""


def cpu_flags(cpuinfo: str | None = None) -> frozenset[str]:
    """This CPU's instruction-set flags (:data:`ISA_FLAGS` among those :func:`specsim.core.cpu.cpu_flags` reads); empty
    where /proc/cpuinfo cannot be read (not Linux). ``cpuinfo`` stands in for the file's text."""
    from specsim.core import cpu

    return cpu.cpu_flags(cpuinfo) & ISA_FLAGS

ENABLED = True
"""False routes the invariant path through the Python loop and the probed stock linears (for tests and
benchmarks that compare the two)."""

_LOCK = threading.Lock()
_STATE: dict[str, object] = {}


def build_dir(flags: Iterable[str] | None = None) -> str:
    """One folder per build (see :func:`extension_name`): torch writes its build files there, and two
    environments that share the cache must not rewrite each other's, which rebuilds the kernel every time."""
    from specsim.core.paths import cache_dir

    folder = cache_dir() / "torch_extensions" / extension_name(flags)
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder)


def build_key(flags: Iterable[str] | None = None) -> str:
    """What a build depends on, one item a line: the instruction sets it compiles for (``flags``, this CPU's
    :func:`cpu_flags` by default; ``-march=native`` code must not run where one is missing, so a VM that hides
    AVX2 gets a build of its own whatever the CPU's model name), the compiler flags, the torch it compiles
    against (its release, commit and C++ ABI, and the Python ABI; not where it is installed, so a new clone's
    environment with the same torch reuses the build), and a digest of the C++, so an edited kernel never meets
    an old build."""
    isa = sorted(set(cpu_flags() if flags is None else flags) & ISA_FLAGS)
    if not isa:  # flags unreadable (not Linux): the CPU's name is the best key there is
        from specsim.core.cpu import machine_name

        isa = [f"unknown flags: {machine_name()}"]
    source = hashlib.sha256(b"".join(path.read_bytes() for path in SOURCES)).hexdigest()
    return "\n".join((platform.machine(), " ".join(isa), " ".join(CFLAGS + LDFLAGS), torch.__version__,
                      str(torch.version.git_version), f"cxx11 abi {torch._C._GLIBCXX_USE_CXX11_ABI}",
                      str(sysconfig.get_config_var("SOABI")), source))


def extension_name(flags: Iterable[str] | None = None) -> str:
    """The build's name: ``specsim_fused_`` and a digest of :func:`build_key` (``flags``: the CPU's by default)."""
    return "specsim_fused_" + hashlib.sha1(build_key(flags).encode()).hexdigest()[:10]


BUILT = "built"
"""The marker :func:`build` writes beside a finished build: the library next to it is whole and can be imported."""


def build():
    """Compile :data:`SOURCES` in :func:`build_dir` (torch's ``cpp_extension.load``: g++ and ninja) and import
    the result; then mark the build finished, so later processes import it without running ninja."""
    from torch.utils.cpp_extension import load

    module = load(extension_name(), sources=[str(path) for path in SOURCES], extra_cflags=list(CFLAGS),
                  extra_ldflags=list(LDFLAGS), build_directory=build_dir(), verbose=False)
    (Path(build_dir()) / BUILT).write_text(str(getattr(module, "__file__", "")))
    return module


def built():
    """The finished build for this key (:func:`build_key`), imported from its folder; None when there is none.

    ``load`` would rerun ninja, which compares command lines that name torch's headers by path, so a second
    environment with the same torch (a new clone's ``.venv``) would compile again; the key already says the
    library fits this torch and CPU."""
    import importlib.machinery
    import importlib.util

    name, folder = extension_name(), Path(build_dir())
    library = folder / f"{name}.so"
    if not (folder / BUILT).exists() or not library.exists():
        return None
    spec = importlib.util.spec_from_file_location(name, library,
                                                  loader=importlib.machinery.ExtensionFileLoader(name, str(library)))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kernel():
    """The compiled extension (``attend``, ``rows_linear``, ``linear_path``, ``draft_pass``), building it from
    :data:`SOURCES` on first call; None when it cannot be built or is switched off (``SPECSIM_NO_FUSED=1``)."""
    if not ENABLED:
        return None
    if "kernel" in _STATE:  # built (or refused) already: every attention layer of every pass asks
        return _STATE["kernel"]
    with _LOCK:
        if "kernel" not in _STATE:
            if environment.current().no_fused:
                _STATE["kernel"], _STATE["why"] = None, "switched off (SPECSIM_NO_FUSED=1)"
            else:
                try:
                    _STATE["kernel"], _STATE["why"] = built() or build(), None
                except Exception as error:  # noqa: BLE001 - no compiler, no headers: fall back and say so
                    from specsim.core.errors import brief_error

                    LOG.warning("The fused kernels could not be built (%s); using the slower Python loop "
                                "for the position-invariant path.", brief_error(error))
                    _STATE["kernel"], _STATE["why"] = None, brief_error(error, 160)
        return _STATE["kernel"]


KERNEL_ROUTES = ("amx", "avx512bf16", "avx2")
"""The ``rows_linear`` routes, each reading a weight once for all K + 1 rows, so a verification pass costs
about what a one-token pass does: AMX tiles; AVX-512 BF16 (bfloat16 products without AMX: AMD Zen 4, where
the stock bfloat16 linears cost 3-5x the kernel at 1 to 9 rows); and AVX2 for CPUs without bfloat16
arithmetic (where the stock bfloat16 matmul pays a full pass per row). Without AVX2 and FMA the kernel's
``linear_path()`` names no route and says why, and the invariant path keeps the stock linears."""


def linear_kernel():
    """``rows_linear`` where it reads the weights once for every row (:data:`KERNEL_ROUTES`); else None, and
    the invariant path keeps the stock linears it has probed for row invariance."""
    if not ENABLED:
        return None
    if "linear" not in _STATE:  # asked by every linear of every pass: decide once
        module = kernel()
        usable = module is not None and module.linear_path() in KERNEL_ROUTES
        _STATE["linear"] = module.rows_linear if usable else None
    return _STATE["linear"]


PREFILL_ROWS = {"avx2": 256, "avx512bf16": 128}
"""Per route, the largest pass (a prompt's prefill) that still runs faster through ``rows_linear`` than through
the probed stock linears; larger passes take the stock path (the kernel rereads every row once per block of
outputs, which pays while the rows stay in cache). AVX2: a stock bfloat16 matmul costs about one pass per row
there (5-7x the kernel at 17-128 rows on an AMD EPYC, docs/measurements/invariant-log-2026-12-01-to-03.md).
AVX-512 BF16 (a 2-core Zen 4 EPYC, the bundled target's whole prefill, interleaved): 24 rows 33 ms against 52,
64 rows 65 against 82, 128 rows 122 against 127, 192 rows 178 against 171
(docs/measurements/decode-paths-2026-12-08-zen4.md). AMX: none measured, so none."""


def prefill_rows() -> int:
    """Up to how many rows a pass larger than a decode pass still runs through ``rows_linear`` here
    (:data:`PREFILL_ROWS` for this route; 0 without the linear kernel)."""
    if "prefill" not in _STATE:
        _STATE["prefill"] = PREFILL_ROWS.get(kernel().linear_path(), 0) if linear_kernel() is not None else 0
    return int(_STATE["prefill"])


def status() -> str:
    """One line on which invariant kernels run here."""
    module = kernel()
    if module is None:
        return f"Python loop over rows (the fused kernels are unavailable: {_STATE.get('why')})"
    if linear_kernel() is not None:
        return f"fused C++ attention kernel, {module.linear_path().upper()} linear kernel"
    return f"fused C++ attention kernel, probed stock linears ({module.linear_path()})"


def require_cpu(*tensors: torch.Tensor | None) -> None:
    """The kernels are C++ for the CPU: a tensor on another device (a GPU's) is refused before they see it."""
    for t in tensors:
        if t is not None and t.device.type != "cpu":
            raise ValueError(f"the fused kernels run on the CPU only; got a tensor on {t.device}")


def attend(q: torch.Tensor, keys_t: torch.Tensor, values: torch.Tensor, allowed: torch.Tensor | None) -> torch.Tensor:
    """softmax(q kᵀ) v row by row: q (b, kvh, g, n, d) pre-scaled, keys_t (b, kvh, d, L) and values
    (b, kvh, L, d), all float32; ``allowed`` (b, n, L) bool, or None for causal. Needs :func:`kernel`."""
    require_cpu(q, keys_t, values, allowed)
    empty = torch.empty(0, dtype=torch.bool)
    return kernel().attend(q, keys_t, values, empty if allowed is None else allowed)


def rows_linear(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """``x @ weight.T`` in float32 for x (rows, in) and weight (out, in), each row's result independent of the
    number of rows. Needs :func:`linear_kernel`."""
    require_cpu(x, weight)
    return linear_kernel()(x, weight)


def pack_tiles(weight: torch.Tensor) -> torch.Tensor:
    """A bfloat16 weight (out, in) laid out in the AMX route's tile order for ``rows_linear_packed``:
    (out / 16, in / 32, 16, 32), each block of 16 outputs' tiles one after another in k order. A copy."""
    out_features, in_features = weight.shape
    if out_features % 16 or in_features % 32:
        raise ValueError(f"tiles need out % 16 == 0 and in % 32 == 0; got {out_features} x {in_features}")
    return weight.detach().reshape(out_features // 16, 16, in_features // 32, 32).permute(0, 2, 1, 3).contiguous()

