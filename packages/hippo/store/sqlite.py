"""The embedded default store: one SQLite file (WAL), many namespaces, created with mode 0600.

SQL stays portable (no SQLite-only syntax beyond PRAGMAs), so a PostgreSQL store can implement the same
:class:`~hippo.store.base.Store` interface with the same schema.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import stat
import threading
import time
import urllib.parse
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from hippo.base.config import SYNCHRONOUS
from hippo.base.errors import Changed, ClosedError, CorruptData, HippoError, InvalidInput, NotFound, ReadOnlyError, \
    StoreBusy, StoreError
from hippo.store import filecopy
from hippo.store import common, snapshot, wal
from hippo.store.base import (
    CHANGE_KINDS,
    Change,
    Chunk,
    MessageRow,
    NamespaceState,
    NewMessage,
    Replace,
    Store,
)
from hippo.store.codec import ChunkCodec
from hippo.store.common import bad_int as _bad_int
from hippo.store.common import chunk_checksum, tail_checksum  # noqa: F401 - part of this module's API
from hippo.text.tokenizer import token_bits

#: Incremental blob I/O (``Connection.blobopen``, Python 3.11+): a large snapshot is written into its row and read back
#: a chunk at a time. Python 3.10's sqlite3 has none; there the blob is bound whole, as one ``bytes``.
BLOB_IO = hasattr(sqlite3.Connection, "blobopen")

log = logging.getLogger("hippo.store")

# 3: checksums over tail rows and over chunks (with the seq / n_tokens of the messages a chunk covers).
# 4: the change feed (namespaces.version / namespaces.horizon and the changes table).
SCHEMA_VERSION = 4
READABLE_VERSIONS = (2, 3, 4)  # an older store is upgraded on a writable open and read as it is when read-only
# The oldest schema version whose code may use a store of this schema as it is (meta 'compatible', see
# hippo.store.common). A migration that code of the schema before can live with (a column it does not name and may
# leave empty, an index) leaves this where it was; any other raises it to the new SCHEMA_VERSION. (Schema 4 is not
# usable by schema-3 code, which writes no change feed.)
COMPATIBLE_FROM = 4
# Columns added to a store of the current schema without a new schema number: code of that schema neither names nor
# needs them, and releases before the compatibility record refuse any newer number outright. A writable open adds
# the ones a store lacks; a read-only one reads a store without them as it is.
# messages.utc_offset: the offset from UTC a message's timestamp was given with (NULL: unknown).
_ADDED_COLUMNS = (("messages", "utc_offset", "REAL"),)

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
        utc_offset REAL,
        UNIQUE (namespace, seq))""",
    """CREATE TABLE IF NOT EXISTS chunks (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        namespace TEXT NOT NULL,
        first_seq INTEGER NOT NULL,
        last_seq INTEGER NOT NULL,
        n_messages INTEGER NOT NULL,
        n_tokens INTEGER NOT NULL,
        blob BLOB NOT NULL,
        checksum BLOB)""",
    "CREATE INDEX IF NOT EXISTS chunks_ns ON chunks (namespace, first_seq)",
    # Sealing reads the unsealed tail after every write: without this partial index that is a walk over every
    # message of the namespace, which makes each add O(n) and ingest quadratic.
    # The unsealed tail: token ids of recent messages until they are sealed into a chunk. Kept apart from the
    # message rows so those are written once at their final size (no half-empty pages after sealing).
    """CREATE TABLE IF NOT EXISTS tail (
        id INTEGER PRIMARY KEY,
        namespace TEXT NOT NULL,
        seq INTEGER NOT NULL,
        tokens BLOB NOT NULL,
        checksum BLOB)""",
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

# A process of hippo before schema 4 that opened the file before another process upgraded it goes on writing in the
# old way: tail rows and chunks without checksums (which every later read reports as damage: the namespace, its older
# messages included, could no longer be read) and no change feed (other processes would not see its messages).
# Every row this code writes carries its checksum; a row without one is refused, and the old process's call fails
# with this message, storing nothing. Created after the upgrade (the checksum columns exist by then).
_OLD_WRITER = ("hippo: this store was upgraded by a newer version of hippo; this process runs an older "
               "one: upgrade it and open the store again")
_REFUSE_OLD_WRITERS = [
    f"CREATE TRIGGER IF NOT EXISTS {table}_checksummed BEFORE INSERT ON {table} WHEN NEW.checksum IS NULL"
    f" BEGIN SELECT RAISE(ABORT, '{_OLD_WRITER}'); END"
    for table in ("tail", "chunks")]

# Connections a forked child inherited from its parent in the middle of a call (:meth:`SQLiteStore.drop_inherited`):
# never used or closed in the child.
_INHERITED: list[sqlite3.Connection] = []

SCAN_PAGE = 1024  # message rows a scan reads at a time

_ROW_COLS = "id, namespace, seq, n_tokens, speaker, role, ts, session_id, metadata, created_at, utc_offset"
_ROW_COLS_M = ", ".join("m." + c.strip() for c in _ROW_COLS.split(","))
# a store written before the offsets, opened read-only, has no utc_offset column: its messages' offsets are unknown
_ROW_COLS_4 = _ROW_COLS.replace("utc_offset", "NULL")
_ROW_COLS_M_4 = _ROW_COLS_M.replace("m.utc_offset", "NULL")
# Blob columns are read through CAST: a value whose type was damaged (TEXT that is not UTF-8) reaches the validation
# below as bytes instead of failing inside the driver.
_CHUNK_COLS = "id, first_seq, last_seq, n_messages, n_tokens, CAST(blob AS BLOB), CAST(checksum AS BLOB)"
_TAIL_COLS = "CAST(t.tokens AS BLOB), CAST(t.checksum AS BLOB)"



def _members_of(db: sqlite3.Connection, namespace: str, ch: Chunk) -> list[tuple[int, int, int]]:
    """``(id, seq, n_tokens)`` of the sealed messages in a chunk's seq range, in seq order."""
    return db.execute(
        "SELECT id, seq, n_tokens FROM messages WHERE namespace = ? AND seq BETWEEN ? AND ?"
        " AND id NOT IN (SELECT id FROM tail WHERE namespace = ?) ORDER BY seq",
        (namespace, ch.first_seq, ch.last_seq, namespace)).fetchall()


def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {str(r[1]) for r in db.execute(f"PRAGMA table_info({table})")}


def _layout(db: sqlite3.Connection, recorded: int) -> tuple[bool, bool]:
    """``(checksums, feed)``: whether a store's tables carry checksums and the change feed. By its number a store
    of schema 3 has checksums and no feed, but hippo before schema 4 (the two steps were numbered apart when they
    were merged) also wrote stores numbered 3 with the feed and without checksums; the columns tell them apart."""
    if recorded >= 4:
        return True, True
    return recorded >= 3 and "checksum" in _columns(db, "tail"), "version" in _columns(db, "namespaces")


def _migrate_2_to_3(db: sqlite3.Connection) -> None:
    """Schema 2 -> 3: checksums. The rows are taken as they are now: the upgrade cannot know earlier damage, only
    make every later change detectable."""
    if "checksum" in _columns(db, "tail") and "checksum" in _columns(db, "chunks"):
        return
    db.execute("ALTER TABLE tail ADD COLUMN checksum BLOB")
    db.execute("ALTER TABLE chunks ADD COLUMN checksum BLOB")
    # A row already damaged beyond checksumming (a value of the wrong type) keeps a NULL checksum, which every read
    # and `check` report as damage.
    rows = db.execute("SELECT t.id, t.namespace, m.seq, m.n_tokens, CAST(t.tokens AS BLOB) FROM tail t"
                      " JOIN messages m ON m.id = t.id AND m.namespace = t.namespace").fetchall()
    for i, ns, seq, n, tok in rows:
        with contextlib.suppress(TypeError, ValueError, OverflowError):
            db.execute("UPDATE tail SET checksum = ? WHERE id = ?", (tail_checksum(ns, i, seq, n, tok), i))
    for ns, cid in db.execute("SELECT namespace, id FROM chunks").fetchall():
        ch = Chunk(*db.execute(f"SELECT {_CHUNK_COLS} FROM chunks WHERE id = ?", (cid,)).fetchone())
        with contextlib.suppress(TypeError, ValueError, OverflowError):
            db.execute("UPDATE chunks SET checksum = ? WHERE id = ?",
                       (common.chunk_sum(ns, ch, _members_of(db, ns, ch)), cid))


def _migrate_3_to_4(db: sqlite3.Connection) -> None:
    """Schema 3 -> 4: the change feed. Existing namespaces start at version 0 with an empty feed (a reader that kept
    nothing derived from them has nothing to catch up on); the changes table itself is created with the schema. A
    store that has the feed already (numbered 3 without checksums, :func:`_layout`) keeps its feed as it is."""
    _add_columns(db, [("namespaces", column, "INTEGER NOT NULL DEFAULT 0") for column in ("version", "horizon")])


def _add_columns(db: sqlite3.Connection, columns: Sequence[tuple[str, str, str]] = _ADDED_COLUMNS) -> None:
    """Add the ``(table, column, type)`` of ``columns`` (:data:`_ADDED_COLUMNS`) a store lacks (inside the schema
    transaction)."""
    for table, column, kind in columns:
        if column not in _columns(db, table):
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")


# from-version -> step to the next version; a store is upgraded step by step inside its opening transaction
_MIGRATIONS = {2: _migrate_2_to_3, 3: _migrate_3_to_4}


def _int_or(value: Any, default: int = 0) -> int:
    """``value`` when it is a count, else ``default`` (a damaged column must not stop a deletion)."""
    return default if _bad_int(value) else int(value)


# Extended result codes of a failed write to the store's files, and what failed.
_WRITE_FAILED = {"SQLITE_IOERR_WRITE": "writing the store's files", "SQLITE_IOERR_FSYNC": "syncing the store's files",
                 "SQLITE_IOERR_TRUNCATE": "resizing the store's files",
                 "SQLITE_IOERR_SHMSIZE": "growing the write-ahead log's index (-shm)"}


def _translate(exc: sqlite3.Error, what: str) -> Exception:
    msg = str(exc).lower()
    if "closed database" in msg:
        return ClosedError(f"{what}: the store was closed (Memory.close) while this call ran")
    if "locked" in msg or "busy" in msg:
        return StoreBusy(f"{what}: the store is locked by another writer (waited the configured busy_timeout_s)")
    name = getattr(exc, "sqlite_errorname", "") or ""  # the extended result code (Python 3.11+)
    if "full" in msg:
        return StoreError(f"{what}: the disk is full; nothing was written ({exc})")
    if name in _WRITE_FAILED:
        # SQLite reports a write, sync or resize of its files that the OS refused as "disk I/O error"; the store
        # is unchanged (a transaction rolls back; an open has created no table)
        return StoreError(f"{what}: {_WRITE_FAILED[name]} failed: the disk is full, a file size limit was reached "
                          f"or the device failed; nothing was written ({exc}, {name})")
    if "readonly" in msg or "read-only" in msg:
        return StoreError(f"{what}: the store cannot be written here ({exc}); open it with read_only=True to read it")
    if "malformed" in msg or "not a database" in msg or "corrupt" in msg:
        return CorruptData(f"{what}: the store file is corrupt ({exc})")
    if "could not decode" in msg:
        return CorruptData(f"{what}: a text column holds bytes that are not UTF-8 ({exc})")
    return StoreError(f"{what}: {exc}")


def _absolute(path: str) -> str:
    """``path`` made absolute; as given when the current directory is gone (the open then fails and says so)."""
    try:
        return os.path.abspath(path)
    except OSError:
        return path


def _not_a_file(path: str) -> str | None:
    """What ``path`` (through symbolic links) is when it exists and is no regular file: SQLite would block opening
    a named pipe read-only until a writer came, and answer "disk I/O error" on a device, beside which it creates a
    journal with the device's permissions."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None  # missing (created by the open) or not reachable (the open says why)
    if stat.S_ISREG(mode):
        return None
    kinds = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
    return next((what for test, what in kinds if test(mode)), "not a regular file")


def check_path(path: Any, name: str = "path") -> str:
    """A file-system path as ``str``, refusing what no file system accepts (a NUL byte, a lone surrogate)."""
    try:
        text = os.fspath(path)
    except TypeError as exc:
        raise InvalidInput(f"{name} must be a str or os.PathLike, got {type(path).__name__}") from exc
    if isinstance(text, bytes):
        try:
            text = os.fsdecode(text)
        except UnicodeDecodeError as exc:
            raise InvalidInput(f"{name} is not a valid file name: {exc}") from exc
    if not isinstance(text, str):
        raise InvalidInput(f"{name} must be a str or os.PathLike, got {type(path).__name__}")
    if "\x00" in text:
        raise InvalidInput(f"{name} contains a NUL character")
    try:
        text.encode("utf-8")  # SQLite takes UTF-8 file names: a lone surrogate cannot be passed on
    except UnicodeEncodeError as exc:
        raise InvalidInput(f"{name} cannot be used as a file name: {exc.reason}") from exc
    if not text:
        raise InvalidInput(f"{name} must not be empty")
    return text


class SQLiteStore(Store):
    """One SQLite file or, with ``path=None``, a private in-memory database.

    ``read_only=True`` opens an existing file with SQLite's ``mode=ro`` (and ``immutable=1`` when not even the WAL
    index can be created: read-only media, no write permission on the directory, a full disk); every write then
    raises :class:`~hippo.base.errors.ReadOnlyError`. ``synchronous`` is SQLite's durability setting (see ``Config``).
    """

    def __init__(self, path: str | os.PathLike | None, *, busy_timeout_s: float = 10.0, read_only: bool = False,
                 synchronous: str = "NORMAL", codec: ChunkCodec | None = None) -> None:
        self.path = None if path is None else check_path(path)
        self._file = None if self.path is None else _absolute(self.path)  # the file, whatever the cwd later
        self.codec = codec if codec is not None else ChunkCodec(token_bits())
        self.read_only = bool(read_only)
        if synchronous not in SYNCHRONOUS:
            raise InvalidInput(f"config.synchronous must be one of {SYNCHRONOUS}, got {synchronous!r}")
        self.synchronous = synchronous
        self.immutable = False
        self.version = SCHEMA_VERSION
        # Whether rows carry checksums and the store keeps a change feed: an older store opened read-only may lack
        # either (without checksums nothing is verified; without a feed, readers reload what changed instead of
        # applying changes). A writable open upgrades the store to both. Likewise whether messages keep their offset
        # from UTC (:data:`_ADDED_COLUMNS`).
        self._checked = self._fed = self._has_offset = True
        self._busy_ms = int(busy_timeout_s * 1000)
        self._scrub_pending = False
        self._lock = threading.RLock()
        self._scans: set[sqlite3.Connection] = set()  # the connections of scans being read (see scan)
        self._ident: tuple[int, int] | None = None  # (device, inode) of the file opened, see _same_file
        try:
            try:
                if self.path is None:
                    if self.read_only:
                        raise InvalidInput("read_only needs the path of an existing store (path is None)")
                    self._db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
                else:
                    kind = _not_a_file(self.path)
                    if kind is not None:
                        raise InvalidInput(f"path {self.path!r} is {kind}, expected a store file")
                    self._refuse_damaged_wal()
                    if self.read_only:
                        self._db = self._connect_read_only(busy_timeout_s)
                    else:
                        if not os.path.exists(self.path):
                            # Create the file ourselves so it never exists with looser permissions than 0600; through a
                            # symbolic link to a file not created yet, the file it names.
                            try:
                                fd = os.open(os.path.realpath(self.path), os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o600)
                                os.close(fd)
                            except FileExistsError:
                                pass  # raced with another creator (or a loop of links, which SQLite refuses): open it
                        self._db = sqlite3.connect(
                            self.path, timeout=busy_timeout_s, check_same_thread=False, isolation_level=None
                        )
                        # before any pragma below changes the file (journal_mode=WAL stays with it)
                        self._refuse_foreign(self._db)
                        # Free pages go back to the file system (incrementally, after seals), so the file stays near
                        # the size of what it holds; only takes effect on a new, empty database.
                        self._db.execute("PRAGMA auto_vacuum=INCREMENTAL")
                        self._db.execute("PRAGMA journal_mode=WAL")
                        # NORMAL in WAL mode: a crash of the process or the OS loses nothing committed, a power loss may
                        # lose the last transactions (never the file's consistency); FULL syncs the log on every
                        # commit and survives power loss too.
                        self._db.execute(f"PRAGMA synchronous={self.synchronous}")
                self._every_connection(self._db)
                self._ident = self._identity()
                self._init_schema()
            except sqlite3.Error as exc:
                raise _translate(exc, f"opening store {self.path!r}") from exc
            except HippoError:  # already says what is wrong (StoreError is an OSError too: not the next case)
                raise
            except OSError as exc:  # missing directory, permission denied, read-only file system
                raise StoreError(f"cannot create the store file at path {self.path!r}: {exc.strerror or exc}") from exc
        except BaseException:
            # a connection made before the failure is closed now: the exception holds this object through a
            # reference cycle until the garbage collector runs, and a later open of the file in this process
            # would share that connection's state in SQLite (a -shm mapped read-only, locks)
            db = self.__dict__.get("_db")
            if db is not None:
                with contextlib.suppress(sqlite3.Error):
                    db.close()
            raise

    def fork_begins(self) -> None:
        """Wait for the call using the connection (a write's transaction included) to end and hold the lock over
        the fork: the child then inherits an idle connection, which it can close (:meth:`drop_inherited`). Inherited
        in the middle of a transaction, the connection could be neither closed (its rollback would clean the
        write-ahead log's index under the parent's write) nor left open (its record of the write lock would keep
        every write of the child busy)."""
        self._lock.acquire()

    def fork_ends(self) -> None:
        self._lock.release()

    def drop_inherited(self) -> None:
        """In a forked child, before any store reopens: close the connection inherited from the parent. With it goes
        the child's copy of SQLite's per-process record of the file (the locks the parent holds, the -shm mapping):
        a connection opened in the child while that record lives believes those locks held and never takes them,
        so once the parent closed, another process would reset the write-ahead log under the child ("database
        disk image is malformed"). Closing it touches nothing of the parent's (locks belong to a process), unless
        a call was using it when the process forked: then it is kept, unused, as it is."""
        if self.path is None:
            self._lock = threading.RLock()
            return
        idle = self._lock.acquire(blocking=False)  # taken (by a thread that is gone) while a call used the connection
        self._lock = threading.RLock()
        # a scan's connection open at the fork is the parent's: kept, unused, never closed here (see above)
        _INHERITED.extend(self._scans)
        self._scans = set()
        try:
            idle = idle and not self._db.in_transaction
        except sqlite3.Error:
            idle = False
        if idle:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
        else:
            _INHERITED.append(self._db)
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db.close()  # until after_fork opens the child's own: every use raises ClosedError

    def after_fork(self) -> bool:
        """In a forked child, after :meth:`drop_inherited`: a connection of its own to the same file (SQLite's
        connections must not cross a fork). A private in-memory database is copied whole by the fork, between two
        calls (:meth:`fork_begins`), so the child keeps its copy on the connection it inherited, and its handle
        starts anew on it (True): what the parent's other threads were doing at the fork (a search under the
        handle's lock, a background rebuild) is not the child's to wait for. A file removed since it was opened is
        not created again: :class:`StoreError` (or ``NotFound`` read-only)."""
        if self.path is None:
            return True
        what = f"reopening store {self.path!r} in a forked process"
        timeout = self._busy_ms / 1000
        db = None
        try:
            if self.read_only:
                db = self._connect_read_only(timeout)
            else:
                db = sqlite3.connect("file:" + urllib.parse.quote(self._file) + "?mode=rw", uri=True, timeout=timeout,
                                     check_same_thread=False, isolation_level=None)
                db.execute(f"PRAGMA synchronous={self.synchronous}")
            self._every_connection(db)
            db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            self._ident = self._identity()
        except (sqlite3.Error, HippoError) as exc:
            if db is not None:
                db.close()
            if isinstance(exc, HippoError):
                raise
            raise _translate(exc, what) from exc
        self._db = db
        return True

    def _refuse_damaged_wal(self) -> None:
        """Refuse to open a store whose write-ahead log SQLite would silently cut short (see ``hippo.store.wal``)."""
        try:
            damaged = wal.confirmed_damage(self.path)
        except OSError as exc:  # a log we may not read, SQLite may not either: its own error will say so
            log.debug("write-ahead log of %r not analysed: %s", self.path, exc)
            return
        if damaged is not None:
            raise wal.WalDamaged(damaged)

    def _connect_read_only(self, busy_timeout_s: float) -> sqlite3.Connection:
        if not os.path.exists(self.path):
            raise NotFound(f"path {self.path!r} does not exist (read_only opens an existing store)")
        uri = filecopy.read_only_uri(self.path)
        db = None
        try:
            db = sqlite3.connect(uri, uri=True, timeout=busy_timeout_s, check_same_thread=False,
                                 isolation_level=None)
            db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.Error as exc:
            first = exc
            if db is not None:
                db.close()
        # A WAL-mode database needs its -shm index, which SQLite creates next to the file. Where nothing can be
        # created (read-only media, a directory without write permission, a full disk) the file can still be read
        # as immutable, provided no log holds changes that are not in the file yet.
        log_path = self.path + "-wal"
        if os.path.exists(log_path) and os.path.getsize(log_path) > 0:
            raise StoreError(f"cannot open path {self.path!r} read-only: {first}; its write-ahead log holds changes "
                             "that SQLite can only read with a -shm file, which cannot be created here (open it once "
                             "with write access, or copy the store and its -wal to writable storage)")
        db = sqlite3.connect(uri + "&immutable=1", uri=True, timeout=busy_timeout_s, check_same_thread=False,
                             isolation_level=None)
        try:
            db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        except BaseException:
            db.close()
            raise
        self.immutable = True
        return db

    # -- plumbing -------------------------------------------------------------------------------------------
    @staticmethod
    def _every_connection(db: sqlite3.Connection) -> None:
        """What every connection of the store sets, at open and in a forked child."""
        db.execute("PRAGMA foreign_keys=ON")
        # Freed pages are zeroed, so deleted text does not linger in the file.
        db.execute("PRAGMA secure_delete=ON")

    def _refuse_foreign(self, db: sqlite3.Connection) -> None:
        """Refuse a SQLite database that holds tables but is no hippo store (an application's own database named
        by mistake): a writable open would add hippo's tables to it and switch it to WAL mode for good."""
        tables = sorted(r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                        if not str(r[0]).startswith("sqlite_"))
        if not tables or {"meta", "messages", "namespaces"} <= set(tables):
            return  # a new or empty file (a writable open creates the store in it), or a store (its version is checked)
        if "meta" in tables:
            try:
                if db.execute("SELECT 1 FROM meta WHERE key = 'schema_version'").fetchone() is not None:
                    return
            except sqlite3.OperationalError:  # a meta table of other columns
                pass
        shown = ", ".join(tables[:8]) + (", ..." if len(tables) > 8 else "")
        raise InvalidInput(f"path {self.path!r} holds no hippo store: it is a SQLite database of another application "
                           f"(tables: {shown}); hippo opens its own stores, or creates one in a new or empty file")

    def _init_schema(self) -> None:
        if self.read_only:
            self._refuse_foreign(self._db)
            tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "meta" not in tables:
                raise InvalidInput(f"path {self.path!r} holds no hippo store (open it writable once to create one)")
            self.version = self._check_version(self._db)
            self._checked, self._fed = _layout(self._db, self.version)
            self._has_offset = "utc_offset" in _columns(self._db, "messages")
            return
        with self.transaction("initialising the schema"):
            for stmt in _SCHEMA:
                self._db.execute(stmt)
            row = self._db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            if row is None:
                self._db.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", [
                    ("schema_version", str(SCHEMA_VERSION)),
                    (common.COMPATIBLE_KEY, common.compatible_value(SCHEMA_VERSION, COMPATIBLE_FROM))])
                version = SCHEMA_VERSION
            else:
                version = self._check_version(self._db)
                if version < SCHEMA_VERSION:
                    self._migrate(self._db, version)
                    version = SCHEMA_VERSION
            _add_columns(self._db)
            for stmt in _REFUSE_OLD_WRITERS:
                self._db.execute(stmt)
        self.version = version
        self._checked = self._fed = self._has_offset = True

    def _check_version(self, db: sqlite3.Connection) -> int:
        """The store's schema version, if this code can use the store: one of :data:`READABLE_VERSIONS`, or a newer
        one that code of :data:`SCHEMA_VERSION` may use (:func:`common.compatible_from`; used as it is, not
        changed)."""
        row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        value = row[0] if row else None
        if value is None or not str(value).isdigit() or int(value) < min(READABLE_VERSIONS):
            raise CorruptData(f"store {self.path!r}: schema version {value} is not supported (expected one of "
                              f"{READABLE_VERSIONS})")
        version = int(value)
        if version > SCHEMA_VERSION:
            row = db.execute("SELECT value FROM meta WHERE key = ?", (common.COMPATIBLE_KEY,)).fetchone()
            compatible = common.compatible_from(row[0] if row else None, version)
            if compatible > SCHEMA_VERSION:
                raise CorruptData(f"store {self.path!r}: schema version {version} is newer than this hippo supports "
                                  f"({SCHEMA_VERSION}) and needs code of schema {compatible} or later; upgrade hippo")
            log.info("store %r has schema version %d, usable as it is by this hippo (schema %d)", self.path, version,
                     SCHEMA_VERSION)
        return version

    def _migrate(self, db: sqlite3.Connection, version: int) -> None:
        """Upgrade a store in place step by step (:data:`_MIGRATIONS`), inside the schema transaction (all or
        nothing). A store numbered 3 without checksums (:func:`_layout`) gets them first; each step adds only what
        the store lacks."""
        if not _layout(db, version)[0]:
            version = min(version, 2)
        while version in _MIGRATIONS:
            _MIGRATIONS[version](db)
            version += 1
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(version),))
        db.execute("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                   (common.COMPATIBLE_KEY, common.compatible_value(version, COMPATIBLE_FROM)))
        log.info("store %r upgraded to schema version %d", self.path, version)

    @property
    def _row_cols(self) -> str:
        """The message columns of :mod:`hippo.store.common`'s row layout as this store's schema holds them."""
        return _ROW_COLS if self._has_offset else _ROW_COLS_4

    @property
    def _row_cols_m(self) -> str:
        return _ROW_COLS_M if self._has_offset else _ROW_COLS_M_4

    def _writable(self, what: str) -> None:
        if self.read_only:
            raise ReadOnlyError(f"{what}: the store {self.path!r} is open read-only")

    def _identity(self) -> tuple[int, int] | None:
        """(device, inode) of the file at the store's path now; None in memory, or when the path names no file."""
        if self._file is None:
            return None
        try:
            st = os.stat(self._file)
        except OSError:
            return None
        return st.st_dev, st.st_ino

    def _same_file(self, what: str) -> None:
        """Refuse a write when the path no longer names the file this store opened (deleted, or replaced by a rename
        or a restore): the connection would write on into a file no one can open any more, and every write after
        it would return as if stored. Reads go on answering from the file that was opened."""
        if self._ident is None or self._identity() == self._ident:
            return
        raise StoreError(f"{what}: the store file at path {self.path!r} was deleted or replaced after it was opened; "
                         "nothing was written (close this Memory and open the path again)")

    @contextlib.contextmanager
    def transaction(self, what: str) -> Iterator[sqlite3.Connection]:
        """An exclusive write transaction; any failure rolls back everything it did."""
        self._writable(what)
        with self._lock:
            self._same_file(what)
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
        if self._scrub_pending:
            self.scrub()

    def scrub(self) -> bool:
        """Copy the write-ahead log into the file and truncate it to zero bytes, so that content deleted by a
        committed transaction (zeroed in the file by ``secure_delete``) leaves no older page image behind in the
        ``-wal`` file. Returns False, and retries after the next write, when another process's open read keeps the
        log in use."""
        if self.path is None or self.read_only:
            return True
        with self._lock:
            try:
                # a reader elsewhere would make a full checkpoint wait the whole busy timeout; a second is enough
                self._db.execute(f"PRAGMA busy_timeout = {min(self._busy_ms, 1000)}")
                try:
                    row = self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                finally:
                    self._db.execute(f"PRAGMA busy_timeout = {self._busy_ms}")
                done = row is not None and row[0] == 0
            except sqlite3.Error as exc:
                log.warning("store %r: the write-ahead log could not be truncated yet: %s", self.path, exc)
                done = False
            self._scrub_pending = not done
        return done

    def _query(self, sql: str, params: Sequence[Any] = (), what: str = "reading the store") -> list[tuple]:
        with self._lock:
            try:
                return self._db.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise _translate(exc, what) from exc

    _row = staticmethod(common.message_row)

    # -- namespaces -----------------------------------------------------------------------------------------
    def state(self, namespace: str) -> NamespaceState:
        version = "version" if self._fed else "0"
        rows = self._query(f"SELECT generation, next_seq, {version} FROM namespaces WHERE name = ?", (namespace,))
        if not rows:
            return NamespaceState(self._epoch(self._db), 0, self._epoch(self._db, "change_epoch"))
        if _bad_int(rows[0][0]) or _bad_int(rows[0][1]) or _bad_int(rows[0][2]):
            raise CorruptData(f"namespace {namespace!r}: its row is damaged (generation {rows[0][0]!r}, next_seq "
                              f"{rows[0][1]!r}, version {rows[0][2]!r}); `hippo check --repair` rebuilds it")
        return NamespaceState(rows[0][0], rows[0][1], rows[0][2])

    def _epoch(self, db, key: str = "namespace_epoch") -> int:
        # Generation (namespace_epoch) and change version (change_epoch) a namespace (re)starts at.
        # delete_namespace removes the namespace's row, so its name leaves the file, and raises both epochs past
        # that row's values: a process still caching the deleted namespace sees a changed fingerprint and a feed
        # that no longer reaches back to what it saw, and reloads, even once the name is reused.
        with self._lock:
            try:
                row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
            except sqlite3.Error as exc:
                raise _translate(exc, "reading the store") from exc
        return int(row[0]) if row and str(row[0]).isdigit() else 0  # meta values are text

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
    def append(self, namespace: str, messages: Sequence[NewMessage], codes: Any = None,
               expect: int | None = None) -> list[MessageRow]:
        if not messages:
            return []
        if codes is not None and len(codes) != len(messages):
            raise InvalidInput(f"codes: {len(codes)} rows for {len(messages)} messages")
        with self.transaction("adding messages") as db:
            self._expect(db, namespace, expect)
            return self._append_in(db, namespace, messages, codes)

    def replace(self, namespace: str, messages: Sequence[NewMessage], ids: Iterable[int],
                where: Callable[[MessageRow], bool] | None = None, after_seq: int | None = None,
                codes: Any = None, expect: int | None = None) -> tuple[list[MessageRow], list[int]]:
        if codes is not None and len(codes) != len(messages):
            raise InvalidInput(f"codes: {len(codes)} rows for {len(messages)} messages")
        with self.transaction("replacing messages") as db:
            out, gone = self._replace_in(db, Replace(namespace, messages, ids, where, after_seq, codes, expect))
        if gone:
            self.scrub()
        return out, gone

    def replace_many(self, parts: Sequence[Replace]) -> list[tuple[list[MessageRow], list[int]]]:
        parts = common.checked_parts(parts)
        out: list[tuple[list[MessageRow], list[int]]] = []
        if not parts:
            return out
        # BEGIN IMMEDIATE takes the file's one write lock: every namespace at once, so no order to keep
        with self.transaction("writing several namespaces") as db:
            for p in parts:
                out.append(self._replace_in(db, p))
                for id, metadata in (p.updates or {}).items():
                    self._update_in(db, p.namespace, id, metadata)
        if any(gone for _, gone in out):
            self.scrub()
        return out

    def _replace_in(self, db, p: Replace) -> tuple[list[MessageRow], list[int]]:
        """One namespace's part of a replacing write, inside the caller's transaction: the version checked, the
        messages that go read before the new ones are stored (none of those can be among them), the new ones
        appended, the others deleted."""
        self._expect(db, p.namespace, p.expect)
        found = self._doomed(db, p.namespace, sorted({int(i) for i in p.ids}), p.where, None, p.after_seq)
        rows = self._append_in(db, p.namespace, p.messages, p.codes) if p.messages else []
        return rows, self._delete_in(db, p.namespace, found)

    def _expect(self, db, namespace: str, expect: int | None) -> None:
        """Raise ``Changed`` unless the namespace's latest change is ``expect`` (None: no check); inside the caller's
        transaction, under BEGIN IMMEDIATE: no other connection writes until this one commits."""
        if expect is None:
            return
        got = db.execute("SELECT version FROM namespaces WHERE name = ?", (namespace,)).fetchone()
        latest = int(got[0]) if got is not None else self._epoch(db, "change_epoch")
        if latest != expect:
            raise Changed(f"namespace {namespace!r} changed since version {expect} (now {latest}); "
                          "nothing was written")

    def _append_in(self, db, namespace: str, messages: Sequence[NewMessage], codes: Any) -> list[MessageRow]:
        """Store ``messages`` inside the caller's transaction and record the append."""
        out: list[MessageRow] = []
        row = db.execute("SELECT next_seq FROM namespaces WHERE name = ?", (namespace,)).fetchone()
        if row is None:  # the namespace's first message: its row starts at the epochs
            start = self._epoch(db, "change_epoch")
            db.execute("INSERT OR IGNORE INTO namespaces(name, generation, next_seq, version, horizon)"
                       " VALUES (?, ?, 0, ?, ?)", (namespace, self._epoch(db), start, start))
            row = db.execute("SELECT next_seq FROM namespaces WHERE name = ?", (namespace,)).fetchone()
        seq = first = row[0]
        if _bad_int(seq):
            raise CorruptData(f"namespace {namespace!r}: next_seq {seq!r} is damaged; `hippo check --repair` "
                              "rebuilds it")
        for k, m in enumerate(messages):
            tokens = np.ascontiguousarray(m.tokens, dtype="<u4")
            meta_json = json.dumps(m.metadata, ensure_ascii=False, separators=(",", ":"))
            cur = db.execute(
                "INSERT INTO messages(namespace, seq, n_tokens, speaker, role, ts, session_id, metadata,"
                " created_at, utc_offset) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (namespace, seq, int(tokens.size), m.speaker, m.role, m.ts, m.session_id, meta_json,
                 m.created_at, m.utc_offset),
            )
            mid = int(cur.lastrowid)
            blob = tokens.tobytes()
            db.execute("INSERT INTO tail(id, namespace, seq, tokens, checksum) VALUES (?, ?, ?, ?, ?)",
                       (mid, namespace, seq, blob, tail_checksum(namespace, mid, seq, int(tokens.size), blob)))
            if codes is not None:
                db.execute("INSERT INTO codes(id, namespace, code) VALUES (?, ?, ?)"
                           " ON CONFLICT(id) DO UPDATE SET code = excluded.code", (mid, namespace, bytes(codes[k])))
            out.append(MessageRow(
                id=mid, namespace=namespace, seq=seq, n_tokens=int(tokens.size),
                speaker=m.speaker, role=m.role, ts=m.ts, session_id=m.session_id, metadata=m.metadata,
                created_at=m.created_at, tokens=tokens.astype(np.uint32, copy=False), utc_offset=m.utc_offset,
            ))
            seq += 1
        db.execute("UPDATE namespaces SET next_seq = ? WHERE name = ?", (seq, namespace))
        self._record(db, namespace, "append", first, seq - 1)
        return out

    def _chunks(self, namespace: str, after_seq: int = -1, upto_seq: int = 1 << 62) -> list[Chunk]:
        """The chunks holding messages with ``after_seq < seq <= upto_seq``, in seq order."""
        cols = _CHUNK_COLS if self._checked else _CHUNK_COLS.replace("CAST(checksum AS BLOB)", "NULL")
        rows = self._query(
            f"SELECT {cols} FROM chunks WHERE namespace = ? AND last_seq > ? AND first_seq <= ? ORDER BY first_seq",
            (namespace, after_seq, upto_seq),
        )
        return [Chunk(*r) for r in rows]

    @property
    def _tail_cols(self) -> str:
        """The tail's token and checksum columns (a version-2 store opened read-only has no checksums)."""
        return _TAIL_COLS if self._checked else "CAST(t.tokens AS BLOB), NULL"

    def _read(self, fn: Callable[[], Any], what: str = "reading the store") -> Any:
        """Run ``fn()`` inside one read transaction (a consistent snapshot of the file) unless one is open."""
        with self._lock:
            try:
                own = not self._db.in_transaction
                if own:
                    self._db.execute("BEGIN")
                try:
                    return fn()
                finally:
                    if own:
                        self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                raise _translate(exc, what) from exc

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        with self._lock:
            try:
                nested = self._db.in_transaction
            except sqlite3.Error as exc:  # closed by another thread meanwhile
                raise _translate(exc, "reading the store") from exc
            if nested:
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
        """Rows with ``after_seq < seq <= upto_seq`` and their tokens. Only those rows, the chunks holding their
        tokens and the (id, seq, n_tokens) of the other messages of those chunks (to verify them) are read, all in
        one transaction: between two autocommit reads another process may seal the tail (tokens move from rows
        into a new chunk) or merge chunks, and the halves would not match."""
        tail_cols = self._tail_cols
        after_seq = int(after_seq)
        upto = (1 << 62) if upto_seq is None else int(upto_seq)

        def read():
            raw = self._db.execute(
                f"SELECT {self._row_cols_m}, {tail_cols} FROM messages m LEFT JOIN tail t ON t.id = m.id"
                " WHERE m.namespace = ? AND m.seq > ? AND m.seq <= ? ORDER BY m.seq",
                (namespace, after_seq, upto)).fetchall()
            if after_seq < 0 and upto_seq is None:  # everything: every chunk too, also one no message reaches
                return raw, self._chunks(namespace), []
            sealed = [r[2] for r in raw if r[common.TAIL_TOKENS] is None]
            if not sealed:
                return raw, [], []
            chunks = self._chunks(namespace, min(sealed) - 1, max(sealed))
            if not chunks:
                return raw, [], []
            members = self._db.execute(
                "SELECT m.id, m.seq, m.n_tokens FROM messages m WHERE m.namespace = ? AND m.seq BETWEEN ? AND ?"
                " AND (m.seq <= ? OR m.seq > ?) AND m.id NOT IN (SELECT id FROM tail WHERE namespace = ?)"
                " ORDER BY m.seq",
                (namespace, chunks[0].first_seq, chunks[-1].last_seq, after_seq, upto, namespace)).fetchall()
            return raw, chunks, members

        raw, chunks, members = self._read(read)
        if members:
            raw = sorted([*raw, *(common.member_row(*m) for m in members)], key=lambda r: r[2])
        return common.attach_tokens(self.codec, namespace, raw, chunks, after_seq, upto_seq, checked=self._checked)

    def load_tokens(self, namespace: str) -> np.ndarray:
        """The Content stream from the chunks and the unsealed tail only: no message row is read, so a restart costs
        what the blobs cost. Each chunk is validated by the checksum inside its serialized matrix and by its token
        count, each tail row by its own checksum; binding a chunk to the messages it covers is checked by
        :meth:`load` and ``Memory.check`` (the caller cross-checks the stream against its span table)."""
        tail_cols = self._tail_cols

        def read():
            tail = self._db.execute(
                f"SELECT m.id, NULL, m.seq, m.n_tokens, NULL, NULL, NULL, NULL, NULL, NULL, NULL, {tail_cols}"
                " FROM tail t JOIN messages m ON m.id = t.id WHERE t.namespace = ? ORDER BY t.seq",
                (namespace,)).fetchall()
            return self._chunks(namespace), tail

        chunks, tail = self._read(read)
        parts = []
        last = -1
        for ch in chunks:
            if ch.first_seq <= last or ch.last_seq < ch.first_seq:
                raise CorruptData(f"namespace {namespace!r}: chunk {ch.id} overlaps the chunk before it")
            last = ch.last_seq
            tokens = self.codec.decode(ch.blob)
            if tokens.size != ch.n_tokens:
                raise CorruptData(f"chunk {ch.id}: holds {tokens.size} tokens, expected {ch.n_tokens}")
            parts.append(tokens)
        if tail and tail[0][2] <= last:
            raise CorruptData(f"namespace {namespace!r}: unsealed messages precede the last chunk")
        parts += [common.tail_tokens(namespace, r, self._checked) for r in tail]
        if not parts:
            return np.zeros(0, dtype=np.uint32)
        return np.concatenate(parts).astype(np.uint32, copy=False)

    def _tail_tokens(self, namespace: str, r: tuple) -> np.ndarray:
        """Tokens of an unsealed message row ``r`` (message columns, then tokens and checksum), verified."""
        return common.tail_tokens(namespace, r, self._checked)

    def _chunk_sum(self, namespace: str, ch: Chunk, members: Sequence[tuple[int, int, int]]) -> bytes:
        return common.chunk_sum(namespace, ch, members)

    def _verify_chunk(self, namespace: str, ch: Chunk, members: Sequence[tuple[int, int, int]]) -> None:
        common.verify_chunk(namespace, ch, members, self._checked)

    _members = staticmethod(_members_of)

    def _by_ids(self, select: str, ids: Sequence[int]) -> Iterator[tuple]:
        """The rows of ``select ... WHERE id IN (...)`` for ``ids``, 500 ids a statement (SQLite's limit on bound
        parameters). Looked up by primary key only (a namespace condition would steer the planner to scan the
        namespace's index): the caller drops other namespaces' rows."""
        for start in range(0, len(ids), 500):
            part = ids[start:start + 500]
            yield from self._query(f"{select} WHERE id IN ({','.join('?' * len(part))})", part)

    def rows(self, namespace: str, ids: Iterable[int]) -> dict[int, MessageRow]:
        return {r[0]: self._row(r) for r in self._by_ids(f"SELECT {self._row_cols} FROM messages",
                                                         [int(i) for i in ids])
                if r[1] == namespace}

    def rows_mentioning(self, namespace: str, needles: Sequence[str]) -> list[MessageRow]:
        needles = [str(n) for n in needles]
        if not needles:
            return []
        held = " OR ".join("instr(metadata, ?) > 0" for _ in needles)
        return [self._row(r) for r in self._query(
            f"SELECT {self._row_cols} FROM messages WHERE namespace = ? AND ({held}) ORDER BY seq",
            (namespace, *needles))]

    def scan(self, namespace: str) -> Iterator[MessageRow]:
        """Every message row of ``namespace`` in seq order, read :data:`SCAN_PAGE` rows at a time. A file store reads
        the pages on a connection of the scan's own inside one read transaction, so the rows are those of the scan's
        start whatever other connections commit meanwhile, and the store's connection stays free for other calls
        between pages. An in-memory store has no other connection (this process's writes are kept out by the
        engine's lock), and a file replaced since it was opened is read in one statement from the file that was
        opened."""
        sql = f"SELECT {self._row_cols} FROM messages WHERE namespace = ?"
        if self.path is None:
            yield from self._scan_pages(namespace, sql, self._query)
            return
        with self._lock:
            replaced = self._ident is not None and self._identity() != self._ident
        if replaced:
            for r in self._query(sql + " ORDER BY seq", (namespace,)):
                yield self._row(r)
            return
        db = self._scan_connection()
        try:
            def page(query: str, params: Sequence[Any]) -> list[tuple]:
                try:
                    return db.execute(query, params).fetchall()
                except sqlite3.Error as exc:
                    raise _translate(exc, "reading the store") from exc
            try:
                db.execute("BEGIN")
            except sqlite3.Error as exc:
                raise _translate(exc, "reading the store") from exc
            yield from self._scan_pages(namespace, sql, page)
        finally:
            with self._lock:
                self._scans.discard(db)
            with contextlib.suppress(sqlite3.Error):
                db.close()

    def _scan_pages(self, namespace: str, sql: str, query: Callable[[str, Sequence[Any]], list[tuple]]
                    ) -> Iterator[MessageRow]:
        rows = query(sql + " ORDER BY seq LIMIT ?", (namespace, SCAN_PAGE))
        while rows:
            for r in rows:
                yield self._row(r)
            if len(rows) < SCAN_PAGE:
                return
            rows = query(sql + " AND seq > ? ORDER BY seq LIMIT ?", (namespace, rows[-1][2], SCAN_PAGE))

    def _scan_connection(self) -> sqlite3.Connection:
        """A connection of one scan to the store's file, opened as the store's own is (read-only when it is)."""
        what = "reading the store"
        timeout = self._busy_ms / 1000
        db = None
        try:
            if self.read_only:
                uri = filecopy.read_only_uri(self._file) + ("&immutable=1" if self.immutable else "")
            else:
                uri = "file:" + urllib.parse.quote(self._file) + "?mode=rw"
            db = sqlite3.connect(uri, uri=True, timeout=timeout, check_same_thread=False, isolation_level=None)
            self._every_connection(db)
        except sqlite3.Error as exc:
            if db is not None:
                db.close()
            raise _translate(exc, what) from exc
        with self._lock:
            self._scans.add(db)
        return db

    def seal(self, namespace: str, min_tokens: int) -> int:
        sealed = self._seal(namespace, min_tokens)
        if sealed:
            self._release_free_pages()
        return sealed

    def _release_free_pages(self) -> None:
        if self.read_only:
            return
        with self._lock:
            try:
                # executescript steps the pragma to completion (execute() frees one page per step)
                self._db.executescript("PRAGMA incremental_vacuum;")
            except sqlite3.Error:
                pass  # only space is at stake; the next seal tries again

    def _insert_chunk(self, db, namespace: str, first_seq: int, last_seq: int, members: list[tuple[int, int, int]],
                      tokens: np.ndarray) -> None:
        ch = Chunk(0, first_seq, last_seq, len(members), int(tokens.size), self.codec.encode(tokens))
        db.execute(
            "INSERT INTO chunks(namespace, first_seq, last_seq, n_messages, n_tokens, blob, checksum)"
            " VALUES (?,?,?,?,?,?,?)",
            (namespace, first_seq, last_seq, ch.n_messages, ch.n_tokens, ch.blob,
             self._chunk_sum(namespace, ch, members)),
        )

    def _seal(self, namespace: str, min_tokens: int) -> int:
        what = "sealing the tail into a chunk"
        # Most appends leave the tail short of a chunk: its size, read from the message rows the transaction below
        # would sum, answers them without a write transaction or reading the tail's token blobs. A count that is
        # not an integer (damage) takes the transaction's path, which reads and judges the rows as before.
        self._writable(what)
        count, total, odd = self._query(
            "SELECT COUNT(*), TOTAL(m.n_tokens), TOTAL(typeof(m.n_tokens) != 'integer') FROM tail t"
            " JOIN messages m ON m.id = t.id WHERE t.namespace = ?", (namespace,), what)[0]
        if not odd and (not count or total < min_tokens):
            if self._scrub_pending:
                self.scrub()
            return 0
        with self.transaction(what) as db:
            tail = db.execute(
                f"SELECT {self._row_cols_m}, {_TAIL_COLS} FROM tail t JOIN messages m ON m.id = t.id"
                " WHERE t.namespace = ? ORDER BY t.seq",
                (namespace,),
            ).fetchall()
            total = sum(r[3] for r in tail)
            if not tail or total < min_tokens:
                return 0
            last_chunk = db.execute(
                "SELECT MAX(last_seq) FROM chunks WHERE namespace = ?", (namespace,)
            ).fetchone()[0]
            if last_chunk is not None and tail[0][2] <= last_chunk:
                raise CorruptData(f"namespace {namespace!r}: unsealed messages precede the last chunk")
            # verified before they move: a damaged row must not be sealed into a chunk with a fresh checksum
            arrays = [self._tail_tokens(namespace, r) for r in tail]
            tokens = np.concatenate(arrays).astype(np.uint32)
            members = [(r[0], r[2], r[3]) for r in tail]
            for first, last, a, b, ta, tb in common.chunk_parts(tail[0][2], tail[-1][2], members):
                self._insert_chunk(db, namespace, first, last, members[a:b], tokens[ta:tb])
                db.execute("DELETE FROM tail WHERE namespace = ? AND seq <= ?", (namespace, last))
                self._merge_chunks(db, namespace)
            return int(tokens.size)

    def _merge_chunks(self, db, namespace: str) -> None:
        while True:
            last2 = db.execute(
                f"SELECT {_CHUNK_COLS} FROM chunks WHERE namespace = ? ORDER BY first_seq DESC LIMIT 2",
                (namespace,),
            ).fetchall()
            if len(last2) < 2:
                return
            newer, older = Chunk(*last2[0]), Chunk(*last2[1])
            if not common.should_merge(older, newer):
                return
            m_old, m_new = self._members(db, namespace, older), self._members(db, namespace, newer)
            merged = common.merged_tokens(self.codec, namespace, older, newer, m_old, m_new, self._checked)
            db.execute("DELETE FROM chunks WHERE id IN (?, ?)", (older.id, newer.id))
            self._insert_chunk(db, namespace, older.first_seq, newer.last_seq, m_old + m_new, merged)

    def delete(self, namespace: str, ids: Iterable[int],
               where: Callable[[MessageRow], bool] | None = None,
               choose: Callable[[list[MessageRow]], Iterable[int]] | None = None) -> list[int]:
        wanted = sorted({int(i) for i in ids})
        if not wanted:
            return []
        with self.transaction("deleting messages") as db:
            ids_found = self._delete_in(db, namespace, self._doomed(db, namespace, wanted, where, choose))
        if ids_found:
            self.scrub()
        return ids_found

    def _doomed(self, db, namespace: str, wanted: list[int], where: Callable[[MessageRow], bool] | None,
                choose: Callable[[list[MessageRow]], Iterable[int]] | None,
                after_seq: int | None = None) -> list[tuple[int, int]]:
        """The (id, seq) of the messages a deletion takes, read inside the caller's transaction: those of ``wanted``
        and, with ``after_seq``, those at ``seq >= after_seq``, that ``where`` admits and ``choose`` picks."""
        found: list[tuple[int, int]] = []
        rows: list[MessageRow] = []
        judged = where is not None or choose is not None
        parts = [(f"id IN ({','.join('?' * len(wanted[k:k + 500]))})", wanted[k:k + 500])
                 for k in range(0, len(wanted), 500)]
        if after_seq is not None:
            parts.append(("seq >= ?", [int(after_seq)]))
        for cond, args in parts:
            if not judged:
                found += db.execute(f"SELECT id, seq FROM messages WHERE namespace = ? AND {cond}",
                                    (namespace, *args)).fetchall()
            else:  # judged inside the write transaction: no other writer changes a row before it is deleted
                rows += [row for row in map(common.message_row, db.execute(
                    f"SELECT {self._row_cols} FROM messages WHERE namespace = ? AND {cond}",
                    (namespace, *args)).fetchall()) if where is None or where(row)]
        if judged:
            found = common.chosen(list({r.id: r for r in rows}.values()), choose)
        return sorted(set(found))

    def _delete_in(self, db, namespace: str, found: list[tuple[int, int]]) -> list[int]:
        """Delete the messages ``found`` (id, seq) inside the caller's transaction, rewriting the chunks that held
        their tokens, and record the deletion; returns their ids."""
        if not found:
            return []
        dead_seqs = {seq for _, seq in found}
        chunks = [Chunk(*r) for r in db.execute(
            f"SELECT {_CHUNK_COLS} FROM chunks WHERE namespace = ? ORDER BY first_seq", (namespace,)).fetchall()]
        for ch in chunks:
            if not any(ch.first_seq <= s <= ch.last_seq for s in dead_seqs):
                continue
            kept, merged = common.chunk_without(self.codec, namespace, ch, self._members(db, namespace, ch),
                                                dead_seqs, self._checked)
            db.execute("DELETE FROM chunks WHERE id = ?", (ch.id,))
            for first, last, a, b, ta, tb in common.chunk_parts(ch.first_seq, ch.last_seq, kept):
                self._insert_chunk(db, namespace, first, last, kept[a:b], merged[ta:tb])
        ids_found = sorted(i for i, _ in found)
        for start in range(0, len(ids_found), 500):
            part = ids_found[start:start + 500]
            marks = ",".join("?" * len(part))
            db.execute(f"DELETE FROM messages WHERE namespace = ? AND id IN ({marks})", (namespace, *part))
            db.execute(f"DELETE FROM codes WHERE id IN ({marks})", part)
            db.execute(f"DELETE FROM tail WHERE id IN ({marks})", part)
        db.execute("UPDATE namespaces SET generation = generation + 1 WHERE name = ?", (namespace,))
        self._record(db, namespace, "delete", ids=ids_found)
        return ids_found

    def update_metadata(self, namespace: str, id: int, metadata: dict[str, Any]) -> bool:
        with self.transaction("updating metadata") as db:
            return self._update_in(db, namespace, id, metadata)

    def _update_in(self, db, namespace: str, id: int, metadata: dict[str, Any]) -> bool:
        """Replace one message's metadata inside the caller's transaction and record the update; False when ``id``
        is not a message of ``namespace``."""
        meta_json = json.dumps(metadata, ensure_ascii=False, separators=(",", ":"))
        cur = db.execute("UPDATE messages SET metadata = ? WHERE namespace = ? AND id = ?",
                         (meta_json, namespace, int(id)))
        if cur.rowcount != 1:
            return False
        self._record(db, namespace, "update", ids=[int(id)])
        return True

    def delete_namespace(self, namespace: str) -> int:
        return self.delete_namespaces([namespace])

    def delete_namespaces(self, namespaces: Sequence[str]) -> int:
        names = list(dict.fromkeys(namespaces))
        if not names:
            return 0
        with self.transaction("deleting a namespace" if len(names) == 1 else "deleting namespaces") as db:
            n = sum(self._drop_in(db, name) for name in names)
        self.scrub()
        return n

    def _drop_in(self, db, namespace: str) -> int:
        """Remove ``namespace`` inside the caller's transaction; returns how many messages it held."""
        n = db.execute("SELECT COUNT(*) FROM messages WHERE namespace = ?", (namespace,)).fetchone()[0]
        db.execute("DELETE FROM messages WHERE namespace = ?", (namespace,))
        db.execute("DELETE FROM chunks WHERE namespace = ?", (namespace,))
        db.execute("DELETE FROM units WHERE namespace = ?", (namespace,))
        db.execute("DELETE FROM codes WHERE namespace = ?", (namespace,))
        db.execute("DELETE FROM tail WHERE namespace = ?", (namespace,))
        db.execute("DELETE FROM changes WHERE namespace = ?", (namespace,))
        row = db.execute("SELECT generation, version FROM namespaces WHERE name = ?", (namespace,)).fetchone()
        if row is not None:
            epochs = {"namespace_epoch": max(self._epoch(db), _int_or(row[0])) + 1,
                      "change_epoch": max(self._epoch(db, "change_epoch"), _int_or(row[1])) + 1}
            db.execute("DELETE FROM namespaces WHERE name = ?", (namespace,))
            for key, epoch in epochs.items():
                db.execute("INSERT INTO meta(key, value) VALUES (?, ?)"
                           " ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, str(epoch)))
        return int(n)

    # -- the change feed ------------------------------------------------------------------------------------
    def changes(self, namespace: str, after: int, stamp: str | None = None) -> list[Change] | None:
        # the file keeps no stamps (NamespaceState.stamp is None): there is nothing to compare ``stamp`` with
        after = int(after)
        if not self._fed:
            return None  # no feed to read: whoever saw an older state reloads

        def read():
            row = self._db.execute("SELECT version, horizon FROM namespaces WHERE name = ?", (namespace,)).fetchall()
            if not row:
                # never written (nothing to catch up on when that is what the reader saw) or deleted since
                start = self._epoch(self._db, "change_epoch")
                return start, start, []
            head, horizon = row[0]
            if _bad_int(head) or _bad_int(horizon) or not horizon <= after <= head:
                return head, horizon, []
            return head, horizon, self._db.execute(
                "SELECT version, kind, first_seq, last_seq, ids FROM changes WHERE namespace = ? AND version > ?"
                " ORDER BY version", (namespace, after)).fetchall()

        head, horizon, raw = self._read(read)
        if _bad_int(head) or _bad_int(horizon) or not horizon <= after <= head:
            return None
        out: list[Change] = []
        expect = after + 1
        for version, kind, first, last, ids in raw:
            try:
                parsed = tuple(int(i) for i in json.loads(ids))
            except (TypeError, ValueError) as exc:
                raise CorruptData(f"namespace {namespace!r}: change {version} holds damaged ids") from exc
            if version != expect or kind not in CHANGE_KINDS or not isinstance(first, int) or not isinstance(last, int):
                raise CorruptData(f"namespace {namespace!r}: the change feed is damaged at version {version}")
            out.append(Change(int(version), kind, int(first), int(last), parsed))
            expect += 1
        if expect != head + 1:
            raise CorruptData(f"namespace {namespace!r}: the change feed stops at {expect - 1}, expected {head}")
        return out

    def trim_changes(self, namespace: str, upto: int) -> int:
        if self.read_only or not self._fed:
            return 0  # trimming is housekeeping: a read-only handle leaves it to a writer
        with self.transaction("trimming the change feed") as db:
            row = db.execute("SELECT version, horizon FROM namespaces WHERE name = ?", (namespace,)).fetchone()
            if row is None or _bad_int(row[0]) or _bad_int(row[1]):
                return 0
            upto = min(int(upto), int(row[0]))
            if upto <= row[1]:
                return 0
            cur = db.execute("DELETE FROM changes WHERE namespace = ? AND version <= ?", (namespace, upto))
            db.execute("UPDATE namespaces SET horizon = ? WHERE name = ?", (upto, namespace))
            return cur.rowcount

    # -- embedding codes ------------------------------------------------------------------------------------
    def put_codes(self, namespace: str, ids: list[int], codes: np.ndarray, version: int | None = None,
                  stamp: str | None = None) -> None:
        # ``version`` and ``stamp`` are for stores that keep stamps: a SQLite file keeps none (a restore replaces the
        # whole file, and the handles open on the old one see it closed), so they are not checked here
        with self.transaction("saving embedding codes") as db:
            # only for messages that still exist: codes computed from rows read before another process deleted
            # them must not stay behind as codes (and vectors) of no message
            db.executemany(
                "INSERT INTO codes(id, namespace, code) SELECT ?, ?, ?"
                " WHERE EXISTS (SELECT 1 FROM messages WHERE id = ? AND namespace = ?)"
                " ON CONFLICT(id) DO UPDATE SET code = excluded.code",
                [(int(i), namespace, bytes(c), int(i), namespace) for i, c in zip(ids, codes)],
            )

    def get_codes(self, namespace: str) -> dict[int, bytes]:
        return {r[0]: r[1] for r in self._query("SELECT id, code FROM codes WHERE namespace = ?", (namespace,))}

    def codes_of(self, namespace: str, ids: Iterable[int]) -> dict[int, bytes]:
        return {r[0]: r[2] for r in self._by_ids("SELECT id, namespace, code FROM codes", sorted({int(i) for i in ids}))
                if r[1] == namespace}

    # -- derived units (hierarchy snapshots) ----------------------------------------------------------------
    def put_units(self, namespace: str, kind: str, payload: bytes | snapshot.Blob) -> None:
        with self.transaction("saving units") as db:
            self._put_unit(db, namespace, kind, payload)
        self._release_free_pages()

    @staticmethod
    def _put_unit(db: sqlite3.Connection, namespace: str, kind: str, payload: bytes | snapshot.Blob) -> None:
        """Insert or replace one blob; a :class:`snapshot.Blob` larger than a chunk is written into a row of its size
        a chunk at a time (incremental blob I/O), in the caller's transaction: a failure between two chunks rolls
        the row back with the rest."""
        upsert = ("INSERT INTO units(namespace, kind, payload) VALUES (?, ?, {})"
                  " ON CONFLICT(namespace, kind) DO UPDATE SET payload = excluded.payload")
        if not isinstance(payload, snapshot.Blob) or len(payload) <= snapshot.CHUNK or not BLOB_IO:
            db.execute(upsert.format("?"), (namespace, kind, bytes(payload)))
            return
        db.execute(upsert.format("zeroblob(?)"), (namespace, kind, len(payload)))
        rowid = db.execute("SELECT rowid FROM units WHERE namespace = ? AND kind = ?", (namespace, kind)).fetchone()[0]
        with db.blobopen("units", "payload", rowid) as out:
            for chunk in payload.chunks():
                out.write(chunk)

    def get_units(self, namespace: str, kind: str) -> bytes | None:
        rows = self._query("SELECT payload FROM units WHERE namespace = ? AND kind = ?", (namespace, kind))
        return rows[0][0] if rows else None

    def get_units_blob(self, namespace: str, kind: str) -> snapshot.Blob | None:
        if not BLOB_IO:
            return super().get_units_blob(namespace, kind)
        with self.reading():
            rows = self._query("SELECT rowid, length(payload) FROM units WHERE namespace = ? AND kind = ?",
                               (namespace, kind))
            if not rows:
                return None
            rowid, size = rows[0]
            blob = snapshot.Blob()
            try:
                with self._db.blobopen("units", "payload", rowid, readonly=True) as src:
                    for _ in range(0, size, snapshot.CHUNK):
                        blob.write(src.read(snapshot.CHUNK))
            except BaseException as exc:
                blob.close()
                if isinstance(exc, sqlite3.Error):
                    raise _translate(exc, "reading the store") from exc
                raise
            return blob

    def has_units(self, namespace: str, kind: str) -> bool:
        return bool(self._query("SELECT 1 FROM units WHERE namespace = ? AND kind = ?", (namespace, kind)))

    def put_units_many(self, namespace: str, payloads: dict[str, bytes | snapshot.Blob | None],
                       generation: int | None = None, version: int | None = None,
                       expect: dict[str, bytes | None] | None = None, stamp: str | None = None) -> bool:
        with self.transaction("saving units") as db:
            if (generation is not None or version is not None) and \
                    not common.still_at(self.state(namespace), generation, version, stamp):
                return False
            if expect:
                kinds = list(expect)
                rows = db.execute(f"SELECT kind, substr(payload, 1, ?) FROM units WHERE namespace = ? AND kind IN"
                                  f" ({', '.join('?' * len(kinds))})",
                                  (max(len(w or b"") for w in expect.values()), namespace, *kinds)).fetchall()
                if not common.holds({k: bytes(v) for k, v in rows}, expect):
                    return False
            for kind, payload in payloads.items():
                if payload is None:
                    db.execute("DELETE FROM units WHERE namespace = ? AND kind = ?", (namespace, kind))
                else:
                    self._put_unit(db, namespace, kind, payload)
        self._release_free_pages()
        return True

    # -- verification (Memory.check) --------------------------------------------------------------------------
    def integrity_check(self) -> list[str]:
        """SQLite's own structural check of the file (b-trees, indexes, free list): ``[]`` when clean."""
        rows = self._query("PRAGMA integrity_check", what="checking the store file")
        found = [r[0] for r in rows]
        return [] if found == ["ok"] else found

    def all_namespaces(self) -> list[str]:
        """Every namespace named anywhere in the file (messages, chunks, tail, codes, units, namespace rows), read
        from the tables themselves: a damaged index (which ``integrity_check`` reports and ``REINDEX`` rebuilds)
        neither hides a namespace nor stops the check with a key that is not text."""
        rows = self._query(" UNION ".join(f"SELECT {col} FROM {table} NOT INDEXED" for table, col in (
            ("messages", "namespace"), ("chunks", "namespace"), ("tail", "namespace"), ("codes", "namespace"),
            ("units", "namespace"), ("namespaces", "name"))), what="checking the store")
        return sorted({r[0] for r in rows if isinstance(r[0], str)})

    def verify_namespace(self, namespace: str, check_tokens: Callable[[int, np.ndarray], str | None],
                         code_bytes: int | None) -> dict:
        """Verify every row of a namespace without stopping at the first problem. ``check_tokens(id, tokens)``
        judges the tokens recovered for a message (vocabulary, UTF-8) and returns a problem or None."""
        tail_cols = self._tail_cols

        def read():
            db = self._db
            raw = db.execute(f"SELECT {self._row_cols_m}, {tail_cols} FROM messages m LEFT JOIN tail t ON t.id = m.id"
                             " WHERE m.namespace = ? ORDER BY m.seq", (namespace,)).fetchall()
            orphan_tail = db.execute("SELECT id FROM tail WHERE namespace = ? AND id NOT IN"
                                     " (SELECT id FROM messages WHERE namespace = ?)", (namespace, namespace)).fetchall()
            codes = db.execute("SELECT c.id, LENGTH(c.code), m.id FROM codes c LEFT JOIN messages m"
                               " ON m.id = c.id AND m.namespace = c.namespace WHERE c.namespace = ?",
                               (namespace,)).fetchall()
            ns_row = db.execute("SELECT generation, next_seq FROM namespaces WHERE name = ?", (namespace,)).fetchone()
            return raw, self._chunks(namespace), orphan_tail, codes, ns_row

        raw, chunks, orphan_tail, codes, ns_row = self._read(read, "checking the store")
        return common.verify_rows(self.codec, namespace, raw, chunks, orphan_tail, codes, ns_row, check_tokens,
                                  code_bytes, self._checked)

    def repair_namespace_row(self, namespace: str, max_seq: int) -> None:
        """Derived fields of a namespace row: next_seq past the last message (its generation moves on too, so every
        process reloads the namespace)."""
        with self.transaction("repairing a namespace row") as db:
            db.execute("INSERT OR IGNORE INTO namespaces(name, generation, next_seq) VALUES (?, ?, 0)",
                       (namespace, self._epoch(db)))
            db.execute("UPDATE namespaces SET next_seq = MAX(?, CASE WHEN typeof(next_seq) = 'integer'"
                       " THEN next_seq ELSE 0 END), generation = CASE WHEN typeof(generation) = 'integer'"
                       " AND generation >= 0 THEN generation + 1 ELSE ? END WHERE name = ?",
                       (max_seq + 1, self._epoch(db) + 1, namespace))

    def drop_codes(self, namespace: str, ids: list[int]) -> None:
        with self.transaction("dropping embedding codes") as db:
            db.executemany("DELETE FROM codes WHERE namespace = ? AND id = ?", [(namespace, int(i)) for i in ids])

    def drop_units(self, namespace: str, kind: str) -> None:
        with self.transaction("dropping a unit snapshot") as db:
            db.execute("DELETE FROM units WHERE namespace = ? AND kind = ?", (namespace, kind))

    def reindex(self) -> None:
        """Rebuild every SQLite index from its table (indexes are derived)."""
        with self.transaction("rebuilding the indexes") as db:
            db.execute("REINDEX")

    # -- maintenance ----------------------------------------------------------------------------------------
    def sizes(self) -> dict[str, int]:
        q = self._query
        out = {
            "messages": q("SELECT COUNT(*) FROM messages")[0][0],
            "tokens": q("SELECT COALESCE(SUM(n_tokens), 0) FROM messages")[0][0],
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
        if self.path is not None and not self.read_only:
            self._query("PRAGMA wal_checkpoint(TRUNCATE)", what="checkpointing the WAL")

    def vacuum(self) -> None:
        self._writable("vacuuming the store")
        with self._lock:
            self._same_file("vacuuming the store")
            try:
                self._db.execute("VACUUM")
                if self.path is not None:
                    self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as exc:
                raise _translate(exc, "vacuuming the store") from exc

    def backup(self, dest: str, name: str = "path") -> int:
        """A consistent copy of the whole store at ``dest`` (:mod:`hippo.store.backup`); its size in bytes."""
        if self.path is None or self.immutable:
            with self._lock:  # the one connection that can read this database
                return filecopy.backup(self._db, dest, name=name)
        try:
            src = filecopy.read_only_connection(self._file)  # this handle's own calls go on meanwhile
        except sqlite3.Error as exc:
            raise _translate(exc, "backing up the store") from exc
        try:
            return filecopy.backup(src, dest, store_file=self._file, name=name)
        finally:
            src.close()

    def close(self) -> None:
        with self._lock:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            for db in self._scans:  # of scans left unfinished: a later page raises ClosedError
                with contextlib.suppress(sqlite3.Error):
                    db.close()
            self._scans = set()


def now() -> float:
    return time.time()
