"""The one readers-writer lock of hippo: many concurrent readers or one writer; waiting writers block new readers
(no writer starvation). The writing thread may re-enter ``write()`` and may ``read()`` what it is writing.

``with lock.read():`` / ``with lock.write():`` return small guard objects (no generator per use): the native
structures take this lock around every C call.
"""

from __future__ import annotations

import os
import threading
import weakref


class _ReadGuard:
    __slots__ = ("_lock", "_entered")

    def __init__(self, lock: "RWLock") -> None:
        self._lock = lock
        self._entered = False

    def __enter__(self) -> None:
        self._entered = self._lock._acquire_read()

    def __exit__(self, *exc: object) -> None:
        if self._entered:
            self._lock._release_read()


class _WriteGuard:
    __slots__ = ("_lock",)

    def __init__(self, lock: "RWLock") -> None:
        self._lock = lock

    def __enter__(self) -> None:
        self._lock._acquire_write()

    def __exit__(self, *exc: object) -> None:
        self._lock._release_write()


class RWLock:
    __slots__ = ("_cond", "_readers", "_writer", "_depth", "_waiting")

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writer: int | None = None
        self._depth = 0
        self._waiting = 0

    def read(self) -> _ReadGuard:
        return _ReadGuard(self)

    def write(self) -> _WriteGuard:
        return _WriteGuard(self)

    def _acquire_read(self) -> bool:
        """False when the calling thread holds the write lock (it reads under it; nothing to release)."""
        if self._writer == threading.get_ident():
            return False
        with self._cond:
            while self._writer is not None or self._waiting:
                self._cond.wait()
            self._readers += 1
        return True

    def _release_read(self) -> None:
        with self._cond:
            self._readers -= 1
            if not self._readers and self._waiting:  # only a waiting writer waits for the readers to leave
                self._cond.notify_all()

    def _acquire_write(self) -> None:
        me = threading.get_ident()
        with self._cond:
            if self._writer == me:
                self._depth += 1
                return
            self._waiting += 1
            try:
                while self._writer is not None or self._readers:
                    self._cond.wait()
            finally:
                self._waiting -= 1
            self._writer = me
            self._depth = 1

    def _release_write(self) -> None:
        with self._cond:
            self._depth -= 1
            if not self._depth:
                self._writer = None
                self._cond.notify_all()


class ForkSafeLock:
    """A lock guarding module-level state (a table built on first use, a cache): in a child process just forked it
    starts released. A thread that held it when the process forked does not exist in the child, and the plain lock
    it held would never be released there: the child's first use would wait forever. What such a lock guards is
    only ever replaced whole, so the child finds it either built or not built yet, or filled in an order that leaves
    an entry cut short by the fork to be made again (the stem vocabulary, :class:`hippo.text.vocab.Vocab`)."""

    __slots__ = ("_make", "_lock", "__weakref__")

    def __init__(self, reentrant: bool = False) -> None:
        self._make = threading.RLock if reentrant else threading.Lock
        self._lock = self._make()
        _FORK_SAFE.add(self)

    def __enter__(self) -> bool:
        return self._lock.__enter__()

    def __exit__(self, *exc: object) -> None:
        self._lock.__exit__(*exc)

    def _renew(self) -> None:
        self._lock = self._make()


_FORK_SAFE: "weakref.WeakSet[ForkSafeLock]" = weakref.WeakSet()


def _renew_after_fork() -> None:
    for lock in list(_FORK_SAFE):
        lock._renew()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_renew_after_fork)
