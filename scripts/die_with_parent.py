"""Run a command that dies with its parent: ``die_with_parent.py SIGNAL command [args...]``.

supervisord starts every part of a class through this. Linux sends ``SIGNAL`` to the command when the process that
started it (supervisord) dies, however it dies: a ``kill -9`` of supervisord then takes the whole class down instead
of leaving Redis, the workers, the replicas and nginx running with nothing to restart or stop them (issue 62).
The signal survives the ``exec`` below, so the command itself needs no change.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: die_with_parent.py SIGNAL command [args...]", file=sys.stderr)
        return 2
    sig = signal.Signals[argv[0]]
    parent = os.getppid()
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
        print(f"die_with_parent.py: prctl failed (errno {ctypes.get_errno()})", file=sys.stderr)
        return 1
    if os.getppid() != parent:  # the parent died before the signal was armed
        return 1
    os.execvp(argv[1], argv[1:])
    return 1  # not reached: execvp replaces this process or raises


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
