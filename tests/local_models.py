"""Tiny causal LMs saved as local folders (config, weights, tokenizer), for pages and the CLI to load by path.

Built in the test's temporary directory; nothing is downloaded. Two word-level tokenizers with the
same words in a different order make a pair whose token ids disagree.
"""

from __future__ import annotations

from pathlib import Path

WORDS = ["the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "and", "runs", "away", "home", ".", ","]


def _tokenizer(words: list[str], eos: bool = True):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"<unk>": 0, "<eos>": 1, **{w: i + 2 for i, w in enumerate(words)}}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=core, unk_token="<unk>", eos_token="<eos>" if eos else None)


def save_tiny_model(folder: Path, words: list[str] | None = None, seed: int = 0, hidden: int = 32, layers: int = 2,
                    eos: bool = True) -> Path:
    """A random Llama (``layers`` layers of width ``hidden``) with a word-level tokenizer, saved to ``folder``;
    ``eos`` False: no end-of-text token, so a run always writes every token it was asked for."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    words = WORDS if words is None else words
    tokenizer = _tokenizer(words, eos)
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=len(words) + 2, hidden_size=hidden, intermediate_size=2 * hidden,
                         num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=512, bos_token_id=None, eos_token_id=1 if eos else None,
                         pad_token_id=None, tie_word_embeddings=False)
    model = LlamaForCausalLM(config).eval()
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def tiny_pair(root: Path, same_tokenizer: bool = True) -> tuple[Path, Path]:
    """(target folder, draft folder); the draft's tokenizer lists the words backwards unless ``same_tokenizer``."""
    target = save_tiny_model(root / "tiny-target", seed=1)
    draft = save_tiny_model(root / ("tiny-draft" if same_tokenizer else "tiny-draft-other-tokenizer"),
                            words=WORDS if same_tokenizer else WORDS[::-1], seed=2)
    return target, draft
