"""Which models a custom pair may name on a server (issue 23, 9): hub ids, and folders under the allowed roots.

A folder elsewhere gets one message that does not depend on whether the path exists, is a file or a
folder, or how it would parse: nothing about the server's file system leaks through the page.
"""

from __future__ import annotations

import os

import pytest

from app.live import pairs as live_pairs
from app.settings import LiveSettings
from specsim.core import defaults, model_checks, models, paths
from specsim.core.models import ModelUnavailable

OUTSIDE = ["/etc/passwd", "/etc", "/etc/", "/no/such/folder", "/etc/../etc/passwd", "../../../../etc", "~/.ssh",
           "/root", "/proc/self/environ", "/dev/null", " /etc ", "../../../../../../../../etc/passwd"]


def _refusal(name: str, side: str = "target") -> str:
    settings = LiveSettings(pair="custom", target=name if side == "target" else "owner/name",
                            draft=name if side == "draft" else "owner/name")
    with pytest.raises(ModelUnavailable) as error:
        live_pairs.target(settings) if side == "target" else live_pairs.draft(settings)
    return str(error.value)


@pytest.mark.parametrize("side", ["target", "draft"])
def test_every_path_outside_the_allowed_folders_gets_the_same_message(side, monkeypatch, tmp_path):
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    monkeypatch.setenv(live_pairs.MODEL_DIRS_ENV, str(allowed))
    escape = allowed / "escape"
    escape.symlink_to("/etc")  # a link inside an allowed folder that leads out of it
    names = [*OUTSIDE, str(escape), str(escape / "passwd"), str(allowed / ".." / "elsewhere"), str(tmp_path)]
    messages = {_refusal(name, side) for name in names}
    assert len(messages) == 1, messages
    message = messages.pop()
    assert side in message and "owner/name" in message and live_pairs.MODEL_DIRS_ENV in message
    for word in ("passwd", "etc", "exist", "not a", "directory", "file", "Hugging Face cache:", "Errno"):
        assert word not in message.replace("folder listed in", ""), word


def test_hub_ids_stay_hub_ids_and_are_never_read_from_the_disk(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "etc" / "ssl").mkdir(parents=True)  # a relative folder that looks like a hub id
    for name in ("HuggingFaceTB/SmolLM2-360M-Instruct", "Qwen/Qwen2.5-0.5B-Instruct", "etc/ssl", "gpt2"):
        source = live_pairs.target(LiveSettings(pair="custom", target=f" {name} "))
        assert source == live_pairs.Source(name, local=False)
    assert model_checks.is_hub_id("owner/name") and not model_checks.is_hub_id("/owner/name")
    assert not any(model_checks.is_hub_id(n) for n in ("a/b/c", "../x", "a/..", "-a/b", "a--b/c", "a/b.", ""))


def test_folders_under_the_allowed_roots_load_by_their_real_path(monkeypatch, tmp_path):
    mine = tmp_path / "mine"
    (mine / "model").mkdir(parents=True)
    monkeypatch.setenv(live_pairs.MODEL_DIRS_ENV, os.pathsep.join([str(mine), "", "/no/such/root"]))
    source = live_pairs.target(LiveSettings(pair="custom", target=str(mine / "model" / ".." / "model")))
    assert source == live_pairs.Source(str((mine / "model").resolve()), local=True)
    missing = live_pairs.target(LiveSettings(pair="custom", target=str(mine / "missing")))  # inside: loading says
    assert missing.local
    draft = live_pairs.draft(LiveSettings(pair="custom", target="bundled", draft=defaults.DEFAULT_DRAFT))
    assert draft.local  # the project's own folder
    cached = paths.cache_dir() / "some-model"
    assert live_pairs.target(LiveSettings(pair="custom", target=str(cached))).local
    assert live_pairs.target(LiveSettings(pair="custom", target="bundled")) is None
    for name in ("~root", "~no-such-user"):  # never expanded: whether a user exists does not show either
        assert live_pairs.target(LiveSettings(pair="custom", target=name)) == live_pairs.Source(
            str(paths.REPO_ROOT / name), local=True)


def test_a_local_path_is_never_called_the_hugging_face_cache(tmp_path):
    """The message for a local path that is not a model names the local folder, not the hub or its cache."""
    with pytest.raises(ModelUnavailable) as error:
        models.load_model(str(tmp_path / "missing"))
    message = str(error.value)
    assert "local directory" in message and "Hugging Face" not in message


def test_a_url_is_refused_and_a_local_path_never_shows_the_servers_install_path():
    """Issue 39 (4): http://127.0.0.1:1/x was read as a folder under the project, and the failure named
    '<install path>/http:/127.0.0.1:1/x'."""
    import pytest

    from app import loaders
    from app.live import pairs as live_pairs
    from app.settings import LiveSettings
    from specsim.core import paths
    from specsim.core.models import ModelUnavailable

    with pytest.raises(ModelUnavailable, match="is a web address"):
        live_pairs.source("http://127.0.0.1:1/x", "target")
    settings = LiveSettings(pair=live_pairs.CUSTOM, target="no-such-folder/inside-the-project",
                            drafter="prompt_lookup")
    with pytest.raises(ModelUnavailable) as told:
        loaders.load_models(live_pairs.request_for(settings))
    assert "no-such-folder/inside-the-project" in str(told.value)
    assert str(paths.REPO_ROOT) not in str(told.value)
