"""The storage interface behind :class:`hippo.Memory`.

A store keeps, per namespace, the verbatim messages (metadata rows plus their token ids) and the sealed chunks of
the Content stream. Everything process-local (the wavelet matrices, signatures, span tables) is rebuildable from
what a store returns, so several processes (or several app servers on a shared SQL server) can use one store.

Token ids of a message live in exactly one place: in its row while it is in the unsealed tail, then inside one
sealed chunk (a serialized, checksummed static wavelet matrix over the tokens of a contiguous ``seq`` range).
Sealing and merging chunks happen in one transaction with clearing the rows' tokens, so a crash at any point
leaves every committed message's tokens in exactly one of the two places.

Every change of a namespace (an append, a deletion, a metadata update) takes the next number of the namespace's
change sequence (its ``version``) in the same transaction and is recorded in a change feed, so a process that keeps
derived state applies exactly what changed since it last looked (:meth:`Store.changes`) instead of reloading; the
cost of catching up depends on what changed, not on the size of the namespace.
"""

from __future__ import annotations

import abc
import json
from dataclasses import dataclass, fields
from typing import Any, Callable, ContextManager, Iterable, Sequence, TypeVar

import numpy as np

from hippo.base.errors import StoreError
from hippo.store import snapshot

T = TypeVar("T")


def _rows_equal(a: Any, b: Any) -> Any:
    """Field by field, token arrays by their contents. A dataclass's own ``__eq__`` compares the arrays with
    ``==``, whose element-wise answer has no truth value: it raised ``ValueError`` for two rows with equal tokens
    (on Python 3.13 even for one array shared by both rows)."""
    if type(a) is not type(b):
        return NotImplemented
    for f in fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if x is None or y is None or not np.array_equal(x, y):
                return False
        elif x is not y and x != y:
            return False
    return True


@dataclass(eq=False)
class MessageRow:
    id: int
    namespace: str
    seq: int
    n_tokens: int
    speaker: str | None
    role: str
    ts: float | None
    session_id: str | None
    metadata: dict[str, Any]
    created_at: float
    tokens: np.ndarray | None = None  # uint32 token ids while the row is in the unsealed tail
    # seconds east of UTC the timestamp was given with ("2023-03-03T23:30-05:00": -18000), None when unknown (a naive
    # time, epoch seconds, a message stored before the store kept it)
    utc_offset: float | None = None

    __eq__ = _rows_equal


@dataclass(eq=False)
class NewMessage:
    tokens: np.ndarray
    speaker: str | None
    role: str
    ts: float | None
    session_id: str | None
    metadata: dict[str, Any]
    created_at: float
    # Idempotency key (unique per namespace; engine.prepare makes one per message): a store that retries an append
    # whose commit it could not confirm finds the key and returns the stored rows instead of adding them twice.
    key: str | None = None
    utc_offset: float | None = None  # as MessageRow.utc_offset

    __eq__ = _rows_equal


@dataclass
class Chunk:
    id: int
    first_seq: int
    last_seq: int
    n_messages: int
    n_tokens: int
    blob: bytes
    checksum: bytes | None = None  # over the row's fields, its blob and the (id, seq, n_tokens) of what it covers


@dataclass(frozen=True)
class NamespaceState:
    """Cheap fingerprint of a namespace: it changes on every append (next_seq), every deletion (generation) and
    every change of any kind (version, the number of the namespace's latest change).

    ``stamp``: a random value a store that can have its history rewritten under an open handle (PostgreSQL: a
    data-only restore, a failover to an asynchronous replica) writes with each change, and ``prev`` the stamp of the
    change before; the same counters with another stamp are another history. None where the store keeps none."""

    generation: int
    next_seq: int
    version: int = 0
    stamp: str | None = None
    prev: str | None = None

    def follows(self, seen: "NamespaceState") -> bool:
        """Whether the latest change of this fingerprint came right after the change ``seen`` holds (by their
        stamps; the counters are the caller's to compare)."""
        return self.prev == seen.stamp


@dataclass(eq=False)
class Replace:
    """One namespace's part of :meth:`Store.replace_many`: the arguments :meth:`Store.replace` takes."""

    namespace: str
    messages: Sequence[NewMessage] = ()
    ids: Iterable[int] = ()
    where: Callable[[MessageRow], bool] | None = None
    after_seq: int | None = None
    codes: Any = None
    expect: int | None = None
    # message id -> the metadata that replaces its own (as :meth:`Store.update_metadata`), after the append and the
    # deletion; an id that is no message of the namespace is skipped
    updates: dict[int, dict[str, Any]] | None = None


CHANGE_KINDS = ("append", "delete", "update")


@dataclass(frozen=True)
class Change:
    """One entry of a namespace's change feed.

    ``append``: the messages with ``first_seq <= seq <= last_seq`` were added (``ids`` empty); ``delete``: the
    messages ``ids`` were removed; ``update``: the metadata of the messages ``ids`` was replaced."""

    version: int
    kind: str
    first_seq: int = -1
    last_seq: int = -1
    ids: tuple[int, ...] = ()


class Store(abc.ABC):
    """The storage contract of hippo: everything the engine reads or writes goes through these methods.

    Every write method is one transaction (all or nothing). ``path`` is the location shown to users (a file path,
    a URL without password, or None for a private in-memory store)."""

    path: str | None = None
    read_only: bool = False  # every write method raises ReadOnlyError when True

    @abc.abstractmethod
    def state(self, namespace: str) -> NamespaceState: ...

    @abc.abstractmethod
    def namespaces(self) -> list[str]: ...

    @abc.abstractmethod
    def append(self, namespace: str, messages: Sequence[NewMessage], codes: Any = None,
               expect: int | None = None) -> list[MessageRow]:
        """Store messages (and, when given, their embedding codes, one row of ``codes`` per message) in one
        transaction. ``expect``: store them only while the namespace's latest change is still ``expect``
        (``state(namespace).version``), checked in that transaction under the namespace's write lock, else raise
        :class:`~hippo.base.errors.Changed` and store nothing; the append's own change is then ``expect + 1``."""

    @abc.abstractmethod
    def reading(self) -> ContextManager[None]:
        """A block whose reads all see one state of the store (a read transaction): a reader can take a
        fingerprint, the change feed and rows that agree with each other. Reads outside it are each consistent
        on their own only."""

    def read_consistently(self, read: Callable[[], T]) -> T:
        """``read()`` inside :meth:`reading`, its result returned. A store whose connection can be lost in the
        middle of the block (a server restarted) runs ``read`` again in a new block, within the bound its other
        reads are retried in, so ``read`` must only read (and keep what it read in its result)."""
        with self.reading():
            return read()

    @abc.abstractmethod
    def load(self, namespace: str, after_seq: int = -1, upto_seq: int | None = None) -> list[MessageRow]:
        """Every message of ``namespace`` with ``after_seq < seq <= upto_seq`` (no upper bound when None) in seq
        order, each with its tokens; reads only those rows and the chunks holding their tokens."""

    @abc.abstractmethod
    def load_tokens(self, namespace: str) -> np.ndarray:
        """The token ids of every message of ``namespace`` concatenated in seq order (the Content stream, uint32),
        read from the chunks and the tail without reading message rows."""

    @abc.abstractmethod
    def rows(self, namespace: str, ids: Iterable[int]) -> dict[int, MessageRow]: ...

    @abc.abstractmethod
    def scan(self, namespace: str) -> Iterable[MessageRow]:
        """Every message row (without tokens) in seq order."""

    def rows_mentioning(self, namespace: str, needles: Sequence[str]) -> list[MessageRow]:
        """The message rows (without tokens) of ``namespace`` whose metadata, as the JSON text it is stored as,
        holds one of ``needles`` (exact, case-sensitive substrings), in seq order: a first cut, read without decoding
        the other rows, for a question about a few metadata keys or values, which the caller then asks of each
        row's metadata (a needle may also stand in a nested value, or in a longer key). The backends ask the
        database; this default, for a store that does not, reads every row (:meth:`scan`) and tests its metadata
        written as JSON (a superset of what the stored text would give for ASCII needles, which the caller's own
        test then narrows)."""
        wanted = [str(n) for n in needles]
        return [r for r in self.scan(namespace)
                if any(n in json.dumps(r.metadata, ensure_ascii=False, default=str) for n in wanted)]

    @abc.abstractmethod
    def seal(self, namespace: str, min_tokens: int) -> int:
        """Move the unsealed tail into a chunk when it holds at least ``min_tokens``; merge chunks geometrically."""

    @abc.abstractmethod
    def delete(self, namespace: str, ids: Iterable[int],
               where: Callable[[MessageRow], bool] | None = None,
               choose: Callable[[list[MessageRow]], Iterable[int]] | None = None) -> list[int]:
        """Delete messages, rewriting the chunks that held their tokens; returns the ids actually deleted. With
        ``where``, only the messages whose row, read in the deleting transaction, satisfies it: one that another
        process changed after the caller chose it is judged as it is when it would be deleted. With ``choose``, only
        the ids it returns when given the rows of ``ids`` found (those ``where`` admits), in seq order, read in the
        deleting transaction: a decision about several rows together (every row of a group, judged by one of them)
        is taken on the rows as they are when they are deleted. ``choose`` may be called again when the store
        retries the transaction, and must only decide."""

    @abc.abstractmethod
    def replace(self, namespace: str, messages: Sequence[NewMessage], ids: Iterable[int],
                where: Callable[[MessageRow], bool] | None = None, after_seq: int | None = None,
                codes: Any = None, expect: int | None = None) -> tuple[list[MessageRow], list[int]]:
        """Append ``messages`` (as :meth:`append`, with ``codes`` and ``expect``) and delete other messages of
        ``namespace`` (as :meth:`delete`) in one transaction: both happen or neither does. The messages deleted are
        those of ``ids`` and, with ``after_seq``, those at ``seq >= after_seq`` stored before this call (appended by
        other handles after the caller read the namespace), of which ``where``, judged on their rows read in the
        transaction, admits; never the messages this call appends. The change feed records the append, then the
        deletion (when a message went). Returns the appended rows and the ids deleted."""

    @abc.abstractmethod
    def replace_many(self, parts: Sequence[Replace]) -> list[tuple[list[MessageRow], list[int]]]:
        """:meth:`replace` in several namespaces (each at most once) in one transaction, and the metadata updates of
        each part (:attr:`Replace.updates`, recorded one change each, after its append and deletion): every part
        happens or none does. The namespaces' write locks are taken in one order whatever the order of ``parts`` (two calls over
        the same namespaces never wait for each other in a cycle). Returns each part's appended rows and deleted
        ids, in the order of ``parts``."""

    @abc.abstractmethod
    def update_metadata(self, namespace: str, id: int, metadata: dict[str, Any]) -> bool:
        """Replace one message's metadata; False when ``id`` is not a message of ``namespace``."""

    @abc.abstractmethod
    def delete_namespace(self, namespace: str) -> int:
        """Remove every message, chunk, code, unit and change of ``namespace``; returns the number of messages
        removed. A namespace created again under the same name starts its change sequence past the old one's."""

    @abc.abstractmethod
    def delete_namespaces(self, namespaces: Sequence[str]) -> int:
        """:meth:`delete_namespace` of several namespaces in one transaction (all or none, the locks taken as
        :meth:`replace_many` takes them); returns the number of messages removed."""

    # -- the change feed ---------------------------------------------------------------------------------------
    @abc.abstractmethod
    def changes(self, namespace: str, after: int, stamp: str | None = None) -> list[Change] | None:
        """The changes of ``namespace`` with ``version > after``, oldest first, read consistently with
        :meth:`state`. None when the feed no longer reaches back to ``after`` (trimmed by :meth:`trim_changes`, or
        the namespace was deleted since), or when ``stamp`` (the :attr:`NamespaceState.stamp` the caller saw at
        ``after``) is not the stamp the store holds for change ``after`` (its history was rewritten since, by a
        restore): the caller must then rebuild what it derived from the store."""

    @abc.abstractmethod
    def trim_changes(self, namespace: str, upto: int) -> int:
        """Forget the changes with ``version <= upto`` (readers that have not seen them will rebuild); returns how
        many were removed."""

    # -- derived data the engine may keep beside the messages (rebuildable, never the only copy) -----------------
    @abc.abstractmethod
    def put_codes(self, namespace: str, ids: list[int], codes: np.ndarray, version: int | None = None,
                  stamp: str | None = None) -> bool | None:
        """Store one binary embedding code (a row of ``codes``, uint8) per message id (insert or replace); an id that
        is not a message of ``namespace`` (deleted meanwhile by another handle) is skipped, in the same
        transaction. With ``version`` and ``stamp`` (the fingerprint the messages were read at, on a store that
        keeps stamps), only while the namespace's history holds change ``version`` with that stamp (checked in the
        same transaction, as :meth:`put_units_many` checks it): after a data-only restore or a failover the same ids
        can stand for other messages, whose codes these are not. Returns whether they were written (a store
        without stamps is called without them, and may return None)."""

    @abc.abstractmethod
    def get_codes(self, namespace: str) -> dict[int, bytes]:
        """Every stored embedding code of ``namespace`` by message id."""

    def codes_of(self, namespace: str, ids: Iterable[int]) -> dict[int, bytes]:
        """The stored embedding codes of the messages ``ids`` of ``namespace`` (ids without one are left out). The
        SQL stores look them up by id; this default reads :meth:`get_codes`."""
        wanted = {int(i) for i in ids}
        return {i: c for i, c in self.get_codes(namespace).items() if i in wanted} if wanted else {}

    @abc.abstractmethod
    def put_units(self, namespace: str, kind: str, payload: bytes) -> None:
        """Store (insert or replace) one snapshot blob of derived state under ``kind``."""

    @abc.abstractmethod
    def get_units(self, namespace: str, kind: str) -> bytes | None:
        """The snapshot blob stored under ``kind``, or None."""

    def get_units_blob(self, namespace: str, kind: str) -> snapshot.Blob | None:
        """The snapshot blob stored under ``kind`` copied to a temporary file (:class:`~hippo.store.snapshot.Blob`,
        closed by the caller), or None. A store that can read a blob in parts copies it a chunk at a time; this
        default reads it whole first."""
        data = self.get_units(namespace, kind)
        return None if data is None else snapshot.Blob.of(data)

    def has_units(self, namespace: str, kind: str) -> bool:
        """Whether a snapshot blob is stored under ``kind``. A store answers without reading the blob (a co-index
        snapshot is megabytes); this default reads it."""
        return self.get_units(namespace, kind) is not None

    @abc.abstractmethod
    def put_units_many(self, namespace: str, payloads: dict[str, bytes | snapshot.Blob | None],
                       generation: int | None = None, version: int | None = None,
                       expect: dict[str, bytes | None] | None = None, stamp: str | None = None) -> bool:
        """Store several snapshot blobs in one transaction (a None payload removes that kind), so derived state saved
        together is read back together; a :class:`~hippo.store.snapshot.Blob` (a temporary file) larger than
        :data:`~hippo.store.snapshot.CHUNK` is written a chunk at a time, never held whole. With ``generation``, only
        while the namespace is still at that generation (checked in the same transaction): blobs derived before a
        deletion, which may hold derived text of the deleted messages, are not written. With ``version``, only while the
        namespace's latest change is still that one (checked likewise): blobs derived before changes another handle
        made, which that handle may have saved in newer blobs, replace nothing. With ``stamp`` too (the stamp of the
        fingerprint they were derived at, where the store keeps stamps), only while that change is the one the namespace
        holds: after a data-only restore or a failover the same counters can stand for another history, and blobs
        derived from the history before would be written over the one restored. With ``expect`` (kind -> bytes or None),
        only while the blob stored under each of those kinds still begins with those bytes (None: while none is stored),
        checked likewise and serialized with the namespace's other checked writes: a handle that merged what another
        handle saved replaces it only if nobody saved again in between. Returns whether they were written."""

    @abc.abstractmethod
    def sizes(self) -> dict[str, int]:
        """Counts and byte sizes of what the store holds, every namespace's: ``messages``, ``tokens`` (their cl100k
        tokens), ``tail_token_bytes``, ``chunk_bytes``, ``chunks``, ``metadata_bytes``, ``unit_bytes`` and
        ``file_bytes`` (where the store is a file)."""

    @abc.abstractmethod
    def vacuum(self) -> None: ...

    def backup(self, dest: str, name: str = "path") -> int:
        """Write a consistent copy of the whole store to the file ``dest``; returns its size in bytes. Stores that
        are no file (a database server) are backed up with their server's tools."""
        raise StoreError(f"{type(self).__name__} cannot write a backup file; back the database up with its server's "
                         "tools (PostgreSQL: pg_dump, docs/deploy.md \"Backups\"), or copy namespaces with export")

    @abc.abstractmethod
    def close(self) -> None: ...

    def fork_begins(self) -> None:
        """Called in a process about to ``os.fork()``: wait until no thread uses the store's connections, and keep
        them unused until :meth:`fork_ends` (nothing by default)."""

    def fork_ends(self) -> None:
        """Called in the parent once ``os.fork()`` returned: release what :meth:`fork_begins` took."""

    def drop_inherited(self) -> None:
        """Called in a child process right after ``os.fork()``, on every store before any reopens: let go of what
        the parent's connections left in this process (nothing by default)."""

    def after_fork(self) -> bool:
        """Called in a child process right after ``os.fork()``, after :meth:`drop_inherited`: reopen the store
        on connections of the child's own (a connection or pool is never shared by two processes). True when it
        did, and the child's handle then starts as if it opened the store itself; False (the default) when the store
        cannot, and the child must open its own. Raises :class:`StoreError` when reopening failed."""
        return False

    def scrub(self) -> bool:
        """Make content removed by committed deletions unrecoverable from the store's files now (a store that keeps
        no older copies has nothing to do). False when it could not yet, and will at a later write."""
        return True

    # -- verification (Memory.check); a store that cannot verify itself says so ---------------------------------
    def integrity_check(self) -> list[str]:
        """Problems the storage engine finds in its own structures (``[]`` when clean)."""
        raise StoreError(f"{type(self).__name__} cannot verify itself (no check support)")

    def all_namespaces(self) -> list[str]:
        """Every namespace named anywhere in the store, including ones that only hold derived rows."""
        raise StoreError(f"{type(self).__name__} cannot verify itself (no check support)")

    def verify_namespace(self, namespace: str, check_tokens: Any, code_bytes: int | None) -> dict:
        """Every row of a namespace verified, per structure (see :mod:`hippo.engine.integrity`)."""
        raise StoreError(f"{type(self).__name__} cannot verify itself (no check support)")

    def repair_namespace_row(self, namespace: str, max_seq: int) -> None:
        raise StoreError(f"{type(self).__name__} cannot repair itself (no check support)")

    def drop_codes(self, namespace: str, ids: list[int]) -> None:
        raise StoreError(f"{type(self).__name__} cannot repair itself (no check support)")

    def drop_units(self, namespace: str, kind: str) -> None:
        raise StoreError(f"{type(self).__name__} cannot repair itself (no check support)")

    def reindex(self) -> None:
        raise StoreError(f"{type(self).__name__} cannot repair itself (no check support)")
