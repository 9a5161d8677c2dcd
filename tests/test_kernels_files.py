"""The fused kernels' C++ lives in specsim/core/kernels/*.cpp (issue 41): fused.py holds none, loads those files, and
names each build by the instruction sets it compiles for, torch and the source, never by the CPU's model name."""

from __future__ import annotations

import os
import shutil
import tomllib
from pathlib import Path

import pytest
import torch

from specsim.core import fused

ROOT = Path(__file__).resolve().parents[1]
AVX2 = frozenset({"sse4_2", "avx", "avx2", "fma", "f16c"})


def test_fused_py_holds_no_cpp():
    text = (ROOT / "specsim" / "core" / "fused.py").read_text()
    for cpp in ("#include", "torch::", "TORCH_CHECK", "load_inline", "__AVX2__", "PYBIND11_MODULE"):
        assert cpp not in text, cpp


def test_the_sources_are_the_cpp_files_under_specsim_kernels():
    kernels = ROOT / "specsim" / "core" / "kernels"
    assert fused.SOURCES == tuple(sorted(kernels.glob("*.cpp")))
    for path in fused.SOURCES:
        assert path.is_file() and path.suffix == ".cpp"
    text = "".join(path.read_text() for path in fused.SOURCES)
    assert "PYBIND11_MODULE(TORCH_EXTENSION_NAME" in text  # the files define the module torch loads
    for function in ("attend", "rows_linear", "draft_pass", "linear_path"):
        assert f'm.def("{function}"' in text, function


def test_the_route_the_kernel_names_is_the_one_this_cpu_has():
    """linear_path() names a route linear_kernel() selects, or says why there is none; which one follows the CPU's
    instruction sets: AMX tiles first, then AVX-512 BF16 (AMD Zen 4), then AVX2 + FMA (Zen 2/3, older Intel)."""
    module = fused.kernel()
    if module is None:
        pytest.skip(f"no fused kernels here: {fused.status()}")
    path, flags = module.linear_path(), fused.cpu_flags()
    if {"amx_tile", "amx_bf16"} <= flags:
        assert path in ("amx", "avx512bf16"), path  # "avx512bf16" where the OS refuses the tiles' state
    elif {"avx512f", "avx512_bf16", "avx2", "fma"} <= flags:
        assert path == "avx512bf16", path
    elif {"avx2", "fma"} <= flags:
        assert path == "avx2", path
    else:
        assert path.startswith("no linear route: "), path
    assert (fused.linear_kernel() is not None) == (path in fused.KERNEL_ROUTES)


def test_the_kernel_loads_those_files_under_the_build_name(monkeypatch, tmp_path):
    calls = []

    def fake_load(name, sources, **kwargs):
        calls.append((name, sources, kwargs))
        return object()

    monkeypatch.setenv("SPECSIM_CACHE", str(tmp_path))
    monkeypatch.delenv("SPECSIM_NO_FUSED", raising=False)
    monkeypatch.setattr(fused, "ENABLED", True)
    monkeypatch.setattr(fused, "_STATE", {})
    monkeypatch.setattr("torch.utils.cpp_extension.load", fake_load)
    assert fused.kernel() is not None
    ((name, sources, kwargs),) = calls
    assert name == fused.extension_name()
    assert sources == [str(path) for path in fused.SOURCES]
    assert kwargs["extra_cflags"] == list(fused.CFLAGS) and "-march=native" in kwargs["extra_cflags"]
    assert kwargs["build_directory"] == str(tmp_path / "torch_extensions" / name)


def test_a_finished_build_is_imported_without_running_the_build_again(monkeypatch, tmp_path):
    """A second environment with the same torch (a new clone's .venv) imports the finished build: torch's ``load``
    would rerun ninja, whose command lines name torch's headers by path, and compile again (27 s here)."""
    real = fused.kernel()
    if real is None:
        pytest.skip(f"no kernel build on this machine: {fused.status()}")
    monkeypatch.setenv("SPECSIM_CACHE", str(tmp_path))
    monkeypatch.setattr(fused, "_STATE", {})
    calls = []
    monkeypatch.setattr("torch.utils.cpp_extension.load", lambda name, sources, **kwargs: calls.append(name))
    folder = Path(fused.build_dir())
    shutil.copy(real.__file__, folder / f"{fused.extension_name()}.so")
    assert fused.built() is None  # a library without the marker may be half written: not imported
    (folder / fused.BUILT).write_text("")
    module = fused.kernel()
    assert calls == [] and module is not None and Path(module.__spec__.origin).parent == folder
    assert module.linear_path() == real.linear_path()


def test_the_build_name_does_not_follow_where_torch_is_installed():
    key = fused.build_key(AVX2)
    assert os.path.dirname(torch.__file__) not in key
    assert torch.__version__ in key and str(torch.version.git_version) in key


def test_the_build_name_follows_the_instruction_sets(monkeypatch, tmp_path):
    monkeypatch.setenv("SPECSIM_CACHE", str(tmp_path))
    names = {flags: fused.extension_name(flags) for flags in (
        AVX2, AVX2 - {"avx2"}, AVX2 | {"avx512f", "avx512bw"}, AVX2 | {"avx512f", "avx512bw", "avx512_bf16"},
        AVX2 | {"amx_tile", "amx_bf16"})}
    assert len(set(names.values())) == len(names)  # each flag set its own build
    assert fused.build_dir(AVX2) != fused.build_dir(AVX2 - {"avx2"})
    assert Path(fused.build_dir(AVX2)).name == names[AVX2]
    # flags that change no code (a VM's, power management) do not force a rebuild
    assert fused.extension_name(AVX2 | {"hypervisor", "constant_tsc"}) == names[AVX2]


def test_the_build_name_does_not_follow_the_cpu_model(monkeypatch):
    """A VM that hides AVX2 under a familiar model name must not get that model's build, and the same flags
    under another name need no rebuild."""
    before = fused.extension_name(AVX2)
    monkeypatch.setattr("specsim.core.cpu.machine_name", lambda: "Some Other CPU @ 9.9GHz")
    assert fused.extension_name(AVX2) == before


def test_the_build_name_follows_the_source(monkeypatch, tmp_path):
    before = fused.extension_name(AVX2)
    edited = tmp_path / "fused.cpp"
    edited.write_text(fused.SOURCES[0].read_text() + "\n// edited\n")
    monkeypatch.setattr(fused, "SOURCES", (edited,))
    assert fused.extension_name(AVX2) != before


def test_cpu_flags_reads_the_instruction_sets_from_cpuinfo():
    cpuinfo = ("processor\t: 0\nmodel name\t: AMD EPYC\n"
               "flags\t\t: fpu vme avx avx2 fma f16c hypervisor constant_tsc\nprocessor\t: 1\n")
    assert fused.cpu_flags(cpuinfo) == {"avx", "avx2", "fma", "f16c"}
    assert fused.cpu_flags("Features\t: fp asimd sve evtstrm\n") == {"fp", "asimd", "sve"}
    assert fused.cpu_flags("") == frozenset()


def test_the_cpp_ships_with_the_package():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = data["tool"]["setuptools"]["package-data"]["specsim.core"]
    assert "kernels/*.cpp" in patterns
    assert all(path.is_relative_to(ROOT / "specsim" / "core") for path in fused.SOURCES)


@pytest.mark.parametrize("needle", ["load_inline", "SOURCE string", "fused.SOURCE"])
def test_the_docs_do_not_describe_the_old_inline_build(needle):
    for doc in (ROOT / "README.md", ROOT / "docs" / "invariant.md"):
        assert needle not in doc.read_text(), (doc.name, needle)


def test_one_reader_of_cpuinfo_names_the_cpu_and_its_flags():
    """Issue 53: /proc/cpuinfo is read in specsim.core.cpu only; the invariant path's flags and the kernels' build key
    are read through it."""
    from specsim.core import cpu
    from tests.conftest import ROOT

    text = "model name\t: Some CPU @ 2.0GHz\nflags\t\t: fpu avx2 fma avx512_bf16 hypervisor\n"
    assert cpu.machine_name(text) == "Some CPU @ 2.0GHz"
    assert cpu.cpu_flags(text) == {"fpu", "avx2", "fma", "avx512_bf16", "hypervisor"}
    assert fused.cpu_flags(text) == cpu.cpu_flags(text) & fused.ISA_FLAGS
    readers = [p.relative_to(ROOT).as_posix() for p in (ROOT / "specsim").rglob("*.py")
               if '"/proc/cpuinfo"' in p.read_text(encoding="utf-8")]
    assert readers == ["specsim/core/cpu.py"]
