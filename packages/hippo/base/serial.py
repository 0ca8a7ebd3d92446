"""Async calls of one namespace applied in the order they were called: writes one at a time on a worker thread,
reads side by side, each after the writes called before it, each write after the reads called before it.

``asyncio.to_thread`` gives each call its own pool thread, so calls handed in one after the other (the tasks of an
``asyncio.gather``) run side by side and finish in any order. Writes must not: a chat history's messages are its
order, and the last of two overwrites is the one that should stand; nor may a read answer with the store as it was
before a write called ahead of it, or after a write called behind it. The sync calls one after the other are the
oracle; reads that meet no write in between still run at the same time.
"""

from __future__ import annotations

import contextvars
import threading
from collections import deque
from concurrent.futures import Future, wait
from typing import Any, Callable


class SerialWorker:
    """A FIFO of writes run by one thread, started when work arrives and ended when the queue is empty (nothing to
    shut down). A write whose future was cancelled before it started is skipped. Reads run elsewhere (the caller's
    pool thread) between :meth:`read_begins` and :meth:`read_ends`; a write waits for the reads begun before it."""

    def __init__(self, name: str, on_idle: Callable[[], None] | None = None) -> None:
        self._name = name
        self._on_idle = on_idle  # called by the worker thread when it ends, the queue empty
        self._lock = threading.Lock()
        self._queue: deque[tuple[Future, contextvars.Context, Callable[..., Any], list[Future]]] = deque()
        self._running = False
        self._reads: set[Future] = set()
        self.users = 0  # calls holding this worker (counted by its owner, hippo.engine.runtime.Runtime.serial)

    def idle(self) -> bool:
        """Nothing queued, running or reading: a call that came next would wait for nothing here."""
        with self._lock:
            return not (self._running or self._queue or self._reads)

    def submit(self, fn: Callable[..., Any]) -> Future:
        """Queue the write ``fn()`` (run in the caller's context variables, as ``asyncio.to_thread`` does) behind
        every write submitted and every read begun before it; its future holds the result or the exception."""
        future: Future = Future()
        with self._lock:
            self._queue.append((future, contextvars.copy_context(), fn, list(self._reads)))
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

    def read_begins(self) -> tuple[Future | None, Future]:
        """A read is called: ``(written, token)``. ``written`` is done once every write submitted before it has run
        (None when none is queued or running); the writes submitted after it wait for ``token``, which the reader
        passes to :meth:`read_ends` when it has read (or will not read)."""
        written = None
        with self._lock:
            busy = self._running
        if busy:
            written = self.submit(_nothing)  # a no-op behind the pending writes; cancelling it skips only it
        token: Future = Future()
        with self._lock:  # registered after the no-op: it must not wait for this read, which waits for it
            self._reads.add(token)
        return written, token

    def read_ends(self, token: Future) -> None:
        """The read of ``token`` is over (it answered, failed or was cancelled); idempotent."""
        with self._lock:
            self._reads.discard(token)
            if token.done():
                return
            token.set_result(None)

    def _drain(self) -> None:
        while True:
            with self._lock:
                done = not self._queue
                if done:
                    self._running = False
                else:
                    future, context, fn, reads = self._queue.popleft()
            if done:
                if self._on_idle is not None:
                    self._on_idle()
                return
            if reads:
                wait(reads)  # the reads called before this write answer with the store as it was
            if not future.set_running_or_notify_cancel():
                continue  # cancelled while it waited: it never ran
            try:
                result = context.run(fn)
            except BaseException as exc:  # handed to the caller through the future
                future.set_exception(exc)
            else:
                future.set_result(result)


def _nothing() -> None:
    return None
