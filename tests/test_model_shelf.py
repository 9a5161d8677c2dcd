"""The one model shelf (issue 53): the pages and a class worker load through the same ModelShelf; a target is
loaded once per way it runs, at most MAX_TARGETS stay, and an evicted target's drafts go with it."""

from __future__ import annotations

from specsim import liverun
from specsim.core import models
from specsim.core.models import LoadedModel
from specsim.liverun import ModelShelf


def _fake_loads(monkeypatch) -> list[str]:
    loaded = []

    def load_model(name, **kwargs):
        loaded.append(name)
        return LoadedModel(model=object(), tokenizer=None, name=name, device=kwargs["device"],
                           dtype=kwargs["dtype"], load_time_s=0.0)

    monkeypatch.setattr(models, "load_model", load_model)
    return loaded


def test_a_target_loads_once_and_the_least_recently_used_leaves_first(monkeypatch):
    loaded = _fake_loads(monkeypatch)
    shelf = ModelShelf()
    first = shelf.target_named("a/one")
    assert shelf.target_named("a/one") is first and loaded == ["a/one"]
    for name in ("a/two", "a/three", "a/four"):
        shelf.target_named(name)
    shelf.target_named("a/one")  # used again: now the most recent
    shelf.target_named("a/five")  # a fifth: the least recently used (a/two) leaves
    assert shelf.loads == ["a/one", "a/two", "a/three", "a/four", "a/five"]
    shelf.target_named("a/one")
    shelf.target_named("a/two")
    assert loaded[-1] == "a/two" and loaded.count("a/one") == 1 and loaded.count("a/two") == 2


def test_an_evicted_targets_drafts_go_with_it(monkeypatch):
    _fake_loads(monkeypatch)
    from specsim.core import draft_loader

    monkeypatch.setattr(draft_loader, "load_draft_model", lambda name, target, local=None: {"draft": name})
    shelf = ModelShelf()
    target = shelf.target_named("a/one")
    copy_one, copy_two = shelf.draft("d", None, target), shelf.draft("d", None, target)
    assert copy_one == copy_two and copy_one is not copy_two  # a fresh drafter each time, one load
    assert shelf.loads == ["a/one", "d"]
    for name in ("a/two", "a/three", "a/four", "a/five"):
        shelf.target_named(name)
    assert not [key for key in shelf._drafts if key[2] == id(target)]


def test_a_draft_folder_loads_once_however_it_is_named(monkeypatch, tmp_path):
    """Issue 62 (10): the hood's policies task named the default draft's folder without ``draft_local``, the live run
    with it, and a worker held two copies of the same weights."""
    _fake_loads(monkeypatch)
    from specsim.core import draft_loader

    loads = []
    monkeypatch.setattr(draft_loader, "load_draft_model",
                        lambda name, target, local=None: loads.append((name, local)) or {"draft": name})
    folder = tmp_path / "drafts" / "d"
    folder.mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "drafts")
    shelf = ModelShelf()
    target = shelf.target_named("a/one")
    for name, local in ((str(folder), True), (str(folder), None), (str(tmp_path / "link" / "d"), None),
                        (str(folder) + "/", True)):
        shelf.draft(name, local, target)
    assert len(loads) == 1, loads
    shelf.draft("owner/hub-draft", None, target)  # a hub id is not a folder: its own load
    assert len(loads) == 2


def test_the_page_loads_onto_the_shelf_the_run_takes_from(monkeypatch):
    """The live page's path: app.loaders.load_models puts the models on the one shelf, run_request finds them there and
    builds the run's one drafter."""
    from app import loaders
    from app.live import pairs as live_pairs
    from app.settings import LiveSettings

    request = live_pairs.request_for(LiveSettings(prompt="Say hello.", max_new_tokens=4, k=2))
    built = []
    real_copy = liverun.copy.copy
    monkeypatch.setattr(liverun.copy, "copy", lambda x: built.append(x) or real_copy(x))
    target = loaders.load_models(request)
    assert built == [], "loading the models builds no drafter"
    before = list(loaders.shelf().loads)
    run = liverun.run_request(request, loaders.shelf())
    assert loaders.shelf().loads == before and run.spec.generated_ids
    assert len(built) == 1, "the run builds its one drafter"
    assert loaders.shelf().target_named("bundled") is target


def test_a_load_two_sessions_waited_for_is_logged_once(monkeypatch):
    """Three learners pressing Run at once: one session loads the draft while another waits for the same model.
    Each used to log the loads it saw happen during its call, so one load showed twice in the server's log (the
    browser test of three users counts that log)."""
    import threading
    from types import SimpleNamespace

    from app import loaders

    fake = SimpleNamespace(loads=["bundled"])
    told = []
    monkeypatch.setattr(loaders, "shelf", lambda: fake)
    monkeypatch.setattr(loaders, "_LOG", SimpleNamespace(info=lambda text, *args: told.append(text % args)))
    monkeypatch.setitem(loaders._LOGGED, "loads", 1)  # the target was loaded and told before
    started, loaded = threading.Event(), threading.Event()

    def loading():  # session A loads the draft
        started.wait()
        fake.loads.append("draft")
        loaded.set()

    def waiting():  # session B asks for the same draft and waits until A's load is done
        started.set()
        loaded.wait()

    threads = [threading.Thread(target=loaders._logged, args=(f,)) for f in (loading, waiting)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert told == ["specsim loaded model draft (model loads in this process: 2)"]
