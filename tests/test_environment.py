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


def test_each_read_sees_the_variables_as_they_are_now(monkeypatch):
    """current() keeps what it parsed for one set of values (a script run asks dozens of times), and a changed,
    added or removed variable is read afresh, in whatever case it was written."""
    name = environment.env_name("queue_limit")
    monkeypatch.setenv(name, "3")
    first = environment.current()
    assert first.queue_limit == 3 and environment.current() is first
    monkeypatch.setenv(name, "4")
    assert environment.current().queue_limit == 4
    monkeypatch.delenv(name)
    assert environment.current().queue_limit is None
    monkeypatch.setenv(name.lower(), "5")  # pydantic-settings reads the names in any case
    assert environment.current().queue_limit == 5
    monkeypatch.delenv(name.lower())
    monkeypatch.setenv(name, "3")
    assert environment.current() is first  # the same values: what was parsed for them
