"""The run cache (issue 40): a key that changes with everything that decides a run and nothing else, entries that
read back unchanged, and both stores bounded by count (least recently used out first) and age."""

from __future__ import annotations

import os
import secrets
import time

import pytest

from specsim.classroom.runcache import CachedRun, DiskStore, RedisStore, run_key
from specsim.core.draft_loader import prompt_lookup_drafter
from specsim.core.kpolicy import KPolicy
from specsim.core.tiny import tiny_loaded
from specsim.liverun import run_live
from specsim.request import RunRequest


@pytest.fixture(scope="module")
def entry(one_torch_thread_module) -> CachedRun:
    """A real (tiny) run: its traces, recorded now."""
    target = tiny_loaded(32, seed=3)
    run = run_live(target, prompt_lookup_drafter(target), [5, 6, 7, 5, 6], KPolicy(3), 4)
    return CachedRun(run.spec, run.plain, time.time(), "test machine")


@pytest.fixture(scope="module")
def one_torch_thread_module():
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


BASE = RunRequest(prompt_ids=(1, 2, 3), target="bundled", drafter="prompt_lookup", k=4, seed=0, max_new_tokens=8,
                  device="cpu", dtype="float32", invariant=False)
CHANGES = {"prompt_ids": (1, 2, 4), "target": "HuggingFaceTB/SmolLM2-360M-Instruct", "drafter": "early_exit", "k": 5,
           "policy": "heuristic", "temperature": 0.7, "top_p": 0.9, "top_k": 20, "seed": 1, "max_new_tokens": 9,
           "dtype": "bfloat16", "invariant": True}


def test_the_key_changes_with_everything_that_decides_a_run_and_nothing_else():
    key = run_key(BASE, "machine A")
    assert run_key(BASE.changed(extra={"prompt": "free text"}), "machine A") == key
    assert run_key(RunRequest(prompt_ids=(1, 2, 3), drafter="prompt_lookup", k=4, seed=0, max_new_tokens=8,
                              device="cpu", dtype="float32", invariant=False), "machine A") == key  # "bundled": default
    assert run_key(BASE, "machine B") != key
    keys = {name: run_key(BASE.changed(**{name: value}), "machine A") for name, value in CHANGES.items()}
    assert [name for name, changed in keys.items() if changed == key] == []
    assert len(set(keys.values())) == len(keys)
    # the draft model decides a run only with the draft-model drafter; early exit's depth only with early exit
    assert run_key(BASE.changed(draft="other"), "machine A") == key
    model = BASE.changed(drafter="draft_model", draft="one")
    assert run_key(model.changed(draft="two"), "machine A") != run_key(model, "machine A")
    # a request by text (class mode: the page has no tokenizer) is keyed by its text; ids, when given, decide
    by_text = BASE.changed(prompt_ids=(), prompt="Say hi.")
    assert run_key(by_text, "machine A") != run_key(by_text.changed(prompt="Say bye."), "machine A")
    assert run_key(BASE.changed(prompt="Say hi."), "machine A") == key
    # a token tree decides a run (its guesses and its depth); a chain's key stays as it was before trees
    tree = BASE.changed(drafter="early_exit", tree_nodes=8)
    assert len({key, run_key(tree, "machine A"), run_key(tree.changed(tree_nodes=6), "machine A"),
                run_key(tree.changed(tree_depth=3), "machine A"), run_key(BASE.changed(drafter="early_exit"),
                                                                           "machine A")}) == 5
    assert run_key(BASE.changed(tree_depth=3), "machine A") == key  # the depth alone, without a tree, decides nothing


def test_a_local_model_retrained_in_the_same_folder_is_another_key(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    request = BASE.changed(target=str(tmp_path), target_local=True)
    before = run_key(request, "m")
    (tmp_path / "config.json").write_text('{"hidden_size": 64}')
    assert run_key(request, "m") != before


def test_an_entry_reads_back_unchanged(tmp_path, entry):
    store = DiskStore(tmp_path)
    store.put("a" * 64, entry)
    back = store.get("a" * 64)
    assert back == entry and back.spec.iterations == entry.spec.iterations
    assert store.get("b" * 64) is None


def test_the_disk_store_keeps_the_most_recently_used_entries(tmp_path, entry):
    store = DiskStore(tmp_path, max_entries=3)
    keys = [f"{i:064x}" for i in range(5)]
    for key in keys[:3]:
        store.put(key, entry)
    assert store.get(keys[0]) is not None  # used: now the most recent
    store.put(keys[3], entry)
    assert sorted(store.keys()) == sorted([keys[0], keys[2], keys[3]])  # keys[1] was the least recently used
    store.put(keys[4], entry)
    assert sorted(store.keys()) == sorted([keys[0], keys[3], keys[4]])
    assert len(list(tmp_path.glob("*.json"))) == 3


def test_the_disk_store_forgets_entries_older_than_its_age(tmp_path, entry):
    store = DiskStore(tmp_path, max_age_s=60)
    store.put("c" * 64, entry)
    store.put("d" * 64, entry)
    old = time.time() - 120
    os.utime(tmp_path / f"{'c' * 64}.json", (old, old))
    assert store.get("c" * 64) is None and store.get("d" * 64) is not None
    assert not (tmp_path / f"{'c' * 64}.json").exists()


def test_a_damaged_file_is_a_miss(tmp_path, entry):
    store = DiskStore(tmp_path)
    (tmp_path / f"{'e' * 64}.json").write_text('{"spec": ')
    assert store.get("e" * 64) is None
    with pytest.raises(ValueError):
        store.get("../escape")


def test_the_redis_store_is_bounded_least_recently_used_first_with_a_ttl(redis_url, entry):
    from redis import Redis

    conn = Redis.from_url(redis_url)
    prefix = f"test:{secrets.token_hex(4)}:"
    store = RedisStore(conn, max_entries=2, ttl_s=300, prefix=prefix)
    store.put("k1", entry)
    store.put("k2", entry)
    assert store.get("k1") == entry  # k1 used: k2 is now the least recently used
    store.put("k3", entry)
    assert sorted(store.keys()) == ["k1", "k3"]
    assert store.get("k2") is None and conn.get(prefix + "k2") is None
    assert 0 < conn.ttl(prefix + "k3") <= 300
    conn.delete(prefix + "k1")  # expired (as by its TTL): a miss, and out of the sorted set
    assert store.get("k1") is None and store.keys() == ["k3"]
