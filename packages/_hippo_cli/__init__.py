"""The ``hippo`` console script: :func:`hippo.cli.main` behind a guard for Ctrl-C while it loads.

``import hippo`` takes most of a second (numpy, the tokenizer, the C core). A Ctrl-C in that time would end the
process with a Python traceback before :func:`hippo.cli.main` is there to report it. This module imports nothing
of hippo's, so the console script reaches it at once; it answers such an interrupt as every command does (one line,
``hippo: interrupted``, exit 130) and then runs the command line with Python's own Ctrl-C handling back in place.
A process started with SIGINT ignored (a shell script's background job) keeps ignoring it.
"""

from __future__ import annotations

import os
import signal
import sys

__all__ = ["main"]

_INTERRUPTED = b"hippo: interrupted\n"


def _interrupted_while_loading(signum: int, frame: object) -> None:
    # Nothing is open yet and nothing has been written: end here rather than unwind half-run module imports.
    try:
        os.write(2, _INTERRUPTED)
    finally:
        os._exit(130)


def main(argv: list[str] | None = None) -> int:
    """Load :mod:`hippo.cli` with Ctrl-C answered as an interrupt of the command, then run it."""
    guarded = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if guarded:
        signal.signal(signal.SIGINT, _interrupted_while_loading)
    try:
        from hippo.cli import main as run
    except BaseException:
        if guarded:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        raise
    # From here a Ctrl-C raises KeyboardInterrupt again, which hippo.cli.main turns into the same one line (a Ctrl-C
    # before the handler is back still meets the one above).
    try:
        if guarded:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        return run(argv)
    except KeyboardInterrupt:
        sys.stderr.write(_INTERRUPTED.decode())
        return 130
