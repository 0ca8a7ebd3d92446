"""What one opened store shares across its namespace views: configuration, the store, the lock that guards every
process-local structure, the optional LLM and embedding function, and one :class:`NamespaceState` per namespace."""

from __future__ import annotations

import logging
import threading
from typing import Any

from hippo.base.config import Config
from hippo.base.errors import ClosedError, HippoError
from hippo.base.locks import RWLock
from hippo.base.serial import SerialWorker
from hippo.engine.state import NamespaceState
from hippo.index.embedding import SimHasher, as_embed_fn, as_query_fn
from hippo.store.base import Store

log = logging.getLogger("hippo.engine")


class Runtime:
    """State shared by every view of one store. ``lock`` is held for reading by queries and for writing by
    anything that changes a process-local structure (appends, deletions, catching up with other writers)."""

    def __init__(self, store: Store, config: Config, llm: Any = None, embed: Any = None) -> None:
        self.config = config
        self.store = store
        self.lock = RWLock()
        self.llm = llm
        self.embed = as_embed_fn(embed)
        self.embed_query = as_query_fn(embed)  # queries may embed differently from documents
        self.embed_source = embed
        self.hasher = SimHasher(config.embed_bits) if self.embed else None
        self.closed = False
        self._states: dict[str, NamespaceState] = {}
        self._states_lock = threading.Lock()
        self._serials: dict[str, SerialWorker] = {}

    def live(self) -> None:
        if self.closed:
            raise ClosedError("this Memory is closed")

    def state(self, namespace: str) -> NamespaceState:
        """The namespace's state object (created empty on first use; :meth:`NamespaceState.current` fills it)."""
        with self._states_lock:
            st = self._states.get(namespace)
            if st is None:
                st = self._states[namespace] = NamespaceState(self, namespace)
            return st

    def serial(self, namespace: str) -> SerialWorker:
        """The order of a namespace's async calls (every view of it shares one): its writes one at a time in call
        order, its reads between them. One per namespace, so that a slow read or write of one namespace (an agentic
        recall, a consolidation) does not hold up the writes of another."""
        with self._states_lock:
            worker = self._serials.get(namespace)
            if worker is None:
                worker = self._serials[namespace] = SerialWorker(f"hippo-writes-{namespace}"[:64])
            return worker

    def states(self) -> dict[str, NamespaceState]:
        with self._states_lock:
            return dict(self._states)

    def drop(self, namespace: str) -> None:
        """Forget every process-local follower of a namespace (after it was deleted from the store)."""
        with self._states_lock:
            st = self._states.pop(namespace, None)
        if st is not None:
            st.close()

    def close(self) -> None:
        """Save derived state, seal every unsealed tail, close the store. Idempotent."""
        if self.closed:
            return
        for st in self.states().values():
            # background rebuilds end before the store closes: those of whole followers are finished and saved
            # below (the next process would rebuild them again), the rest are stopped
            st.close(finish=not self.store.read_only)
        with self.lock.write():
            for st in self.states().values() if not self.store.read_only else ():
                st.save_derived()
                if st.loaded:
                    try:
                        self.store.seal(st.name, 1)
                    except HippoError:
                        pass  # the tail stays in its rows; nothing is lost
            self.store.close()
            self.closed = True
