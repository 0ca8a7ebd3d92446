"""``hippo.Memory``: the public facade. It validates arguments, opens the store, and delegates to the engine
(:mod:`hippo.engine`); it holds no retrieval logic of its own. Every method has an ``a``-prefixed async twin that
runs it in a worker thread; the async calls of one namespace take effect in the order they were called: the writes
(``aadd``, ``aadd_many``, ``aupdate``, ``adelete``, ``aforget``, ``aclear``) one after the other, each read after the
writes called before it and before those called after it."""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import os
import queue
import tempfile
import threading
from typing import Any, Callable, Iterable, Mapping, TypeVar

import numpy as np

from hippo.base.checks import (
    check_bool,
    check_ids,
    check_int,
    check_iterable,
    check_metadata,
    check_namespace,
    is_one_of,
)
from hippo.base.config import Config
from hippo.base.errors import CorruptData, HippoError, InvalidInput, NotFound, ReadOnlyError, StoreError
from hippo.base.timeutil import with_utc_offset
from hippo.base.types import Hit, MemoryItem, Recall
from hippo.engine import agentic, integrity, multisearch, timeline
from hippo.engine.entries import Entries
from hippo.engine.llm import as_llm
from hippo.engine.maintenance import LEVELS
from hippo.engine.namespace import Namespace, Replacing, delete_namespace, delete_namespaces, write_many
from hippo.engine.prepare import check_event_time, prepare
from hippo.engine.profiles import check_speaker
from hippo.engine.runtime import Runtime
from hippo.engine.scope import scope_of
from hippo.index.embedding import as_embed_fn
from hippo.store.base import Store
from hippo.store.filters import compile_filter
from hippo.store.opening import open_store
from hippo.store.sqlite import check_path
from hippo.text import tokenizer

EXPORT_FORMAT = "hippo-export"
EXPORT_VERSION = 1

F = TypeVar("F", bound=Callable[..., Any])


def _twin(fn: F, *, ordered: bool = False) -> F:
    """The async twin of a facade method: the same call in a worker thread, in the order the async calls of the
    namespace were made (:class:`~hippo.base.serial.SerialWorker`), as the sync calls one after the other would run.
    An ``ordered`` twin (a write) runs on the namespace's write queue, after the writes and reads called before it;
    any other twin in a pool thread (``asyncio.to_thread``), after the writes called before it, beside other reads.
    Without this the tasks of an ``asyncio.gather`` reached the store in whichever order their threads got there."""

    one_call = _in_operation(fn)

    @functools.wraps(fn)
    async def twin(self: "Memory", *args: Any, **kwargs: Any) -> Any:
        call = functools.partial(one_call, self, *args, **kwargs)
        writes = self._rt.serial(self.namespace)
        try:
            if ordered:
                return await asyncio.wrap_future(writes.submit(call))
            written, token = writes.read_begins()
            try:
                if written is not None:
                    await asyncio.wrap_future(written)
                return await asyncio.to_thread(_read, call, writes, token)
            finally:
                writes.read_ends(token)  # cancelled before its thread ran it, the read is over too
        finally:
            self._rt.serial_done(self.namespace, writes)

    twin.__name__ = twin.__qualname__ = "a" + fn.__name__
    twin.__doc__ = (f"Async twin of :meth:`{fn.__name__}` (runs in a worker thread, in the order of the async calls "
                    "made on the namespace).")
    return twin  # type: ignore[return-value]


# Async writes of several namespaces are queued on every one of those namespaces' write queues, all of them at once
# under this lock: any two such writes are then in one order in every queue they share, and never wait for each other.
_QUEUEING = threading.Lock()


def _twin_of_many(fn: F) -> F:
    """The async twin of :meth:`Memory.write_many`: an ordered twin (a write) in each namespace it writes, after the
    async calls of those namespaces called before it and before those called after it. A turn is taken in the
    write queue of each namespace; the last of them to come runs the call, and every turn ends when it returns."""

    one_call = _in_operation(fn)

    @functools.wraps(fn)
    async def twin(self: "Memory", writes: Any, *args: Any, **kwargs: Any) -> Any:
        call = functools.partial(one_call, self, writes, *args, **kwargs)
        names = sorted({n for n in writes if isinstance(n, str)}) if isinstance(writes, Mapping) else []
        names = names or [self.namespace]
        rt = self._rt
        taken = [(n, rt.serial(n)) for n in names]
        release = threading.Event()
        turns = [threading.Event() for _ in taken]

        def wait_turn(k: int) -> None:
            turns[k].set()
            release.wait()

        def run() -> Any:
            try:
                for t in turns[:-1]:
                    t.wait()
                return call()
            finally:
                release.set()

        try:
            with _QUEUEING:
                for k, (_, w) in enumerate(taken[:-1]):
                    w.submit(functools.partial(wait_turn, k))
                last = taken[-1][1].submit(run)
            # cancelled before its turn, the call never runs: the turns taken in the other queues end then too
            last.add_done_callback(lambda _: release.set())
            return await asyncio.wrap_future(last)
        finally:
            for n, w in taken:
                rt.serial_done(n, w)

    twin.__name__ = twin.__qualname__ = "a" + fn.__name__
    twin.__doc__ = (f"Async twin of :meth:`{fn.__name__}` (runs in a worker thread, in the order of the async calls "
                    "made on each namespace it writes).")
    return twin  # type: ignore[return-value]


def _in_operation(fn: F) -> F:
    """A facade method as one public call (:meth:`Runtime.begin` / :meth:`Runtime.end`): the namespaces it uses
    stay loaded until it returns."""

    @functools.wraps(fn)
    def method(self: "Memory", *args: Any, **kwargs: Any) -> Any:
        rt = self._rt
        outer = rt.begin()
        try:
            return fn(self, *args, **kwargs)
        finally:
            rt.end(outer)

    return method  # type: ignore[return-value]


def _read(call: Callable[[], Any], writes: Any, token: Any) -> Any:
    """``call()`` in a pool thread; the writes called after it wait until it has answered."""
    try:
        return call()
    finally:
        writes.read_ends(token)


def _entries_method(fn: F) -> F:
    """A facade method that delegates to this namespace's :class:`~hippo.engine.entries.Entries`."""

    @functools.wraps(fn)
    def method(self: "Memory", *args: Any, **kwargs: Any) -> Any:
        return getattr(self._entries(), fn.__name__)(*args, **kwargs)

    return method  # type: ignore[return-value]


def _check_query(query: object, name: str = "query") -> str:
    if not isinstance(query, str):
        raise InvalidInput(f"{name} must be a str, got {type(query).__name__}")
    if not query.strip():
        raise InvalidInput(f"{name} must not be empty or whitespace only")
    if len(query) > tokenizer.MAX_QUERY_CHARS:
        raise InvalidInput(f"{name} is longer than {tokenizer.MAX_QUERY_CHARS} characters")
    tokenizer.check_text(query, name)
    return query


def _check_query_embedding(rt: Runtime, value: object, name: str = "query_embedding") -> np.ndarray | None:
    """``value`` as the query vector of the embedding channel: None, or a non-empty flat sequence of finite numbers,
    given only to a store that has an embedding channel (on another it would be silently ignored)."""
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        raise InvalidInput(f"{name} must be a sequence of numbers or None, got {type(value).__name__}")
    try:
        vec = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"{name} must be a flat sequence of numbers: {exc}") from None
    if vec.ndim != 1 or vec.size == 0 or vec.dtype.kind not in "iuf" or not np.isfinite(vec).all():
        raise InvalidInput(f"{name} must be a non-empty flat sequence of finite numbers, got shape {vec.shape} "
                           f"of {vec.dtype}")
    if rt.embed_query is None:
        raise InvalidInput(f"{name} was given but this store has no embedding channel (open it with embed=...)")
    return vec.astype(np.float32)


def _check_llm(llm: object, name: str = "llm") -> None:
    """``llm`` as ``Memory(llm=...)`` and ``agentic_recall(llm=...)`` take it (None, an ``LLM``, an
    OpenAI-compatible client or a dict of settings), checked when given rather than at its first use, where a
    consolidation or an agentic recall would fail on it (and a write's LLM refresh skip it silently)."""
    if llm is None:
        return
    try:
        as_llm(llm)
    except InvalidInput as exc:
        raise InvalidInput(str(exc) if str(exc).startswith(name) else f"{name}: {exc}") from exc


def _check_path(path: object, name: str = "path") -> str:
    if not isinstance(path, (str, os.PathLike)):
        raise InvalidInput(f"{name} must be a str or os.PathLike, got {type(path).__name__}")
    return check_path(path, name)  # no NUL, no lone surrogate


class Memory:
    """Long-term memory for an agent: add messages as they happen, recall a budgeted context later.

    ``path`` is a SQLite file (created with mode 0600; many namespaces per file), a PostgreSQL URL
    (``postgresql://user@host/db``: one memory shared by many processes and hosts, see :mod:`hippo.store.postgres`
    and docs/deploy.md), ``None`` (or ``":memory:"``, as SQLite names it) for a private in-memory store, or a
    :class:`hippo.store.base.Store`. All writes are transactional: a failed call leaves the stored content unchanged.

    ``read_only=True`` opens an existing store without writing to it, also on read-only media, without write
    permission or on a full disk: every read answers (what reads would otherwise persist, such as strengths
    reinforced by access, stays in memory), every write raises :class:`~hippo.base.errors.ReadOnlyError`.
    """

    def __init__(
        self,
        path: str | os.PathLike | Store | None = None,
        *,
        read_only: bool = False,
        namespace: str = "default",
        config: Config | dict | None = None,
        llm: Any = None,
        embed: Any = None,
        _runtime: Runtime | None = None,
    ) -> None:
        name = check_namespace(namespace)
        if _runtime is None:
            cfg = Config.from_value(config)
            check_bool(read_only, "read_only")
            _check_llm(llm)  # before the store is opened (or created): a call that raised has created nothing
            if isinstance(path, Store):
                if read_only and not path.read_only:
                    raise InvalidInput("read_only=True needs a store opened read-only (or a path)")
                store = path
            elif path is None or isinstance(path, (str, os.PathLike)):
                store = open_store(path, read_only=read_only, config=cfg)
            else:
                raise InvalidInput(f"path must be a str, os.PathLike, a Store or None, got {type(path).__name__}")
            _runtime = Runtime(store, cfg, llm, embed)
        self._rt = _runtime
        self._ns = Namespace(_runtime, name)
        self._entries_obj: Entries | None = None

    # -- lifecycle ------------------------------------------------------------------------------------------
    @property
    def namespace(self) -> str:
        return self._ns.name

    @property
    def config(self) -> Config:
        return self._rt.config

    @property
    def path(self) -> str | None:
        return self._rt.store.path

    @property
    def read_only(self) -> bool:
        """Whether the store was opened with ``read_only=True`` (every write raises ``ReadOnlyError``)."""
        return self._rt.store.read_only

    def _writable(self, what: str) -> None:
        """Refuse a write on a read-only store before anything (stored or in memory) changes."""
        self._rt.live()
        if self._rt.store.read_only:
            raise ReadOnlyError(f"{what}: the store {self.path!r} is open read-only (Memory(path, read_only=True))")

    @property
    def embedding(self) -> Any:
        """The ``embed`` this store was opened with (a callable or an embeddings object), or None."""
        return self._rt.embed_source

    def with_embedding(self, embed: Any) -> "Memory":
        """This store with ``embed`` as its embedding channel: ``self`` when the store already embeds with that very
        object; otherwise (the store has no embedding) a second handle on the same file, at the same namespace,
        whose writes and searches use ``embed`` (the caller closes it). A store cannot switch embeddings (the codes
        kept in it come from one function), so an in-memory store, or one opened with another ``embed``, raises
        ``InvalidInput``."""
        self._rt.live()
        if embed is None:
            raise InvalidInput("embed must be a callable or an embeddings object, got None")
        as_embed_fn(embed)  # validates
        current = self._rt.embed_source
        if current is not None:
            if current is embed:
                return self
            raise InvalidInput("embed differs from the embedding this store was opened with; a store keeps the codes "
                               "of one embedding function: open it with that function only")
        if self.path is None:
            raise InvalidInput("an in-memory store cannot be opened a second time with an embedding; create it with "
                               "hippo.Memory(None, embed=...)")
        # a PostgreSQL store shows its URL without the password; it keeps the URL it was opened with for this
        target = getattr(self._rt.store, "url", None) or self.path
        return Memory(target, read_only=self.read_only, namespace=self.namespace, config=self.config, embed=embed)

    @property
    def engine(self) -> Namespace:
        """The engine behind this view (:class:`hippo.engine.namespace.Namespace`), for diagnostics and tests:
        ``engine.state()`` is the namespace's :class:`~hippo.engine.state.NamespaceState` (co-index, annotations,
        lifecycle), ``engine.rt.store`` the store. Not a stable API."""
        return self._ns

    def using(self, namespace: str) -> "Memory":
        """A view of another namespace of the same store (shares the connection and caches)."""
        self._rt.live()
        return Memory(namespace=check_namespace(namespace), _runtime=self._rt)

    def close(self) -> None:
        """Save derived state, seal unsealed tails and close the store (idempotent). A rebuild of derived state still
        running in the background (after a large import, or a store opened without a usable snapshot) is finished
        first and saved, so the next process loads it instead of rebuilding it."""
        self._rt.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Memory(path={self.path!r}, namespace={self.namespace!r})"

    def _entries(self) -> Entries:
        if self._entries_obj is None:
            self._entries_obj = Entries(self._ns)
        return self._entries_obj

    # -- writing --------------------------------------------------------------------------------------------
    def add(
        self,
        text: str,
        *,
        speaker: str | None = None,
        role: str = "user",
        timestamp: Any = None,
        session_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        priority: str | None = None,
        event_time: Any = None,
    ) -> MemoryItem:
        """Store one message verbatim; it is retrievable as soon as this returns. Zero LLM calls.

        ``timestamp`` is when the message was said; ``event_time`` (optional) when what it reports happened.
        Without it, the event time is resolved from the text ("yesterday", "two weeks ago", "on May 3rd") against
        ``timestamp``. Both accept a datetime, epoch seconds or ISO-8601 text."""
        self._writable("add")
        item = {"text": text, "speaker": speaker, "role": role, "timestamp": timestamp, "session_id": session_id,
                "metadata": metadata, "priority": priority, "event_time": event_time}
        return self._ns.write([prepare(item, "add", self.config)])[0]

    def add_many(self, items: Iterable[Mapping[str, Any] | MemoryItem], *, if_version: int | None = None,
                 replacing: int | Iterable[int] | dict[str, Any] | None = None) -> list[MemoryItem]:
        """Store many messages in one transaction: either all are stored or none.

        ``if_version``: store them only while the namespace's latest change is still that one (:meth:`version`,
        read before the reads that decided what to add), checked in the write's own transaction: when another call,
        thread or process changed the namespace in between, :class:`hippo.Changed` is raised and nothing is stored
        (read again and decide again). A stored batch is then the namespace's change ``if_version + 1``. This is how
        a read and the write it decides take turns across processes on one store (SQLite: under ``BEGIN
        IMMEDIATE``; PostgreSQL: under the namespace's advisory lock).

        ``replacing``: messages this call replaces, deleted in the same transaction as the new ones are stored, so
        that either the new messages are stored and those are gone, or (the call raised) nothing changed. Message
        ids (an int or an iterable of ints; ids the namespace does not hold are ignored), or a non-empty filter
        (grammar: :mod:`hippo.store.filters`): every message stored before this call that matches it when the
        write commits, also one another handle or process adds meanwhile (as with :meth:`forget`, one changed
        meanwhile so that it no longer matches stays). The messages this call stores are never among them. With
        ``items`` empty the call only deletes them. The encoding gate (``config.gate``) judges the new messages
        without the ones they replace (an edited version is not a repeat of its old one); when it rejects any of
        them, none of the replaced messages goes (the admitted ones are stored): a message is deleted only with its
        new version stored, and one call per edit has each judged on its own. As with :meth:`delete`, their
        content leaves the store's files. The deletion, when a message went, is the namespace's change after the
        batch's (with ``if_version``, ``if_version + 2``; ``if_version + 1`` when ``items`` is empty)."""
        self._writable("add_many")
        check_iterable(items, "items", "an iterable of dicts")
        if if_version is not None:
            if_version = check_int(if_version, "if_version")
        replaced = self._replacing(replacing)
        cfg = self.config
        prepared = [prepare(it, f"items[{k}]", cfg) for k, it in enumerate(items)]
        return self._ns.write(prepared, if_version, replaced)

    def write_many(self, writes: Mapping[str, Mapping[str, Any]]) -> dict[str, list[MemoryItem]]:
        """:meth:`add_many` in several namespaces of this store in one transaction: every namespace's messages are
        stored and the messages they replace deleted, or (the call raised) nothing changed in any of them.

        ``writes`` maps a namespace to the arguments :meth:`add_many` takes there: ``items`` (default none),
        ``replacing`` and ``if_version``, with their meaning in that namespace (a namespace whose ``if_version``
        is no longer its latest change raises :class:`hippo.Changed`, and nothing is written anywhere). Returns each
        namespace's stored items, as ``add_many`` returns them. Two calls over the same namespaces, from any
        processes, in whichever order they name them, take the namespaces' write locks in one order: neither waits
        for the other for ever."""
        self._writable("write_many")
        if not isinstance(writes, Mapping):
            raise InvalidInput(f"writes must be a dict of namespace -> add_many arguments, got {type(writes).__name__}")
        cfg = self.config
        plan = []
        for name, args in writes.items():
            where = f"writes[{name!r}]"
            name = check_namespace(name, f"writes key {name!r}")
            if not isinstance(args, Mapping):
                raise InvalidInput(f"{where} must be a dict of add_many arguments (items, replacing, if_version), "
                                   f"got {type(args).__name__}")
            unknown = sorted(map(str, set(args) - {"items", "replacing", "if_version"}))
            if unknown:
                raise InvalidInput(f"{where}: unknown argument(s) {unknown}; expected items, replacing, if_version")
            items = check_iterable(args.get("items", ()), f"{where}['items']", "an iterable of dicts")
            expect = args.get("if_version")
            if expect is not None:
                expect = check_int(expect, f"{where}['if_version']")
            replaced = self._replacing(args.get("replacing"), f"{where}['replacing']")
            prepared = [prepare(it, f"{where}['items'][{k}]", cfg) for k, it in enumerate(items)]
            plan.append((self._ns.sibling(name), prepared, expect, replaced))
        if len(plan) == 1 and (plan[0][1] or plan[0][3] is not None):
            # one namespace: its own write, as add_many's (on PostgreSQL an append whose commit went unconfirmed is
            # retried by its idempotency keys, where a write of several namespaces asks the server, and raises when
            # the server cannot say)
            ns, prepared, expect, replaced = plan[0]
            return {ns.name: ns.write(prepared, expect, replaced)}
        written = write_many(self._rt, plan)
        return {ns.name: items for (ns, _, _, _), items in zip(plan, written)}

    @staticmethod
    def _replacing(replacing: object, name: str = "replacing") -> Replacing | None:
        """``add_many``'s ``replacing`` checked: None, message ids, or a non-empty filter."""
        if replacing is None:
            return None
        if isinstance(replacing, dict):
            if not replacing:
                raise InvalidInput(f"{name} must be message ids or a non-empty filter dict, got {{}} (every message "
                                   "of the namespace: use clear() then add_many())")
            return Replacing(pred=compile_filter(replacing, name))
        return Replacing(ids=check_ids(replacing, name))

    def version(self) -> int:
        """The number of the namespace's latest change in the store: every add, deletion and metadata update (of
        any handle or process) takes the next one. Read it before reading what decides a write, and pass it to
        :meth:`add_many` as ``if_version``."""
        return self._ns.version()

    def update(self, id: int, *, metadata: dict[str, Any]) -> MemoryItem:
        """Replace a message's metadata in place (id, seq and text are unchanged); ``NotFound`` if absent. The old
        metadata leaves no copy behind in the store's files (see :meth:`delete`)."""
        self._writable("update")
        return self._ns.update_metadata(check_int(id, "id"), check_event_time(check_metadata(metadata), self.config))

    def delete(self, ids: int | Iterable[int], *,
               choose: Callable[[list[MemoryItem]], Iterable[int]] | None = None,
               filter: dict[str, Any] | None = None) -> int:
        """Delete messages by id from the store and every structure; unknown ids are ignored. Returns count.

        ``filter`` (optional; grammar: :mod:`hippo.store.filters`) keeps of ``ids`` only the messages that match it
        when the deletion commits: one another handle or process changed after the caller chose it, so that it no
        longer matches (its metadata updated), stays, as with :meth:`forget`.

        ``choose`` (optional) decides in the deleting transaction which of them go: it is given the messages of
        ``ids`` still stored (in seq order, their metadata as it is then) and returns the ids of those to delete
        (ids it returns that are not among them are ignored). Another handle's or process's change to those messages
        cannot land between its decision and the deletion, so a decision about several messages together (all the
        parts of a record, judged by one of them) holds when the deletion commits. It may be called again when the
        store retries the transaction, and must only decide from what it is given (it runs inside the deletion: a call
        of the memory from it would wait for that deletion); an exception it raises deletes nothing and is raised.

        When this returns, the deleted text, metadata and token ids are gone from the store's files too (freed
        pages are zeroed, the write-ahead log is truncated; if another process is reading the store at that moment,
        the log is truncated after its read, at the next write or close), and so is text an LLM wrote from them."""
        self._writable("delete")
        if choose is not None and not callable(choose):
            raise InvalidInput(f"choose must be callable or None, got {type(choose).__name__}")
        pred = compile_filter(filter)
        return self._ns.delete(check_ids(ids), pred, choose=choose)

    def forget(self, filter: dict[str, Any]) -> int:
        """Delete every message of this namespace that matches ``filter`` (grammar: :mod:`hippo.store.filters`;
        ``{}`` is refused: use :meth:`clear`). As with :meth:`delete`, the content leaves the store's files."""
        if not isinstance(filter, dict) or not filter:
            raise InvalidInput("filter must be a non-empty dict (use clear() to delete everything)")
        pred = compile_filter(filter)
        self._writable("forget")
        return self._ns.forget(pred)

    def clear(self) -> int:
        """Delete every message of this namespace."""
        self._writable("clear")
        return self._ns.forget(None)

    def delete_namespace(self, namespace: str) -> int:
        """Remove a whole namespace (messages, chunks, codes, units); returns the number of messages removed. As
        with :meth:`delete`, its content leaves the store's files."""
        name = check_namespace(namespace)
        self._writable("delete_namespace")
        return delete_namespace(self._rt, name)

    def delete_namespaces(self, namespaces: Iterable[str]) -> int:
        """:meth:`delete_namespace` of several namespaces in one transaction: all of them are removed, or (the call
        raised) none; returns the number of messages removed."""
        check_iterable(namespaces, "namespaces", "an iterable of namespace names")
        names = list(dict.fromkeys(check_namespace(n, f"namespaces[{k}]") for k, n in enumerate(namespaces)))
        self._writable("delete_namespaces")
        return delete_namespaces(self._rt, names) if names else 0

    def namespaces(self) -> list[str]:
        self._rt.live()
        return self._rt.store.namespaces()

    def vacuum(self) -> None:
        """Reclaim space and scrub freed pages: deleted content leaves no bytes behind in the file."""
        self._writable("vacuum")
        with self._rt.lock.write():
            self._rt.store.vacuum()

    def backup(self, path: str | os.PathLike) -> int:
        """Write a consistent copy of the whole store (every namespace, not only this one) to the file ``path``, while
        this and other processes go on reading and writing; returns the copy's size in bytes.

        The copy is one committed state of the store, checked, and renamed over ``path`` only once whole, so ``path``
        is either its old file or the complete copy. Copying a store file that is in use (``cp``) misses what its
        ``-wal`` log holds and may be torn; this does neither. An in-memory store is saved to a file this way.
        ``path`` may not be the store itself, nor a store that a process has open. Put a backup back
        with ``hippo restore`` (:func:`hippo.store.backup.restore`). PostgreSQL stores are backed up with
        ``pg_dump`` (docs/deploy.md); there this raises :class:`~hippo.base.errors.StoreError`."""
        self._rt.live()
        path = _check_path(path)
        return self._rt.store.backup(path, "path")

    def flush(self) -> None:
        """Seal the unsealed tail of this namespace into a chunk now (normally done every ``seal_tokens``)."""
        self._writable("flush")
        self._ns.flush()

    # -- reading --------------------------------------------------------------------------------------------
    def get(self, id: int) -> MemoryItem:
        """The message with this id, reconstructed from the Content DWM; ``NotFound`` if it is not here."""
        self._rt.live()
        return self._ns.get(check_int(id, "id"))

    def count(self) -> int:
        return self._ns.count()

    def __len__(self) -> int:
        return self.count()

    def list(self, *, filter: dict[str, Any] | None = None, limit: int | None = None, offset: int = 0
             ) -> list[MemoryItem]:
        """Messages in insertion order, optionally filtered and paginated."""
        self._rt.live()
        pred = compile_filter(filter)
        if limit is not None:
            limit = check_int(limit, "limit")
        offset = check_int(offset, "offset")
        wanted = filter.get("session_id", ...) if isinstance(filter, dict) else ...
        # read that session's rows only (and only the page asked for, when the filter is that session alone)
        session = (wanted, len(filter) == 1) if wanted is None or isinstance(wanted, str) else None
        return self._ns.list(pred, limit, offset, session)

    def read(self, message_id: int, *, before: int = 2, after: int = 2) -> list[MemoryItem]:
        """A message with up to ``before`` / ``after`` neighbours from the same session, in order."""
        self._rt.live()
        return self._ns.read(check_int(message_id, "message_id"), check_int(before, "before"),
                             check_int(after, "after"))

    def episode(self, message_id: int) -> list[MemoryItem]:
        """The messages of the episode that holds ``message_id``, in order (the hierarchy's level 1: a stretch of
        one session on one subject). A message not consolidated yet belongs to the open episode: the messages of
        its session waiting with it in the CURRENT buffer. Raises ``NotFound`` for an unknown id, and when the
        hierarchy is disabled."""
        self._rt.live()
        return self._ns.episode(check_int(message_id, "message_id"))

    def stats(self) -> dict[str, Any]:
        """Sizes of this namespace's structures and of the whole store, with bytes per stored token."""
        return self._ns.stats()

    # -- search and recall ----------------------------------------------------------------------------------
    def search(self, query: str, *, k: int = 10, filter: dict[str, Any] | None = None, since: Any = None,
               until: Any = None, as_of: Any = None, query_embedding: Any = None, asked_at: Any = None) -> list[Hit]:
        """The ``k`` best messages for ``query`` (fused lexical, signature and optional embedding channels,
        reweighted by time and truth: seed 002 §4.1 stage 9).

        ``since`` / ``until`` keep messages whose event time overlaps ``[since, until)``; ``as_of`` answers as the
        memory stood at that moment (messages ingested later, and updates they made, are ignored). ``asked_at`` is
        when the question is asked: its "yesterday", "last week" or "this morning" count from that moment, on the
        calendar of the offset from UTC it is given with (UTC's for a naive datetime or epoch seconds). Without it
        they count from when the namespace's latest message was said, on that message's calendar: right for a
        history replayed or read after the fact, while a live agent passes the time of the user's question (the
        turn may come days after the last one stored). Each accepts a datetime, epoch seconds or ISO-8601 text.
        ``query_embedding`` (a store with an embedding channel only) is
        the vector the embedding channel searches with instead of the store's embedding of ``query``: the caller
        embedded other text for it (a hypothetical answer, several phrasings averaged), while the other channels
        still search ``query``'s words. A vector of another dimension than the stored embeddings raises."""
        self._rt.live()
        query = _check_query(query)
        k = check_int(k, "k", minimum=1)
        pred = compile_filter(filter)
        scope = scope_of(self.config, query, since, until, as_of, asked_at)
        vector = _check_query_embedding(self._rt, query_embedding)
        return self._ns.search(query, k, pred, scope, vector)

    def search_many(self, namespaces: Iterable[str], query: str, *, k: int = 10, filter: dict[str, Any] | None = None,
                    since: Any = None, until: Any = None, as_of: Any = None, priors: bool = True,
                    query_embedding: Any = None, asked_at: Any = None) -> list[Hit]:
        """The ``k`` best messages for ``query`` in several namespaces of this store, ranked on one scale: term
        statistics are those of the namespaces taken together and rank fusion uses ranks across all of them, so a
        message ranks as it would if the namespaces were one. Each hit's ``namespace`` tells where it lives; other
        arguments as in :meth:`search`. ``priors=False`` ranks by the fused channels alone, without the
        conversational reweighting (time and truth, surprise, salience, profiles, the speakers a question names)
        that suits dialogue turns but not documents such as key-value store items."""
        self._rt.live()
        check_iterable(namespaces, "namespaces", "an iterable of namespace names")
        names = list(dict.fromkeys(check_namespace(ns, "namespaces") for ns in namespaces))
        query = _check_query(query)
        k = check_int(k, "k", minimum=1)
        check_bool(priors, "priors")
        pred = compile_filter(filter)
        scope = scope_of(self.config, query, since, until, as_of, asked_at)
        vector = _check_query_embedding(self._rt, query_embedding)
        return multisearch.search_many(self._rt, names, query, k, pred, scope, priors, vector)

    def recall(self, query: str, *, budget_tokens: int = 2000, filter: dict[str, Any] | None = None,
               include_dormant: bool = False, since: Any = None, until: Any = None, as_of: Any = None,
               query_embedding: Any = None, exclude: int | Iterable[int] | None = None,
               asked_at: Any = None) -> Recall:
        """A prompt-ready context for ``query`` of at most ``budget_tokens`` cl100k tokens.

        Whole messages only, grouped by session in time order with speaker and date; a message that dates its
        event relatively ("yesterday") carries the resolved date, and one that a newer statement updated is marked
        "superseded". A query that asks for an order or a progression gets its context laid out by event time.
        The user's standing instructions ("Always ... when I ask about ...") are kept in the context, within an
        eighth of the budget, when the query shares their words or their session's subject. ``Recall.messages`` lists what was included. With the
        hierarchy (``config.hierarchy.recall``), units are selected top-down and ``Recall.units`` lists them;
        dormant memories (seed 004 §8.3) come back only with ``include_dormant=True`` or a strong exact cue.
        ``since`` / ``until`` / ``as_of`` / ``query_embedding`` / ``asked_at`` as in :meth:`search`.

        ``exclude`` (message ids) leaves those messages out of the context, as the messages a caller already shows
        its model (the turns of the current conversation): they are ranked as any other, so every other message
        is valued as in the recall without ``exclude``, and skipped where the context is filled, the budget going
        to the next best. Ids this namespace does not hold are ignored.
        """
        self._rt.live()
        query = _check_query(query)
        budget = check_int(budget_tokens, "budget_tokens", minimum=1)
        pred = compile_filter(filter)
        check_bool(include_dormant, "include_dormant")
        scope = scope_of(self.config, query, since, until, as_of, asked_at)
        vector = _check_query_embedding(self._rt, query_embedding)
        excluded = frozenset(check_ids(exclude, "exclude")) if exclude is not None else frozenset()
        return self._ns.recall(query, budget, pred, scope, include_dormant, vector, excluded)

    def agentic_recall(self, query: str, *, llm: Any = None, max_rounds: int = 7, budget_tokens: int = 2000,
                       filter: dict[str, Any] | None = None, asked_at: Any = None) -> Recall:
        """Recall driven by an LLM agent over hippo's memory tools (seed 003 §3.4, Algorithm 3, Prompt E).

        The model calls ``search``, ``grep``, ``list_topics``, ``read_topic`` and ``read`` for up to
        ``max_rounds`` rounds and stops with ``answer(message_ids=[...])``. ``Recall.messages`` are the cited
        evidence messages that fit, ``Recall.text`` packs them like :meth:`recall` in at most ``budget_tokens``
        cl100k tokens, and ``Recall.trace`` lists every tool call and event (one dict each, with ``round`` and
        ``tool`` or ``event``). When the model selects no usable evidence (no answer within the rounds,
        malformed calls, unknown ids, endpoint failures after retries), the lexical fallback of the seed runs:
        the result is :meth:`recall`'s, with the trace ending in ``{"event": "fallback", ...}``.

        ``llm`` is a :class:`hippo.engine.llm.LLM`, an OpenAI-compatible client or a dict of ``LLM`` settings; by
        default the one given to ``Memory(llm=...)``. ``filter`` scopes every tool and the evidence (topic
        documents, which cannot be scoped, are then not offered). ``asked_at`` as in :meth:`search`: the tools'
        searches and the fallback count the question's days from it. Every tool sees this namespace only.
        """
        self._rt.live()
        _check_llm(llm)
        return agentic.agentic_recall(self._ns, _check_query(query), llm=llm, max_rounds=max_rounds,
                                      budget_tokens=budget_tokens, filter=filter, asked_at=asked_at)

    # -- time and truth -------------------------------------------------------------------------------------
    def timeline(self, query_or_entity: str, *, limit: int = 50, since: Any = None, until: Any = None,
                 as_of: Any = None) -> list[dict[str, Any]]:
        """Time-ordered assertions about a person or a topic, with provenance.

        ``query_or_entity`` is a speaker's name (their own statements that report events, facts or dates, plus
        messages that mention them) or any query (its best matches). At most ``limit`` entries, ordered by event
        time (then by position in the stream); each is a dict with ``id``, ``event_time`` (datetime or None),
        ``event`` (the resolved date as text when the message dates its event, else None), ``timestamp``,
        ``text``, ``speaker``, ``session_id``, ``superseded_by`` and ``facts`` (``attribute`` / ``value`` pairs).
        """
        self._rt.live()
        query = _check_query(query_or_entity, "query_or_entity")
        limit = check_int(limit, "limit", minimum=1)
        return timeline.timeline(self._ns, query, limit, scope_of(self.config, query, since, until, as_of))

    def contradictions(self, *, include_updates: bool = False) -> list[dict[str, Any]]:
        """Open conflicts: pairs of statements about the same entity and attribute whose values differ, the newer
        one without an update cue and not itself updated since (seed 002 §4.1 stage 3, contradiction records
        indexed by entity and predicate). ``include_updates=True`` also lists resolved updates ("I moved to...").
        Each is a dict with ``old_id``, ``new_id``, ``entity``, ``attribute``, ``old_value``, ``new_value``,
        ``kind``, ``old_time``, ``new_time``, ``old_text`` and ``new_text``. Nothing is ever deleted."""
        self._rt.live()
        return timeline.contradictions(self._ns, check_bool(include_updates, "include_updates"))

    # -- speaker profiles (seed 002 §4.1 stage 5) -----------------------------------------------------------
    def profile(self, speaker: str) -> dict[str, Any]:
        """The L0 profile of ``speaker`` in this namespace.

        Returns ``{"speaker", "n_messages", "attributes": {attribute: [{"value", "message_id", "timestamp"}, ...]},
        "current": {attribute: value}, "style": list[float] | None}``; values of an attribute are oldest first and
        ``current`` holds the newest. ``NotFound`` if the speaker has no message here.
        """
        self._rt.live()
        speaker = check_speaker(speaker)
        _, prof = self._ns.profiles()
        if speaker not in prof.speakers():
            raise NotFound(f"speaker {speaker!r} has no messages in namespace {self.namespace!r}")
        return prof.profile(speaker)

    def speakers(self) -> list[str]:
        """Speakers with at least one message in this namespace, in order of first appearance."""
        self._rt.live()
        return self._ns.profiles()[1].speakers()

    # -- hierarchy, decay and consolidation -----------------------------------------------------------------
    def topics(self) -> list[dict[str, Any]]:
        """Topic documents' catalog (seed 003 §3.2): one entry per theme with ``id``, ``title``, ``summary``,
        ``size`` (entries), ``n_messages``, time span and strength; ``id="current"`` lists unconsolidated
        messages."""
        return self._ns.topics()

    def topic(self, topic_id: int | str) -> str:
        """One topic as markdown whose entries carry ``<seq=…, time=…, source=…>``; ``NotFound`` if unknown."""
        return self._ns.topic(topic_id)

    def consolidate(self, level: str = "light") -> dict[str, Any]:
        """Run a consolidation cycle (seed 004 §9): ``"light"`` (strengths, dormancy), ``"deep"`` (flush the
        CURRENT buffer, re-cluster themes, refresh summaries, mark persist-worthy units) or ``"archival"`` (prune
        dormant units past the retention age; messages only where a policy says ``prune``). Returns a report.
        Reads never consolidate: complete batches of new messages are folded into units as they are written;
        this call folds in the rest of the CURRENT buffer too. On a read-only store ``"light"`` and ``"deep"`` run
        in memory only; ``"archival"`` (which may delete messages) raises ``ReadOnlyError``."""
        self._rt.live()
        if not is_one_of(level, LEVELS):
            raise InvalidInput(f"level must be one of {LEVELS}, got {level!r}")
        if level == "archival":
            self._writable("consolidate('archival')")
        return self._ns.consolidate(level)

    def strength(self, ids: int | Iterable[int]) -> dict[int, float]:
        """Current strength in [0, 1] of each given message (seed 004 §14.2); unknown ids are left out."""
        self._rt.live()
        return self._ns.strength(check_ids(ids))

    def reinforce(self, ids: int | Iterable[int]) -> int:
        """Mark messages as used: strength back to 1, decay clock restarted. Returns how many were known."""
        self._rt.live()
        return self._ns.reinforce(check_ids(ids))

    # -- index entries for the live context window (seed 004 §5-9) ------------------------------------------
    wants_index = _entries_method(Entries.wants_index)
    index_entry = _entries_method(Entries.index_entry)
    entries = _entries_method(Entries.entries)
    entry = _entries_method(Entries.entry)
    entry_blocks = _entries_method(Entries.entry_blocks)
    next_turn = _entries_method(Entries.next_turn)
    complete = _entries_method(Entries.complete)
    complete_on_cue = _entries_method(Entries.complete_on_cue)
    blocks_on_cue = _entries_method(Entries.blocks_on_cue)
    consolidate_entries = _entries_method(Entries.consolidate_entries)

    # -- export and import ----------------------------------------------------------------------------------
    def export(self, path: str | os.PathLike, *, progress: Callable[[int, int], Any] | None = None) -> int:
        """Write this namespace to a versioned JSONL file (header line, then one message per line).

        ``progress(done, total)``, if given, is called as messages are written (the command line draws its bar
        with it), from the calling thread; an exception it raises aborts the export before ``path`` is written. The
        file holds the namespace as it was when the export began: a call the callback makes answers, one that
        changes this namespace (or catches up with another process's change) once the export has read it."""
        self._rt.live()
        path = _check_path(path)
        if progress is not None and not callable(progress):
            raise InvalidInput(f"progress must be callable or None, got {type(progress).__name__}")
        dest = os.path.realpath(path)  # through a symbolic link, the file it names (the link stays)
        if self.path is not None and dest in {
                os.path.realpath(self.path + suffix) for suffix in ("", "-wal", "-shm", "-journal")}:
            raise InvalidInput(f"path {path!r} is the store file itself; export to another file")
        if os.path.exists(dest) and not os.path.isfile(dest):
            raise InvalidInput(f"path {path!r} is not a regular file (a directory, a device or a pipe); export writes "
                               "a file and replaces it whole")
        total = self._ns.count()  # a damaged namespace fails here, before any file is created
        try:
            # a new file of a name no one else holds, readable by the owner only, renamed over ``dest`` when complete:
            # no file of the caller's is written through, and a planted file cannot widen access
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(dest), prefix=f".{os.path.basename(dest)}.", suffix=".tmp")
        except OSError as exc:
            raise StoreError(f"cannot write the export file at path {path!r}: {exc.strerror or exc}") from exc
        n = 0
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(json.dumps({"format": EXPORT_FORMAT, "version": EXPORT_VERSION,
                                    "namespace": self.namespace}) + "\n")
                n = self._write_records(f, total, progress)
                f.flush()
                os.fsync(f.fileno())  # the file is whole on disk before its name says it is there
            if progress is not None:
                progress(n, n)
            os.replace(tmp, dest)
        except BaseException as exc:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            if isinstance(exc, OSError):
                raise StoreError(f"cannot write the export file at path {path!r}: {exc.strerror or exc}") from exc
            raise
        return n

    def _write_records(self, f: Any, total: int, progress: Callable[[int, int], Any] | None) -> int:
        """Write the namespace's export records to ``f``; returns how many. The records are read under the read lock
        from one snapshot of the store (on PostgreSQL a scan holding a connection of the pool), so with a
        ``progress`` callback they are read and written in a thread of their own while the callback is called from
        this one: a call it makes waits for the export's reading instead of the export waiting for it (a write, or a
        catch-up with another process's write, waited on the read lock the export held for ever; a read, with
        ``hippo_pool_max=1``, on the connection until ``StoreBusy``). An exception the callback raises stops the
        reading and is raised."""
        if progress is None:
            n = 0
            for rec in self._ns.records():
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
                n += 1
            return n
        rt = self._rt
        events: queue.SimpleQueue[tuple[int, BaseException | bool | None]] = queue.SimpleQueue()
        stop = threading.Event()

        def read() -> None:
            outer = rt.begin()  # this thread's part of the call: the namespace stays loaded until it ends
            n = 0
            try:
                for rec in self._ns.records():
                    if stop.is_set():
                        break
                    f.write(json.dumps(rec, ensure_ascii=False) + "\n")
                    n += 1
                    if n % 256 == 0:
                        events.put((n, None))
                events.put((n, True))
            except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread
                events.put((n, exc))
            finally:
                rt.end(outer)

        reader = threading.Thread(target=read, name="hippo-export", daemon=True)
        reader.start()
        try:
            while True:
                n, end = events.get()
                if end is None:
                    progress(n, total)
                elif end is True:
                    return n
                else:
                    raise end
        finally:
            stop.set()
            reader.join()

    def import_(self, path: str | os.PathLike) -> int:
        """Add every message of an export file to this namespace as new messages (new ids, and the import's time as
        their ingestion time ``created_at``: their decay starts afresh, and ``as_of`` before the import finds none
        of them; :meth:`backup` keeps those); all or nothing.

        The file is read twice, a record at a time: the first pass checks every record (a bad one, wherever it is,
        raises before anything is written) and keeps nothing of them; the second encodes them and writes them in
        one transaction. What the import holds is the encoded messages, never the file's parsed records too."""
        self._writable("import_")
        path = _check_path(path)
        if os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path):
            # a pipe would block the open until something writes to it, and a device such as /dev/zero is one line
            # read without end
            raise InvalidInput(f"path {path!r} is not a regular file (a device or a pipe); import_ reads an export "
                               "file")
        cfg = self.config
        for _ in self._import_records(path, cfg):
            pass
        prepared = list(self._import_records(path, cfg))
        return len(self._ns.write(prepared))

    @staticmethod
    def _import_records(path: str, cfg: Config) -> Iterable[Any]:
        """The messages of an export file, each checked and encoded as ``add_many`` does, read a line at a time."""
        try:
            with open(path, encoding="utf-8") as f:
                header = json.loads(f.readline() or "null")
                if not isinstance(header, dict) or header.get("format") != EXPORT_FORMAT:
                    raise CorruptData(f"path {path!r} is not a hippo export file")
                if header.get("version") != EXPORT_VERSION:
                    raise CorruptData(f"export version {header.get('version')!r} is not supported")
                k = 0
                for lineno, line in enumerate(f, start=2):
                    if not line.strip():
                        continue
                    rec = json.loads(line)
                    if not isinstance(rec, dict):
                        raise CorruptData(f"line {lineno}: expected a JSON object")
                    item = {k: rec.get(k) for k in ("text", "speaker", "role", "timestamp", "session_id", "metadata")}
                    if rec.get("utc_offset") is not None:  # the offset the timestamp was given with
                        try:
                            item["timestamp"] = with_utc_offset(item["timestamp"], rec["utc_offset"])
                        except InvalidInput as exc:
                            raise CorruptData(f"line {lineno}: {exc}") from exc
                    del rec
                    try:
                        yield prepare(item, f"items[{k}]", cfg)
                    except InvalidInput as exc:
                        raise CorruptData(f"path {path!r} holds an invalid message (line {lineno}): {exc}") from exc
                    k += 1
        except HippoError:
            raise
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            # ValueError: JSON syntax, and also integers longer than the interpreter's digit limit
            # RecursionError: json refuses nesting deeper than the interpreter's recursion limit
            raise CorruptData(f"path {path!r} is not valid JSONL: {str(exc)[:200]}") from exc
        except FileNotFoundError as exc:
            raise NotFound(f"path {path!r} does not exist") from exc
        except IsADirectoryError as exc:
            raise InvalidInput(f"path {path!r} is a directory, expected an export file") from exc
        except OSError as exc:
            raise StoreError(f"cannot read the export file at path {path!r}: {exc.strerror or exc}") from exc

    # -- integrity ------------------------------------------------------------------------------------------
    def check(self, *, repair: bool = False) -> dict[str, Any]:
        """Verify every structure of the store (all namespaces) and report, JSON-serializable, per namespace and per
        structure what was verified, what is damaged and what was rebuilt; ``report["ok"]`` is True when nothing
        is left damaged. Messages and their tokens are never guessed: damage to them is reported with the message
        ids. With ``repair=True`` what is derived from them is rebuilt (SQLite indexes, namespace rows, embedding
        codes, unit snapshots, the co-index). See :mod:`hippo.engine.integrity`."""
        self._rt.live()
        check_bool(repair, "repair")
        if repair:
            self._writable("check(repair=True)")
        return integrity.check(self._ns, repair)

    # -- async twins ----------------------------------------------------------------------------------------
    aadd = _twin(add, ordered=True)
    aadd_many = _twin(add_many, ordered=True)
    awrite_many = _twin_of_many(write_many)
    aversion = _twin(version)
    aupdate = _twin(update, ordered=True)
    adelete = _twin(delete, ordered=True)
    aforget = _twin(forget, ordered=True)
    aclear = _twin(clear, ordered=True)
    anamespaces = _twin(namespaces)
    aget = _twin(get)
    alist = _twin(list)
    aread = _twin(read)
    aepisode = _twin(episode)
    asearch = _twin(search)
    asearch_many = _twin(search_many)
    arecall = _twin(recall)
    aagentic_recall = _twin(agentic_recall)
    atimeline = _twin(timeline)
    acontradictions = _twin(contradictions)
    aprofile = _twin(profile)
    aspeakers = _twin(speakers)
    atopics = _twin(topics)
    atopic = _twin(topic)
    aconsolidate = _twin(consolidate)
    astrength = _twin(strength)
    areinforce = _twin(reinforce)
    awants_index = _twin(wants_index)
    aindex_entry = _twin(index_entry)
    aentries = _twin(entries)
    aentry = _twin(entry)
    aentry_blocks = _twin(entry_blocks)
    anext_turn = _twin(next_turn)
    acomplete = _twin(complete)
    acomplete_on_cue = _twin(complete_on_cue)
    aconsolidate_entries = _twin(consolidate_entries)
    acheck = _twin(check)


# Every public method of the facade is one public call: a namespace it uses is not unloaded before it returns (see
# hippo.engine.runtime).
for _name, _fn in list(vars(Memory).items()):
    if inspect.isfunction(_fn) and not inspect.iscoroutinefunction(_fn) and not _name.startswith("_"):
        setattr(Memory, _name, _in_operation(_fn))
del _name, _fn
