"""Online backups of a SQLite store, and restoring one.

A store in WAL mode is two files while it is in use: the database and its ``-wal`` log, which holds the latest
committed transactions until a checkpoint copies them into the database. Copying the database file alone (``cp``)
therefore loses those transactions, and a copy taken while a process writes can be torn. Copying a backup back
over the file while the old ``-wal`` is still beside it is worse: the next open replays the old log onto the
restored pages, a mix of two histories.

:func:`backup` uses SQLite's online backup API from one read transaction, so the copy is one consistent state of
every namespace while other processes go on reading and writing (WAL readers do not block writers). The copy is
written to a temporary file in the destination's folder, checked (``PRAGMA quick_check``), synced and renamed over
the destination, so the destination is either the old file or the whole copy.

:func:`restore` puts a backup back at a store's path. The backup is first copied and opened by this version (which
upgrades an older store and refuses a file that is no hippo store, or whose log is damaged: :mod:`hippo.store.wal`).
When no store is at the path the copy is renamed there; otherwise it is written into the live file through SQLite's
backup API, which goes through the file's own log and locks, so nothing stale is replayed and processes that have
the store open see the restored content at their next read. Every namespace's counters (generation, change version)
and the store's epochs are raised past both files' values first, and the copy's change feed cleared: a process
holding a namespace in memory sees it changed and reads it again, even where the backup's counters happen to equal
the ones it saw. The first open after a restore rebuilds the derived indexes (as after a deletion).
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import sqlite3
import time

from hippo.base.errors import HippoError, InvalidInput, NotFound, StoreBusy, StoreError
from hippo.store.filecopy import (
    _SUFFIXES,
    _check_destination,
    _checked,
    _copy,
    _placeable,
    _remove,
    _sync_folder,
    _temp_beside,
    backup,
    read_only_connection,
)
from hippo.store import wal
from hippo.store.sqlite import SQLiteStore, check_path

__all__ = ["backup", "restore"]


def _write_failed(exc: sqlite3.Error) -> bool:
    """Whether SQLite could not write its files (a full disk, a file size limit, a failing device), rather than
    read a damaged or foreign one."""
    return getattr(exc, "sqlite_errorcode", 0) & 0xFF in (sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR)


class _Busy(Exception):
    """The live file stayed locked by another writer past the busy timeout."""


def _backup_within(work: sqlite3.Connection, live: sqlite3.Connection, busy_timeout_s: float) -> None:
    """``work`` written whole into ``live`` in one step. SQLite's backup call is retried for as long as another
    connection holds the write lock (the Python loop around it waits without end); this gives up once the lock was
    waited for ``busy_timeout_s``, with ``live`` as it was."""
    start = time.monotonic()

    def progress(status: int, remaining: int, total: int) -> None:
        if status in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) and time.monotonic() - start >= busy_timeout_s:
            raise _Busy()

    work.backup(live, pages=-1, progress=progress, sleep=min(0.25, busy_timeout_s / 4 or 0.001))


def _copied_as_bytes(backup_path: str, tmp: str) -> list:
    """The backup, and its log when one is beside it (a file-system snapshot of a store in use), copied to ``tmp``
    as bytes: nothing is written beside the backup (no -shm), which may be on read-only media. SQLite reads the
    copied log into the copy, left as one file; returns ``PRAGMA quick_check``'s rows."""
    shutil.copyfile(backup_path, tmp)
    if os.path.exists(backup_path + "-wal"):
        shutil.copyfile(backup_path + "-wal", tmp + "-wal")
    check = sqlite3.connect(tmp, isolation_level=None)
    try:
        return _checked(check)
    finally:
        check.close()


def _same_page_size(work: sqlite3.Connection, live: sqlite3.Connection) -> None:
    """The copy rewritten with the live store's page size when they differ (a store made by another SQLite build or
    with another setting): SQLite cannot write a copy of one page size into a file in WAL mode of another."""
    size = live.execute("PRAGMA page_size").fetchone()[0]
    if work.execute("PRAGMA page_size").fetchone()[0] == size:
        return
    mode = str(work.execute("PRAGMA journal_mode").fetchone()[0]).lower()
    work.execute("PRAGMA journal_mode=DELETE")  # a WAL file keeps its page size
    work.execute(f"PRAGMA page_size={int(size)}")
    work.execute("VACUUM")
    if mode == "wal":
        work.execute("PRAGMA journal_mode=WAL")


def _counters(db: sqlite3.Connection) -> tuple[dict[str, tuple[int, int]], dict[str, int]]:
    """(namespace -> (generation, change version), epoch key -> value) of a store; empty where tables are missing."""
    names: dict[str, tuple[int, int]] = {}
    epochs: dict[str, int] = {}
    with contextlib.suppress(sqlite3.Error):
        for name, gen, version in db.execute("SELECT name, generation, version FROM namespaces"):
            names[str(name)] = (gen if isinstance(gen, int) else 0, version if isinstance(version, int) else 0)
    with contextlib.suppress(sqlite3.Error):
        for key, value in db.execute("SELECT key, value FROM meta WHERE key IN ('namespace_epoch', 'change_epoch')"):
            epochs[str(key)] = int(value) if str(value).isdigit() else 0
    return names, epochs


def _past_both(work: sqlite3.Connection, live: sqlite3.Connection) -> None:
    """Raise the copy's counters past those of both stores (inside a transaction on ``work``, the copy): each
    namespace's generation, and its change version, with its feed cleared so that it reaches back to no version a
    process may have seen; and the epochs a namespace absent from the copy reads as. A process holding a namespace
    in memory then finds it changed and read again, whatever the counters were."""
    live_names, live_epochs = _counters(live)
    names, epochs = _counters(work)
    for name, (gen, version) in names.items():
        live_gen, live_version = live_names.get(name, (0, 0))
        head = max(version, live_version) + 1
        work.execute("UPDATE namespaces SET generation = ?, version = ?, horizon = ? WHERE name = ?",
                     (max(gen, live_gen) + 1, head, head, name))
        work.execute("DELETE FROM changes WHERE namespace = ?", (name,))
    for key, at in (("namespace_epoch", 0), ("change_epoch", 1)):
        value = max([epochs.get(key, 0), live_epochs.get(key, 0)] + [v[at] for v in live_names.values()]) + 1
        work.execute("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                     (key, str(value)))


def restore(backup_path: str | os.PathLike, path: str | os.PathLike, *, busy_timeout_s: float = 10.0) -> dict[str, int]:
    """Put the store backed up at ``backup_path`` back at ``path`` (see the module's notes). Returns
    ``{"namespaces": ..., "messages": ..., "bytes": ...}`` of the restored store. Both paths are ``str`` or
    ``os.PathLike``."""
    backup_path = check_path(backup_path, "backup_path")
    path = check_path(path, "path")
    if isinstance(busy_timeout_s, bool) or not isinstance(busy_timeout_s, (int, float)) \
            or not math.isfinite(busy_timeout_s) or busy_timeout_s < 0:
        raise InvalidInput(f"busy_timeout_s must be a finite number of seconds >= 0, got {busy_timeout_s!r}")
    if not os.path.isfile(backup_path):
        raise NotFound(f"backup {backup_path!r} is not a file")
    real = _placeable(path, "path")
    if os.path.realpath(backup_path) in {real + s for s in _SUFFIXES}:
        raise InvalidInput(f"backup {backup_path!r} is the store at path {path!r} itself")
    try:  # SQLite would replay the log up to a damaged frame and drop the commits after it without a word
        damaged = wal.confirmed_damage(backup_path)
    except OSError:  # a log that cannot be read: copying it below says so
        damaged = None
    if damaged is not None:
        raise InvalidInput(f"backup {backup_path!r}: {damaged.describe()}; nothing was restored. Run `hippo check "
                           f"--repair --path {backup_path}` to keep a copy of the log and accept the loss, then "
                           "restore")
    tmp = _temp_beside(real)
    try:
        try:
            if os.path.exists(backup_path + "-wal") and os.path.exists(backup_path + "-shm"):
                # perhaps a store some process has open: read through SQLite's locks, one committed state (its
                # -shm is there already, so nothing new is left beside it)
                src = read_only_connection(backup_path)
                try:
                    _copy(src, tmp)  # checked there
                finally:
                    src.close()
                bad = [("ok",)]
            else:
                bad = _copied_as_bytes(backup_path, tmp)
        except HippoError:
            raise
        except OSError as exc:
            raise StoreError(f"copying backup {backup_path!r} beside path {path!r}: {exc.strerror or exc}") from exc
        except sqlite3.Error as exc:
            if _write_failed(exc):
                raise StoreError(f"copying backup {backup_path!r} beside path {path!r}: {exc}") from exc
            raise InvalidInput(f"backup {backup_path!r} is not a readable SQLite store: {exc}") from exc
        if bad != [("ok",)]:
            raise InvalidInput(f"backup {backup_path!r} does not check clean: {bad[:3]}")
        # this version opens the copy: an older store is upgraded, a foreign or damaged file refused
        store = SQLiteStore(tmp, busy_timeout_s=busy_timeout_s)
        try:
            sizes = store.sizes()
            namespaces = len(store.all_namespaces())
        finally:
            store.close()
        work = sqlite3.connect(tmp, isolation_level=None, timeout=busy_timeout_s)
        try:
            if os.path.exists(real):
                try:
                    live = sqlite3.connect(real, isolation_level=None, timeout=busy_timeout_s)
                    live.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
                except sqlite3.Error as exc:
                    raise StoreError(f"path {path!r} cannot be restored in place ({exc}); move the file (and any "
                                     "-wal / -shm beside it) aside, then restore to the free path") from exc
                try:
                    _same_page_size(work, live)
                    work.execute("BEGIN IMMEDIATE")
                    _past_both(work, live)
                    work.execute("COMMIT")
                    _backup_within(work, live, busy_timeout_s)  # through the live file's own locks and log
                    with contextlib.suppress(sqlite3.Error):
                        live.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                except _Busy:
                    raise StoreBusy(f"restoring into path {path!r}: the store is locked by another writer (waited "
                                    f"busy_timeout_s={busy_timeout_s:g}); nothing was restored") from None
                except sqlite3.Error as exc:
                    raise StoreError(f"restoring into path {path!r}: {exc}") from exc
                finally:
                    live.close()
            else:
                _check_destination(real, "path")  # no log of an earlier store left to be replayed onto the copy
                work.close()
                try:
                    os.replace(tmp, real)
                except OSError as exc:
                    raise StoreError(f"renaming the copy to path {path!r}: {exc.strerror or exc}") from exc
                _sync_folder(real)
        finally:
            work.close()
    finally:
        _remove(tmp)
    return {"namespaces": namespaces, "messages": int(sizes["messages"]), "bytes": os.path.getsize(real)}
