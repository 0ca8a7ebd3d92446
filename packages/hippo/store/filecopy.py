"""Copying a SQLite database whole and consistently, and putting a copy in place: the file work behind
:mod:`hippo.store.backup` and :meth:`hippo.store.sqlite.SQLiteStore.backup` (see the notes there)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
import urllib.parse

from hippo.base.errors import HippoError, InvalidInput, NotFound, StoreError

__all__ = ["backup", "read_only_connection", "read_only_uri"]

_SUFFIXES = ("", "-wal", "-shm", "-journal")


def _companions(path: str) -> list[str]:
    """The ``-wal`` / ``-shm`` / ``-journal`` files beside ``path`` that exist."""
    return [path + s for s in _SUFFIXES[1:] if os.path.exists(path + s)]


def _placeable(dest: str, name: str) -> str:
    """The real path of ``dest``, a file that may be written whole; raises naming ``name`` when it is something
    else than a regular file, or its folder does not exist."""
    real = os.path.realpath(dest)
    if os.path.exists(real) and not os.path.isfile(real):
        raise InvalidInput(f"{name} {dest!r} is not a regular file (a directory, a device or a pipe)")
    if not os.path.isdir(os.path.dirname(real) or "."):
        raise NotFound(f"{name} {dest!r}: its folder does not exist")
    return real


def _check_destination(dest: str, name: str, store_file: str | None = None) -> str:
    """The real path a copy may be renamed to; raises naming ``name`` when it is the store itself, not a regular
    file, or a store that is open or was not closed (a ``-wal`` or ``-shm`` beside it would be replayed onto the
    copy, or deleted by the process that holds it). A ``-wal`` / ``-shm`` that no process holds (left by a read-only
    open) is cleared first."""
    real = _placeable(dest, name)
    if store_file is not None and real in {os.path.realpath(store_file + s) for s in _SUFFIXES}:
        raise InvalidInput(f"{name} {dest!r} is the store file itself; back up to another file")
    left = _companions(real)
    if left and os.path.isfile(real):
        _close_once(real)
        left = _companions(real)
    if left:
        raise InvalidInput(f"{name} {dest!r} has {', '.join(os.path.basename(p) for p in left)} beside it: a store "
                           "there is open in some process (or cannot be opened here to clear them). Close it before "
                           "replacing it")
    return real


def _close_once(real: str) -> None:
    """Open and close the SQLite file ``real`` once, as hippo would: when no process has it open, SQLite folds its
    ``-wal`` into it and removes the ``-wal`` and ``-shm`` (a read-only open leaves them behind, such as the one
    that checked a backup); when one has, they stay. Nothing happens to a file SQLite cannot open."""
    with contextlib.suppress(sqlite3.Error):
        db = sqlite3.connect(real, isolation_level=None, timeout=0)
        try:
            db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        finally:
            db.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def _clear_stale(real: str) -> None:
    """Remove the copies beside ``real`` that a backup or restore killed before it finished left behind: hidden files
    ``.<name>.<pid>.<random>.tmp`` whose process on this machine has ended (with their -wal / -shm / -journal).
    A copy of a process still running is its work in progress and stays."""
    folder, name = os.path.dirname(real) or ".", os.path.basename(real)
    head = f".{name}."
    try:
        entries = os.listdir(folder)
    except OSError:
        return
    for entry in entries:
        if not (entry.startswith(head) and entry.endswith(".tmp")):
            continue
        pid = entry[len(head):].split(".", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            _remove(os.path.join(folder, entry))


def _temp_beside(real: str) -> str:
    """A new hidden file beside ``real`` (mode 0600, like a store hippo creates) named after this process, so that a
    later backup or restore can tell a copy left by a killed one from another's in progress (:func:`_clear_stale`)."""
    _clear_stale(real)
    try:
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(real) or ".", prefix=f".{os.path.basename(real)}.{os.getpid()}.",
                                   suffix=".tmp")
    except OSError as exc:
        raise StoreError(f"cannot write beside {real!r}: {exc.strerror or exc}") from exc
    os.close(fd)
    return tmp


def _remove(path: str) -> None:
    for p in [path] + [path + s for s in _SUFFIXES[1:]]:
        with contextlib.suppress(OSError):
            os.unlink(p)


def _sync_file(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sync_folder(path: str) -> None:
    with contextlib.suppress(OSError):  # not every file system lets a folder be opened and synced
        fd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _checked(db: sqlite3.Connection) -> list:
    """``PRAGMA quick_check``'s rows for the copy ``db``; when it is clean, the copy's own log (it keeps the store's
    WAL mode) is folded into it, so that one file is the whole copy."""
    bad = db.execute("PRAGMA quick_check").fetchall()
    if bad == [("ok",)]:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return bad


def _copy(src: sqlite3.Connection, tmp: str) -> None:
    """The whole of ``src`` into the empty file ``tmp``, in one step (one read transaction of ``src``: a backup done
    in several steps starts again whenever another connection writes, and might never finish under steady writes),
    checked (:func:`_checked`) and synced."""
    dst = sqlite3.connect(tmp, isolation_level=None)
    try:
        src.backup(dst, pages=-1)
        bad = _checked(dst)
        if bad != [("ok",)]:
            raise StoreError(f"the copy at {tmp!r} does not check clean: {bad[:3]}")
    finally:
        dst.close()
    _sync_file(tmp)


def backup(src: sqlite3.Connection, dest: str, *, store_file: str | None = None, name: str = "path") -> int:
    """Write a consistent copy of the database behind ``src`` to ``dest`` (see the module's notes); returns the copy's
    size in bytes. ``store_file`` is the store's own file, which ``dest`` may not name."""
    real = _check_destination(dest, name, store_file)
    tmp = _temp_beside(real)
    try:
        _copy(src, tmp)
        os.replace(tmp, real)
    except BaseException as exc:
        _remove(tmp)
        if isinstance(exc, sqlite3.Error):
            raise StoreError(f"backing up to {name} {dest!r}: {exc}") from exc
        if isinstance(exc, OSError) and not isinstance(exc, HippoError):
            raise StoreError(f"backing up to {name} {dest!r}: {exc.strerror or exc}") from exc
        raise
    _sync_folder(real)
    return os.path.getsize(real)


def read_only_uri(path: str) -> str:
    """SQLite's URI that opens the file at ``path`` read-only (``mode=ro``)."""
    return "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"


def read_only_connection(path: str) -> sqlite3.Connection:
    return sqlite3.connect(read_only_uri(path), uri=True, isolation_level=None)


