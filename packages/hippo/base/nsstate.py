"""Per-store, per-namespace state that lives beside the store (hierarchy lifecycle, index-entry registry).

Keyed weakly by the store's shared object, so the state goes away with the last ``Memory`` using that store."""

from __future__ import annotations

import threading
import weakref
from typing import Any, Callable, Generic, TypeVar

T = TypeVar("T")


class NamespaceStates(Generic[T]):
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._per: "weakref.WeakKeyDictionary[Any, dict[str, T]]" = weakref.WeakKeyDictionary()

    def get(self, shared: Any, namespace: str, factory: Callable[[], T]) -> T:
        """The state of ``namespace`` in ``shared``'s store, created by ``factory`` on first use."""
        with self._lock:
            per = self._per.get(shared)
            if per is None:
                per = self._per[shared] = {}
            st = per.get(namespace)
            if st is None:
                st = per[namespace] = factory()
            return st

    def drop(self, shared: Any, namespace: str) -> None:
        with self._lock:
            per = self._per.get(shared)
            if per is not None:
                per.pop(namespace, None)

    def all(self, shared: Any) -> dict[str, T]:
        """A snapshot of every namespace's state for ``shared``."""
        with self._lock:
            return dict(self._per.get(shared) or {})
