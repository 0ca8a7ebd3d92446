"""A call that meets another process half-way: the first call of a wrapped function, once done, waits at a barrier."""

from __future__ import annotations

import threading
from typing import Any, Callable


def first_call_waits(real: Callable[..., Any], barrier: Any, timeout: float = 10.0) -> Callable[..., Any]:
    """``real`` wrapped so that its first call, once it returned, waits at ``barrier`` (a ``multiprocessing``
    barrier shared with another process) before handing back its result: two processes that do not take turns then
    both finish that call before either goes on; a broken or timed-out barrier ends the wait."""
    waited = []

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        if not waited:
            waited.append(True)
            try:
                barrier.wait(timeout=timeout)
            except threading.BrokenBarrierError:
                pass
        return out

    return wrapper
