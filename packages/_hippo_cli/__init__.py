"""The ``hippo`` console script: :func:`hippo.cli.main` behind a guard for Ctrl-C while it loads.

``import hippo`` takes most of a second (numpy, the tokenizer, the C core). A Ctrl-C in that time would end the
process with a Python traceback before :func:`hippo.cli.main` is there to report it. This module imports nothing
of hippo's, so the console script reaches it at once; it answers such an interrupt as every command does (one line,
``hippo: interrupted``, exit 130) and then runs the command line with Python's own Ctrl-C handling back in place.
A process started with SIGINT ignored (a shell script's background job) keeps ignoring it.

``python -m hippo`` (and ``python -m hippo.cli``) cannot reach this module first: Python imports the package
``hippo`` before its ``__main__``. The package's ``__init__`` therefore calls :func:`guard_loading` before its own
imports when Python runs one of those two as the main module (:func:`runs_as_main`), and the ``__main__`` modules
enter through :func:`main`, which keeps the guard until the command line is loaded.
"""

from __future__ import annotations

import os
import signal
import sys

__all__ = ["main", "guard_loading", "runs_as_main"]

_INTERRUPTED = b"hippo: interrupted\n"

#: the modules ``python -m`` runs as the command line
_COMMAND_LINE_MODULES = frozenset({"hippo", "hippo.__main__", "hippo.cli", "hippo.cli.__main__"})


def _interrupted_while_loading(signum: int, frame: object) -> None:
    # Nothing is open yet and nothing has been written: end here rather than unwind half-run module imports.
    try:
        os.write(2, _INTERRUPTED)
    finally:
        os._exit(130)


def runs_as_main() -> bool:
    """Whether Python is locating the command line's module for ``python -m`` (``sys.argv[0]`` is ``"-m"`` until
    the module is found; the module's name is the word after ``-m`` in ``sys.orig_argv``)."""
    if getattr(sys, "argv", [None])[:1] != ["-m"]:
        return False
    args = list(getattr(sys, "orig_argv", ()))[1:]
    for i, arg in enumerate(args):
        if arg == "-m":
            return i + 1 < len(args) and args[i + 1] in _COMMAND_LINE_MODULES
        if arg.startswith("-m"):
            return arg[2:] in _COMMAND_LINE_MODULES
    return False


def guard_loading() -> bool:
    """Answer a Ctrl-C as an interrupt of the command (one line, exit 130) until :func:`main` has loaded the command
    line. True when the guard is in place (installed now or before); a process that ignores SIGINT, or has a
    handler of its own, is left as it is."""
    current = signal.getsignal(signal.SIGINT)
    if current is _interrupted_while_loading:
        return True
    if current is not signal.default_int_handler:
        return False
    signal.signal(signal.SIGINT, _interrupted_while_loading)
    return True


def main(argv: list[str] | None = None) -> int:
    """Load :mod:`hippo.cli` with Ctrl-C answered as an interrupt of the command, then run it."""
    guarded = guard_loading()
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
