"""Small random-weight causal LMs, built in a moment with no download: the tests' models, and the pair the
*Why the output is unchanged* page runs its whole-block check on (:mod:`specsim.lesson.blockcheck`)."""

from __future__ import annotations

import torch
from transformers import LlamaConfig, LlamaForCausalLM

from specsim.core.models import LoadedModel


class TinyTokenizer:
    """Just enough of a tokenizer for the engine: decode ids to 't<id>' and an optional EOS."""

    chat_template = None

    def __init__(self, vocab_size: int, eos_token_id: int | None = None):
        self.vocab_size, self.eos_token_id = vocab_size, eos_token_id

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        return " ".join(f"t{int(i)}" for i in ids)

    def __len__(self) -> int:
        return self.vocab_size


def tiny_llama(vocab_size: int, seed: int, logit_scale: float = 1.0, hidden: int = 32, layers: int = 2,
               head_size: int | None = None, eos_token_id: int | None = None) -> LlamaForCausalLM:
    """A random Llama; ``logit_scale`` sharpens its distributions, ``head_size`` shrinks its output vocab."""
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=vocab_size, hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=layers,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512, tie_word_embeddings=False,
        bos_token_id=None, eos_token_id=eos_token_id, pad_token_id=None,
    )
    model = LlamaForCausalLM(config).eval()
    if head_size is not None:
        model.lm_head = torch.nn.Linear(hidden, head_size, bias=False)
        torch.nn.init.normal_(model.lm_head.weight, std=0.02)
    with torch.no_grad():
        model.lm_head.weight.mul_(logit_scale)
    model.generation_config.eos_token_id = eos_token_id
    model.generation_config.pad_token_id = None
    return model


def tiny_loaded(vocab_size: int, seed: int, logit_scale: float = 1.0, eos_token_id: int | None = None,
                **kwargs) -> LoadedModel:
    model = tiny_llama(vocab_size, seed, logit_scale, eos_token_id=eos_token_id, **kwargs)
    return LoadedModel(model, TinyTokenizer(vocab_size, eos_token_id), f"tiny-{seed}", "cpu", torch.float32, 0.0)
