"""Issue 53: the command lines share their model and machine flags (specsim.measure.flags): one default, one check
and one help text per flag, refused by argparse with the flag's name before any model loads."""

from __future__ import annotations

import argparse

import pytest

from specsim.measure import bench, cli, flags


def _actions(parse_args_module, argv) -> dict[str, argparse.Action]:
    """The parser's actions, caught as it parses."""
    seen = {}
    real = argparse.ArgumentParser.parse_args

    def spy(self, args=None, namespace=None):
        seen.update({a.dest: a for a in self._actions})
        return real(self, args, namespace)

    argparse.ArgumentParser.parse_args = spy
    try:
        parse_args_module.parse_args(argv)
    finally:
        argparse.ArgumentParser.parse_args = real
    return seen


def test_the_cli_and_the_bench_take_the_same_machine_and_model_flags():
    cli_actions = _actions(cli, ["--prompt", "hi"])
    bench_actions = _actions(bench, [])
    for dest in ("threads", "device", "dtype", "target", "early_exit_layers"):
        a, b = cli_actions[dest], bench_actions[dest]
        assert (a.type, a.default, a.help) == (b.type, b.default, b.help), dest


@pytest.mark.parametrize("argv, message", [
    (["--threads", "0"], "argument --threads: must be at least 1, got 0"),
    (["--threads", "two"], "argument --threads: expected a whole number, got 'two'"),
    (["--device", "tpu"], "argument --device: must be cpu, or cuda on a machine with a CUDA GPU; got 'tpu'"),
    (["--early-exit-layers", "-3"], "argument --early-exit-layers: must be at least 1, got -3"),
])
def test_a_bad_value_is_refused_by_name_in_every_command(argv, message, capsys):
    for module, base in ((cli, ["--prompt", "hi"]), (bench, [])):
        with pytest.raises(SystemExit):
            module.parse_args(base + argv)
        assert message in capsys.readouterr().err


def test_the_helpers_check_what_they_say():
    assert flags.positive_int("3") == 3 and flags.device_name("cpu") == "cpu"
    with pytest.raises(argparse.ArgumentTypeError):
        flags.positive_int("0")
