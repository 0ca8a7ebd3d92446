"""Calls run one at a time in the order they were handed in, on a worker thread that lives while there is work.

``asyncio.to_thread`` gives each call its own pool thread, so calls handed in one after the other (the tasks of an
``asyncio.gather``) run side by side and finish in any order. Writes must not: a chat history's messages are its
order, and the last of two overwrites is the one that should stand. A :class:`SerialWorker` keeps them in the
order of :meth:`SerialWorker.submit`.
"""

from __future__ import annotations

import contextvars
import threading
from collections import deque
from concurrent.futures import Future
from typing import Any, Callable


class SerialWorker:
    """A FIFO of calls run by one thread, started when work arrives and ended when the queue is empty (nothing to
    shut down). A call whose future was cancelled before it started is skipped."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._lock = threading.Lock()
        self._queue: deque[tuple[Future, contextvars.Context, Callable[..., Any]]] = deque()
        self._running = False

    def submit(self, fn: Callable[..., Any]) -> Future:
        """Queue ``fn()`` (run in the caller's context variables, as ``asyncio.to_thread`` does) behind every call
        submitted before it; its future holds the result or the exception."""
        future: Future = Future()
        with self._lock:
            self._queue.append((future, contextvars.copy_context(), fn))
            if self._running:
                return future
            self._running = True
        # not a daemon: a write handed in finishes before the interpreter exits, as in asyncio's default executor
        worker = threading.Thread(target=self._drain, name=self._name)
        try:
            worker.start()
        except BaseException:
            with self._lock:
                self._running = False
                self._queue.remove(next(entry for entry in self._queue if entry[0] is future))
            raise
        return future

    def _drain(self) -> None:
        while True:
            with self._lock:
                if not self._queue:
                    self._running = False
                    return
                future, context, fn = self._queue.popleft()
            if not future.set_running_or_notify_cancel():
                continue  # cancelled while it waited: it never ran
            try:
                result = context.run(fn)
            except BaseException as exc:  # handed to the caller through the future
                future.set_exception(exc)
            else:
                future.set_result(result)
