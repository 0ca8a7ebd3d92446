"""What one opened store shares across its namespace views: configuration, the store, the lock that guards every
process-local structure, the optional LLM and embedding function, and one :class:`NamespaceState` per namespace.

At most ``config.max_loaded_namespaces`` namespaces keep their followers loaded: when one more is loaded, the least
recently used ones are unloaded (:meth:`NamespaceState.unload`: saved as :meth:`Runtime.close` saves them, then their
followers freed) and loaded again on their next use, from their snapshots plus the change feed, as a new process
would. An unloaded state object is dropped too (a server that served a hundred thousand tenants would otherwise keep
one empty state each, about 15 KB): the next use of the namespace makes a new one. A namespace is never unloaded
while a public call that uses it runs (:meth:`Runtime.begin` pins it), nor while a follower of it is rebuilt in the
background; a state dropped while held outside a public call hands its next :meth:`NamespaceState.current` to the
namespace's state in the runtime."""

from __future__ import annotations

import logging
import os
import threading
import weakref
from collections import OrderedDict
from typing import Any

from hippo.base.config import Config
from hippo.base.errors import ClosedError, HippoError, StoreError
from hippo.base.locks import RWLock
from hippo.base.serial import SerialWorker
from hippo.engine.state import NamespaceState
from hippo.index.embedding import SimHasher, as_embed_fn, as_query_fn
from hippo.store.base import Store

log = logging.getLogger("hippo.engine")


class _Call(threading.local):
    """A thread's public call on a :class:`Runtime`: how deeply calls are nested, and the states the outermost one
    pinned (each thread starts at depth 0 with nothing pinned)."""

    depth = 0

    def __init__(self) -> None:
        self.pinned: set[NamespaceState] = set()


class Runtime:
    """State shared by every view of one store. ``lock`` is held for reading by queries and for writing by
    anything that changes a process-local structure (appends, deletions, catching up with other writers)."""

    def __init__(self, store: Store, config: Config, llm: Any = None, embed: Any = None) -> None:
        self.config = config
        self.store = store
        self.llm = llm
        self.embed = as_embed_fn(embed)
        self.embed_query = as_query_fn(embed)  # queries may embed differently from documents
        self.embed_source = embed
        self.hasher = SimHasher(config.embed_bits) if self.embed else None
        self.closed = False
        self._closed_why = "this Memory is closed"
        self._process_local()
        _RUNTIMES.add(self)

    def _process_local(self) -> None:
        """The structures of this process alone, empty: the lock, the loaded namespaces, the calls' pins and the
        async queues (a forked child starts them anew: :meth:`after_fork`)."""
        self.lock = RWLock()
        self._states: OrderedDict[str, NamespaceState] = OrderedDict()  # least recently used first
        self._states_lock = threading.Lock()
        self._pins: dict[NamespaceState, int] = {}  # public calls running that use a state (never unloaded then)
        self._local = _Call()  # this thread's public call: its depth and the states it pinned
        # namespaces past the bound that were in use when it was passed: unloaded by the call that used them last
        self._wanted: set[NamespaceState] = set()
        self._serials: dict[str, SerialWorker] = {}
        # LLM fallbacks counted by the states of unloaded namespaces, handed to their next state (Memory.stats)
        self._fallbacks: dict[str, int] = {}

    def live(self) -> None:
        if self.closed:
            raise ClosedError(self._closed_why)

    def after_fork(self, reopened: "bool | HippoError") -> None:
        """In a child process just forked (``multiprocessing``'s fork start method, gunicorn ``--preload``): the
        store reopens itself on a connection of the child's own (:meth:`Store.after_fork`) and every process-local
        structure starts empty, as in a process that opened the store itself. What the parent held is not the
        child's to use: its background rebuilds did not cross the fork (their threads exist only in the parent),
        a lock another thread held at that moment would never be released, and the reinforcements the parent has
        not saved yet are the parent's to save (saved by both, they would count twice). Each namespace is loaded
        again on its first use from the snapshots and the change feed (a private in-memory database, which the fork
        copied whole, from the child's copy of its messages); a store that cannot reopen itself keeps it all.
        ``reopened`` is what :meth:`Store.after_fork` answered (the error it raised)."""
        if reopened is False:
            return
        if isinstance(reopened, HippoError):
            self.closed = True
            self._closed_why = f"this Memory could not reopen its store after the process forked: {reopened}"
        self._process_local()

    def state(self, namespace: str) -> NamespaceState:
        """The namespace's state object (created empty on first use; :meth:`NamespaceState.current` fills it). Inside
        a public call (:meth:`begin`) it stays loaded until the call returns."""
        local = self._local
        with self._states_lock:
            st = self._states.get(namespace)
            if st is None:
                st = self._states[namespace] = NamespaceState(self, namespace)
                st.llm_fallbacks = self._fallbacks.pop(namespace, 0)
            else:
                self._states.move_to_end(namespace)
            if local.depth and st not in local.pinned:
                local.pinned.add(st)
                self._pins[st] = self._pins.get(st, 0) + 1
            return st

    def begin(self) -> bool:
        """A public call starts on this thread; True when it is the outermost one. Every namespace state the call
        takes (:meth:`state`) is pinned until :meth:`end` of the outermost call. Between taking a state
        (``state = rt.state(name).current()``) and reading it under the read lock a caller holds no lock, and may
        keep its lifecycle object after: unloading the namespace meanwhile would show it an empty state, or take a
        reinforcement into a lifecycle no longer saved."""
        local = self._local
        depth = local.depth
        local.depth = depth + 1
        return not depth

    def end(self, outer: bool) -> None:
        """The call :meth:`begin` started returns: the outermost one unpins what it used, and unloads the namespaces
        past the bound that waited for it."""
        local = self._local
        local.depth -= 1
        if not outer:
            return
        pinned = local.pinned
        if not pinned:
            return
        local.pinned = set()
        with self._states_lock:
            for st in pinned:
                left = self._pins.get(st, 0) - 1
                if left > 0:
                    self._pins[st] = left
                else:
                    self._pins.pop(st, None)
            over = any(st in self._wanted and st not in self._pins for st in pinned)
        if over and not self.closed:
            with self.lock.write():
                if not self.closed:
                    self.loaded_one()

    def loaded_one(self, state: NamespaceState | None = None) -> None:
        """``state`` has just been loaded: unload the least recently used namespaces past
        ``config.max_loaded_namespaces`` (those that can be: not pinned by a running call, no whole follower rebuilt
        in the background, reinforcements saved). Only namespaces used less recently than the ``bound`` latest are
        unloaded: one that cannot go yet is not replaced by a recent one. Those passed over because a call was using
        them are tried again when a public call returns; the others with the next load. A store whose derived state
        is not saved (in memory, read-only) unloads only namespaces that never held a message (reads of namespaces
        no one wrote, a lookup of an unknown user): what the others hold would be lost. Caller holds the write
        lock."""
        saves = self.store.path is not None and not self.store.read_only
        bound = self.config.max_loaded_namespaces
        with self._states_lock:
            self._wanted.clear()
            loaded = [st for st in self._states.values() if st.loaded]  # least recently used first
            over = loaded[: max(0, len(loaded) - bound)]
            if not saves:
                over = [st for st in over if st.holds_nothing]
            todo = [st for st in over if not self._in_use(st, state)]
        for st in todo:
            try:
                unloaded = st.unload(lambda st=st: self._in_use(st), self._states_lock)
            except Exception as exc:  # noqa: BLE001 - another namespace's call must not fail for this one
                # (a busy store while it caught up before saving): it stays loaded, tried again later
                log.warning("namespace %r stays loaded: %s", st.name, exc)
                continue
            if unloaded:
                self._forget(st)

    def _forget(self, st: NamespaceState) -> None:
        """Drop the state of an unloaded namespace, unless a call took it again since (then it stays, and loads)."""
        with self._states_lock:
            if self._states.get(st.name) is not st or st.loaded or st in self._pins or st in self._wanted:
                return
            del self._states[st.name]
            st.detached = True
            if st.llm_fallbacks:
                self._fallbacks[st.name] = st.llm_fallbacks

    def _in_use(self, st: NamespaceState, loading: NamespaceState | None = None) -> bool:
        """Whether a running call pins ``st``, or ``st`` is ``loading`` (being loaded for the caller: calls of other
        threads used other namespaces since it took it); if so, the call that unpins it last unloads it when it
        returns (see :meth:`end`, which reads ``_wanted`` under the same lock). Caller holds
        ``_states_lock``."""
        if st is loading or st in self._pins:
            self._wanted.add(st)
            return True
        return False

    def serial(self, namespace: str) -> SerialWorker:
        """The order of a namespace's async calls (every view of it shares one): its writes one at a time in call
        order, its reads between them. One per namespace, so that a slow read or write of one namespace (an agentic
        recall, a consolidation) does not hold up the writes of another. The caller hands it back with
        :meth:`serial_done` once its call is over: a namespace's worker goes when no call holds it and it has nothing
        queued or running (a server's users come and go; the next call makes a new one)."""
        with self._states_lock:
            worker = self._serials.get(namespace)
            if worker is None:
                worker = self._serials[namespace] = SerialWorker(
                    f"hippo-writes-{namespace}"[:64], lambda: self._serial_idle(namespace))
            worker.users += 1
            return worker

    def serial_done(self, namespace: str, worker: SerialWorker) -> None:
        """A call that took ``worker`` from :meth:`serial` is over."""
        with self._states_lock:
            worker.users -= 1
        self._serial_idle(namespace)

    def _serial_idle(self, namespace: str) -> None:
        """Drop the namespace's worker if no call holds it and it has nothing to do."""
        with self._states_lock:
            worker = self._serials.get(namespace)
            if worker is not None and not worker.users and worker.idle():
                del self._serials[namespace]

    def states(self) -> dict[str, NamespaceState]:
        with self._states_lock:
            return dict(self._states)

    def drop(self, namespace: str) -> None:
        """Forget every process-local follower of a namespace (after it was deleted from the store)."""
        with self._states_lock:
            st = self._states.pop(namespace, None)
            self._fallbacks.pop(namespace, None)
        if st is not None:
            st.close()

    def close(self) -> None:
        """Save derived state, seal every unsealed tail, close the store. Idempotent: of two threads closing at once,
        one saves and closes, and the other returns once it has."""
        if self.closed:
            return
        for st in self.states().values():
            # background rebuilds end before the store closes: those of whole followers are finished and saved
            # below (the next process would rebuild them again), the rest are stopped
            st.close(finish=not self.store.read_only)
        with self.lock.write():
            if self.closed:  # another thread's close() got here first, and has saved and closed everything
                return
            try:
                for st in self.states().values() if not self.store.read_only else ():
                    try:
                        st.save_derived(closing=True)
                        if st.loaded:
                            try:
                                self.store.seal(st.name, 1)
                            except HippoError as exc:
                                if type(exc) is StoreError:
                                    raise
                                # one namespace's (its lock held by another writer): the tail stays in its rows
                    except HippoError as exc:
                        if type(exc) is not StoreError:
                            log.warning("could not save the derived state of namespace %r at close: %s", st.name, exc)
                            continue
                        # The store itself failed (a server gone, after hippo_retry_s of retries; a full disk): each
                        # other namespace's save and seal would wait and fail as long, so they are left. Nothing is
                        # lost that the next open does not rebuild or replay; tails stay in their rows.
                        log.warning("closing: namespace %r and the ones after it keep their derived state and "
                                    "tails unsaved (rebuilt or replayed by the next open): %s", st.name, exc)
                        break
            finally:  # the store (a PostgreSQL pool: its threads and connections) is closed whatever the saves met
                self.store.close()
                self.closed = True
        _RUNTIMES.discard(self)


# Every open runtime, for the fork handler (weakly: a Memory dropped without close() is not kept alive by this).
_RUNTIMES: "weakref.WeakSet[Runtime]" = weakref.WeakSet()


_forking: list[Store] = []  # the stores fork_begins held, released in the parent once the fork returned


def _live() -> list[Runtime]:
    """The runtimes not closed. The weak set's references are copied in one step (a handle opened by another thread
    meanwhile must not end the iteration: an error in a fork handler is only printed)."""
    refs = list(_RUNTIMES.data)
    return [rt for rt in (ref() for ref in refs) if rt is not None and not rt.closed]


def _stores(live: list[Runtime]) -> list[Store]:
    out: dict[int, Store] = {}
    for rt in live:
        out.setdefault(id(rt.store), rt.store)  # views and handles may share one store
    return list(out.values())


def _before_fork() -> None:
    for store in _stores(_live()):
        store.fork_begins()
        _forking.append(store)


def _after_fork_in_parent() -> None:
    while _forking:
        _forking.pop().fork_ends()


def _after_fork_in_child() -> None:
    _forking.clear()
    live = _live()
    stores = _stores(live)
    for store in stores:  # every inherited connection goes before any store reopens (SQLite keeps one record per file)
        store.drop_inherited()
    reopened: dict[int, bool | HippoError] = {}
    for store in stores:
        try:
            reopened[id(store)] = store.after_fork()
        except HippoError as exc:
            reopened[id(store)] = exc
    for rt in live:
        rt.after_fork(reopened[id(rt.store)])


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)
