"""Damaged or odd model folders give one clear message, never a traceback or a wrong figure (issue 12).

- defect 5: a distilled draft whose model.safetensors is random bytes or cut in half;
- defect 6: ``python -m specsim.bench --device cuda`` on a machine without CUDA;
- defect 9: a config that does not say how big the model is (``{"model_type": "llama"}``);
- minor: long load errors end at a sentence or a word, never mid-word.
"""

from __future__ import annotations

import json
import random
import shutil

import pytest
import torch

from specsim.core import defaults, draft_loader, errors, models
from specsim.measure import bench, cli
from tests.test_bad_input_cli import error_lines, folders, good_argv, run_main  # noqa: F401 - the fixture

SHIPPED = defaults.DEFAULT_DRAFT


def _damaged(tmp_path, how: str):
    folder = tmp_path / f"draft-{how}"
    shutil.copytree(SHIPPED, folder)
    weights = folder / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(random.Random(0).randbytes(len(data)) if how == "random" else data[: len(data) // 2])
    return folder


@pytest.mark.parametrize("how", ["random", "half"])
def test_a_damaged_distilled_draft_says_so_on_the_command_line(tmp_path, folders, capsys, how):  # noqa: F811
    argv = good_argv(folders) + ["--draft", str(_damaged(tmp_path, how))]
    assert run_main(argv) == 2
    err = capsys.readouterr().err
    lines = error_lines(err)
    assert "Traceback" not in err and len(lines) == 1
    assert "Could not load the distilled draft" in lines[0] and "damaged or incomplete" in lines[0]
    assert "shorter prompt" not in lines[0]


def test_a_damaged_distilled_draft_raises_model_unavailable(tmp_path):
    target = models.LoadedModel(torch.nn.Module(), None, "t", "cpu", torch.float32, 0.0)
    with pytest.raises(models.ModelUnavailable, match="damaged or incomplete"):
        draft_loader.load_draft_model(str(_damaged(tmp_path, "half")), target)


def test_bench_refuses_cuda_without_a_gpu(monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit) as stop:
        bench.parse_args(["--device", "cuda"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "argument --device: must be cpu, or cuda on a machine with a CUDA GPU" in err and "Traceback" not in err


def test_the_cli_and_the_bench_agree_on_devices(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    for argv in (["--device", "cuda"], ["--device", "tpu"]):
        with pytest.raises(SystemExit):
            bench.parse_args(argv)
        with pytest.raises(SystemExit):
            cli.parse_args(["--prompt", "x", *argv])
    assert bench.parse_args(["--device", "cpu"]).device == "cpu"


def test_a_config_without_a_size_is_not_sized_from_library_defaults(tmp_path):
    folder = tmp_path / "bare"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "llama"}))
    (folder / "model.safetensors").write_bytes(b"1234567")
    with pytest.raises(models.ModelUnavailable) as error:
        models.load_model(str(folder))
    message = str(error.value)
    assert "GiB" not in message and "Could not load" in message and "local directory" in message


def test_a_config_that_states_a_huge_size_is_still_refused_for_memory(tmp_path):
    folder = tmp_path / "huge"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "hidden_size": 65536,
                                                    "num_hidden_layers": 400, "intermediate_size": 262144}))
    with pytest.raises(models.ModelUnavailable, match=r"needs about [0-9.]+ GiB"):
        models.load_model(str(folder))


def test_long_errors_end_at_a_sentence_or_a_word():
    first = "The first sentence explains the problem in some detail, well past half of the limit here. "
    long = ValueError(first + "Then a second sentence goes on and on " * 20)
    assert errors.brief_error(long, 120) == "ValueError: " + first.strip()
    words = ValueError("word " * 100)
    text = errors.brief_error(words, 50)
    assert text.endswith(" …") and text.removesuffix(" …").endswith("word")
    assert errors.brief_error(KeyError()) == "KeyError"
