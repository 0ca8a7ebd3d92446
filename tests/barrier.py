"""Calls that meet each other half-way: a wrapped function, once done, waits at a barrier before it returns."""

from __future__ import annotations

import threading
from typing import Any, Callable


def calls_wait(real: Callable[..., Any], barrier: Any, timeout: float = 10.0, *, first_only: bool = False
               ) -> Callable[..., Any]:
    """``real`` wrapped so that each call (only the first, with ``first_only``), once it returned, waits at
    ``barrier`` (a ``threading`` or ``multiprocessing`` barrier shared with the other callers) before handing back its
    result: callers that do not take turns then all finish that call before any goes on; a broken or timed-out
    barrier ends the wait."""
    waited = []

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        if not (first_only and waited):
            waited.append(True)
            try:
                barrier.wait(timeout=timeout)
            except threading.BrokenBarrierError:
                pass
        return out

    return wrapper


def first_call_waits(real: Callable[..., Any], barrier: Any, timeout: float = 10.0) -> Callable[..., Any]:
    """:func:`calls_wait` for the first call only (two processes each comparing once before they store)."""
    return calls_wait(real, barrier, timeout, first_only=True)
