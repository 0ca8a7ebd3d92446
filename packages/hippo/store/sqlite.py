"""The embedded default store: one SQLite file (WAL), many namespaces, created with mode 0600.

SQL stays portable (no SQLite-only syntax beyond PRAGMAs), so a PostgreSQL store can implement the same
:class:`~hippo.store.base.Store` interface with the same schema.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from hippo.base.errors import CorruptData, InvalidInput, StoreBusy, StoreError
from hippo.store.base import (
    CHANGE_KINDS,
    Change,
    Chunk,
    MessageRow,
    NamespaceState,
    NewMessage,
    Store,
)
from hippo.store.codec import ChunkCodec
from hippo.text.tokenizer import token_bits

# 3: the change feed (namespaces.version / namespaces.horizon and the changes table).
SCHEMA_VERSION = 3

# The change feed: one row per append, deletion or metadata update of a namespace, numbered by the namespace's
# version (append: the seq range added; delete / update: the message ids, a JSON list).
_CHANGES_TABLE = """CREATE TABLE IF NOT EXISTS changes (
        namespace TEXT NOT NULL,
        version INTEGER NOT NULL,
        kind TEXT NOT NULL,
        first_seq INTEGER NOT NULL,
        last_seq INTEGER NOT NULL,
        ids TEXT NOT NULL,
        PRIMARY KEY (namespace, version))"""

_SCHEMA = [
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # version: number of the namespace's latest change; horizon: the feed holds every change after it
    """CREATE TABLE IF NOT EXISTS namespaces (
        name TEXT PRIMARY KEY,
        generation INTEGER NOT NULL DEFAULT 0,
        next_seq INTEGER NOT NULL DEFAULT 0,
        version INTEGER NOT NULL DEFAULT 0,
        horizon INTEGER NOT NULL DEFAULT 0)""",
    """CREATE TABLE IF NOT EXISTS messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        namespace TEXT NOT NULL,
        seq INTEGER NOT NULL,
        n_tokens INTEGER NOT NULL,
        speaker TEXT,
        role TEXT NOT NULL,
        ts REAL,
        session_id TEXT,
        metadata TEXT NOT NULL,
        created_at REAL NOT NULL,
        UNIQUE (namespace, seq))""",
    """CREATE TABLE IF NOT EXISTS chunks (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        namespace TEXT NOT NULL,
        first_seq INTEGER NOT NULL,
        last_seq INTEGER NOT NULL,
        n_messages INTEGER NOT NULL,
        n_tokens INTEGER NOT NULL,
        blob BLOB NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS chunks_ns ON chunks (namespace, first_seq)",
    # Sealing reads the unsealed tail after every write: without this partial index that is a walk over every
    # message of the namespace, which makes each add O(n) and ingest quadratic.
    # The unsealed tail: token ids of recent messages until they are sealed into a chunk. Kept apart from the
    # message rows so those are written once at their final size (no half-empty pages after sealing).
    """CREATE TABLE IF NOT EXISTS tail (
        id INTEGER PRIMARY KEY,
        namespace TEXT NOT NULL,
        seq INTEGER NOT NULL,
        tokens BLOB NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS tail_ns ON tail (namespace, seq)",
    """CREATE TABLE IF NOT EXISTS codes (
        id INTEGER PRIMARY KEY,
        namespace TEXT NOT NULL,
        code BLOB NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS units (
        namespace TEXT NOT NULL,
        kind TEXT NOT NULL,
        payload BLOB NOT NULL,
        PRIMARY KEY (namespace, kind))""",
    _CHANGES_TABLE,
]


def _migrate_2_to_3(db: sqlite3.Connection) -> None:
    """Schema 2 -> 3: the change feed. Existing namespaces start at version 0 with an empty feed (a reader that
    kept nothing derived from them has nothing to catch up on)."""
    db.execute("ALTER TABLE namespaces ADD COLUMN version INTEGER NOT NULL DEFAULT 0")
    db.execute("ALTER TABLE namespaces ADD COLUMN horizon INTEGER NOT NULL DEFAULT 0")
    db.execute(_CHANGES_TABLE)


# from-version -> step to the next version; a store is upgraded step by step inside its opening transaction
_MIGRATIONS = {2: _migrate_2_to_3}

_ROW_COLS = "id, namespace, seq, n_tokens, speaker, role, ts, session_id, metadata, created_at"
_ROW_COLS_M = ", ".join("m." + c.strip() for c in _ROW_COLS.split(","))


def _translate(exc: sqlite3.Error, what: str) -> Exception:
    msg = str(exc).lower()
    if "locked" in msg or "busy" in msg:
        return StoreBusy(f"{what}: the store is locked by another writer (waited the configured busy_timeout_s)")
    if "full" in msg:
        return StoreError(f"{what}: the disk is full; nothing was written ({exc})")
    if "malformed" in msg or "not a database" in msg or "corrupt" in msg:
        return CorruptData(f"{what}: the store file is corrupt ({exc})")
    return StoreError(f"{what}: {exc}")


class SQLiteStore(Store):
    """One SQLite file or, with ``path=None``, a private in-memory database."""

    def __init__(self, path: str | os.PathLike | None, *, busy_timeout_s: float = 10.0,
                 codec: ChunkCodec | None = None) -> None:
        self.path = None if path is None else os.fspath(path)
        self.codec = codec if codec is not None else ChunkCodec(token_bits())
        self._lock = threading.RLock()
        try:
            if self.path is None:
                self._db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
            else:
                if os.path.isdir(self.path):
                    raise InvalidInput(f"path {self.path!r} is a directory, expected a store file")
                if not os.path.exists(self.path):
                    # Create the file ourselves so it never exists with looser permissions than 0600.
                    fd = os.open(self.path, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o600)
                    os.close(fd)
                self._db = sqlite3.connect(
                    self.path, timeout=busy_timeout_s, check_same_thread=False, isolation_level=None
                )
                # Free pages go back to the file system (incrementally, after seals), so the file stays near the
                # size of what it holds; only takes effect on a new, empty database.
                self._db.execute("PRAGMA auto_vacuum=INCREMENTAL")
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            # Freed pages are zeroed, so deleted text does not linger in the file.
            self._db.execute("PRAGMA secure_delete=ON")
            self._init_schema()
        except sqlite3.Error as exc:
            raise _translate(exc, f"opening store {self.path!r}") from exc
        except FileExistsError:  # raced with another creator: fine, open it
            self.__init__(path, busy_timeout_s=busy_timeout_s, codec=codec)
        except OSError as exc:  # missing directory, permission denied, read-only file system
            raise StoreError(f"cannot create the store file at path {self.path!r}: {exc.strerror or exc}") from exc

    # -- plumbing -------------------------------------------------------------------------------------------
    def _init_schema(self) -> None:
        with self.transaction("initialising the schema"):
            self._db.execute(_SCHEMA[0])
            row = self._db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            version = SCHEMA_VERSION if row is None else (int(row[0]) if str(row[0]).isdigit() else -1)
            if version != SCHEMA_VERSION and version not in _MIGRATIONS:
                raise CorruptData(f"store schema version {row[0]} is not supported (expected {SCHEMA_VERSION})")
            while version in _MIGRATIONS:  # an older store: upgraded in place, all or nothing
                _MIGRATIONS[version](self._db)
                version += 1
            for stmt in _SCHEMA:
                self._db.execute(stmt)
            self._db.execute("INSERT INTO meta(key, value) VALUES ('schema_version', ?)"
                             " ON CONFLICT(key) DO UPDATE SET value = excluded.value", (str(SCHEMA_VERSION),))

    @contextlib.contextmanager
    def transaction(self, what: str) -> Iterator[sqlite3.Connection]:
        """An exclusive write transaction; any failure rolls back everything it did."""
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise _translate(exc, what) from exc
            try:
                yield self._db
                self._db.execute("COMMIT")
            except BaseException as exc:
                with contextlib.suppress(sqlite3.Error):
                    self._db.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise _translate(exc, what) from exc
                raise

    def _query(self, sql: str, params: Sequence[Any] = (), what: str = "reading the store") -> list[tuple]:
        with self._lock:
            try:
                return self._db.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise _translate(exc, what) from exc

    @staticmethod
    def _row(r: tuple, tokens: np.ndarray | None = None) -> MessageRow:
        try:
            meta = json.loads(r[8])
        except (TypeError, ValueError) as exc:
            raise CorruptData(f"message {r[0]}: metadata is not valid JSON") from exc
        return MessageRow(
            id=r[0], namespace=r[1], seq=r[2], n_tokens=r[3], speaker=r[4], role=r[5], ts=r[6],
            session_id=r[7], metadata=meta, created_at=r[9], tokens=tokens,
        )

    # -- namespaces -----------------------------------------------------------------------------------------
    def state(self, namespace: str) -> NamespaceState:
        rows = self._query("SELECT generation, next_seq, version FROM namespaces WHERE name = ?", (namespace,))
        if not rows:
            return NamespaceState(self._epoch(self._db), 0, self._epoch(self._db, "change_epoch"))
        return NamespaceState(rows[0][0], rows[0][1], rows[0][2])

    def _epoch(self, db, key: str = "namespace_epoch") -> int:
        # Generation (namespace_epoch) and change version (change_epoch) a namespace (re)starts at.
        # delete_namespace removes the namespace's row, so its name leaves the file, and raises both epochs past
        # that row's values: a process still caching the deleted namespace sees a changed fingerprint and a feed
        # that no longer reaches back to what it saw, and reloads, even once the name is reused.
        with self._lock:
            row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return int(row[0]) if row else 0

    def _record(self, db, namespace: str, kind: str, first_seq: int = -1, last_seq: int = -1,
                ids: Sequence[int] = ()) -> int:
        """Take the namespace's next change number and record the change (inside the caller's transaction)."""
        db.execute("UPDATE namespaces SET version = version + 1 WHERE name = ?", (namespace,))
        version = db.execute("SELECT version FROM namespaces WHERE name = ?", (namespace,)).fetchone()[0]
        db.execute("INSERT INTO changes(namespace, version, kind, first_seq, last_seq, ids) VALUES (?, ?, ?, ?, ?, ?)",
                   (namespace, version, kind, first_seq, last_seq, json.dumps([int(i) for i in ids])))
        return int(version)

    def namespaces(self) -> list[str]:
        rows = self._query("SELECT DISTINCT namespace FROM messages ORDER BY namespace")
        return [r[0] for r in rows]

    # -- writes ---------------------------------------------------------------------------------------------
    def append(self, namespace: str, messages: Sequence[NewMessage]) -> list[MessageRow]:
        if not messages:
            return []
        out: list[MessageRow] = []
        with self.transaction("adding messages") as db:
            start = self._epoch(db, "change_epoch")
            db.execute("INSERT OR IGNORE INTO namespaces(name, generation, next_seq, version, horizon)"
                       " VALUES (?, ?, 0, ?, ?)", (namespace, self._epoch(db), start, start))
            seq = first = db.execute("SELECT next_seq FROM namespaces WHERE name = ?", (namespace,)).fetchone()[0]
            for m in messages:
                tokens = np.ascontiguousarray(m.tokens, dtype="<u4")
                meta_json = json.dumps(m.metadata, ensure_ascii=False, separators=(",", ":"))
                cur = db.execute(
                    "INSERT INTO messages(namespace, seq, n_tokens, speaker, role, ts, session_id, metadata,"
                    " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (namespace, seq, int(tokens.size), m.speaker, m.role, m.ts, m.session_id, meta_json,
                     m.created_at),
                )
                db.execute("INSERT INTO tail(id, namespace, seq, tokens) VALUES (?, ?, ?, ?)",
                           (int(cur.lastrowid), namespace, seq, tokens.tobytes()))
                out.append(MessageRow(
                    id=int(cur.lastrowid), namespace=namespace, seq=seq, n_tokens=int(tokens.size),
                    speaker=m.speaker, role=m.role, ts=m.ts, session_id=m.session_id, metadata=m.metadata,
                    created_at=m.created_at, tokens=tokens.astype(np.uint32, copy=False),
                ))
                seq += 1
            db.execute("UPDATE namespaces SET next_seq = ? WHERE name = ?", (seq, namespace))
            self._record(db, namespace, "append", first, seq - 1)
        return out

    def _chunks(self, namespace: str, after_seq: int = -1) -> list[Chunk]:
        rows = self._query(
            "SELECT id, first_seq, last_seq, n_messages, n_tokens, blob FROM chunks"
            " WHERE namespace = ? AND last_seq > ? ORDER BY first_seq",
            (namespace, after_seq),
        )
        return [Chunk(*r) for r in rows]

    def _read(self, fn):
        """Run ``fn()`` inside one read transaction (a consistent snapshot of the file) unless one is open."""
        with self._lock:
            own = not self._db.in_transaction
            try:
                if own:
                    self._db.execute("BEGIN")
                try:
                    return fn()
                finally:
                    if own:
                        self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                raise _translate(exc, "reading the store") from exc

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        with self._lock:
            if self._db.in_transaction:
                yield
                return
            try:
                self._db.execute("BEGIN")
            except sqlite3.Error as exc:
                raise _translate(exc, "reading the store") from exc
            try:
                yield
            finally:
                with contextlib.suppress(sqlite3.Error):
                    self._db.execute("COMMIT")

    def load(self, namespace: str, after_seq: int = -1, upto_seq: int | None = None) -> list[MessageRow]:
        # Rows and chunks are read in one transaction: between two autocommit reads another process may seal
        # the tail (tokens move from rows into a new chunk) or merge chunks, and the halves would not match.
        # Only the rows past ``after_seq`` and the chunks that hold their tokens are read; in a chunk that starts
        # before ``after_seq`` the tokens of its earlier messages are skipped by their total length.
        def read():
            raw = self._query(
                f"SELECT {_ROW_COLS_M}, t.tokens FROM messages m LEFT JOIN tail t ON t.id = m.id"
                " WHERE m.namespace = ? AND m.seq > ? AND m.seq <= ? ORDER BY m.seq",
                (namespace, after_seq, (1 << 62) if upto_seq is None else int(upto_seq)))
            chunks = self._chunks(namespace, after_seq) if any(r[10] is None for r in raw) else []
            if upto_seq is not None:
                chunks = [c for c in chunks if c.first_seq <= upto_seq]
            skip = 0
            if chunks and chunks[0].first_seq <= after_seq:
                skip = self._query("SELECT COALESCE(SUM(n_tokens), 0) FROM messages WHERE namespace = ?"
                                   " AND seq >= ? AND seq <= ?", (namespace, chunks[0].first_seq, after_seq))[0][0]
            return raw, chunks, int(skip)

        raw, chunks, skip = self._read(read)
        return self._attach_tokens(namespace, raw, chunks, skip, upto_seq)

    def load_tokens(self, namespace: str) -> np.ndarray:
        def read():
            tail = self._query("SELECT t.seq, m.n_tokens, t.tokens FROM tail t JOIN messages m ON m.id = t.id"
                               " WHERE t.namespace = ? ORDER BY t.seq", (namespace,))
            return self._chunks(namespace), tail

        chunks, tail = self._read(read)
        parts = []
        for ch in chunks:
            tokens = self.codec.decode(ch.blob)
            if tokens.size != ch.n_tokens:
                raise CorruptData(f"chunk {ch.id}: holds {tokens.size} tokens, expected {ch.n_tokens}")
            parts.append(tokens)
        if chunks and tail and tail[0][0] <= chunks[-1].last_seq:
            raise CorruptData(f"namespace {namespace!r}: unsealed messages precede the last chunk")
        for seq, n, blob in tail:
            if blob is None or len(blob) != 4 * n:
                raise CorruptData(f"namespace {namespace!r}: message seq {seq} has a damaged token blob")
            parts.append(np.frombuffer(blob, dtype="<u4"))
        if not parts:
            return np.zeros(0, dtype=np.uint32)
        return np.concatenate(parts).astype(np.uint32, copy=False)

    def _attach_tokens(self, namespace, raw, chunks, skip: int = 0, upto_seq: int | None = None
                       ) -> list[MessageRow]:
        """Rows with their tokens: from the tail, else from the chunks in order (the first ``skip`` tokens of the
        first chunk belong to messages before ``raw``; a chunk reaching past ``upto_seq`` is read only in part)."""
        out: list[MessageRow] = []
        ci = 0
        chunk_tokens: np.ndarray | None = None
        chunk_pos = skip
        for r in raw:
            seq, n = r[2], r[3]
            blob = r[10]
            if blob is not None:
                if len(blob) != 4 * n:
                    raise CorruptData(f"message {r[0]}: token blob holds {len(blob)} bytes, expected {4 * n}")
                tokens = np.frombuffer(blob, dtype="<u4").astype(np.uint32)
            else:
                while ci < len(chunks) and chunks[ci].last_seq < seq:
                    self._check_chunk_end(chunks[ci], chunk_tokens, chunk_pos)
                    ci += 1
                    chunk_tokens, chunk_pos = None, 0
                if ci >= len(chunks) or chunks[ci].first_seq > seq:
                    raise CorruptData(f"message {r[0]} (seq {seq}) has no tokens in the store: no chunk covers it")
                if chunk_tokens is None:
                    chunk_tokens = self.codec.decode(chunks[ci].blob)
                    if chunk_tokens.size != chunks[ci].n_tokens:
                        raise CorruptData(f"chunk {chunks[ci].id}: holds {chunk_tokens.size} tokens, expected "
                                          f"{chunks[ci].n_tokens}")
                if chunk_pos + n > chunk_tokens.size:
                    raise CorruptData(f"chunk {chunks[ci].id} is shorter than the messages it covers")
                tokens = chunk_tokens[chunk_pos:chunk_pos + n]
                chunk_pos += n
            out.append(self._row(r, tokens))
        if ci < len(chunks) and (upto_seq is None or chunks[ci].last_seq <= upto_seq):
            self._check_chunk_end(chunks[ci], chunk_tokens, chunk_pos)
        return out

    @staticmethod
    def _check_chunk_end(chunk: Chunk, tokens: np.ndarray | None, pos: int) -> None:
        if tokens is not None and pos != tokens.size:
            raise CorruptData(f"chunk {chunk.id} holds {tokens.size} tokens but its messages cover {pos}")

    def rows(self, namespace: str, ids: Iterable[int]) -> dict[int, MessageRow]:
        ids = [int(i) for i in ids]
        out: dict[int, MessageRow] = {}
        for start in range(0, len(ids), 500):
            part = ids[start:start + 500]
            marks = ",".join("?" * len(part))
            # Look up by primary key only (a namespace condition would steer the planner to scan the
            # namespace's index); rows of other namespaces are dropped here.
            for r in self._query(f"SELECT {_ROW_COLS} FROM messages WHERE id IN ({marks})", part):
                if r[1] == namespace:
                    out[r[0]] = self._row(r)
        return out

    def scan(self, namespace: str) -> Iterator[MessageRow]:
        for r in self._query(f"SELECT {_ROW_COLS} FROM messages WHERE namespace = ? ORDER BY seq", (namespace,)):
            yield self._row(r)

    def seal(self, namespace: str, min_tokens: int) -> int:
        sealed = self._seal(namespace, min_tokens)
        if sealed:
            self._release_free_pages()
        return sealed

    def _release_free_pages(self) -> None:
        with self._lock:
            try:
                # executescript steps the pragma to completion (execute() frees one page per step)
                self._db.executescript("PRAGMA incremental_vacuum;")
            except sqlite3.Error:
                pass  # only space is at stake; the next seal tries again

    def _seal(self, namespace: str, min_tokens: int) -> int:
        with self.transaction("sealing the tail into a chunk") as db:
            tail = db.execute(
                "SELECT t.seq, m.n_tokens, t.tokens FROM tail t JOIN messages m ON m.id = t.id"
                " WHERE t.namespace = ? ORDER BY t.seq",
                (namespace,),
            ).fetchall()
            total = sum(r[1] for r in tail)
            if not tail or total < min_tokens:
                return 0
            last_chunk = db.execute(
                "SELECT MAX(last_seq) FROM chunks WHERE namespace = ?", (namespace,)
            ).fetchone()[0]
            if last_chunk is not None and tail[0][0] <= last_chunk:
                raise CorruptData(f"namespace {namespace!r}: unsealed messages precede the last chunk")
            arrays = []
            for seq, n, blob in tail:
                if blob is None or len(blob) != 4 * n:
                    raise CorruptData(f"namespace {namespace!r}: message seq {seq} has a damaged token blob")
                arrays.append(np.frombuffer(blob, dtype="<u4"))
            tokens = np.concatenate(arrays).astype(np.uint32)
            db.execute(
                "INSERT INTO chunks(namespace, first_seq, last_seq, n_messages, n_tokens, blob) VALUES (?,?,?,?,?,?)",
                (namespace, tail[0][0], tail[-1][0], len(tail), int(tokens.size), self.codec.encode(tokens)),
            )
            db.execute(
                "DELETE FROM tail WHERE namespace = ? AND seq <= ?",
                (namespace, tail[-1][0]),
            )
            self._merge_chunks(db, namespace)
            return int(tokens.size)

    def _merge_chunks(self, db, namespace: str) -> None:
        # Geometric merging (as in a log-structured merge tree): sizes roughly double from newest to oldest, so
        # there are O(log n) chunks and each token is rewritten O(log n) times over the store's life.
        while True:
            last2 = db.execute(
                "SELECT id, first_seq, last_seq, n_messages, n_tokens, blob FROM chunks WHERE namespace = ?"
                " ORDER BY first_seq DESC LIMIT 2",
                (namespace,),
            ).fetchall()
            if len(last2) < 2:
                return
            newer, older = Chunk(*last2[0]), Chunk(*last2[1])
            if older.n_tokens > 2 * newer.n_tokens:
                return
            a, b = self.codec.decode(older.blob), self.codec.decode(newer.blob)
            if a.size != older.n_tokens or b.size != newer.n_tokens:
                raise CorruptData(f"namespace {namespace!r}: a chunk does not hold the tokens it declares")
            merged = np.concatenate([a, b])
            db.execute("DELETE FROM chunks WHERE id IN (?, ?)", (older.id, newer.id))
            db.execute(
                "INSERT INTO chunks(namespace, first_seq, last_seq, n_messages, n_tokens, blob) VALUES (?,?,?,?,?,?)",
                (namespace, older.first_seq, newer.last_seq, older.n_messages + newer.n_messages,
                 int(merged.size), self.codec.encode(merged)),
            )

    def delete(self, namespace: str, ids: Iterable[int]) -> list[int]:
        wanted = sorted({int(i) for i in ids})
        if not wanted:
            return []
        with self.transaction("deleting messages") as db:
            found: list[tuple[int, int]] = []  # (id, seq)
            for start in range(0, len(wanted), 500):
                part = wanted[start:start + 500]
                marks = ",".join("?" * len(part))
                found += db.execute(
                    f"SELECT id, seq FROM messages WHERE namespace = ? AND id IN ({marks})", (namespace, *part)
                ).fetchall()
            if not found:
                return []
            dead_seqs = {seq for _, seq in found}
            chunks = [Chunk(*r) for r in db.execute(
                "SELECT id, first_seq, last_seq, n_messages, n_tokens, blob FROM chunks WHERE namespace = ?"
                " ORDER BY first_seq", (namespace,)).fetchall()]
            for ch in chunks:
                if not any(ch.first_seq <= s <= ch.last_seq for s in dead_seqs):
                    continue
                members = db.execute(
                    "SELECT seq, n_tokens FROM messages WHERE namespace = ? AND seq BETWEEN ? AND ?"
                    " AND id NOT IN (SELECT id FROM tail WHERE namespace = ?) ORDER BY seq",
                    (namespace, ch.first_seq, ch.last_seq, namespace)).fetchall()
                tokens = self.codec.decode(ch.blob)
                if tokens.size != ch.n_tokens or sum(n for _, n in members) != ch.n_tokens:
                    raise CorruptData(f"chunk {ch.id} does not match the messages it covers")
                keep, pos, kept_msgs = [], 0, 0
                for seq, n in members:
                    if seq not in dead_seqs:
                        keep.append(tokens[pos:pos + n])
                        kept_msgs += 1
                    pos += n
                db.execute("DELETE FROM chunks WHERE id = ?", (ch.id,))
                if kept_msgs:
                    merged = np.concatenate(keep) if keep else np.zeros(0, np.uint32)
                    db.execute(
                        "INSERT INTO chunks(namespace, first_seq, last_seq, n_messages, n_tokens, blob)"
                        " VALUES (?,?,?,?,?,?)",
                        (namespace, ch.first_seq, ch.last_seq, kept_msgs, int(merged.size), self.codec.encode(merged)),
                    )
            ids_found = [i for i, _ in found]
            for start in range(0, len(ids_found), 500):
                part = ids_found[start:start + 500]
                marks = ",".join("?" * len(part))
                db.execute(f"DELETE FROM messages WHERE namespace = ? AND id IN ({marks})", (namespace, *part))
                db.execute(f"DELETE FROM codes WHERE id IN ({marks})", part)
                db.execute(f"DELETE FROM tail WHERE id IN ({marks})", part)
            db.execute("UPDATE namespaces SET generation = generation + 1 WHERE name = ?", (namespace,))
            self._record(db, namespace, "delete", ids=sorted(ids_found))
        return sorted(ids_found)

    def update_metadata(self, namespace: str, id: int, metadata: dict[str, Any]) -> bool:
        meta_json = json.dumps(metadata, ensure_ascii=False, separators=(",", ":"))
        with self.transaction("updating metadata") as db:
            cur = db.execute("UPDATE messages SET metadata = ? WHERE namespace = ? AND id = ?",
                             (meta_json, namespace, int(id)))
            if cur.rowcount != 1:
                return False
            self._record(db, namespace, "update", ids=[int(id)])
            return True

    def delete_namespace(self, namespace: str) -> int:
        with self.transaction("deleting a namespace") as db:
            n = db.execute("SELECT COUNT(*) FROM messages WHERE namespace = ?", (namespace,)).fetchone()[0]
            db.execute("DELETE FROM messages WHERE namespace = ?", (namespace,))
            db.execute("DELETE FROM chunks WHERE namespace = ?", (namespace,))
            db.execute("DELETE FROM units WHERE namespace = ?", (namespace,))
            db.execute("DELETE FROM codes WHERE namespace = ?", (namespace,))
            db.execute("DELETE FROM tail WHERE namespace = ?", (namespace,))
            db.execute("DELETE FROM changes WHERE namespace = ?", (namespace,))
            row = db.execute("SELECT generation, version FROM namespaces WHERE name = ?", (namespace,)).fetchone()
            if row is not None:
                epochs = {"namespace_epoch": max(self._epoch(db), int(row[0])) + 1,
                          "change_epoch": max(self._epoch(db, "change_epoch"), int(row[1])) + 1}
                db.execute("DELETE FROM namespaces WHERE name = ?", (namespace,))
                for key, epoch in epochs.items():
                    db.execute("INSERT INTO meta(key, value) VALUES (?, ?)"
                               " ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, str(epoch)))
        return int(n)

    # -- the change feed ------------------------------------------------------------------------------------
    def changes(self, namespace: str, after: int) -> list[Change] | None:
        after = int(after)

        def read():
            row = self._query("SELECT version, horizon FROM namespaces WHERE name = ?", (namespace,))
            if not row:
                # never written (nothing to catch up on when that is what the reader saw) or deleted since
                start = self._epoch(self._db, "change_epoch")
                return start, start, []
            head, horizon = row[0]
            if not horizon <= after <= head:
                return head, horizon, []
            return head, horizon, self._query("SELECT version, kind, first_seq, last_seq, ids FROM changes"
                                              " WHERE namespace = ? AND version > ? ORDER BY version",
                                              (namespace, after))

        head, horizon, raw = self._read(read)
        if not horizon <= after <= head:
            return None
        out: list[Change] = []
        expect = after + 1
        for version, kind, first, last, ids in raw:
            try:
                parsed = tuple(int(i) for i in json.loads(ids))
            except (TypeError, ValueError) as exc:
                raise CorruptData(f"namespace {namespace!r}: change {version} holds damaged ids") from exc
            if version != expect or kind not in CHANGE_KINDS:
                raise CorruptData(f"namespace {namespace!r}: the change feed is damaged at version {version}")
            out.append(Change(int(version), kind, int(first), int(last), parsed))
            expect += 1
        if expect != head + 1:
            raise CorruptData(f"namespace {namespace!r}: the change feed stops at {expect - 1}, expected {head}")
        return out

    def trim_changes(self, namespace: str, upto: int) -> int:
        with self.transaction("trimming the change feed") as db:
            row = db.execute("SELECT version, horizon FROM namespaces WHERE name = ?", (namespace,)).fetchone()
            if row is None:
                return 0
            upto = min(int(upto), int(row[0]))
            if upto <= row[1]:
                return 0
            cur = db.execute("DELETE FROM changes WHERE namespace = ? AND version <= ?", (namespace, upto))
            db.execute("UPDATE namespaces SET horizon = ? WHERE name = ?", (upto, namespace))
            return cur.rowcount

    # -- embedding codes ------------------------------------------------------------------------------------
    def put_codes(self, namespace: str, ids: list[int], codes: np.ndarray) -> None:
        with self.transaction("saving embedding codes") as db:
            db.executemany(
                "INSERT INTO codes(id, namespace, code) VALUES (?, ?, ?)"
                " ON CONFLICT(id) DO UPDATE SET code = excluded.code",
                [(int(i), namespace, bytes(c)) for i, c in zip(ids, codes)],
            )

    def get_codes(self, namespace: str) -> dict[int, bytes]:
        return {r[0]: r[1] for r in self._query("SELECT id, code FROM codes WHERE namespace = ?", (namespace,))}

    # -- derived units (hierarchy snapshots) ----------------------------------------------------------------
    def put_units(self, namespace: str, kind: str, payload: bytes) -> None:
        with self.transaction("saving units") as db:
            db.execute(
                "INSERT INTO units(namespace, kind, payload) VALUES (?, ?, ?)"
                " ON CONFLICT(namespace, kind) DO UPDATE SET payload = excluded.payload",
                (namespace, kind, payload),
            )
        self._release_free_pages()

    def get_units(self, namespace: str, kind: str) -> bytes | None:
        rows = self._query("SELECT payload FROM units WHERE namespace = ? AND kind = ?", (namespace, kind))
        return rows[0][0] if rows else None

    def put_units_many(self, namespace: str, payloads: dict[str, bytes | None]) -> None:
        with self.transaction("saving units") as db:
            for kind, payload in payloads.items():
                if payload is None:
                    db.execute("DELETE FROM units WHERE namespace = ? AND kind = ?", (namespace, kind))
                else:
                    db.execute("INSERT INTO units(namespace, kind, payload) VALUES (?, ?, ?)"
                               " ON CONFLICT(namespace, kind) DO UPDATE SET payload = excluded.payload",
                               (namespace, kind, payload))
        self._release_free_pages()

    # -- maintenance ----------------------------------------------------------------------------------------
    def sizes(self) -> dict[str, int]:
        q = self._query
        out = {
            "messages": q("SELECT COUNT(*) FROM messages")[0][0],
            "tail_token_bytes": q("SELECT COALESCE(SUM(LENGTH(tokens)), 0) FROM tail")[0][0],
            "chunk_bytes": q("SELECT COALESCE(SUM(LENGTH(blob)), 0) FROM chunks")[0][0],
            "chunks": q("SELECT COUNT(*) FROM chunks")[0][0],
            "metadata_bytes": q(
                "SELECT COALESCE(SUM(LENGTH(metadata) + COALESCE(LENGTH(speaker),0) + COALESCE(LENGTH(session_id),0)"
                " + LENGTH(role) + 24), 0) FROM messages")[0][0],
            "unit_bytes": q("SELECT COALESCE(SUM(LENGTH(payload)), 0) FROM units")[0][0],
        }
        page_size = q("PRAGMA page_size")[0][0]
        out["file_bytes"] = q("PRAGMA page_count")[0][0] * page_size
        return out

    def checkpoint(self) -> None:
        if self.path is not None:
            self._query("PRAGMA wal_checkpoint(TRUNCATE)", what="checkpointing the WAL")

    def vacuum(self) -> None:
        with self._lock:
            try:
                self._db.execute("VACUUM")
                if self.path is not None:
                    self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as exc:
                raise _translate(exc, "vacuuming the store") from exc

    def close(self) -> None:
        with self._lock:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()


def now() -> float:
    return time.time()
