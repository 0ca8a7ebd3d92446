"""Progress bars on stderr for the long commands (ingest, import, export, bench).

A bar is drawn only when stderr is a terminal, so pipes, log files and CI output stay clean; ``TQDM_DISABLE=1``
turns bars off on a terminal too (tqdm reads ``TQDM_*`` settings from the environment).
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Iterator

from tqdm import tqdm

__all__ = ["bar", "shown", "start"]


def shown() -> bool:
    """Whether bars are drawn: stderr is a terminal."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stderr
        return False


def start(total: int | None, desc: str, unit: str = "msg") -> tqdm:
    """A tqdm bar over ``total`` steps (``None``: a counter without a total), a no-op off a terminal; the caller
    closes it (or use :func:`bar`)."""
    try:
        size = os.get_terminal_size(sys.stderr.fileno())
        sized = size.columns > 0 and size.lines > 0
    except (OSError, ValueError, AttributeError):
        sized = False
    # A terminal that reports no size (a fresh pseudo-terminal, some CI consoles) would get a zero-width bar, or none
    # at all (tqdm hides bars below the screen's last row).
    extra = {"dynamic_ncols": True} if sized else {"ncols": 80, "nrows": 24}
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=not shown(), leave=True, smoothing=0.1,
                **extra)


@contextmanager
def bar(total: int | None, desc: str, unit: str = "msg") -> Iterator[tqdm]:
    """:func:`start` as a context manager: the bar is closed (its line finished) on the way out."""
    with start(total, desc, unit) as b:
        yield b
