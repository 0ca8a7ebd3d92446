"""Progress bars on stderr for the long commands (ingest, import, export, bench).

A bar is drawn only when stderr is a terminal, so pipes, log files and CI output stay clean; ``TQDM_DISABLE=1``
turns bars off on a terminal too (tqdm reads ``TQDM_*`` settings from the environment).
"""

from __future__ import annotations

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
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=not shown(), dynamic_ncols=True,
                leave=True, smoothing=0.1)


@contextmanager
def bar(total: int | None, desc: str, unit: str = "msg") -> Iterator[tqdm]:
    """:func:`start` as a context manager: the bar is closed (its line finished) on the way out."""
    with start(total, desc, unit) as b:
        yield b
