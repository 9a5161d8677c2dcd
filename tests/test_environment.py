"""specsim.core.environment: every SPECSIM_* setting read by one class."""

from __future__ import annotations

import pytest

from specsim.core import environment


def test_blank_values_read_as_unset_and_spaces_are_dropped(monkeypatch):
    for name, value in (("queue_url", "  "), ("no_fused", " "), ("queue_limit", " 3 "), ("run_cache", " off "),
                        ("model_dirs", "/a::/b")):
        monkeypatch.setenv(environment.env_name(name), value)
    got = environment.current()
    assert got.queue_url is None and got.no_fused is False and got.queue_limit == 3 and got.run_cache == "off"
    assert [str(p) for p in got.model_dirs] == ["/a", "/b"]


def test_a_value_that_does_not_parse_is_named_with_what_it_was(monkeypatch):
    monkeypatch.setenv(environment.env_name("no_target_pass"), "maybe")
    with pytest.raises(environment.SettingsError, match=r"^SPECSIM_NO_TARGET_PASS: .*, not 'maybe'\.$"):
        environment.current()
