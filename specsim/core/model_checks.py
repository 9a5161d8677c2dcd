"""Checks around loading a model, each with a message a user can act on: is a name spelled like a hub id, is the
hub reachable, do the weights fit in free memory (and does the config state its size, so the estimate means
something), and do a draft's and a target's tokenizers agree on every token id they share.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


class ModelUnavailable(RuntimeError):
    """A model could not be loaded; the message says what was tried and what to do."""


class TokenizerMismatch(ValueError):
    """A draft and a target whose tokenizers disagree on some shared token id."""


_HUB_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9_])?"
HUB_ID = re.compile(rf"(?:{_HUB_PART}/)?{_HUB_PART}")
"""A Hugging Face hub id: ``owner/name`` (or a bare legacy name such as ``gpt2``), as the hub spells them."""


def is_hub_id(name: str) -> bool:
    """Whether ``name`` is spelled like a hub id (letters, digits, ``-_.``; no ``--`` or ``..``; one ``/`` at most)."""
    return bool(HUB_ID.fullmatch(name)) and "--" not in name and ".." not in name


def available_memory_bytes(device: str) -> int:
    """Free memory where the model would live: GPU memory on CUDA, available RAM otherwise."""
    import torch
    if device.startswith("cuda"):
        free, _ = torch.cuda.mem_get_info(torch.device(device))
        return int(free)
    import psutil

    return int(psutil.virtual_memory().available)


def estimate_model_bytes(config, dtype: torch.dtype) -> int:
    """Rough size of a decoder-only transformer's weights from its config (12 d^2 per layer + embeddings)."""
    import torch
    d = getattr(config, "hidden_size", None) or getattr(config, "n_embd", 0)
    layers = getattr(config, "num_hidden_layers", None) or getattr(config, "n_layer", 0)
    ffn = getattr(config, "intermediate_size", None) or 4 * d
    vocab = getattr(config, "vocab_size", 0)
    tied = getattr(config, "tie_word_embeddings", True)
    params = layers * (4 * d * d + 3 * d * ffn) + vocab * d * (1 if tied else 2)
    return int(params * torch.finfo(dtype).bits // 8)


def check_fits(name: str, config, dtype: torch.dtype, device: str, headroom: float = 0.85) -> None:
    """Refuse a model whose weights alone would take more than ``headroom`` of the free memory."""
    need, free = estimate_model_bytes(config, dtype), available_memory_bytes(device)
    if need > headroom * free:
        raise ModelUnavailable(
            f"{name} needs about {need / 2**30:.1f} GiB in {str(dtype).removeprefix('torch.')} but only "
            f"{free / 2**30:.1f} GiB is free on {device}; pick a smaller model or dtype."
        )


SIZE_KEYS = (("hidden_size", "n_embd", "d_model"), ("num_hidden_layers", "n_layer", "num_layers"))


def states_its_size(name_or_path: str, **kwargs) -> bool:
    """Whether the model's config file itself gives its width and depth.

    transformers fills a missing field with the class default (Llama: 4096 wide, 32 layers), so a
    memory estimate from a bare ``{"model_type": "llama"}`` would describe a 7B model nobody asked for.
    """
    from transformers import PretrainedConfig

    raw, _ = PretrainedConfig.get_config_dict(name_or_path, **kwargs)
    raw = {**raw.get("text_config", {}), **raw}
    return all(any(k in raw for k in keys) for keys in SIZE_KEYS)


def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether the Hugging Face hub answers at all (False offline, or with HF_HUB_OFFLINE=1)."""
    import socket

    if os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "", "false", "False"):
        return False
    try:
        socket.create_connection(("huggingface.co", 443), timeout=timeout).close()
        return True
    except OSError:
        return False


def shared_vocab_size(draft_tokenizer, target_tokenizer) -> int:
    """How many leading token ids the two tokenizers share; raise :class:`TokenizerMismatch` if they differ.

    Only the ids both tokenizers define are compared, so embedding matrices padded to different
    sizes (Qwen2.5 0.5B vs 7B) are fine.
    """
    draft_vocab = {i: t for t, i in draft_tokenizer.get_vocab().items()}
    target_vocab = {i: t for t, i in target_tokenizer.get_vocab().items()}
    shared = min(len(draft_vocab), len(target_vocab))
    for i in range(shared):
        if draft_vocab.get(i) != target_vocab.get(i):
            raise TokenizerMismatch(
                f"The draft and target tokenizers differ at token id {i} ({draft_vocab.get(i)!r} vs "
                f"{target_vocab.get(i)!r}); speculative decoding needs one shared tokenizer."
            )
    return shared
