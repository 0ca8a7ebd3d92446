"""Running a function in a child made by ``os.fork()`` (a Memory or a store opened before the fork), its JSON-able
result coming back through a pipe, under a deadline so that a hang fails the test instead of stalling the run."""

from __future__ import annotations

import json
import os
import time
from typing import Any, Callable

DEADLINE_S = 60.0


def fork(work: Callable[[], Any]) -> tuple[int, int]:
    """Start ``work()`` in a forked child: its pid and the pipe its JSON-able result, or ``{"error": ...}``, comes
    back through (read it with :func:`result`)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's result travels through the pipe
        os.close(r)
        try:
            out = {"result": work()}
        except BaseException as exc:  # noqa: BLE001
            out = {"error": f"{type(exc).__name__}: {exc}"}
        os.write(w, json.dumps(out).encode())
        os._exit(0)
    os.close(w)
    return pid, r


def result(r: int) -> dict:
    with os.fdopen(r, "rb") as f:
        return json.loads(f.read() or b'{"error": "no result"}')


def in_child(work: Callable[[], Any], meanwhile: Callable[[], None] = lambda: None) -> dict:
    """``work()`` in a forked child, ``meanwhile()`` in the parent once it forked: ``{"result": ...}``,
    ``{"error": ...}``, or ``{"hung": True}`` when the child has not finished by the deadline (it is then killed)."""
    pid, r = fork(work)
    meanwhile()
    deadline = time.monotonic() + DEADLINE_S
    while not os.waitpid(pid, os.WNOHANG)[0]:
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            os.close(r)
            return {"hung": True}
        time.sleep(0.02)
    return result(r)
