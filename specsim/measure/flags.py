"""The command lines' shared flags, defined once: where the models come from and what they run on.

``python -m specsim.measure.cli``, ``python -m specsim.bench``, ``python -m specsim.measure.machine``,
``python -m specsim.measure.compare_variants`` and the class worker each add the groups they take; a flag means
the same thing, with the same default, check and help, in every one of them. A bad value is refused by argparse
with the flag's name, before any model loads.
"""

from __future__ import annotations

import argparse

from specsim.core.defaults import DEFAULT_DRAFT, DEFAULT_EARLY_EXIT_LAYERS, DEFAULT_TARGET


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def device_name(text: str) -> str:
    """An argparse type: ``cpu``, or ``cuda`` on a machine with a CUDA GPU."""
    from specsim.core.draft_loader import usable_device  # here: parsing --help loads no model library

    if not usable_device(text):
        raise argparse.ArgumentTypeError(f"must be cpu, or cuda on a machine with a CUDA GPU; got {text!r}")
    return text


def add_machine(parser: argparse.ArgumentParser, dtype: bool = True) -> None:
    """--threads, --device and (unless ``dtype`` is False) --dtype."""
    parser.add_argument("--threads", type=positive_int, default=None,
                        help="torch CPU threads (default: torch's choice; 1 is best on a busy machine)")
    parser.add_argument("--device", type=device_name, default=None,
                        help="cpu or cuda (default: cuda when present)")
    if dtype:
        parser.add_argument("--dtype", default="auto",
                            help="auto (the measured default for the device), float32, bfloat16 or float16")


def add_models(parser: argparse.ArgumentParser, drafts: bool = False) -> None:
    """--target, --draft (several with ``drafts``, one set of rows each) and --early-exit-layers."""
    parser.add_argument("--target", default=DEFAULT_TARGET, help='target model id or folder ("bundled")')
    if drafts:
        parser.add_argument("--draft", nargs="+", default=[DEFAULT_DRAFT],
                            help="draft model ids or folders for the model drafter (one set of rows each)")
    else:
        parser.add_argument("--draft", default=DEFAULT_DRAFT, help="draft model id or folder (model drafter)")
    parser.add_argument("--early-exit-layers", type=positive_int, default=DEFAULT_EARLY_EXIT_LAYERS,
                        help="layers the early-exit drafter keeps")


def apply_threads(threads: int | None) -> None:
    """Set torch's CPU threads when the flag was given."""
    if threads:
        import torch

        torch.set_num_threads(threads)
