"""Worker processes a test starts together: spawned, released at one moment, waited for, their errors collected."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterable


def run_together(target: Callable[..., None], arguments: Iterable[tuple], timeout: float = 300.0) -> None:
    """Spawn a process running ``target(*args, start, errors)`` for each ``args`` of ``arguments``, release them all at
    once (``start``, an Event each waits for), and wait for each (killed after ``timeout`` seconds). Asserts that every
    one finished, exited with 0 and put nothing into ``errors`` (a Queue a worker reports its exceptions to)."""
    ctx = multiprocessing.get_context("spawn")
    start, errors = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=target, args=(*args, start, errors)) for args in arguments]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(timeout)
    alive = [p for p in procs if p.is_alive()]
    for p in alive:
        p.kill()
    assert not alive, "a process never finished"
    found = []
    while not errors.empty():
        found.append(errors.get())
    assert not found and all(p.exitcode == 0 for p in procs), found
