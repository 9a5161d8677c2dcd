"""The same runs through transformers' own assisted generation, as a reference and a yardstick.

``generate(assistant_model=...)`` with a constant K and no confidence threshold is the classic
algorithm; ``prompt_lookup_num_tokens=K`` is its prompt-lookup variant. Greedy only here. The bench times it
beside specsim's own loop through :mod:`specsim.measure.timing` (:func:`hf_assisted_trace` is a contender there).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from specsim.core.clock import now
from specsim.core.kpolicy import KPolicy
from specsim.core.models import LoadedModel
from specsim.core.trace import Settings, Trace

if TYPE_CHECKING:
    import torch


def pin_constant_k(assistant_model: torch.nn.Module, k: int) -> None:
    """Make transformers draft exactly K tokens every loop (by default it drafts up to 20 and stops a draft early
    at its confidence threshold, see specsim.core.kpolicy.TRANSFORMERS_DEFAULTS)."""
    config = assistant_model.generation_config
    config.num_assistant_tokens = k
    config.num_assistant_tokens_schedule = "constant"
    config.assistant_confidence_threshold = 0.0


def hf_assisted_generate(
    target: LoadedModel, prompt_ids: list[int], k: int, max_new_tokens: int,
    assistant_model: torch.nn.Module | None = None,
) -> tuple[list[int], float]:
    """Greedy assisted generation by transformers; returns (new token ids, wall-clock seconds).

    With ``assistant_model=None`` it runs transformers' prompt lookup with K tokens per loop.
    """
    kwargs: dict = {"prompt_lookup_num_tokens": k} if assistant_model is None else {"assistant_model": assistant_model}
    if assistant_model is not None:
        pin_constant_k(assistant_model, k)
    return hf_generate(target, prompt_ids, max_new_tokens, **kwargs)


def hf_generate(target: LoadedModel, prompt_ids: list[int], max_new_tokens: int, **kwargs) -> tuple[list[int], float]:
    """transformers' greedy ``generate`` (plain, unless ``kwargs`` asks for assistance): (new ids, seconds)."""
    import torch

    from specsim.core.loop_parts import eos_token_ids
    eos = sorted(eos_token_ids(target))
    input_ids = torch.tensor([prompt_ids], dtype=torch.long, device=target.device)
    with torch.inference_mode():
        start = now(target.device)
        output = target.model.generate(
            input_ids, attention_mask=torch.ones_like(input_ids), max_new_tokens=max_new_tokens, do_sample=False,
            num_beams=1, eos_token_id=eos or None, pad_token_id=eos[0] if eos else None, **kwargs,
        )
        elapsed = now(target.device) - start
    return output[0, len(prompt_ids):].tolist(), elapsed


def hf_assisted_trace(target: LoadedModel, prompt_ids: list[int], k: int, max_new_tokens: int,
                      assistant_model: torch.nn.Module | None = None) -> Trace:
    """:func:`hf_assisted_generate` as a trace: its tokens and its end-to-end time (transformers does not report
    its passes, so the trace has no iterations and its time includes the prefill)."""
    ids, seconds = hf_assisted_generate(target, prompt_ids, k, max_new_tokens, assistant_model)
    settings = Settings(k=k, max_new_tokens=max_new_tokens, drafter="transformers", target=target.name,
                        dtype=str(target.dtype).removeprefix("torch."), device=str(target.device))
    return Trace(mode="speculative", settings=settings, prompt="", prompt_ids=tuple(prompt_ids),
                 generated_ids=tuple(ids), text="", total_time_s=seconds)


# ---- the Under-the-hood page's "run the snippet" ----------------------------------------------------------
HF_LOOKUP, HF_PLAIN = "transformers: generate(prompt_lookup_num_tokens=K)", "transformers: plain generate"
OURS_LOOKUP, OURS_PLAIN = "specsim: prompt lookup", "specsim: plain decoding"


@dataclass(frozen=True)
class SnippetCheck:
    """The transformers prompt-lookup snippet run for real, beside transformers' plain loop and specsim's two."""

    k: int
    dtype: str
    tokens: dict[str, tuple[int, ...]]  # run name -> the new token ids it wrote

    def first_difference(self, a: str, b: str) -> int | None:
        """The first position (0-based) where runs ``a`` and ``b`` wrote different tokens; None if they agree."""
        x, y = self.tokens[a], self.tokens[b]
        return next((i for i, (u, v) in enumerate(zip(x, y, strict=False)) if u != v),
                    None if len(x) == len(y) else min(len(x), len(y)))


def snippet_check(target: LoadedModel, prompt_ids: list[int], k: int, max_new_tokens: int) -> SnippetCheck:
    """Run transformers' prompt lookup (the page's snippet), transformers' plain greedy generate, and specsim's
    prompt lookup and plain decoding on the same target and prompt, greedy."""
    from specsim.core.draft_loader import prompt_lookup_drafter
    from specsim.core.engine import plain_generate, speculative_generate

    tokens = {
        HF_LOOKUP: tuple(hf_assisted_generate(target, prompt_ids, k, max_new_tokens)[0]),
        HF_PLAIN: tuple(hf_generate(target, prompt_ids, max_new_tokens)[0]),
        OURS_LOOKUP: speculative_generate(target, prompt_lookup_drafter(target), prompt_ids, KPolicy(k),
                                          max_new_tokens).generated_ids,
        OURS_PLAIN: plain_generate(target, prompt_ids, max_new_tokens).generated_ids,
    }
    return SnippetCheck(k, str(target.dtype).removeprefix("torch."), {n: tuple(t) for n, t in tokens.items()})
