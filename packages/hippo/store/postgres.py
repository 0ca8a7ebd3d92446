"""The PostgreSQL store: one memory shared by many processes and hosts, on a server the team already runs.

``Memory("postgresql://user@host/db", namespace=...)`` opens it (psycopg 3 with a psycopg_pool connection pool; the
extra ``hippo-memory[postgres]``). Every namespace lives in one PostgreSQL schema (``hippo`` unless the URL says
``?hippo_schema=name``), with the layout of the SQLite store: message rows, the unsealed tail, sealed chunks as
``bytea`` (the same codec and the same checksums, :mod:`hippo.store.common`), embedding codes, unit snapshots, and
the change feed of every namespace.

Concurrency. Every call is one transaction. Writers of one namespace serialize on a transaction-scoped advisory lock
keyed by (schema, namespace), taken first in the transaction: appends (next_seq and the change version), sealing and
merging chunks, deletions, metadata updates. A transaction writing several namespaces takes their locks in the order
of their keys, so two of them never wait for each other in a cycle. Writers of different namespaces, and every reader, never wait for each
other; no table is ever locked. Reads that need several statements to agree (rows and the chunks holding their
tokens, a fingerprint and the change feed) run in one ``REPEATABLE READ READ ONLY`` transaction; a single-statement
read runs on its own.

Faults. A read that loses its connection (a server restart, ``pg_terminate_backend``, a network cut) is retried with
bounded exponential backoff (tenacity) on another connection of the pool. A write is retried only when it provably
did not commit: the connection broke before ``COMMIT`` was sent, or it broke during ``COMMIT`` and the server, asked
about the transaction id afterwards (``pg_xact_status``), says it aborted. An append carries one idempotency key per
message, checked under the namespace lock inside its transaction, so an append retried after a commit it could not
confirm returns the stored rows instead of adding them twice. When the outcome of a commit cannot be learned, the
call raises :class:`~hippo.base.errors.StoreError` saying so, never guessing.

The URL is a libpq URL (``postgresql://`` or ``postgres://``; every libpq parameter works, e.g. ``?host=/run/pg``
for a unix socket or ``?sslmode=require``) plus hippo's own query parameters, which are removed before libpq sees
the URL:

===========================  =========================================================================================
``hippo_schema``             PostgreSQL schema holding the tables (default ``hippo``; made by the first writable open)
``hippo_pool_min``           connections the pool keeps open (default 1)
``hippo_pool_max``           connections the pool may open (default 4; one per thread that uses the store at once)
``hippo_prepare_threshold``  executions before psycopg prepares a statement (default 5); ``none`` never prepares,
                             which a pgbouncer in transaction mode before 1.21 needs (a handle that meets one turns
                             preparing off by itself when a statement it prepared is lost: docs/deploy.md)
``hippo_retry_s``            how long a call (an open included) keeps retrying a lost connection before it raises
                             (default 30)
``hippo_idle_s``             how long a write transaction may wait for this process in the middle (the process paused
                             or hung) before the server ends it and frees the namespace's lock (default 60)
===========================  =========================================================================================
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import random
import re
import struct
import threading
import time
import urllib.parse
import uuid
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np
from tenacity import Retrying, retry_if_exception_type, stop_after_delay, wait_exponential, wait_random

from hippo.base.errors import (
    Changed,
    ClosedError,
    CorruptData,
    HippoError,
    InvalidInput,
    NotFound,
    ReadOnlyError,
    StoreBusy,
    StoreError,
)
from hippo.store import common, pgwire, snapshot
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
from hippo.text.tokenizer import token_bits

try:
    import psycopg
    import psycopg_pool
except ImportError as _exc:  # pragma: no cover - exercised by installs without the extra
    psycopg = None
    _IMPORT_ERROR: ImportError | None = _exc
else:
    _IMPORT_ERROR = None

log = logging.getLogger("hippo.store")

DEFAULT_SCHEMA = "hippo"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
_SECRET_PARAMS = ("password", "sslpassword")  # libpq parameters the URL shown in messages and logs leaves out
_HIPPO_PARAMS = ("hippo_schema", "hippo_pool_min", "hippo_pool_max", "hippo_prepare_threshold", "hippo_retry_s",
                 "hippo_idle_s")

# The schema is the sequence of its migrations: a new database runs them all, an older one the steps it lacks, in one
# transaction under an advisory lock (so processes opening a fresh database at once create it once). ``{s}`` is the
# quoted schema name.
_MIGRATIONS: dict[int, list[str]] = {
    # 1: the log of messages, the unsealed tail, sealed chunks, and what is derived from them; checksums over tail
    # rows and chunks (the same as the SQLite store's schema 3).
    1: [
        "CREATE TABLE {s}.meta (key text PRIMARY KEY, value text NOT NULL)",
        """CREATE TABLE {s}.namespaces (
            name text PRIMARY KEY,
            generation bigint NOT NULL DEFAULT 0,
            next_seq bigint NOT NULL DEFAULT 0)""",
        """CREATE TABLE {s}.messages (
            id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            namespace text NOT NULL,
            seq bigint NOT NULL,
            n_tokens bigint NOT NULL,
            speaker text,
            role text NOT NULL,
            ts double precision,
            session_id text,
            metadata text NOT NULL,
            created_at double precision NOT NULL,
            UNIQUE (namespace, seq))""",
        """CREATE TABLE {s}.chunks (
            id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            namespace text NOT NULL,
            first_seq bigint NOT NULL,
            last_seq bigint NOT NULL,
            n_messages bigint NOT NULL,
            n_tokens bigint NOT NULL,
            blob bytea NOT NULL,
            checksum bytea)""",
        # a chunk is deflated already: TOAST compression would spend CPU on every write for nothing
        "ALTER TABLE {s}.chunks ALTER COLUMN blob SET STORAGE EXTERNAL",
        "CREATE INDEX chunks_ns ON {s}.chunks (namespace, first_seq)",
        """CREATE TABLE {s}.tail (
            id bigint PRIMARY KEY,
            namespace text NOT NULL,
            seq bigint NOT NULL,
            tokens bytea NOT NULL,
            checksum bytea)""",
        "CREATE INDEX tail_ns ON {s}.tail (namespace, seq)",
        "CREATE TABLE {s}.codes (id bigint PRIMARY KEY, namespace text NOT NULL, code bytea NOT NULL)",
        "CREATE INDEX codes_ns ON {s}.codes (namespace)",
        """CREATE TABLE {s}.units (
            namespace text NOT NULL,
            kind text NOT NULL,
            payload bytea NOT NULL,
            PRIMARY KEY (namespace, kind))""",
    ],
    # 2: the change feed. version: number of the namespace's latest change; horizon: the feed holds every change
    # after it. Existing namespaces start at version 0 with an empty feed.
    2: [
        "ALTER TABLE {s}.namespaces ADD COLUMN version bigint NOT NULL DEFAULT 0,"
        " ADD COLUMN horizon bigint NOT NULL DEFAULT 0",
        """CREATE TABLE {s}.changes (
            namespace text NOT NULL,
            version bigint NOT NULL,
            kind text NOT NULL,
            first_seq bigint NOT NULL,
            last_seq bigint NOT NULL,
            ids bigint[] NOT NULL,
            PRIMARY KEY (namespace, version))""",
    ],
    # 3: idempotency keys of appended messages (NULL for messages stored before; unique per namespace).
    3: [
        "ALTER TABLE {s}.messages ADD COLUMN idem_key uuid",
        "CREATE UNIQUE INDEX messages_key ON {s}.messages (namespace, idem_key)",
    ],
}
SCHEMA_VERSION = max(_MIGRATIONS)
# Columns added to a schema of the current version without a new version number: code of that version neither names
# nor needs them, and releases before the compatibility record refuse any newer number outright. A writable open adds
# the ones the schema lacks (under the schema's lock, like a migration); a read-only one reads a schema without them
# as it is. messages.utc_offset: the offset from UTC a message's timestamp was given with (NULL: unknown). The stamps:
# a random value written with each change (namespaces.stamp, the latest change's; prev_stamp, the one before it;
# horizon_stamp, the change at the horizon's; changes.stamp), read with the namespace's fingerprint, so that a handle
# tells a history rewritten under it (a data-only restore, a failover to an asynchronous replica: the same counters
# with other content) from the one it saw. NULL: written by code before the stamps, or before the first change since.
_ADDED_COLUMNS = (("messages", "utc_offset", "double precision"), ("namespaces", "stamp", "uuid"),
                  ("namespaces", "prev_stamp", "uuid"), ("namespaces", "horizon_stamp", "uuid"),
                  ("changes", "stamp", "uuid"))
# How long one attempt of an upgrade waits for a table another process's transaction uses: while a migration's ALTER
# waits, every later statement on that table waits behind it, so an upgrade made while older app servers work gives
# way after this long and tries again (until Config.busy_timeout_s) instead of holding their calls up.
MIGRATION_LOCK_MS = 200
# The oldest schema version whose code may use a store of this schema as it is (meta 'compatible', see
# hippo.store.common): app servers of an older version keep opening a schema a newer one upgraded during a rolling
# deploy and after a rollback. A migration that code of the schema before can live with (a column it does not name
# and may leave empty, an index) leaves this where it was; any other raises it to the new SCHEMA_VERSION.
COMPATIBLE_FROM = 3
TABLES = ("meta", "namespaces", "messages", "chunks", "tail", "codes", "units", "changes")

_ROW_COLS = ("m.id, m.namespace, m.seq, m.n_tokens, m.speaker, m.role, m.ts, m.session_id, m.metadata, m.created_at,"
             " m.utc_offset")
_ROW_COLS_BEFORE_OFFSETS = _ROW_COLS.replace("m.utc_offset", "NULL")  # a schema without the column, read-only
_CHUNK_COLS = "id, first_seq, last_seq, n_messages, n_tokens, blob, checksum"

# SQLSTATE classes of a lost connection: 08 connection exception, 57P01-03 admin / crash shutdown, cannot connect now
_CONNECTION_STATES = ("57P01", "57P02", "57P03")
# The server ended the session itself: a transaction idle longer than idle_in_transaction_session_timeout (hippo's
# idle_s on a write, or the DBA's on a read) or a session idle longer than idle_session_timeout. 25P03 is of class 25,
# which psycopg raises as an InternalError, not an OperationalError.
_ENDED_STATES = ("25P03", "57P05")
# pgbouncer's answer to a transaction in pool_mode = statement (SQLSTATE 08P01, the connection then closed)
_STATEMENT_POOLING = "not allowed in statement pooling mode"
#: message rows a scan reads from the server at a time (PostgresStore.scan)
SCAN_PAGE_ROWS = 2048
_RETRY_STATES = ("40001", "40P01")  # serialization failure, deadlock: the server rolled the transaction back


def _need_driver() -> None:
    if _IMPORT_ERROR is not None:
        raise StoreError("a postgresql:// path needs psycopg 3 and psycopg_pool: pip install 'hippo-memory[postgres]' "
                         f"({_IMPORT_ERROR})")


def parse_url(url: str) -> tuple[str, str, dict[str, str]]:
    """``(libpq URL, URL shown to users, hippo's parameters)``: hippo's ``hippo_*`` query parameters are taken out of
    the URL libpq sees; the shown URL has no password."""
    if not isinstance(url, str):
        raise InvalidInput(f"path must be a postgresql:// or postgres:// URL, got {type(url).__name__}")
    if "\x00" in url:
        raise InvalidInput("path contains a NUL character")
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError as exc:
        # a bracket left open or stray in the host ('Invalid IPv6 URL'); the URL may hold a password
        raise InvalidInput(f"path is not a valid PostgreSQL URL: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("postgresql", "postgres") or not url[len(scheme):].startswith("://"):
        raise InvalidInput(f"path must be a postgresql:// or postgres:// URL, got {url!r}")
    try:
        query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True, strict_parsing=bool(parts.query))
    except ValueError as exc:
        raise InvalidInput(f"path: the query string of the URL is malformed ({exc})") from None
    ours = {k: v for k, v in query if k in _HIPPO_PARAMS}
    unknown = sorted(k for k, _ in query if k.startswith("hippo_") and k not in _HIPPO_PARAMS)
    if unknown:
        raise InvalidInput(f"path: unknown hippo parameter(s) {unknown}; expected some of {list(_HIPPO_PARAMS)}")
    theirs = [(k, v) for k, v in query if k not in _HIPPO_PARAMS]
    libpq = urllib.parse.urlunsplit((scheme, parts.netloc, parts.path, _query(theirs), parts.fragment))
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, hosts = netloc.rsplit("@", 1)
        netloc = userinfo.split(":", 1)[0] + "@" + hosts
    shown_query = [(k, v) for k, v in query if k not in _SECRET_PARAMS]
    shown = urllib.parse.urlunsplit((scheme, netloc, parts.path, _query(shown_query), ""))
    try:
        psycopg.conninfo.conninfo_to_dict(libpq)
    except psycopg.Error as exc:
        raise InvalidInput(f"path {shown!r} is not a valid PostgreSQL URL: {exc}") from None
    return libpq, shown, ours


def _query(pairs: list[tuple[str, str]]) -> str:
    # a socket folder stays readable in the URL (host=/run/postgresql, not host=%2Frun%2Fpostgresql)
    return urllib.parse.urlencode(pairs, safe="/:,", quote_via=urllib.parse.quote)


def _int_param(params: dict[str, str], name: str, default: int, lo: int, hi: int) -> int:
    raw = params.get(name)
    if raw is None:
        return default
    # ASCII digits only: str.isdigit() also holds for '²' and '①', which int() cannot read (a ValueError)
    if not (raw.isascii() and raw.isdigit()) or not lo <= int(raw) <= hi:
        raise InvalidInput(f"path: {name} must be an integer in [{lo}, {hi}], got {raw!r}")
    return int(raw)


def _translate(exc: BaseException, what: str, writing: bool = False) -> HippoError:
    """A psycopg error as the HippoError a caller can act on (the SQLite store's ``_translate``, for PostgreSQL).
    ``writing``: it ended a write transaction, the only place where hippo bounds a lock wait itself (the namespace's
    lock, busy_timeout_s)."""
    state = getattr(exc, "sqlstate", None) or ""
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if psycopg is not None and isinstance(exc, psycopg_pool.PoolClosed):
        return ClosedError(f"{what}: the store is closed")
    if state == "55P03" or (state == "57014" and "lock timeout" in msg):
        if not writing:  # a table lock (a schema change, REINDEX, VACUUM FULL) past the role's or hippo's bound
            return StoreBusy(f"{what}: a table of the store stayed locked by another transaction longer than the "
                             f"lock wait allowed ({msg})")
        return StoreBusy(f"{what}: the namespace is locked by another writer (waited the configured busy_timeout_s)")
    if state == "57014":  # the server is there: a statement_timeout of the role or database, or a cancel request
        # (the server's message, in the language of its lc_messages, says which; the SQLSTATE is the same)
        return StoreError(f"{what}: the server cancelled the statement ({msg}): a statement_timeout set for this role "
                          "or database shorter than the call needs, or a cancel request (pg_cancel_backend)")
    if state in _RETRY_STATES:
        return StoreBusy(f"{what}: conflicting writers kept aborting this transaction ({msg}); nothing was written")
    if state == "53300":
        return StoreBusy(f"{what}: the server has no free connection slot ({msg})")
    if state == "53100":
        return StoreError(f"{what}: the server's disk is full; nothing was written ({msg})")
    if state == "25006":
        return StoreError(f"{what}: the server accepts no writes here ({msg}); open it with read_only=True to read it")
    if state == "42501":
        return StoreError(f"{what}: permission denied ({msg}); the role needs rights on the hippo schema")
    if state in ("XX001", "XX002"):
        return CorruptData(f"{what}: the server reports corrupt data ({msg})")
    if state in ("42P05", "26000") and "_pg3_" in msg:
        return StoreError(f"{what}: {msg}; a connection pooler in transaction mode (pgbouncer before 1.21) loses "
                          "prepared statements between transactions: add hippo_prepare_threshold=none to the URL")
    if state in ("22021", "22P05"):
        return StoreError(f"{what}: the database's encoding cannot hold this text ({msg}); use a UTF8 database")
    if _STATEMENT_POOLING in msg:
        return StoreError(f"{what}: {msg}; hippo runs each call in a transaction, which pgbouncer's pool_mode = "
                          "statement refuses: use pool_mode = transaction (docs/deploy.md)")
    if _pooler_query_timeout(exc):
        return StoreError(f"{what}: the connection pooler's query_timeout ended the statement ({msg}); set it above "
                          "what the store's calls need (busy_timeout_s for a writer's wait)")
    if "query_wait_timeout" in msg:  # pgbouncer: the server can be down, or up with the pool's connections all busy
        return StoreError(f"{what}: the connection pooler found no free server connection within its "
                          f"query_wait_timeout: the server is down, or every server connection of the pool was in use "
                          f"({msg})")
    if psycopg is not None and isinstance(exc, (psycopg.OperationalError, psycopg_pool.PoolTimeout)):
        return StoreError(f"{what}: cannot reach the PostgreSQL server ({msg})")
    return StoreError(f"{what}: {msg}")


# A failed connection attempt worth repeating, by libpq's (or psycopg's) English message: what the server answers while
# it starts up, shuts down or recovers (57P03) and the termination a restart sends a connection it has just accepted
# (57P01); a server that cannot be reached (no socket, refused, reset, timed out, a name that does not resolve yet);
# what pgbouncer answers while it cannot reach the server (its login to it failing, or a login that waited out its
# query_wait_timeout for a server connection). Any other message (a localized one included) is checked by asking the
# server again in its wire protocol (_unreachable).
_TRANSIENT_CONNECT = ("the database system is", "terminating connection due to administrator command",
                      "No such file or directory", "Connection refused", "Connection reset",
                      "server closed the connection unexpectedly", "timeout expired", "Connection timed out",
                      "Network is unreachable", "No route to host", "failed to resolve host",
                      "could not translate host name", "pgbouncer cannot connect to server",
                      "server login has been failing", "query_wait_timeout")
# libpq's account of an error the server sent during the connection: "... failed: " + the error's severity (in the
# server's language) + ":  " + its message
_SERVER_SENT = re.compile(r"(?:failed|bad): [^\s:][^\n:]{0,40}:  \S")
_PROBE_TIMEOUT_S = 5.0  # the longest a check of a failed connection waits for the server's answer


def _unreachable(exc: BaseException) -> bool | None:
    """Whether a failed connection attempt may succeed when tried again: True (the server cannot be reached, or is
    starting up, shutting down or recovering), False (it refuses this user, database or setting, or the client's
    own settings refused the server: report it at once), None (the server refused this attempt with an error it does
    not give now: it may have finished starting up in between, so one more attempt tells).

    libpq's message is in the language of the server's ``lc_messages`` and of the client's locale, and carries no
    SQLSTATE: an English one is read (``_TRANSIENT_CONNECT``), any other is checked by asking the server at the same
    host and port for the same user and database (:func:`hippo.store.pgwire.answer`: the errno of the socket, the
    SQLSTATE of the server's answer)."""
    if not isinstance(exc, psycopg.OperationalError):
        return False
    msg = str(exc)
    if any(text in msg for text in _TRANSIENT_CONNECT):
        return True
    pgconn = getattr(exc, "pgconn", None)
    if pgconn is None:
        return False
    try:
        host, hostaddr = pgconn.host.decode(), pgconn.hostaddr.decode()
        port = int(pgconn.port.decode().strip() or "5432")
        user, dbname = pgconn.user.decode(), pgconn.db.decode()
        options = {o.keyword: o.val for o in pgconn.info or ()}
        raw_timeout = (options.get(b"connect_timeout") or b"").decode().strip()
    except (AttributeError, ValueError, UnicodeDecodeError):
        return False
    timeout = min(_PROBE_TIMEOUT_S, float(raw_timeout)) if raw_timeout.isdigit() and int(raw_timeout) > 0 \
        else _PROBE_TIMEOUT_S
    answer = pgwire.answer(host, hostaddr, port, user, dbname, timeout=timeout)
    if answer.unreachable_for_now:
        return True
    if answer.sqlstate is not None and answer.message and answer.message in msg:
        return False  # the same error as libpq's: the server refuses it now too
    if not _SERVER_SENT.search(msg) or pgconn.used_password or pgconn.needs_password:
        return False  # the client refused the server, or the password was wrong or missing
    return None


def _statement_timeout(exc: BaseException, conn, started: float) -> bool:
    """A statement the server cancelled (SQLSTATE 57014) after the ``statement_timeout`` of the session (set for the
    role or database, or in the URL's options; hippo sets none, and its own ``lock_timeout`` is 55P03), not on a
    cancel request. The message cannot tell: it is in the language of the server's ``lc_messages``. The session's
    setting can: a timeout is set, and the statement, sent at ``started`` (``time.monotonic()``), ran at least that
    long (the server starts its timer when the statement arrives, after this process sent it). ``conn``'s failed
    transaction is rolled back to read the setting."""
    if getattr(exc, "sqlstate", None) != "57014" or conn is None or conn.closed:
        return False
    elapsed_ms = (time.monotonic() - started) * 1000
    try:
        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            conn.execute("ROLLBACK")
        row = conn.execute("SELECT setting FROM pg_catalog.pg_settings WHERE name = 'statement_timeout'").fetchone()
    except psycopg.Error:
        return False
    timeout_ms = int(row[0]) if row and str(row[0]).isdigit() else 0
    return 0 < timeout_ms <= elapsed_ms


def _pooler_query_timeout(exc: BaseException) -> bool:
    """pgbouncer's ``query_timeout`` ended the statement and closed the connection (no SQLSTATE of the server's)."""
    return isinstance(exc, psycopg.OperationalError) and "query timeout" in str(exc) \
        and getattr(exc, "sqlstate", None) != "57014"


def _prepared_lost(exc: BaseException, conn) -> bool:
    """A statement psycopg prepared (``conn`` prepares statements) that the server did not have, or a statement it
    was preparing whose name the server had already: what a pooler in transaction mode answers when it does not keep
    prepared statements between transactions (pgbouncer before 1.21, or later without ``max_prepared_statements``),
    the next transaction of the connection running on another server connection. hippo itself never runs PREPARE,
    EXECUTE or DEALLOCATE, so these SQLSTATEs (26000, 42P05) come from psycopg's preparing alone."""
    return (isinstance(exc, psycopg.Error) and (getattr(exc, "sqlstate", None) or "") in ("26000", "42P05")
            and conn is not None and conn.prepare_threshold is not None)


# Pools a forked child inherited from its parent: never used nor closed there (PostgresStore.drop_inherited)
_INHERITED: list[Any] = []
_FORK_LOCK = threading.Lock()  # a store's move to a pool of the process's own (new in a child: held at the fork)


def _new_fork_lock() -> None:
    global _FORK_LOCK
    _FORK_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_fork_lock)


class _Retry(Exception):
    """This attempt provably stored nothing and may run again; ``final`` is what to raise when retries run out."""

    def __init__(self, final: HippoError) -> None:
        super().__init__(str(final))
        self.final = final


class _PreparedLost(_Retry):
    """A statement psycopg prepared on the server was not there (or another of its name was): a pooler in transaction
    mode that does not keep prepared statements between transactions. The attempt stored nothing and the store
    prepares no statement any more: it runs again at once, once (then as any ``_Retry``)."""


class _LostInBlock(StoreError):
    """The connection of a :meth:`PostgresStore.reading` block was lost: the block cannot go on in its snapshot, but
    :meth:`PostgresStore.read_consistently` runs its reads again in a new one."""


class _PreparedLostInBlock(_LostInBlock):
    """A statement of a :meth:`PostgresStore.reading` block failed as in :class:`_PreparedLost`."""


class _HeadCancelled(Exception):
    """A timeout (``waited``: which) ended the start of a write transaction that carried the body's first statement:
    the wait for the namespace's lock, or that statement (rolled back, nothing stored)."""

    def __init__(self, waited: str) -> None:
        super().__init__(waited)
        self.waited = waited


class _Last:
    """What a write body returns to have its last statement sent in one round trip with COMMIT."""

    def __init__(self, result: Any, sql: str, params: Sequence[Any]) -> None:
        self.result, self.sql, self.params = result, sql, params


class _Unsure(Exception):
    """The connection broke during COMMIT: whether the transaction committed is not known yet."""

    def __init__(self, xid: str | None, result: Any, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.xid, self.result, self.cause = xid, result, cause


# The longest wait between two attempts of the pool to reconnect (the cap of every other retry's backoff)
#: seconds a connection attempt may take when the URL sets no ``connect_timeout`` (libpq's own default is none)
CONNECT_TIMEOUT_S = 10
_RECONNECT_MAX_S = 2.0


class _Reconnecting:
    """The attempts of a store's pool to reconnect to a server that went away, at most ``_RECONNECT_MAX_S`` apart for
    ``window_s`` seconds, and after that for as long as a call waits for a connection (with none waiting the pool stops
    trying until a call needs a connection, as psycopg_pool does).

    psycopg_pool doubles the wait between them (1, 2, 4, 8, 16 s ...) up to the pool's ``reconnect_timeout``, and a call
    waits for the pool to hand it a connection: after an outage of 20 s the server was back 10 s before the pool tried
    again, and a call that began with the outage raised ``StoreError`` after ``hippo_retry_s`` (30 s) with the server
    up. Only psycopg_pool's public parameters bound it here: with ``reconnect_timeout = _RECONNECT_MAX_S`` no wait of a
    round of attempts is longer (the pool cuts the last one to what is left of it), and at its end the pool calls
    ``reconnect_failed`` (:meth:`failed`), which starts another round (``start``: the store's check of its pool, whose
    :meth:`psycopg_pool.ConnectionPool.check` grows the pool back) while the outage is shorter than ``window_s`` or
    ``waiting()`` says a call waits for a connection. A connection made (``configure``: :meth:`connected`) ends the
    outage."""

    def __init__(self, window_s: float, start: Callable[[], None], waiting: Callable[[], bool],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.window_s = window_s
        self._start = start
        self._waiting = waiting
        self._clock = clock
        self._lock = threading.Lock()
        self._since: float | None = None  # when the first round given up since the last connection made ended

    def connected(self, conn: Any) -> None:
        with self._lock:
            self._since = None

    def failed(self, pool: Any) -> None:
        now = self._clock()
        with self._lock:
            if self._since is None:
                self._since = now
            again = now - self._since < self.window_s
        if (again or self._waiting()) and not pool.closed:
            self._start()


class PostgresStore(Store):
    """Every namespace of one PostgreSQL schema (see the module documentation for the URL and its parameters).

    ``read_only=True`` opens an existing store and runs every read in a read-only transaction; every write raises
    :class:`~hippo.base.errors.ReadOnlyError` before it reaches the server. ``busy_timeout_s`` bounds how long a
    writer waits for another writer of the same namespace (then :class:`~hippo.base.errors.StoreBusy`); ``idle_s``
    how long the server lets one of this store's write transactions wait for the process in the middle (paused, hung)
    before it ends the transaction, so that the namespace's lock is not held for as long as the process is stopped.
    """

    def __init__(self, url: str, *, read_only: bool = False, busy_timeout_s: float = 10.0, schema: str | None = None,
                 pool_min: int | None = None, pool_max: int | None = None, prepare_threshold: int | None | str = "",
                 retry_s: float | None = None, idle_s: float | None = None, codec: ChunkCodec | None = None) -> None:
        _need_driver()
        libpq, shown, params = parse_url(url)
        self.url = url  # the URL as given (with its password): what reopens this store
        self.path = shown
        self.read_only = bool(read_only)
        self.codec = codec if codec is not None else ChunkCodec(token_bits())
        self.version = SCHEMA_VERSION
        self._has_offset = True  # whether messages keep their offset from UTC (_ADDED_COLUMNS; read-only: as found)
        self._has_stamps = True  # whether the changes carry stamps (_ADDED_COLUMNS; read-only: as found)
        schema = schema if schema is not None else params.get("hippo_schema", DEFAULT_SCHEMA)
        if not isinstance(schema, str) or not _IDENT.fullmatch(schema):
            raise InvalidInput(f"hippo_schema must be a plain identifier (letters, digits, _; at most 63), got "
                               f"{schema!r}")
        self.schema = schema
        pool_min = pool_min if pool_min is not None else _int_param(params, "hippo_pool_min", 1, 0, 1000)
        pool_max = pool_max if pool_max is not None else _int_param(params, "hippo_pool_max", max(4, pool_min),
                                                                   1, 1000)
        if pool_max < max(1, pool_min):
            raise InvalidInput(f"hippo_pool_max ({pool_max}) must be at least hippo_pool_min ({pool_min}) and 1")
        if prepare_threshold == "":
            raw = params.get("hippo_prepare_threshold", "5")
            if raw.lower() == "none":
                prepare_threshold = None
            elif raw.isascii() and raw.isdigit():
                prepare_threshold = int(raw)
            else:
                raise InvalidInput(f"path: hippo_prepare_threshold must be an integer or 'none', got {raw!r}")
        if retry_s is None:
            retry_s = float(_int_param(params, "hippo_retry_s", 30, 0, 86400))
        if isinstance(busy_timeout_s, bool) or not isinstance(busy_timeout_s, (int, float)) or busy_timeout_s < 0:
            raise InvalidInput(f"busy_timeout_s must be a number >= 0, got {busy_timeout_s!r}")
        self.retry_s = float(retry_s)
        if idle_s is None:
            idle_s = float(_int_param(params, "hippo_idle_s", 60, 1, 86400))
        if isinstance(idle_s, bool) or not isinstance(idle_s, (int, float)) or not idle_s > 0:
            raise InvalidInput(f"idle_s must be a number > 0, got {idle_s!r}")
        self._idle_ms = max(1, int(idle_s * 1000))
        self._busy_ms = max(1, int(busy_timeout_s * 1000))
        self._s = f'"{schema}"'
        self._lock_base = schema + "\x00"
        self._local = threading.local()
        self._tail_hint: dict[str, int] = {}  # tail tokens of a namespace as this process's last append left it
        self._tables: int | None = None  # the schema's tables as opened (_tables_sql), see _same_tables
        self._check_lock = threading.Lock()  # guards the flags of the pool's check, _in_use, _prepare_threshold
        self._checking = self._check_again = False
        self._in_use = 0  # connections of the pool this store's calls hold (_getconn to _putconn)
        self._waiting = 0  # calls waiting for the pool to hand them a connection
        self._closed = False
        self._conn_kwargs = {"autocommit": True, "prepare_threshold": prepare_threshold}
        if "connect_timeout" not in psycopg.conninfo.conninfo_to_dict(libpq):
            # every connection, the pool's too: an attempt to reach a host that drops packets without an answer
            # would otherwise hang for the operating system's TCP timeout (minutes), whatever the waits between
            # attempts; a connect_timeout in the URL is kept
            self._conn_kwargs["connect_timeout"] = CONNECT_TIMEOUT_S
        self._prepare_threshold = prepare_threshold  # what every connection has when handed out (see _stop_preparing)
        self._pipeline = bool(psycopg.Pipeline.is_supported())  # libpq >= 14
        self._libpq = libpq
        # The first connection is made directly: it reports a wrong password or a missing database as it is, where a
        # pool would only time out. A server that cannot be reached, or is starting up or shutting down (a restart,
        # a failover), is tried again like a lost connection of any other call, for up to retry_s.
        what = f"opening store {self.path!r}"
        rechecked: list[BaseException] = []

        def attempt() -> None:
            try:
                conn = psycopg.connect(libpq, **self._conn_kwargs)
            except psycopg.Error as exc:
                again = _unreachable(exc)
                if again is None and not rechecked:  # refused with an error the server no longer gives: once more
                    rechecked.append(exc)
                    again = True
                if again:
                    raise _Retry(_translate(exc, what)) from None
                raise _translate(exc, what) from None
            with conn:
                try:
                    self._init_schema(conn)
                    self._tables = conn.execute(f"SELECT {self._tables_sql()}").fetchone()[0]
                except psycopg.Error as exc:
                    if self._connection_lost(exc, conn):  # run again: it reads what is installed first
                        raise _Retry(_translate(exc, what)) from None
                    raise _translate(exc, what) from None

        self._retrying(what, attempt)
        self._pool_sizes = (pool_min, pool_max)
        self._open_pool()

    def _open_pool(self) -> None:
        """The pool of this process's connections (made in the background, at most ``_RECONNECT_MAX_S`` apart)."""
        self._reconnecting = _Reconnecting(max(60.0, self.retry_s), self._after_lost_connection,
                                           lambda: self._waiting > 0)
        self._pool = psycopg_pool.ConnectionPool(
            self._libpq, min_size=self._pool_sizes[0], max_size=self._pool_sizes[1], kwargs=self._conn_kwargs,
            open=False, name=f"hippo:{self.path}", timeout=max(1.0, min(self.retry_s, 30.0)),
            reconnect_timeout=_RECONNECT_MAX_S, reconnect_failed=self._reconnecting.failed,
            configure=self._reconnecting.connected)
        self._pool.open(wait=False)
        self._pid = os.getpid()

    # -- forks ------------------------------------------------------------------------------------------------
    def drop_inherited(self) -> None:
        """In a forked child: let go of the parent's pool without touching it. Its connections are the parent's
        sockets, whose server sessions the parent goes on using: the child must neither send on them (two processes'
        messages would interleave on one session, and each would wait for answers the other read) nor close them
        (closing sends the server a Terminate, which ends the parent's session). They are kept referenced, never
        closed (psycopg does not close in a child a connection made by its parent when it is collected), and the
        pool is marked closed in this process only, so that nothing stops its workers, threads of the parent that
        do not exist here, whose locks may have been held at the fork."""
        # no lock: the fork handler runs before any other thread of the child does, and maybe before the handler
        # that gives the child a _FORK_LOCK of its own (one a thread of the parent may have held at the fork)
        if os.getpid() != getattr(self, "_pid", None):
            self._leave_parents_pool()

    def _leave_parents_pool(self) -> None:
        if os.getpid() == self._pid or self._pool is None:
            return
        _INHERITED.append(self._pool)
        with contextlib.suppress(Exception):
            self._pool._closed = True  # in this process only: its __del__ then leaves the parent's workers alone
        self._local = threading.local()  # a pinned connection of a block the fork happened in is the parent's
        self._check_lock = threading.Lock()  # held by a thread of the parent at the fork: never released here
        self._checking = self._check_again = False
        self._in_use = self._waiting = 0
        self._tail_hint = {}
        self._pid = os.getpid()
        self._pool = None

    def after_fork(self) -> bool:
        """In a forked child, after :meth:`drop_inherited`: a pool of the child's own on the same URL (its
        connections made in the background, as an open's), and the handle starts as if the child opened the store
        itself (True). A handle closed before the fork stays closed."""
        if self._closed:
            return False
        self._leave_parents_pool()  # no lock, as in drop_inherited
        if self._pool is None:
            self._open_pool()
        return True

    def _pinned(self):
        """The connection of this thread's :meth:`reading` block, if any: in a process forked inside a block, none
        (the block's connection is the parent's)."""
        if self._pid != os.getpid():
            with _FORK_LOCK:
                self._leave_parents_pool()
        return getattr(self._local, "conn", None)

    def _pool_of_this_process(self):
        """The pool, made anew in a process forked from the one that made it (a store used without a ``Memory``,
        whose fork handler reopens it): the parent's connections are never used here (:meth:`drop_inherited`)."""
        pool = self._pool
        if pool is None or self._pid != os.getpid():
            with _FORK_LOCK:
                self._leave_parents_pool()
                if self._pool is None and not self._closed:
                    self._open_pool()
                pool = self._pool
        if pool is None:  # closed in this process before its first use here
            raise ClosedError("the store is closed")
        return pool

    # -- schema -----------------------------------------------------------------------------------------------
    def _sql(self, text: str) -> str:
        return text.replace("{s}", self._s)

    def _installed_version(self, conn) -> int | None:
        # pg_class read with the statement's snapshot (to_regclass would consult a cache that may not have seen a
        # schema another process committed while this one waited for the lock)
        found = conn.execute("SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid ="
                             " c.relnamespace WHERE n.nspname = %s AND c.relname = 'meta'", (self.schema,)).fetchone()
        if found is None:
            return None
        row = conn.execute(self._sql("SELECT value FROM {s}.meta WHERE key = 'schema_version'")).fetchone()
        value = row[0] if row else None
        if value is None or not str(value).isdigit() or int(value) < 1:
            raise CorruptData(f"store {self.path!r}: schema version {value!r} of schema {self.schema!r} is not a "
                              "hippo schema version")
        if int(value) > SCHEMA_VERSION:
            row = conn.execute(self._sql("SELECT value FROM {s}.meta WHERE key = %s"), (common.COMPATIBLE_KEY,)
                               ).fetchone()
            compatible = common.compatible_from(row[0] if row else None, int(value))
            if compatible > SCHEMA_VERSION:
                raise CorruptData(f"store {self.path!r}: schema version {value} of schema {self.schema!r} is newer "
                                  f"than this hippo supports ({SCHEMA_VERSION}) and needs code of schema {compatible} or "
                                  "later; upgrade hippo")
        return int(value)

    def _init_schema(self, conn) -> None:
        version = self._installed_version(conn)
        if self.read_only:
            if version is None:  # as a missing file is to the SQLite store
                raise NotFound(f"path {self.path!r} holds no hippo store in schema {self.schema!r} (open it "
                               "writable once to create one)")
            if version < SCHEMA_VERSION:
                raise StoreError(f"store {self.path!r} has schema version {version}; open it writable once to upgrade "
                                 f"it to {SCHEMA_VERSION} before reading it read-only")
            missing = {table for table, _, _ in self._missing_columns(conn)}
            self._has_offset = "messages" not in missing
            self._has_stamps = not missing & {"namespaces", "changes"}
            return
        if version is not None and version >= SCHEMA_VERSION and not self._missing_columns(conn):
            return  # current (or newer and usable as it is) with every added column
        deadline = time.monotonic() + self._busy_ms / 1000
        while not self._upgrade(conn, deadline):
            left = deadline - time.monotonic()
            if left <= 0:
                raise StoreBusy(f"opening store {self.path!r}: upgrading schema {self.schema!r} needs its tables, "
                                "which other processes' transactions kept using for longer than busy_timeout_s")
            time.sleep(min(left, random.uniform(0.5, 1.5) * MIGRATION_LOCK_MS / 1000))

    def _upgrade(self, conn, deadline: float) -> bool:
        """One attempt to create or upgrade the schema (one transaction); False when a table the upgrade alters was
        in use by another transaction for longer than :data:`MIGRATION_LOCK_MS` (rolled back: try again)."""
        conn.execute("BEGIN")
        try:
            # Bounded like a writer's wait for a namespace: a process paused or hung in the middle of creating or
            # upgrading the schema holds this lock, and an open must not wait for it forever.
            wait_ms = max(1, int((deadline - time.monotonic()) * 1000))
            conn.execute(f"SET LOCAL lock_timeout = '{wait_ms}ms'")
            conn.execute(f"SET LOCAL idle_in_transaction_session_timeout = '{int(self._idle_ms)}ms'")
            started = time.monotonic()
            try:
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_key(None),))
            except (psycopg.errors.LockNotAvailable, psycopg.errors.QueryCanceled) as exc:
                lock_timeout = isinstance(exc, psycopg.errors.LockNotAvailable)
                if not lock_timeout and not _statement_timeout(exc, conn, started):
                    raise
                waited = "the configured busy_timeout_s" if isinstance(exc, psycopg.errors.LockNotAvailable) \
                    else "until the server's statement_timeout cancelled the wait"
                raise StoreBusy(f"opening store {self.path!r}: another process is creating or upgrading schema "
                                f"{self.schema!r} (waited {waited})") from None
            version = self._installed_version(conn) or 0  # another process may have migrated meanwhile
            if version >= SCHEMA_VERSION and not self._missing_columns(conn):
                conn.execute("COMMIT")
                return True
            if version == 0:
                exists = conn.execute("SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = %s",
                                      (self.schema,)).fetchone()
                if exists is None:
                    conn.execute(self._sql("CREATE SCHEMA {s}"))
            else:  # tables other processes use: give way to them (see MIGRATION_LOCK_MS)
                conn.execute(f"SET LOCAL lock_timeout = '{min(wait_ms, MIGRATION_LOCK_MS)}ms'")
            try:
                self._migrate(conn, min(version, SCHEMA_VERSION))
                for table, column, kind in self._missing_columns(conn):
                    conn.execute(self._sql(f"ALTER TABLE {{s}}.{table} ADD COLUMN {column} {kind}"))
            except psycopg.errors.LockNotAvailable:
                conn.execute("ROLLBACK")
                return False
            conn.execute("COMMIT")
            return True
        except BaseException:
            with contextlib.suppress(psycopg.Error):
                conn.execute("ROLLBACK")
            raise

    @property
    def _row_cols(self) -> str:
        """The message columns of :mod:`hippo.store.common`'s row layout as this schema holds them."""
        return _ROW_COLS if self._has_offset else _ROW_COLS_BEFORE_OFFSETS

    def _missing_columns(self, conn) -> list[tuple[str, str, str]]:
        """The :data:`_ADDED_COLUMNS` the schema's tables lack (read with the statement's snapshot)."""
        have = {(t, c) for t, c in conn.execute(
            "SELECT c.relname, a.attname FROM pg_catalog.pg_attribute a"
            " JOIN pg_catalog.pg_class c ON c.oid = a.attrelid JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND a.attnum > 0"
            " AND NOT a.attisdropped AND c.relname = ANY(%s)",
            (self.schema, [t for t, _, _ in _ADDED_COLUMNS])).fetchall()}
        return [(t, c, k) for t, c, k in _ADDED_COLUMNS if (t, c) not in have]

    def _migrate(self, conn, version: int, target: int | None = None) -> None:
        """Run the migrations after ``version`` up to ``target`` (:data:`SCHEMA_VERSION` when None; inside the
        caller's transaction)."""
        target = SCHEMA_VERSION if target is None else target
        for step in range(version + 1, target + 1):
            for stmt in _MIGRATIONS[step]:
                conn.execute(self._sql(stmt))
            conn.execute(self._sql("INSERT INTO {s}.meta (key, value) VALUES ('schema_version', %s)"
                                   " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"), (str(step),))
            if version:
                log.info("store %r (schema %s) upgraded to schema version %d", self.path, self.schema, step)
        if target == SCHEMA_VERSION > version:
            conn.execute(self._sql("INSERT INTO {s}.meta (key, value) VALUES (%s, %s)"
                                   " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"),
                         (common.COMPATIBLE_KEY, common.compatible_value(target, COMPATIBLE_FROM)))

    # -- transactions -----------------------------------------------------------------------------------------
    def _lock_key(self, namespace: str | None) -> int:
        """The advisory lock of a namespace (or, for None, of the schema itself) as a signed 64-bit key."""
        name = self._lock_base + ("\x00schema" if namespace is None else "\x01" + namespace)
        digest = hashlib.blake2b(name.encode("utf-8", "surrogatepass"), digest_size=8).digest()
        return int.from_bytes(digest, "little", signed=True)

    def _writable(self, what: str) -> None:
        if self.read_only:
            raise ReadOnlyError(f"{what}: the store {self.path!r} is open read-only")

    @staticmethod
    def _connection_lost(exc: BaseException, conn) -> bool:
        if isinstance(exc, psycopg_pool.PoolTimeout):
            return True
        if _STATEMENT_POOLING in str(exc):  # pgbouncer closes the connection, but trying again cannot help
            return False
        state = getattr(exc, "sqlstate", None) or ""
        if isinstance(exc, psycopg.Error) and state in _ENDED_STATES:
            return True
        if not isinstance(exc, psycopg.OperationalError):
            return False
        # An error of the client library itself carries no SQLSTATE (the server sent none): the session is in a state
        # this process cannot know. A backend terminated while a pipeline's results were read surfaces as one
        # ("cannot exit pipeline mode ..." replaces the termination, the connection not marked bad yet).
        return conn is None or conn.closed or not state or state.startswith("08") or state in _CONNECTION_STATES

    def _retrying(self, what: str, attempt: Callable[[], Any]) -> Any:
        """Run ``attempt`` until it returns, retrying what provably stored nothing with bounded backoff."""
        # 50 ms doubling up to 2 s, with jitter so that many clients of a restarted server do not retry in step
        retrying = Retrying(stop=stop_after_delay(self.retry_s),
                            wait=wait_exponential(multiplier=0.05, max=2.0) + wait_random(0, 0.05),
                            retry=retry_if_exception_type(_Retry), reraise=True)

        def run() -> Any:
            try:
                return attempt()
            except _PreparedLost:  # the store prepares nothing from now on: what failed cannot fail so again
                return attempt()

        try:
            for step in retrying:
                with step:
                    return run()
        except _Retry as exc:
            raise exc.final from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _connection(self, what: str):
        """A connection of this process's pool, or the error that says why none could be had (``what``: the call)."""
        try:
            return self._getconn()
        except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
            raise self._no_connection(exc, what) from None

    def _getconn(self):
        if self._closed:
            raise ClosedError("the store is closed")
        pool = self._pool_of_this_process()
        with self._check_lock:
            self._waiting += 1
        try:
            conn = pool.getconn()
        finally:
            with self._check_lock:
                self._waiting -= 1
        with self._check_lock:
            self._in_use += 1
        if conn.prepare_threshold != self._prepare_threshold:  # preparing turned off since the connection was made
            conn.prepare_threshold = self._prepare_threshold
        return conn

    def _no_connection(self, exc: BaseException, what: str) -> _Retry:
        """What to raise when the pool handed out no connection: ``_Retry`` either way, whose error names the cause.
        With every connection of the pool held by this process's other calls the whole wait, the server is not the
        trouble (not "cannot reach the PostgreSQL server"): too many threads share too few connections."""
        if isinstance(exc, psycopg_pool.PoolTimeout) and self._in_use >= self._pool.max_size:
            return _Retry(StoreBusy(
                f"{what}: every connection of this handle's pool (hippo_pool_max={self._pool.max_size}) was in use "
                f"by other calls of this process for the {self._pool.timeout:g} s a call waits for one; raise "
                "hippo_pool_max to the number of threads that use the store at once (docs/deploy.md, Pool sizes)"))
        self._after_lost_connection()
        return _Retry(_translate(exc, what))

    def _stop_preparing(self, conn) -> None:
        """Statements psycopg prepared on ``conn`` were lost (:func:`_prepared_lost`): no connection of this store
        prepares a statement from now on, as with ``hippo_prepare_threshold=none``, and ``conn`` is closed (the pool
        replaces it) with whatever the pooler's server connections hold."""
        with contextlib.suppress(Exception):
            conn.close()
        with self._check_lock:
            if self._prepare_threshold is None:
                return
            self._prepare_threshold = None
        log.warning("store %r: a connection pooler between this process and the server loses prepared statements "
                    "between transactions (pgbouncer in transaction mode before 1.21, or without "
                    "max_prepared_statements); statements are no longer prepared for this handle: add "
                    "hippo_prepare_threshold=none to the URL to start that way", self.path)

    def _putconn(self, conn) -> None:
        with self._check_lock:
            self._in_use -= 1
        try:
            self._pool.putconn(conn)
        except Exception:  # noqa: BLE001 - a pool closed meanwhile: the connection goes with it
            with contextlib.suppress(Exception):
                conn.close()

    def _after_lost_connection(self) -> None:
        """The server went away: have the pool's other idle connections tested and the broken ones replaced, rather
        than fail on each in turn. The test runs a query on each idle connection, one after the other, and a query
        can wait long: behind pgbouncer it queues for a server connection up to ``query_wait_timeout`` (120 s by
        default) when the pooler has none free, and with the server's host unreachable it waits for TCP to give up.
        It therefore runs in a thread of its own (one per store at a time, run once more when asked for meanwhile):
        the call that lost its connection goes on retrying, bounded by ``hippo_retry_s`` and its last attempt's wait."""
        with self._check_lock:
            if self._checking:
                self._check_again = True
                return
            self._checking = True
        try:
            threading.Thread(target=self._check_pool, name=f"hippo-pool-check:{self.schema}", daemon=True).start()
        except RuntimeError:  # no thread can be started (interpreter shutting down)
            with self._check_lock:
                self._checking = False

    def _check_pool(self) -> None:
        while True:
            with self._check_lock:
                self._check_again = False
            if not self._closed:
                with contextlib.suppress(Exception):
                    self._pool.check()
            with self._check_lock:
                if not self._check_again or self._closed:
                    self._checking = False
                    return

    def _write(self, what: str, body: Callable[..., Any], namespace: str | Sequence[str] | None = None,
               replay_safe: bool = False, first: tuple[str, Sequence[Any]] | None = None) -> Any:
        """Run ``body(cursor)`` in one write transaction (after taking ``namespace``'s lock, or the lock of each of
        several namespaces, in the order of their keys whatever the order given: two transactions over the same
        namespaces never wait for each other in a cycle) and return its result.

        ``first``: a statement sent in the same round trip as the transaction's start; its first row is passed on,
        ``body(cursor, row)``. A body that returns :class:`_Last` has its last statement sent together with COMMIT.
        ``replay_safe``: running the body again after it committed changes nothing (an upsert, an append with its
        idempotency keys, a seal of a tail already sealed); such a write is retried even when the outcome of its
        commit cannot be learned."""
        self._writable(what)
        if namespace is None or isinstance(namespace, str):
            lock: int | list[int] | None = None if namespace is None else self._lock_key(namespace)
        else:
            lock = sorted({self._lock_key(n) for n in namespace})

        split: str | None = None

        def attempt() -> Any:
            nonlocal split
            try:
                try:
                    return self._attempt_write(what, body, lock, first, split)
                except _HeadCancelled as cancelled:
                    # a timeout ended the lock's wait or the first statement, which came back as one error: run again
                    # with the lock tried without waiting and the first statement sent after it, to tell them apart
                    split = cancelled.waited
                    return self._attempt_write(what, body, lock, first, split)
            except _Unsure as unsure:
                status = self._outcome(unsure.xid)
                if status == "committed":
                    return unsure.result
                if status == "aborted" or replay_safe:
                    raise _Retry(_translate(unsure.cause, what)) from None
                raise StoreError(f"{what}: the connection to the server broke while the transaction committed and "
                                 "whether it committed cannot be learned; read the namespace before repeating the "
                                 f"call ({unsure.cause})") from None

        return self._retrying(what, attempt)

    def _attempt_write(self, what: str, body: Callable[..., Any], lock: int | list[int] | None,
                       first: tuple[str, Sequence[Any]] | None = None, split: str | None = None) -> Any:
        """One attempt of :meth:`_write`. ``split``: a timeout ended the previous attempt's start (``split`` says
        which, :class:`_HeadCancelled`); this one takes the lock without waiting (held by another writer: StoreBusy
        at once, the wait was for it) and sends the body's first statement on its own after it, so that a timeout
        of that statement is not taken for a wait for the namespace's lock."""
        conn = self._connection(what)
        xid = None
        started = 0.0
        committing = waiting = False
        result = None
        try:
            cur = conn.cursor()
            # One round trip: the transaction, the wait bound, the idle bound, the namespace's lock, the transaction
            # id (asked about later if the connection breaks during COMMIT) and the body's first statement.
            # The idle bound: a process stopped in the middle of this transaction (SIGSTOP, a paused VM, a hung
            # thread) would otherwise hold the namespace's lock for as long as it stays stopped, and every other
            # writer of the namespace would raise StoreBusy all that time; the server ends the transaction instead
            # (it rolls back, and the resumed call finds its connection lost and runs again). The server arms that
            # timer when it reports itself ready for the next query, and any later message disarms it until it is
            # ready again: a pipeline ends with a flush request after its sync, so the head is sent as one
            # simple-protocol query instead (parameters bound on the client), which ends ready with nothing after.
            take = "pg_" + ("try_" if split is not None else "") + "advisory_xact_lock"
            if isinstance(lock, list):
                # one row of unnest per key, in the array's order (sorted): each lock taken after the one before
                locking = (f", l.got FROM (SELECT bool_and({take}(u.k)::text IS DISTINCT FROM 'false') AS got"
                           " FROM unnest(%s::bigint[]) AS u(k)) AS l")
            else:
                locking = "" if lock is None else f", l.got FROM (SELECT {take}(%s) AS got) AS l"
            head = [("BEGIN ISOLATION LEVEL READ COMMITTED", None),
                    (f"SET LOCAL lock_timeout = '{int(self._busy_ms)}ms'", None),
                    (f"SET LOCAL idle_in_transaction_session_timeout = '{int(self._idle_ms)}ms'", None),
                    (f"SELECT pg_current_xact_id()::text, {self._tables_sql()}" + locking,
                     None if lock is None else (lock,))]
            if first is not None and split is None:
                head.append(first)
            waiting = lock is not None
            started = time.monotonic()
            rows = self._begin(conn, head)
            waiting = False
            xid = rows[3][0]
            self._same_tables(rows[3][1], what)
            if split is not None and rows[3][2] is False:
                with contextlib.suppress(psycopg.Error):
                    conn.execute("ROLLBACK")
                raise StoreBusy(f"{what}: the namespace is locked by another writer (waited {split})")
            if first is not None and split is not None:
                rows.append(cur.execute(first[0], first[1]).fetchone())
            out = body(cur) if first is None else body(cur, rows[4])
            committing = True
            if isinstance(out, _Last):
                result = out.result
                self._batch(conn, [(out.sql, out.params), ("COMMIT", None)])
            else:
                result = out
                cur.execute("COMMIT")
            return result
        except BaseException as exc:
            lock_timeout = getattr(exc, "sqlstate", None) == "55P03"
            if waiting and (lock_timeout or _statement_timeout(exc, conn, started)):
                # A statement_timeout the DBA set (shorter than busy_timeout_s) or busy_timeout_s ended the wait for
                # the namespace's lock, or the first statement sent with it (a large append; a table another
                # transaction locked): which of the two, the next attempt tells
                with contextlib.suppress(psycopg.Error):
                    conn.execute("ROLLBACK")
                waited = "the configured busy_timeout_s" if lock_timeout else \
                    "until the server's statement_timeout, set for this role or database, cancelled the wait"
                if first is not None:
                    raise _HeadCancelled(waited) from None
                raise StoreBusy(f"{what}: the namespace is locked by another writer (waited {waited})") from None
            if waiting and _pooler_query_timeout(exc):
                # pgbouncer's query_timeout, shorter than busy_timeout_s, ended the wait for the lock (and closed the
                # connection, the transaction rolled back with it): another writer holds the namespace, as above
                with contextlib.suppress(Exception):
                    conn.close()
                raise StoreBusy(f"{what}: the namespace is locked by another writer (waited until the connection "
                                "pooler's query_timeout, shorter than busy_timeout_s, ended the wait)") from None
            self._failed(exc, conn, what, True, _Unsure(xid, result, exc) if committing else None, writing=True,
                         blame=False)
            raise
        finally:
            self._putconn(conn)

    def _failed(self, exc: BaseException, conn, what: str, in_txn: bool, unsure: "_Unsure | None" = None,
                writing: bool = False, blame: bool | None = None) -> None:
        """What a failed attempt on ``conn`` amounts to: its transaction rolled back where the connection still
        works, then ``unsure`` (a commit that may have gone through) or ``_Retry`` when the connection was lost,
        ``_Retry`` for a retryable server error, the translated error for any other driver error. Returns (and the
        caller re-raises ``exc``) for anything that is not a driver error."""
        lost = isinstance(exc, psycopg.Error) and self._connection_lost(exc, conn)
        prepared = not lost and not conn.closed and _prepared_lost(exc, conn)
        # A write's statement failing so proves that its transaction never committed only while the server reports the
        # transaction as failed (its COMMIT still to run, or skipped): then, as a read, it runs again without preparing
        again = prepared and (not writing or conn.info.transaction_status == psycopg.pq.TransactionStatus.INERROR)
        if in_txn and not lost and not conn.closed:
            with contextlib.suppress(psycopg.Error):
                conn.execute("ROLLBACK")
        if prepared:
            self._stop_preparing(conn)
            if again:
                raise _PreparedLost(_translate(exc, what)) from None
        if lost:
            if not conn.closed:  # never handed out again, whatever state its session is in
                with contextlib.suppress(Exception):
                    conn.close()
            self._after_lost_connection()
            if unsure is not None:
                raise unsure from None
            raise _Retry(_translate(exc, what)) from None
        if isinstance(exc, psycopg.Error) and (getattr(exc, "sqlstate", None) or "") in _RETRY_STATES:
            raise _Retry(_translate(exc, what)) from None
        if isinstance(exc, psycopg.Error):
            # blame: a lock timeout is the wait for the namespace's lock (else a table's or a row's)
            raise _translate(exc, what, writing if blame is None else blame) from None

    def _batch(self, conn, statements: list[tuple[str, Sequence[Any] | None]]) -> list[Any]:
        """Run statements in order in one round trip (libpq's pipeline mode) where the client library supports it,
        one by one otherwise; returns a cursor per statement, holding its result."""
        cursors = [conn.cursor() for _ in statements]
        if self._pipeline:
            with conn.pipeline():
                for cur, (sql, params) in zip(cursors, statements):
                    cur.execute(sql, params)
        else:
            for cur, (sql, params) in zip(cursors, statements):
                cur.execute(sql, params)
        return cursors

    @staticmethod
    def _begin(conn, statements: list[tuple[str, Sequence[Any] | None]]) -> list[tuple | None]:
        """Run the statements that start a write transaction in one round trip, as one simple-protocol query with
        the parameters bound on the client (see :meth:`_attempt_write` for why not a pipeline); returns the first
        row of each statement's result (None for a statement that returns no rows)."""
        params: list[Any] = []
        for _, p in statements:
            params.extend(p or ())
        cur = psycopg.ClientCursor(conn)
        cur.execute("; ".join(sql for sql, _ in statements), params)
        rows = []
        while True:  # one result per statement, in order
            rows.append(cur.fetchone() if cur.description else None)
            if not cur.nextset():
                return rows

    def _outcome(self, xid: str | None) -> str | None:
        """What the server says became of transaction ``xid``: 'committed', 'aborted' or None (unknown)."""
        if xid is None:
            return None
        deadline = time.monotonic() + self.retry_s

        def ask() -> str | None:
            with self._session("asking the server whether a commit went through") as cur:
                return cur.execute("SELECT pg_xact_status(%s::xid8)", (xid,)).fetchone()[0]

        while True:
            try:
                status = self._retrying("asking the server whether a commit went through", ask)
            except HippoError:
                return None
            # 'in progress': the old session has not finished its commit yet (its backend outlived the connection)
            if status != "in progress" or time.monotonic() > deadline:
                return status if status in ("committed", "aborted") else None
            time.sleep(0.05)

    @contextlib.contextmanager
    def _session(self, what: str, snapshot: bool = False) -> Iterator[Any]:
        """A cursor for one read attempt: in a read-only transaction when ``snapshot`` (several statements that must
        agree) or when the store is read-only, else autocommit. Inside :meth:`reading`, the block's transaction."""
        pinned = self._pinned()
        if pinned is not None:
            yield pinned.cursor()
            return
        conn = self._connection(what)
        in_txn = False
        try:
            cur = conn.cursor()
            if snapshot or self.read_only:
                cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                in_txn = True
            yield cur
            if in_txn:
                cur.execute("COMMIT")
        except BaseException as exc:
            self._failed(exc, conn, what, in_txn)
            raise
        finally:
            self._putconn(conn)

    def _read(self, what: str, body: Callable[[Any], Any], snapshot: bool = False) -> Any:
        """Run ``body(cursor)`` as one read, retried on another connection when the connection is lost."""
        pinned = self._pinned()
        if pinned is not None:  # inside reading(): one transaction, no retry here (read_consistently retries)
            try:
                return body(pinned.cursor())
            except psycopg.Error as exc:
                if self._connection_lost(exc, pinned):
                    with contextlib.suppress(Exception):
                        pinned.close()  # the block's end then returns it to the pool, which drops it
                    raise _LostInBlock(str(_translate(exc, what))) from None
                if _prepared_lost(exc, pinned):
                    self._stop_preparing(pinned)  # closed: the block's end returns it to the pool, which drops it
                    raise _PreparedLostInBlock(str(_translate(exc, what))) from None
                raise _translate(exc, what) from None

        def attempt() -> Any:
            with self._session(what, snapshot) as cur:
                return body(cur)

        return self._retrying(what, attempt)

    def _query(self, sql: str, params: Sequence[Any] = (), what: str = "reading the store") -> list[tuple]:
        return self._read(what, lambda cur: cur.execute(self._sql(sql), params).fetchall())

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """A block whose reads all see one state of the store (one ``REPEATABLE READ`` read-only transaction on a
        connection kept for the block). A lost connection inside the block raises instead of retrying."""
        if self._pinned() is not None:
            yield
            return
        what = "reading the store"

        def begin():
            conn = self._connection(what)
            try:
                conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            except psycopg.Error as exc:
                lost = self._connection_lost(exc, conn)
                prepared = not lost and _prepared_lost(exc, conn)
                if prepared:
                    self._stop_preparing(conn)
                self._putconn(conn)
                if lost:
                    self._after_lost_connection()
                    raise _Retry(_translate(exc, what)) from None
                if prepared:
                    raise _PreparedLost(_translate(exc, what)) from None
                raise _translate(exc, what) from None
            return conn

        conn = self._retrying(what, begin)
        self._local.conn = conn
        pid = os.getpid()
        try:
            yield
        finally:
            self._local.conn = None
            if os.getpid() != pid:  # forked inside the block: the connection and its transaction are the parent's
                return
            if not conn.closed:
                with contextlib.suppress(psycopg.Error):
                    conn.execute("COMMIT")
            self._putconn(conn)

    def read_consistently(self, read: Callable[[], Any]) -> Any:
        """``read()`` in one :meth:`reading` block; when the block's connection is lost (a server restart, a
        terminated backend), ``read`` runs again in a new block on another connection, retried like every read."""
        if self._pinned() is not None:  # inside a block already: its snapshot is the caller's
            return read()

        def attempt() -> Any:
            try:
                with self.reading():
                    return read()
            except _PreparedLostInBlock as exc:
                raise _PreparedLost(StoreError(str(exc))) from None
            except _LostInBlock as exc:
                self._after_lost_connection()
                raise _Retry(StoreError(str(exc))) from None

        return self._retrying("reading the store", attempt)

    # -- namespaces -------------------------------------------------------------------------------------------
    def _epoch_sql(self, key: str) -> str:
        return f"(SELECT COALESCE(MAX(value::bigint), 0) FROM {self._s}.meta WHERE key = '{key}')"

    def _tables_sql(self) -> str:
        """The object id of the schema's ``namespaces`` table (read from the catalog with the statement's snapshot):
        the same for as long as the tables live, another once they were dropped and created again (``pg_restore
        --clean``, the schema dropped and a new store made in its place)."""
        return ("(SELECT c.oid::bigint FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace x ON x.oid ="
                f" c.relnamespace WHERE x.nspname = '{self.schema}' AND c.relname = 'namespaces')")

    def _same_tables(self, tables: Any, what: str) -> None:
        """Refuse a call when the schema's tables are no longer those this handle opened: a restore (or a new store
        made in a dropped schema's place) brought back counters, ids and change numbers this handle has already seen
        with other content, so what it holds in memory would be mixed with the restored rows (a search answering
        with messages the restore removed, a write applied on top of them). Nothing is read or written; a handle
        opened after the restore reads the restored store."""
        if self._tables is None or tables == self._tables:
            return
        raise StoreError(f"{what}: the tables of schema {self.schema!r} in store {self.path!r} were dropped and "
                         "created again (a restore such as pg_restore --clean, or the schema dropped) after this "
                         "handle opened them, so what it holds in memory is of the store before; nothing was read "
                         "or written: close this Memory and open the URL again")

    _STATE_SQL = ("SELECT n.generation, n.next_seq, n.version, {epoch}, {change_epoch}, {tables}, {stamps}"
                  " FROM (VALUES (1)) AS one LEFT JOIN {s}.namespaces n ON n.name = %s")

    def _state_sql(self) -> str:
        return self._STATE_SQL.format(epoch=self._epoch_sql("namespace_epoch"),
                                      change_epoch=self._epoch_sql("change_epoch"), tables=self._tables_sql(),
                                      stamps="n.stamp::text, n.prev_stamp::text" if self._has_stamps else "NULL, NULL",
                                      s="{s}")

    def state(self, namespace: str) -> NamespaceState:
        return self._state_of(namespace, self._query(self._state_sql(), (namespace,))[0])

    def _state_of(self, namespace: str, row: Sequence[Any]) -> NamespaceState:
        generation, next_seq, version, epoch, change_epoch, tables, stamp, prev = row
        self._same_tables(tables, f"reading namespace {namespace!r}")
        if generation is None:
            return NamespaceState(int(epoch), 0, int(change_epoch))
        if common.bad_int(generation) or common.bad_int(next_seq) or common.bad_int(version):
            raise CorruptData(f"namespace {namespace!r}: its row is damaged (generation {generation!r}, next_seq "
                              f"{next_seq!r}); `hippo check --repair` rebuilds it")
        return NamespaceState(generation, next_seq, version, stamp, prev)

    def namespaces(self) -> list[str]:
        rows = self._query("SELECT n.name FROM {s}.namespaces n WHERE EXISTS (SELECT 1 FROM {s}.messages m"
                           " WHERE m.namespace = n.name) ORDER BY n.name COLLATE \"C\"")
        return [r[0] for r in rows]

    def _record(self, cur, namespace: str, kind: str, first_seq: int = -1, last_seq: int = -1,
                ids: Sequence[int] = (), generation: bool = False) -> int:
        """Take the namespace's next change number (and, for a deletion, its next generation) and record the
        change, inside the caller's transaction."""
        row = cur.execute(self._sql(
            "WITH v AS (UPDATE {s}.namespaces SET version = version + 1, prev_stamp = stamp, stamp = %s::uuid"
            + (", generation = generation + 1" if generation else "") + " WHERE name = %s RETURNING version, stamp)"
            " INSERT INTO {s}.changes (namespace, version, kind, first_seq, last_seq, ids, stamp)"
            " SELECT %s, v.version, %s, %s, %s, %s, v.stamp FROM v RETURNING version"),
            (str(uuid.uuid4()), namespace, namespace, kind, first_seq, last_seq, [int(i) for i in ids])).fetchone()
        return int(row[0])

    # -- writes -----------------------------------------------------------------------------------------------
    def append(self, namespace: str, messages: Sequence[NewMessage], codes: Any = None,
               expect: int | None = None) -> list[MessageRow]:
        if not messages:
            return []
        return self._append(namespace, messages, codes, expect)[0]

    def replace(self, namespace: str, messages: Sequence[NewMessage], ids: Iterable[int],
                where: Callable[[MessageRow], bool] | None = None, after_seq: int | None = None,
                codes: Any = None, expect: int | None = None) -> tuple[list[MessageRow], list[int]]:
        wanted = sorted({int(i) for i in ids})

        def remove(cur) -> list[int]:
            # before the new rows are inserted (they go with COMMIT): none of them can be among those deleted
            return self._delete_in(cur, namespace, self._doomed(cur, namespace, wanted, where, None, after_seq))

        if messages:
            return self._append(namespace, messages, codes, expect, remove)
        if codes is not None and len(codes):
            raise InvalidInput(f"codes: {len(codes)} rows for 0 messages")

        def body(cur) -> list[int]:
            if expect is not None:
                self._expect(cur, namespace, expect)
            return remove(cur)

        return [], self._write("replacing messages", body, namespace)

    def replace_many(self, parts: Sequence[Replace]) -> list[tuple[list[MessageRow], list[int]]]:
        parts = common.checked_parts(parts)
        if not parts:
            return []
        plans = [self._append_plan(p.namespace, p.messages, p.codes) if p.messages else None for p in parts]

        def body(cur) -> list[tuple[list[MessageRow], list[int]]]:
            out = []
            for p, plan in zip(parts, plans):
                wanted = sorted({int(i) for i in p.ids})
                if p.expect is not None:
                    self._expect(cur, p.namespace, p.expect)
                if plan is None:
                    out.append(([], self._delete_in(cur, p.namespace, self._doomed(
                        cur, p.namespace, wanted, p.where, None, p.after_seq))))
                    self._updates_in(cur, p)
                    continue
                reserve, append, _ = plan
                row = cur.execute(*reserve).fetchone()  # the append's change, recorded before the deletion's
                if row[0]:  # the keys of these very messages are stored already: this is no new write
                    raise InvalidInput(f"parts: the messages of namespace {p.namespace!r} carry idempotency keys "
                                       "already stored; they were written before")
                gone = self._delete_in(cur, p.namespace, self._doomed(cur, p.namespace, wanted, p.where, None,
                                                                      p.after_seq))
                rows = append(cur, row)
                assert isinstance(rows, _Last)
                cur.execute(rows.sql, rows.params)  # the rows inserted after the deletion: none of them among it
                out.append((rows.result, gone))
                self._updates_in(cur, p)
            return out

        # a new attempt reruns the whole body, but only once the server says the earlier one did not commit
        return self._write("writing several namespaces", body, [p.namespace for p in parts])

    def delete_namespaces(self, namespaces: Sequence[str]) -> int:
        names = list(dict.fromkeys(namespaces))
        if not names:
            return 0

        def body(cur) -> int:
            return sum(self._drop_in(cur, name) for name in names)

        return self._write("deleting a namespace" if len(names) == 1 else "deleting namespaces", body, names)

    def _expect(self, cur, namespace: str, expect: int) -> None:
        """Raise ``Changed`` unless the namespace's latest change is ``expect``; under its lock."""
        latest = cur.execute(self._sql(
            "SELECT COALESCE((SELECT version FROM {s}.namespaces WHERE name = %s), "
            + self._epoch_sql("change_epoch") + ")"), (namespace,)).fetchone()[0]
        if int(latest) != expect:
            raise Changed(f"namespace {namespace!r} changed since version {expect} (now {latest}); nothing was "
                          "written")

    def _append(self, namespace: str, messages: Sequence[NewMessage], codes: Any, expect: int | None,
                also: Callable[[Any], list[int]] | None = None) -> tuple[list[MessageRow], list[int]]:
        """Store ``messages``; ``also(cursor)``, when given, deletes messages in the same transaction (after the
        append's change is recorded, before its rows are inserted) and returns their ids. Returns the rows and those
        ids."""
        reserve, body, gone = self._append_plan(namespace, messages, codes, also)
        what = "adding messages" if also is None else "replacing messages"
        if expect is None:
            return self._write(what, body, namespace, replay_safe=True, first=reserve), gone
        change_epoch = self._epoch_sql("change_epoch")
        wanted = [uuid.UUID(str(m.key)) for m in messages if m.key is not None]  # checked by _append_plan

        def checked(cur) -> list[MessageRow] | _Last:
            # under the namespace's lock, taken first in the transaction: no other writer of it commits until this
            # one does. A retry of this very append after a commit it could not confirm finds its keys (and
            # returns the stored rows) rather than its own change.
            found, latest = cur.execute(self._sql(
                "SELECT (SELECT COUNT(*) FROM {s}.messages WHERE namespace = %s AND idem_key = ANY(%s)),"
                " COALESCE((SELECT version FROM {s}.namespaces WHERE name = %s), " + change_epoch + ")"),
                (namespace, wanted, namespace)).fetchone()
            if not found and int(latest) != expect:
                raise Changed(f"namespace {namespace!r} changed since version {expect} (now {latest}); nothing was "
                              "written")
            return body(cur, cur.execute(*reserve).fetchone())

        return self._write(what, checked, namespace, replay_safe=True), gone

    def _append_plan(self, namespace: str, messages: Sequence[NewMessage], codes: Any,
                     also: Callable[[Any], list[int]] | None = None
                     ) -> tuple[tuple[str, Sequence[Any]], Callable[[Any, Any], list[MessageRow] | _Last], list[int]]:
        """An append of ``messages`` to run in a write transaction holding the namespace's lock: the statement that
        reserves their seqs and ids and records the change, the body that takes its first row (``body(cursor,
        row)``, which calls ``also``, see :meth:`_append`) and returns the rows (or a :class:`_Last` whose statement
        inserts them), and the list that receives the ids ``also`` deleted."""
        if codes is not None and len(codes) != len(messages):
            raise InvalidInput(f"codes: {len(codes)} rows for {len(messages)} messages")
        keys: list[uuid.UUID | None] = []
        for k, m in enumerate(messages):
            if m.key is None:
                keys.append(None)
                continue
            try:
                keys.append(uuid.UUID(str(m.key)))
            except ValueError:
                raise InvalidInput(f"messages[{k}].key must be a UUID (engine.prepare makes one), got {m.key!r}") \
                    from None
        if len({k for k in keys if k is not None}) != sum(k is not None for k in keys):
            raise InvalidInput("messages: two messages carry the same idempotency key")
        tokens = [np.ascontiguousarray(m.tokens, dtype="<u4") for m in messages]
        metas = [json.dumps(m.metadata, ensure_ascii=False, separators=(",", ":")) for m in messages]
        n = len(messages)

        new_tokens = sum(int(t.size) for t in tokens)

        wanted = [k for k in keys if k is not None]
        # The first statement (sent with the transaction's start, after the lock): were these keys stored already (a
        # retry of this very append)? If not, reserve n seqs and n ids, and record the change; the tail's size comes
        # back too (for seal's look without the lock).
        epoch, change_epoch = self._epoch_sql("namespace_epoch"), self._epoch_sql("change_epoch")
        reserve = (self._sql(
            "WITH found AS (SELECT COUNT(*) AS n FROM {s}.messages WHERE namespace = %s AND idem_key = ANY(%s)),"
            " ns AS (INSERT INTO {s}.namespaces AS n (name, generation, next_seq, version, horizon, stamp)"
            " SELECT %s, " + epoch + ", %s, " + change_epoch + " + 1, " + change_epoch
            + ", %s::uuid WHERE (SELECT n FROM found) = 0"
            " ON CONFLICT (name) DO UPDATE SET next_seq = n.next_seq + EXCLUDED.next_seq, version = n.version + 1,"
            " prev_stamp = n.stamp, stamp = EXCLUDED.stamp"
            " RETURNING n.next_seq - %s AS first, n.version, n.stamp),"
            " ch AS (INSERT INTO {s}.changes (namespace, version, kind, first_seq, last_seq, ids, stamp)"
            " SELECT %s, ns.version, 'append', ns.first, ns.first + %s - 1, '{}', ns.stamp FROM ns)"
            " SELECT (SELECT n FROM found), r.first, r.ids,"
            " (SELECT COALESCE(SUM(length(tokens)), 0) / 4 FROM {s}.tail WHERE namespace = %s)"
            " FROM (VALUES (1)) AS one LEFT JOIN (SELECT ns.first, ARRAY(SELECT nextval(pg_get_serial_sequence("
            "%s, 'id')) FROM generate_series(1, %s)) AS ids FROM ns) AS r ON true"),
            (namespace, wanted, namespace, n, str(uuid.uuid4()), n, namespace, n, namespace, f"{self._s}.messages", n))

        def body(cur, row) -> list[MessageRow] | _Last:
            if row[0]:
                stored = cur.execute(self._sql(
                    f"SELECT {self._row_cols}, m.idem_key FROM {{s}}.messages m WHERE m.namespace = %s"
                    " AND m.idem_key = ANY(%s) ORDER BY m.seq"), (namespace, wanted)).fetchall()
                # An append stores all its messages or none, at consecutive seqs: where its keyed messages are places
                # the earlier attempt's batch, and its messages without a key are the rows at their seqs.
                place = {key: k for k, key in enumerate(keys) if key is not None}
                starts = {r[2] - place[r[common.ROW_WIDTH]] for r in stored if r[common.ROW_WIDTH] in place}
                start = starts.pop() if len(starts) == 1 else None
                if start is not None and None in keys:
                    stored = cur.execute(self._sql(
                        f"SELECT {self._row_cols}, m.idem_key FROM {{s}}.messages m WHERE m.namespace = %s"
                        " AND m.seq BETWEEN %s AND %s ORDER BY m.seq"), (namespace, start, start + n - 1)).fetchall()
                replayed = self._replayed(namespace, keys, tokens, stored, start)
                if also is not None:
                    # the earlier attempt committed, its deletion with it: the ids it deleted are its next change's
                    got = cur.execute(self._sql(
                        "SELECT d.ids FROM {s}.changes a JOIN {s}.changes d ON d.namespace = a.namespace"
                        " AND d.version = a.version + 1 AND d.kind = 'delete' WHERE a.namespace = %s"
                        " AND a.kind = 'append' AND a.first_seq = %s"), (namespace, replayed[0].seq)).fetchone()
                    gone[:] = sorted(int(i) for i in got[0]) if got else []
                return replayed
            if also is not None:
                gone[:] = also(cur)
            first, ids = row[1], [int(i) for i in row[2]]
            if common.bad_int(first):
                raise CorruptData(f"namespace {namespace!r}: next_seq {first!r} is damaged; `hippo check --repair` "
                                  "rebuilds it")
            out: list[MessageRow] = []
            cols: dict[str, list] = {c: [] for c in ("id", "seq", "n", "speaker", "role", "ts", "session", "meta",
                                                     "created", "key", "offset", "tokens", "checksum")}
            for k, m in enumerate(messages):
                seq, mid, blob = first + k, ids[k], tokens[k].tobytes()
                for c, v in (("id", mid), ("seq", seq), ("n", int(tokens[k].size)), ("speaker", m.speaker),
                             ("role", m.role), ("ts", None if m.ts is None else float(m.ts)),
                             ("session", m.session_id), ("meta", metas[k]), ("created", float(m.created_at)),
                             ("key", keys[k]), ("offset", m.utc_offset), ("tokens", blob),
                             ("checksum", common.tail_checksum(namespace, mid, seq, int(tokens[k].size), blob))):
                    cols[c].append(v)
                out.append(MessageRow(
                    id=mid, namespace=namespace, seq=seq, n_tokens=int(tokens[k].size), speaker=m.speaker,
                    role=m.role, ts=m.ts, session_id=m.session_id, metadata=m.metadata, created_at=m.created_at,
                    tokens=tokens[k].astype(np.uint32, copy=False), utc_offset=m.utc_offset))
            codes_sql, code_args = "", []
            if codes is not None:
                codes_sql = (", c AS (INSERT INTO {s}.codes (id, namespace, code) SELECT u.id, %s, u.code"
                             " FROM unnest(%s::bigint[], %s::bytea[]) AS u(id, code)"
                             " ON CONFLICT (id) DO UPDATE SET code = EXCLUDED.code)")
                code_args = [namespace, ids, [bytes(codes[k]) for k in range(n)]]
            # messages, their tail rows (and codes) in one statement, sent with COMMIT
            self._tail_hint[namespace] = int(row[3]) + new_tokens
            return _Last(out, self._sql(
                "WITH m AS (INSERT INTO {s}.messages (id, namespace, seq, n_tokens, speaker, role, ts, session_id,"
                " metadata, created_at, idem_key, utc_offset) SELECT u.id, %s, u.seq, u.n, u.speaker, u.role, u.ts,"
                " u.session, u.meta, u.created, u.key, u.off FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[],"
                " %s::text[], %s::text[], %s::float8[], %s::text[], %s::text[], %s::float8[], %s::uuid[],"
                " %s::float8[]) AS u(id, seq, n, speaker, role, ts, session, meta, created, key, off))" + codes_sql
                + " INSERT INTO {s}.tail (id, namespace, seq, tokens, checksum)"
                " SELECT u.id, %s, u.seq, u.tokens, u.checksum FROM unnest(%s::bigint[], %s::bigint[], %s::bytea[],"
                " %s::bytea[]) AS u(id, seq, tokens, checksum)"),
                (namespace, cols["id"], cols["seq"], cols["n"], cols["speaker"], cols["role"], cols["ts"],
                 cols["session"], cols["meta"], cols["created"], cols["key"], cols["offset"], *code_args,
                 namespace, cols["id"], cols["seq"], cols["tokens"], cols["checksum"]))

        gone: list[int] = []
        return reserve, body, gone

    def _replayed(self, namespace: str, keys: list, tokens: list[np.ndarray], stored: list[tuple],
                  start: int | None) -> list[MessageRow]:
        """The rows an earlier attempt of this very append stored at seqs ``start``, ``start + 1``, ... (placed by
        their idempotency keys; ``stored`` holds them, with the keyed rows found)."""
        by_seq = {r[2]: r for r in stored}
        if start is None or any(by_seq.get(start + k) is None or by_seq[start + k][common.ROW_WIDTH] != key
                                for k, key in enumerate(keys)):
            used = sorted(r[0] for r in stored if r[common.ROW_WIDTH] is not None)
            raise InvalidInput(f"messages: idempotency key(s) already used by message(s) {used[:10]} of namespace "
                               f"{namespace!r} that this append did not store")
        out = []
        for k, key in enumerate(keys):
            r = by_seq[start + k]
            if r[3] != tokens[k].size:
                raise InvalidInput(f"messages[{k}]: idempotency key {key} belongs to message {r[0]}, which holds "
                                   "other text")
            out.append(common.message_row(r, tokens[k].astype(np.uint32, copy=False)))
        log.info("namespace %r: an append retried after an unconfirmed commit found its %d message(s) stored",
                 namespace, len(out))
        return out

    def seal(self, namespace: str, min_tokens: int) -> int:
        self._writable("sealing the tail into a chunk")
        # Looked at without the lock first: most appends leave the tail short of a chunk, and then no writer of the
        # namespace waits for this one. Right after this process's own append, the size that append saw is enough:
        # if other processes grew the tail meanwhile, the append that takes it past min_tokens seals it.
        total = self._tail_hint.pop(namespace, None)
        if total is None:
            total = self._query("SELECT COALESCE(SUM(length(tokens)), 0) / 4 FROM {s}.tail WHERE namespace = %s",
                                (namespace,))[0][0]
        if total == 0 or total < min_tokens:
            return 0

        def body(cur) -> int:
            tail = cur.execute(self._sql(
                f"SELECT {self._row_cols}, t.tokens, t.checksum FROM {{s}}.tail t JOIN {{s}}.messages m ON m.id = t.id"
                " WHERE t.namespace = %s ORDER BY t.seq"), (namespace,)).fetchall()
            total = sum(r[3] for r in tail)
            if not tail or total < min_tokens:
                return 0
            last_chunk = cur.execute(self._sql("SELECT MAX(last_seq) FROM {s}.chunks WHERE namespace = %s"),
                                     (namespace,)).fetchone()[0]
            if last_chunk is not None and tail[0][2] <= last_chunk:
                raise CorruptData(f"namespace {namespace!r}: unsealed messages precede the last chunk")
            # verified before they move: a damaged row must not be sealed into a chunk with a fresh checksum
            arrays = [common.tail_tokens(namespace, r) for r in tail]
            sealed = np.concatenate(arrays).astype(np.uint32)
            members = [(r[0], r[2], r[3]) for r in tail]
            for first, last, a, b, ta, tb in common.chunk_parts(tail[0][2], tail[-1][2], members):
                self._insert_chunk(cur, namespace, first, last, members[a:b], sealed[ta:tb])
                cur.execute(self._sql("DELETE FROM {s}.tail WHERE namespace = %s AND seq <= %s"), (namespace, last))
                self._merge_chunks(cur, namespace)
            return int(sealed.size)

        return self._write("sealing the tail into a chunk", body, namespace, replay_safe=True)

    def _insert_chunk(self, cur, namespace: str, first_seq: int, last_seq: int,
                      members: list[tuple[int, int, int]], tokens: np.ndarray) -> None:
        ch = Chunk(0, first_seq, last_seq, len(members), int(tokens.size), self.codec.encode(tokens))
        cur.execute(self._sql(
            "INSERT INTO {s}.chunks (namespace, first_seq, last_seq, n_messages, n_tokens, blob, checksum)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s)"),
            (namespace, first_seq, last_seq, ch.n_messages, ch.n_tokens, ch.blob,
             common.chunk_sum(namespace, ch, members)))

    def _members(self, cur, namespace: str, first_seq: int, last_seq: int) -> list[tuple[int, int, int]]:
        """``(id, seq, n_tokens)`` of the sealed messages with ``first_seq <= seq <= last_seq``, in seq order."""
        return cur.execute(self._sql(
            "SELECT m.id, m.seq, m.n_tokens FROM {s}.messages m WHERE m.namespace = %s AND m.seq BETWEEN %s AND %s"
            " AND NOT EXISTS (SELECT 1 FROM {s}.tail t WHERE t.id = m.id) ORDER BY m.seq"),
            (namespace, first_seq, last_seq)).fetchall()

    def _merge_chunks(self, cur, namespace: str) -> None:
        while True:
            last2 = cur.execute(self._sql(f"SELECT {_CHUNK_COLS} FROM {{s}}.chunks WHERE namespace = %s"
                                          " ORDER BY first_seq DESC LIMIT 2"), (namespace,)).fetchall()
            if len(last2) < 2:
                return
            newer, older = Chunk(*last2[0]), Chunk(*last2[1])
            if not common.should_merge(older, newer):
                return
            m_old = self._members(cur, namespace, older.first_seq, older.last_seq)
            m_new = self._members(cur, namespace, newer.first_seq, newer.last_seq)
            merged = common.merged_tokens(self.codec, namespace, older, newer, m_old, m_new)
            cur.execute(self._sql("DELETE FROM {s}.chunks WHERE id = ANY(%s)"), ([older.id, newer.id],))
            self._insert_chunk(cur, namespace, older.first_seq, newer.last_seq, m_old + m_new, merged)

    def delete(self, namespace: str, ids: Iterable[int],
               where: Callable[[MessageRow], bool] | None = None,
               choose: Callable[[list[MessageRow]], Iterable[int]] | None = None) -> list[int]:
        wanted = sorted({int(i) for i in ids})
        if not wanted:
            return []

        def body(cur) -> list[int]:
            return self._delete_in(cur, namespace, self._doomed(cur, namespace, wanted, where, choose))

        return self._write("deleting messages", body, namespace)

    def _doomed(self, cur, namespace: str, wanted: list[int], where: Callable[[MessageRow], bool] | None,
                choose: Callable[[list[MessageRow]], Iterable[int]] | None,
                after_seq: int | None = None) -> list[tuple[int, int]]:
        """The (id, seq) of the messages a deletion takes, read under the namespace's lock: those of ``wanted`` and,
        with ``after_seq``, those at ``seq >= after_seq``, that ``where`` admits and ``choose`` picks."""
        cond, args = "m.id = ANY(%s)", [wanted]
        if after_seq is not None:
            cond, args = "(m.id = ANY(%s) OR m.seq >= %s)", [wanted, int(after_seq)]
        if where is None and choose is None:
            return [(int(i), int(q)) for i, q in cur.execute(self._sql(
                f"SELECT m.id, m.seq FROM {{s}}.messages m WHERE m.namespace = %s AND {cond}"),
                (namespace, *args)).fetchall()]
        # judged under the namespace's lock: no update commits between this read and the deletion
        return common.chosen([row for row in map(common.message_row, cur.execute(self._sql(
            f"SELECT {self._row_cols} FROM {{s}}.messages m WHERE m.namespace = %s AND {cond}"),
            (namespace, *args)).fetchall()) if where is None or where(row)], choose)

    def _delete_in(self, cur, namespace: str, found: list[tuple[int, int]]) -> list[int]:
        """Delete the messages ``found`` (id, seq) inside the caller's transaction, rewriting the chunks that held
        their tokens, and record the deletion; returns their ids."""
        if not found:
            return []
        dead_seqs = {seq for _, seq in found}
        chunks = [Chunk(*r) for r in cur.execute(self._sql(
            f"SELECT {_CHUNK_COLS} FROM {{s}}.chunks WHERE namespace = %s AND last_seq >= %s AND first_seq <= %s"
            " ORDER BY first_seq"), (namespace, min(dead_seqs), max(dead_seqs))).fetchall()]
        for ch in chunks:
            if not any(ch.first_seq <= s <= ch.last_seq for s in dead_seqs):
                continue
            kept, merged = common.chunk_without(self.codec, namespace, ch,
                                                self._members(cur, namespace, ch.first_seq, ch.last_seq),
                                                dead_seqs)
            cur.execute(self._sql("DELETE FROM {s}.chunks WHERE id = %s"), (ch.id,))
            for first, last, a, b, ta, tb in common.chunk_parts(ch.first_seq, ch.last_seq, kept):
                self._insert_chunk(cur, namespace, first, last, kept[a:b], merged[ta:tb])
        gone = sorted(i for i, _ in found)
        for table in ("messages", "codes", "tail"):
            cur.execute(self._sql(f"DELETE FROM {{s}}.{table} WHERE namespace = %s AND id = ANY(%s)"),
                        (namespace, gone))
        self._record(cur, namespace, "delete", ids=gone, generation=True)
        return gone

    def update_metadata(self, namespace: str, id: int, metadata: dict[str, Any]) -> bool:
        return self._write("updating metadata", lambda cur: self._update_in(cur, namespace, id, metadata), namespace)

    def _update_in(self, cur, namespace: str, id: int, metadata: dict[str, Any]) -> bool:
        """Replace one message's metadata inside the caller's transaction, which holds the namespace's lock, and
        record the update; False when ``id`` is not a message of ``namespace``."""
        meta_json = json.dumps(metadata, ensure_ascii=False, separators=(",", ":"))
        cur.execute(self._sql("UPDATE {s}.messages SET metadata = %s WHERE namespace = %s AND id = %s"),
                    (meta_json, namespace, int(id)))
        if cur.rowcount != 1:
            return False
        self._record(cur, namespace, "update", ids=[int(id)])
        return True

    def _updates_in(self, cur, part: Replace) -> None:
        for id, metadata in (part.updates or {}).items():
            self._update_in(cur, part.namespace, id, metadata)

    def delete_namespace(self, namespace: str) -> int:
        return self._write("deleting a namespace", lambda cur: self._drop_in(cur, namespace), namespace)

    def _drop_in(self, cur, namespace: str) -> int:
        """Remove ``namespace`` inside the caller's transaction, which holds its lock; returns how many messages it
        held."""
        n = cur.execute(self._sql("SELECT COUNT(*) FROM {s}.messages WHERE namespace = %s"),
                        (namespace,)).fetchone()[0]
        for table in ("messages", "chunks", "units", "codes", "tail", "changes"):
            cur.execute(self._sql(f"DELETE FROM {{s}}.{table} WHERE namespace = %s"), (namespace,))
        # The namespace's row goes and both epochs move past it: a process still caching the deleted namespace
        # sees a changed fingerprint and a feed that no longer reaches back to what it saw, even once the name is
        # reused. The epochs only ever grow: a deletion of another namespace (another lock) may commit its epochs
        # while this statement waits for their row, and the value this statement computed from its snapshot must
        # not take them back (a reused name would then start at a version a process still caching the deleted
        # namespace has seen, and that process would keep its messages).
        cur.execute(self._sql(
            "WITH gone AS (DELETE FROM {s}.namespaces WHERE name = %s RETURNING generation, version)"
            " INSERT INTO {s}.meta AS m (key, value)"
            " SELECT 'namespace_epoch',"
            " (GREATEST(" + self._epoch_sql("namespace_epoch") + ", generation) + 1)::text"
            " FROM gone UNION ALL"
            " SELECT 'change_epoch', (GREATEST(" + self._epoch_sql("change_epoch") + ", version) + 1)::text"
            " FROM gone ON CONFLICT (key) DO UPDATE"
            " SET value = GREATEST(m.value::bigint, EXCLUDED.value::bigint)::text"), (namespace,))
        return int(n)

    # -- reads ------------------------------------------------------------------------------------------------
    def load(self, namespace: str, after_seq: int = -1, upto_seq: int | None = None) -> list[MessageRow]:
        """Rows with ``after_seq < seq <= upto_seq`` and their tokens. Only those rows, the chunks holding their
        tokens and the (id, seq, n_tokens) of the other messages of those chunks (to verify them) are read, all in
        one snapshot: another process may seal or merge in between two statements otherwise."""
        after_seq = int(after_seq)
        upto = (1 << 62) if upto_seq is None else int(upto_seq)

        def body(cur):
            raw = cur.execute(self._sql(
                f"SELECT {self._row_cols}, t.tokens, t.checksum FROM {{s}}.messages m LEFT JOIN {{s}}.tail t"
                " ON t.id = m.id WHERE m.namespace = %s AND m.seq > %s AND m.seq <= %s ORDER BY m.seq"),
                (namespace, after_seq, upto)).fetchall()
            if after_seq < 0 and upto_seq is None:  # everything: every chunk too, also one no message reaches
                chunks = cur.execute(self._sql(f"SELECT {_CHUNK_COLS} FROM {{s}}.chunks WHERE namespace = %s"
                                               " ORDER BY first_seq"), (namespace,)).fetchall()
                return raw, [Chunk(*c) for c in chunks], []
            sealed = [r[2] for r in raw if r[common.TAIL_TOKENS] is None]
            if not sealed:
                return raw, [], []
            chunks = [Chunk(*c) for c in cur.execute(self._sql(
                f"SELECT {_CHUNK_COLS} FROM {{s}}.chunks WHERE namespace = %s AND last_seq >= %s AND first_seq <= %s"
                " ORDER BY first_seq"), (namespace, min(sealed), max(sealed))).fetchall()]
            if not chunks:
                return raw, [], []
            members = cur.execute(self._sql(
                "SELECT m.id, m.seq, m.n_tokens FROM {s}.messages m WHERE m.namespace = %s AND m.seq BETWEEN %s AND %s"
                " AND (m.seq <= %s OR m.seq > %s) AND NOT EXISTS (SELECT 1 FROM {s}.tail t WHERE t.id = m.id)"
                " ORDER BY m.seq"), (namespace, chunks[0].first_seq, chunks[-1].last_seq, after_seq, upto)).fetchall()
            return raw, chunks, members

        raw, chunks, members = self._read("reading the store", body, snapshot=True)
        if members:
            raw = sorted([*raw, *(common.member_row(*m) for m in members)], key=lambda r: r[2])
        return common.attach_tokens(self.codec, namespace, raw, chunks, after_seq, upto_seq)

    def load_tokens(self, namespace: str) -> np.ndarray:
        def body(cur):
            chunks = cur.execute(self._sql(f"SELECT {_CHUNK_COLS} FROM {{s}}.chunks WHERE namespace = %s"
                                           " ORDER BY first_seq"), (namespace,)).fetchall()
            raw = cur.execute(self._sql(
                "SELECT m.id, NULL, m.seq, m.n_tokens, NULL, NULL, NULL, NULL, NULL, NULL, NULL, t.tokens, t.checksum"
                " FROM {s}.messages m LEFT JOIN {s}.tail t ON t.id = m.id WHERE m.namespace = %s ORDER BY m.seq"),
                (namespace,)).fetchall()
            return [Chunk(*c) for c in chunks], raw

        chunks, raw = self._read("reading the store", body, snapshot=True)
        parts = [tokens for _, tokens in common.iter_tokens(self.codec, namespace, raw, chunks)]
        if not parts:
            return np.zeros(0, dtype=np.uint32)
        return np.concatenate(parts).astype(np.uint32, copy=False)

    def rows(self, namespace: str, ids: Iterable[int]) -> dict[int, MessageRow]:
        ids = sorted({int(i) for i in ids})
        if not ids:
            return {}
        found = self._query(f"SELECT {self._row_cols} FROM {{s}}.messages m WHERE m.id = ANY(%s) AND m.namespace = %s",
                            (ids, namespace))
        return {r[0]: common.message_row(r) for r in found}

    def rows_mentioning(self, namespace: str, needles: Sequence[str]) -> list[MessageRow]:
        needles = [str(n) for n in needles]
        if not needles:
            return []
        found = self._query(f"SELECT {self._row_cols} FROM {{s}}.messages m WHERE m.namespace = %s AND EXISTS"
                            " (SELECT 1 FROM unnest(%s::text[]) AS n(needle) WHERE strpos(m.metadata, n.needle) > 0)"
                            " ORDER BY m.seq", (namespace, needles))
        return [common.message_row(r) for r in found]

    def scan(self, namespace: str) -> Iterator[MessageRow]:
        """Every message row of ``namespace`` in seq order, read :data:`SCAN_PAGE_ROWS` at a time through a cursor of
        one ``REPEATABLE READ READ ONLY`` transaction: the namespace as it was when the scan began, whatever other
        processes write while the caller works through it, and never every row in memory at once (a namespace of
        1M tokens held tens of megabytes of rows for a list or an export). The scan holds a connection of the pool
        until it ends or is closed. A connection lost in the middle (a server restart, the server's
        ``idle_in_transaction_session_timeout`` while the caller worked) goes on after the last row given, in a new
        transaction, retried like every read; inside :meth:`reading` the block's transaction is used. A namespace of
        at most one page is read whole and the connection given back before the first row is."""
        sql = self._sql(f"SELECT {self._row_cols} FROM {{s}}.messages m WHERE m.namespace = %s AND m.seq > %s"
                        " ORDER BY m.seq")
        name = "hippo_scan_" + uuid.uuid4().hex
        fetch = f"FETCH {SCAN_PAGE_ROWS} FROM {name}"
        what = "reading the store"
        if self._pinned() is not None:  # the block's snapshot; a lost connection ends the block's reads
            self._read(what, lambda cur: cur.execute(f"DECLARE {name} NO SCROLL CURSOR FOR {sql}", (namespace, -1),
                                                     prepare=False))
            try:
                while True:
                    page = self._read(what, lambda cur: cur.execute(fetch, prepare=False).fetchall())
                    for r in page:
                        yield common.message_row(r)
                    if len(page) < SCAN_PAGE_ROWS:
                        return
            finally:
                pinned = self._pinned()
                if pinned is not None and not pinned.closed:
                    with contextlib.suppress(psycopg.Error):
                        pinned.execute(f"CLOSE {name}", prepare=False)
        after = -1
        stalled: float | None = None  # when a pass that gave no row since the last one failed first

        def begin() -> tuple[Any, list[tuple]]:
            conn = self._connection(what)
            try:
                conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                conn.execute(f"DECLARE {name} NO SCROLL CURSOR FOR {sql}", (namespace, after), prepare=False)
                page = conn.execute(fetch, prepare=False).fetchall()
                if len(page) < SCAN_PAGE_ROWS:  # all of it: the connection goes back before the caller's work
                    conn.execute("COMMIT")
                    self._putconn(conn)
                    return None, page
                return conn, page
            except BaseException as exc:
                try:
                    self._failed(exc, conn, what, True)
                finally:
                    self._putconn(conn)
                raise

        while True:
            conn, page = self._retrying(what, begin)
            if conn is None:
                for r in page:
                    yield common.message_row(r)
                return
            gave = False
            try:
                try:
                    while True:
                        for r in page:
                            row = common.message_row(r)
                            after, gave = row.seq, True
                            yield row
                        if len(page) < SCAN_PAGE_ROWS:
                            conn.execute("COMMIT")
                            return
                        page = conn.execute(fetch, prepare=False).fetchall()
                except BaseException as exc:  # the generator closed early included: rolled back
                    self._failed(exc, conn, what, True)  # raises _Retry when the connection was lost
                    raise
                finally:
                    self._putconn(conn)
            except _Retry as retry:  # on after the last row given, in a new transaction
                now = time.monotonic()
                stalled = None if gave else stalled if stalled is not None else now
                if stalled is not None and now - stalled > self.retry_s:
                    raise retry.final from None

    # -- the change feed --------------------------------------------------------------------------------------
    def changes(self, namespace: str, after: int, stamp: str | None = None) -> list[Change] | None:
        after = int(after)
        stamps = ("n.stamp::text, n.horizon_stamp::text, (SELECT c.stamp::text FROM {s}.changes c WHERE c.namespace"
                  " = n.name AND c.version = %s)") if self._has_stamps else "NULL, NULL, NULL"

        def body(cur):
            row = cur.execute(self._sql(
                "SELECT n.version, n.horizon, " + self._epoch_sql("change_epoch") + ", " + stamps
                + " FROM (VALUES (1)) AS one LEFT JOIN {s}.namespaces n ON n.name = %s"),
                ((after,) if self._has_stamps else ()) + (namespace,)).fetchone()
            if row[0] is None:
                # never written (nothing to catch up on when that is what the reader saw) or deleted since
                return row[2], row[2], None, []
            head, horizon = row[0], row[1]
            if not horizon <= after <= head:
                return head, horizon, None, []
            return head, horizon, row[3:], cur.execute(self._sql(
                "SELECT version, kind, first_seq, last_seq, ids FROM {s}.changes WHERE namespace = %s"
                " AND version > %s ORDER BY version"), (namespace, after)).fetchall()

        head, horizon, held, raw = self._read("reading the change feed", body, snapshot=True)
        if not horizon <= after <= head:
            return None
        if stamp is not None and held is not None and self._rewritten(str(stamp), after, head, horizon, *held):
            return None
        out: list[Change] = []
        expect = after + 1
        for version, kind, first, last, ids in raw:
            if version != expect or kind not in CHANGE_KINDS or not isinstance(ids, list):
                raise CorruptData(f"namespace {namespace!r}: the change feed is damaged at version {version}")
            out.append(Change(int(version), kind, int(first), int(last), tuple(int(i) for i in ids)))
            expect += 1
        if expect != head + 1:
            raise CorruptData(f"namespace {namespace!r}: the change feed stops at {expect - 1}, expected {head}")
        return out

    @staticmethod
    def _rewritten(stamp: str, after: int, head: int, horizon: int, head_stamp: str | None,
                   horizon_stamp: str | None, change_stamp: str | None) -> bool:
        """Whether the change ``after``, which a reader saw with ``stamp``, is held with another stamp: the history
        was rewritten under the reader (a data-only restore, a failover), so the feed after it does not lead from
        what the reader holds. At the head the namespace's own stamp decides (the reader's fingerprint was read from
        it); before it the change's, or the horizon's, where the store holds one: a change written by code before
        the stamps has none, and tells nothing."""
        if after == head:
            return head_stamp != stamp
        held = change_stamp if change_stamp is not None else horizon_stamp if after == horizon else None
        return held is not None and held != stamp

    def trim_changes(self, namespace: str, upto: int) -> int:
        def body(cur) -> int:
            row = cur.execute(self._sql("SELECT version, horizon FROM {s}.namespaces WHERE name = %s"),
                              (namespace,)).fetchone()
            if row is None:
                return 0
            limit = min(int(upto), int(row[0]))
            if limit <= row[1]:
                return 0
            # the stamp of the change at the new horizon stays with the row: a reader that saw that change tells it
            # from another history (see changes)
            cur.execute(self._sql("UPDATE {s}.namespaces SET horizon = %s, horizon_stamp = (SELECT c.stamp FROM"
                                  " {s}.changes c WHERE c.namespace = %s AND c.version = %s) WHERE name = %s"),
                        (limit, namespace, limit, namespace))
            cur.execute(self._sql("DELETE FROM {s}.changes WHERE namespace = %s AND version <= %s"),
                        (namespace, limit))
            return cur.rowcount

        return self._write("trimming the change feed", body, namespace, replay_safe=True)

    # -- embedding codes ----------------------------------------------------------------------------------------
    def put_codes(self, namespace: str, ids: list[int], codes: np.ndarray, version: int | None = None,
                  stamp: str | None = None) -> bool:
        pairs = [(int(i), bytes(c)) for i, c in zip(ids, codes)]
        if not pairs:
            return True

        def body(cur) -> bool:
            if version is not None and stamp is not None and self._has_stamps and not self._holds_change(
                    cur, namespace, int(version), str(stamp)):
                return False
            # only for messages that exist: a deletion elsewhere must not leave codes without a message behind
            cur.execute(self._sql(
                "INSERT INTO {s}.codes (id, namespace, code) SELECT u.id, %s, u.code"
                " FROM unnest(%s::bigint[], %s::bytea[]) AS u(id, code)"
                " WHERE EXISTS (SELECT 1 FROM {s}.messages m WHERE m.id = u.id AND m.namespace = %s)"
                " ON CONFLICT (id) DO UPDATE SET code = EXCLUDED.code"),
                (namespace, [p[0] for p in pairs], [p[1] for p in pairs], namespace))
            return True

        return self._write("saving embedding codes", body, namespace, replay_safe=True)

    def _holds_change(self, cur, namespace: str, version: int, stamp: str) -> bool:
        """Whether the namespace's history holds change ``version`` with ``stamp`` (not rewritten since a reader saw
        it: see :meth:`_rewritten`; a change before the feed's horizon tells nothing), read in the caller's
        transaction."""
        row = cur.execute(self._sql(
            "SELECT n.version, n.horizon, n.stamp::text, n.horizon_stamp::text, (SELECT c.stamp::text FROM {s}.changes"
            " c WHERE c.namespace = n.name AND c.version = %s) FROM {s}.namespaces n WHERE n.name = %s"),
            (version, namespace)).fetchone()
        if row is None:
            return False
        head, horizon = int(row[0]), int(row[1])
        return version <= head and not (horizon <= version
                                        and self._rewritten(stamp, version, head, horizon, *row[2:]))

    def get_codes(self, namespace: str) -> dict[int, bytes]:
        return {r[0]: bytes(r[1]) for r in self._query("SELECT id, code FROM {s}.codes WHERE namespace = %s",
                                                        (namespace,))}

    def codes_of(self, namespace: str, ids: Iterable[int]) -> dict[int, bytes]:
        ids = sorted({int(i) for i in ids})
        if not ids:
            return {}
        return {r[0]: bytes(r[1]) for r in self._query(
            "SELECT id, code FROM {s}.codes WHERE id = ANY(%s) AND namespace = %s", (ids, namespace))}

    # -- derived units (hierarchy snapshots) --------------------------------------------------------------------
    def put_units(self, namespace: str, kind: str, payload: bytes) -> None:
        self.put_units_many(namespace, {kind: payload})

    def put_units_many(self, namespace: str, payloads: dict[str, bytes | snapshot.Blob | None],
                       generation: int | None = None, version: int | None = None,
                       expect: dict[str, bytes | None] | None = None, stamp: str | None = None) -> bool:
        checked = generation is not None or version is not None or bool(expect)

        def body(cur) -> bool:
            if generation is not None or version is not None:
                cur.execute(self._sql(self._state_sql()), (namespace,))
                if not common.still_at(self._state_of(namespace, cur.fetchone()), generation, version, stamp):
                    return False
            if expect:
                kinds = list(expect)
                cur.execute(self._sql(
                    "SELECT u.kind, substring(u.payload from 1 for w.n) FROM {s}.units u"
                    " JOIN unnest(%s::text[], %s::int[]) AS w(kind, n) ON w.kind = u.kind"
                    " WHERE u.namespace = %s"), (kinds, [len(expect[k] or b"") for k in kinds], namespace))
                if not common.holds({k: bytes(v) for k, v in cur.fetchall()}, expect):
                    return False
            for kind, payload in payloads.items():
                if payload is None:
                    cur.execute(self._sql("DELETE FROM {s}.units WHERE namespace = %s AND kind = %s"),
                                (namespace, kind))
                elif isinstance(payload, snapshot.Blob) and len(payload) > snapshot.CHUNK:
                    self._copy_unit(cur, namespace, kind, payload)
                else:
                    cur.execute(self._sql(
                        "INSERT INTO {s}.units (namespace, kind, payload) VALUES (%s, %s, %s)"
                        " ON CONFLICT (namespace, kind) DO UPDATE SET payload = EXCLUDED.payload"),
                        (namespace, kind, bytes(payload)))
            return True

        # checked under the namespace's lock: no change, and no other checked save, commits between the check and
        # the write
        return self._write("saving units", body, namespace if checked else None, replay_safe=True)

    def _copy_unit(self, cur, namespace: str, kind: str, payload: snapshot.Blob) -> None:
        """Replace one blob by a row sent a chunk at a time (``COPY ... FROM STDIN`` in binary format), in the
        caller's transaction: the row of a bytea parameter would be held whole, and escaped, on this side."""
        cur.execute(self._sql("DELETE FROM {s}.units WHERE namespace = %s AND kind = %s"), (namespace, kind))
        fields = [namespace.encode("utf-8"), kind.encode("utf-8")]
        with cur.copy(self._sql("COPY {s}.units (namespace, kind, payload) FROM STDIN (FORMAT BINARY)")) as copy:
            copy.write(b"PGCOPY\n\xff\r\n\x00" + struct.pack("!iih", 0, 0, 3)
                       + b"".join(struct.pack("!i", len(f)) + f for f in fields) + struct.pack("!i", len(payload)))
            for chunk in payload.chunks():
                copy.write(chunk)
            copy.write(struct.pack("!h", -1))

    def get_units(self, namespace: str, kind: str) -> bytes | None:
        rows = self._query("SELECT payload FROM {s}.units WHERE namespace = %s AND kind = %s", (namespace, kind))
        return bytes(rows[0][0]) if rows else None

    def get_units_blob(self, namespace: str, kind: str) -> snapshot.Blob | None:
        """Read a chunk at a time (``substring`` of the row, in one read-only transaction): a snapshot blob, already
        deflated, is stored out of line and uncompressed, so each chunk reads only its own pages."""
        where = " FROM {s}.units WHERE namespace = %s AND kind = %s"

        def read() -> snapshot.Blob | None:
            rows = self._query("SELECT length(payload)" + where, (namespace, kind))
            if not rows:
                return None
            size, blob = rows[0][0], snapshot.Blob()
            try:
                for lo in range(0, size, snapshot.CHUNK):
                    blob.write(bytes(self._query("SELECT substring(payload from %s for %s)" + where,
                                                 (lo + 1, snapshot.CHUNK, namespace, kind))[0][0]))
            except BaseException:
                blob.close()
                raise
            return blob

        return self.read_consistently(read)

    def has_units(self, namespace: str, kind: str) -> bool:
        return bool(self._query("SELECT 1 FROM {s}.units WHERE namespace = %s AND kind = %s", (namespace, kind)))

    # -- verification (Memory.check) --------------------------------------------------------------------------
    def integrity_check(self) -> list[str]:
        """Problems PostgreSQL finds in the store's indexes: indexes left invalid (an interrupted build), and, when
        the ``amcheck`` extension is installed in the database, every B-tree index checked against its invariants.
        Table pages are checked by the server itself (``data_checksums``)."""
        def body(cur) -> tuple[list, list, bool]:
            invalid = cur.execute(
                "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n"
                " ON n.oid = c.relnamespace WHERE n.nspname = %s AND NOT (i.indisvalid AND i.indisready)",
                (self.schema,)).fetchall()
            btrees = cur.execute(
                "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n"
                " ON n.oid = c.relnamespace JOIN pg_am a ON a.oid = c.relam WHERE n.nspname = %s"
                " AND a.amname = 'btree' AND i.indisvalid ORDER BY c.relname", (self.schema,)).fetchall()
            amcheck = cur.execute("SELECT 1 FROM pg_extension WHERE extname = 'amcheck'").fetchone() is not None
            return invalid, btrees, amcheck

        invalid, btrees, amcheck = self._read("checking the store", body)
        problems = [f"index {r[0]} is invalid (an interrupted build); reindex it" for r in invalid]
        if amcheck:
            for (name,) in btrees:
                try:
                    self._read("checking an index", lambda cur, name=name: cur.execute(
                        "SELECT bt_index_check(%s::regclass)", (f'{self._s}."{name}"',)).fetchall())
                except HippoError as exc:
                    problems.append(f"index {name}: {exc}")
        return problems

    def all_namespaces(self) -> list[str]:
        rows = self._query(" UNION ".join(f"SELECT namespace FROM {{s}}.{t}" for t in
                                          ("messages", "chunks", "tail", "codes", "units", "changes"))
                           + " UNION SELECT name FROM {s}.namespaces")
        return sorted({r[0] for r in rows if isinstance(r[0], str)})

    def verify_namespace(self, namespace: str, check_tokens: Callable[[int, np.ndarray], str | None],
                         code_bytes: int | None) -> dict:
        """Verify every row of a namespace without stopping at the first problem (read in one snapshot)."""
        def body(cur):
            raw = cur.execute(self._sql(
                f"SELECT {self._row_cols}, t.tokens, t.checksum FROM {{s}}.messages m LEFT JOIN {{s}}.tail t"
                " ON t.id = m.id WHERE m.namespace = %s ORDER BY m.seq"), (namespace,)).fetchall()
            chunks = [Chunk(*c) for c in cur.execute(self._sql(
                f"SELECT {_CHUNK_COLS} FROM {{s}}.chunks WHERE namespace = %s ORDER BY first_seq"),
                (namespace,)).fetchall()]
            orphan_tail = cur.execute(self._sql(
                "SELECT t.id FROM {s}.tail t WHERE t.namespace = %s AND NOT EXISTS (SELECT 1 FROM {s}.messages m"
                " WHERE m.id = t.id AND m.namespace = t.namespace)"), (namespace,)).fetchall()
            codes = cur.execute(self._sql(
                "SELECT c.id, length(c.code), m.id FROM {s}.codes c LEFT JOIN {s}.messages m ON m.id = c.id"
                " AND m.namespace = c.namespace WHERE c.namespace = %s"), (namespace,)).fetchall()
            ns_row = cur.execute(self._sql("SELECT generation, next_seq FROM {s}.namespaces WHERE name = %s"),
                                 (namespace,)).fetchone()
            return raw, chunks, orphan_tail, codes, ns_row

        raw, chunks, orphan_tail, codes, ns_row = self._read("checking the store", body, snapshot=True)
        return common.verify_rows(self.codec, namespace, raw, chunks, orphan_tail, codes, ns_row, check_tokens,
                                  code_bytes)

    def repair_namespace_row(self, namespace: str, max_seq: int) -> None:
        """Derived fields of a namespace row: next_seq past the last message (its generation moves on too, so every
        process reloads the namespace)."""
        def body(cur) -> None:
            epoch = self._epoch_sql("namespace_epoch")
            cur.execute(self._sql(
                "INSERT INTO {s}.namespaces (name, generation, next_seq) VALUES (%s, " + epoch + ", 0)"
                " ON CONFLICT (name) DO NOTHING"), (namespace,))
            cur.execute(self._sql(
                "UPDATE {s}.namespaces SET next_seq = GREATEST(%s, next_seq),"
                " generation = CASE WHEN generation >= 0 THEN generation + 1 ELSE " + epoch + " + 1 END"
                " WHERE name = %s"), (max_seq + 1, namespace))

        self._write("repairing a namespace row", body, namespace)

    def drop_codes(self, namespace: str, ids: list[int]) -> None:
        self._write("dropping embedding codes", lambda cur: cur.execute(self._sql(
            "DELETE FROM {s}.codes WHERE namespace = %s AND id = ANY(%s)"), (namespace, [int(i) for i in ids])),
            namespace, replay_safe=True)

    def drop_units(self, namespace: str, kind: str) -> None:
        self._write("dropping a unit snapshot", lambda cur: cur.execute(self._sql(
            "DELETE FROM {s}.units WHERE namespace = %s AND kind = %s"), (namespace, kind)), replay_safe=True)

    def reindex(self) -> None:
        """Rebuild every index of the store's tables (indexes are derived); needs the tables' owner. One
        transaction: REINDEX TABLE waits for every transaction holding a lock on its table and, while it waits, every
        later statement on the table queues behind it, readers included; it gives up after busy_timeout_s
        (StoreBusy) instead, by a ``SET LOCAL`` that ends with the transaction (a session-level SET would stay on a
        pooler's server connection, for another client, behind pgbouncer's transaction pooling)."""
        what = "rebuilding the indexes"
        self._writable(what)

        def attempt() -> None:
            with self._session(what) as cur:
                with cur.connection.transaction():
                    cur.execute(f"SET LOCAL lock_timeout = '{int(self._busy_ms)}ms'")
                    for t in TABLES:
                        cur.execute(f"REINDEX TABLE {self._s}.{t}")

        self._retrying(what, attempt)

    # -- maintenance ------------------------------------------------------------------------------------------
    def sizes(self) -> dict[str, int]:
        row = self._query(
            "SELECT (SELECT COUNT(*) FROM {s}.messages),"
            " (SELECT COALESCE(SUM(n_tokens), 0) FROM {s}.messages),"
            " (SELECT COALESCE(SUM(length(tokens)), 0) FROM {s}.tail),"
            " (SELECT COALESCE(SUM(length(blob)), 0) FROM {s}.chunks),"
            " (SELECT COUNT(*) FROM {s}.chunks),"
            " (SELECT COALESCE(SUM(length(metadata) + COALESCE(length(speaker), 0) + COALESCE(length(session_id), 0)"
            " + length(role) + 24), 0) FROM {s}.messages),"
            " (SELECT COALESCE(SUM(length(payload)), 0) FROM {s}.units), "
            + " + ".join(f"pg_total_relation_size('{self._s}.{t}')" for t in TABLES), what="measuring the store")[0]
        keys = ("messages", "tokens", "tail_token_bytes", "chunk_bytes", "chunks", "metadata_bytes", "unit_bytes",
                "file_bytes")
        return {k: int(v) for k, v in zip(keys, row)}

    def vacuum(self) -> None:
        """``VACUUM (ANALYZE)`` of the store's tables: space of deleted rows becomes reusable, statistics fresh. It
        cannot run in a transaction block, and needs no lock timeout: its lock (SHARE UPDATE EXCLUSIVE) makes neither
        readers nor writers wait behind it."""
        what = "vacuuming the store"
        self._writable(what)

        def attempt() -> None:
            with self._session(what) as cur:
                cur.execute(f"VACUUM (ANALYZE) {', '.join(f'{self._s}.{t}' for t in TABLES)}")

        self._retrying(what, attempt)

    def scrub(self) -> bool:
        """Deleted rows are invisible from their commit on. PostgreSQL keeps their bytes in dead tuples until
        (auto)vacuum reuses the space, and in its write-ahead log, archives, replicas and backups for as long as
        the server's retention says: a client cannot erase those, so there is nothing to do here (docs/deploy.md)."""
        return True

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._pid != os.getpid():  # a child's copy of a handle it never used: the pool is the parent's
            with _FORK_LOCK:
                self._leave_parents_pool()
        if self._pool is not None:
            with contextlib.suppress(Exception):
                self._pool.close()
