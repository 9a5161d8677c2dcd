"""Model loading: local directories, clear errors, tokenizer compatibility, prompt formatting."""

from __future__ import annotations

import copy

import pytest
import torch
from transformers import LlamaConfig

from specsim.core.model_checks import TokenizerMismatch, check_fits, estimate_model_bytes, shared_vocab_size
from specsim.core.models import PRESET_PAIRS, ModelUnavailable, format_prompt, load_model
from specsim.core.tiny import tiny_llama


class VocabOnly:
    def __init__(self, vocab: dict[str, int]):
        self.vocab = vocab

    def get_vocab(self) -> dict[str, int]:
        return dict(self.vocab)


def test_load_model_from_a_local_directory(tmp_path, bundled_target):
    vocab = len(bundled_target.tokenizer)
    tiny_llama(vocab, seed=0, hidden=16, layers=1).save_pretrained(tmp_path)
    bundled_target.tokenizer.save_pretrained(tmp_path)
    messages = []
    loaded = load_model(str(tmp_path), device="cpu", dtype="float32", progress=lambda f, m: messages.append(f))
    assert loaded.name == str(tmp_path) and loaded.dtype == torch.float32 and loaded.device == "cpu"
    assert len(loaded.model.model.layers) == 1 and messages[-1] == 1.0
    assert shared_vocab_size(loaded.tokenizer, bundled_target.tokenizer) == vocab


def test_unknown_model_names_what_was_tried(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelUnavailable, match="no-such-org/no-such-model.*Hugging Face cache.*hub"):
        load_model("no-such-org/no-such-model", device="cpu")


def test_refuses_a_model_too_big_for_memory():
    huge = LlamaConfig(hidden_size=16384, intermediate_size=65536, num_hidden_layers=400, vocab_size=256000)
    assert estimate_model_bytes(huge, torch.float32) > 2**42  # about 1.7e12 parameters
    with pytest.raises(ModelUnavailable, match="GiB"):
        check_fits("huge", huge, torch.float32, "cpu")
    check_fits("tiny", LlamaConfig(hidden_size=16, intermediate_size=32, num_hidden_layers=1, vocab_size=50,
                                   num_attention_heads=4, num_key_value_heads=2),
               torch.float32, "cpu")


def test_tokenizer_check_compares_the_shared_vocabulary(bundled_target):
    vocab = bundled_target.tokenizer.get_vocab()
    padded = VocabOnly(vocab | {f"<pad_{i}>": len(vocab) + i for i in range(64)})  # same tokenizer, padded
    assert shared_vocab_size(padded, bundled_target.tokenizer) == len(vocab)
    swapped = dict(vocab)
    first, second = (t for t, i in vocab.items() if i in (100, 101))
    swapped[first], swapped[second] = swapped[second], swapped[first]
    with pytest.raises(TokenizerMismatch, match="token id 100"):
        shared_vocab_size(VocabOnly(swapped), bundled_target.tokenizer)


def test_format_prompt_uses_the_chat_template(bundled_target):
    tokenizer = bundled_target.tokenizer
    ids = format_prompt(tokenizer, "Name a colour.")
    text = tokenizer.decode(ids)
    assert "<|im_start|>user\nName a colour.<|im_end|>" in text and text.endswith("<|im_start|>assistant\n")
    plain = copy.copy(tokenizer)
    plain.chat_template = None
    assert format_prompt(plain, "Name a colour.") == tokenizer("Name a colour.").input_ids


def test_presets_pair_distinct_models():
    assert len(PRESET_PAIRS) >= 6
    assert all(pair.draft != pair.target and "->" in pair.label for pair in PRESET_PAIRS)


def test_a_broken_weights_cache_is_reported_not_swallowed(tmp_path, monkeypatch, caplog):
    """Issue 12: a cache that cannot be read costs every process the conversion; the log must say so."""
    import logging

    from specsim.core import models

    monkeypatch.setenv("SPECSIM_CACHE", str(tmp_path))
    folder = tmp_path / "smollm2-135m-instruct"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"not weights")

    def conversion_starts():  # stop where the GGUF conversion would begin: the report must come before it
        raise models.ModelUnavailable("the conversion starts here")

    monkeypatch.setattr(models, "bundled_gguf_path", conversion_starts)
    with caplog.at_level(logging.WARNING, logger="specsim.core.models"), pytest.raises(models.ModelUnavailable):
        models.load_bundled_target("cpu", "float32")
    assert f"cache in {folder} could not be used" in caplog.text and "converting the GGUF again" in caplog.text


def test_the_cached_weights_load_into_the_model_transformers_builds(bundled_target):
    """The bundled target is built without random weights (on the meta device, then given the file's tensors): it
    must equal the model built the usual way (random weights, then overwritten), buffers and tied head included."""
    from safetensors.torch import load_file
    from transformers import MODEL_FOR_CAUSAL_LM_MAPPING, AutoConfig

    from specsim.core import models

    folder = models._bundled_cache()
    fast, _ = models._load_bundled_from_cache(folder, torch.float32)
    config = AutoConfig.from_pretrained(str(folder))
    usual = MODEL_FOR_CAUSAL_LM_MAPPING[type(config)](config).to(torch.float32)
    usual.load_state_dict(load_file(str(folder / "model.safetensors")), strict=False)
    usual.tie_weights()
    got, want = dict(fast.named_buffers()) | fast.state_dict(), dict(usual.named_buffers()) | usual.state_dict()
    assert got.keys() == want.keys() and all(torch.equal(got[k], want[k]) for k in want)
    assert fast.lm_head.weight is fast.model.embed_tokens.weight
    ids = torch.tensor([[1, 2, 3, 4, 5]])
    with torch.inference_mode():
        assert torch.equal(fast(ids).logits, usual(ids).logits)
        assert torch.equal(fast(ids).logits, bundled_target.model(ids).logits)


def test_while_converting_a_gguf_file_is_read_once_and_the_name_table_built_once(tmp_path):
    """transformers reads a GGUF file three times to load one model, and builds gguf's tensor-name table once per
    tensor; inside ``one_gguf_read`` a second read of the same file is the first one's reader (whatever the path's
    spelling) and a second table the first, another file gets a reader of its own, and afterwards gguf is as it was."""
    import gguf
    import numpy as np

    from specsim.core.models import one_gguf_read

    files = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.gguf"
        writer = gguf.GGUFWriter(str(path), "llama")
        writer.add_string("general.name", name)
        writer.add_tensor("token_embd.weight", np.arange(8, dtype=np.float32).reshape(2, 4))
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
        files.append(path)
    reader, name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    with one_gguf_read():
        first = gguf.GGUFReader(files[0])
        assert gguf.GGUFReader(tmp_path / "." / "a.gguf") is first
        other = gguf.GGUFReader(files[1])
        assert other is not first and other.fields["general.name"].contents() == "b"
        table = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, 2)
        assert gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, 2) is table
    assert (gguf.GGUFReader, gguf.get_tensor_name_map) == (reader, name_map)
    assert gguf.GGUFReader(files[0]) is not gguf.GGUFReader(files[0])  # outside the block each call reads again


def test_conversions_saving_at_once_each_move_in_whole_files(tmp_path, monkeypatch, bundled_target):
    """On a new machine several processes can convert the GGUF at once (a class's workers and replicas, the test
    suite's workers). They used to share one temporary file name: one's rename took the other's file, and the other's
    failed, or moved in weights that a third had half rewritten. Two saves that write at the same moment (a barrier
    holds both after writing until the other has written) must each move complete files in and leave nothing else."""
    import threading

    import safetensors.torch
    from transformers import LlamaForCausalLM

    from specsim.core import models

    written = safetensors.torch.save_file
    both_written = threading.Barrier(2, timeout=30)

    def save_then_wait(state, path, *args, **kwargs):
        written(state, path, *args, **kwargs)
        both_written.wait()

    monkeypatch.setattr(safetensors.torch, "save_file", save_then_wait)
    torch.manual_seed(3)
    model = LlamaForCausalLM(LlamaConfig(  # tied head and embeddings, as the bundled target's
        vocab_size=len(bundled_target.tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
        num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True)).eval()
    folder = tmp_path / "smollm2-135m-instruct"
    errors: list[BaseException] = []

    def save() -> None:
        try:
            models._save_bundled_cache(model, bundled_target.tokenizer, folder)
        except BaseException as error:  # noqa: BLE001 - the test reports it
            errors.append(error)

    threads = [threading.Thread(target=save) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    assert sorted(p.name for p in folder.iterdir() if not p.is_file()) == []  # no folder of a save left behind
    loaded, tokenizer = models._load_bundled_from_cache(folder, torch.float32)
    ids = torch.tensor([[1, 2, 3]])
    with torch.inference_mode():
        assert torch.equal(loaded(ids).logits, model(ids).logits)
    assert len(tokenizer) == len(bundled_target.tokenizer)
