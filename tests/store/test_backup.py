"""Backups of a SQLite store while it is in use, and restoring them (hippo.store.backup, Memory.backup, the
`hippo backup` / `hippo restore` commands)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import types
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

import hippo
from hippo import CorruptData, InvalidInput, Memory, NotFound, StoreError
from hippo.store import backup as backup_mod
from hippo.store.base import Store
from tests.cli.conftest import cli

DATA = Path(__file__).resolve().parent.parent / "core" / "data"
T0 = datetime(2026, 3, 3, 9, 0, tzinfo=timezone(timedelta(hours=-5)))


def _fill(mem: Memory, word: str, n: int) -> list[int]:
    return [mem.add(f"{word} note {i}: the {word} project meets on day {i}", role="user" if i % 2 else "assistant",
                    speaker="Ann" if i % 3 else None, timestamp=T0 + timedelta(hours=i), session_id=f"s{i // 4}",
                    metadata={"i": i, "word": word}).id for i in range(n)]


def _export(mem: Memory, path: Path) -> list[dict]:
    mem.export(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[1:]]


def _texts(path: Path, namespace: str) -> list[str]:
    with Memory(path, namespace=namespace, read_only=True) as mem:
        return [m.text for m in mem.list()]


def test_a_backup_holds_every_namespace_as_the_store_does(tmp_path):
    store = tmp_path / "s.db"
    with Memory(store, namespace="a") as a, a.using("b") as b:
        _fill(a, "heron", 12)
        _fill(b, "kestrel", 7)
        a.delete([a.list()[3].id])
        a.update(a.list()[0].id, metadata={"tag": "kept"})
        size = a.backup(tmp_path / "copy.db")
        assert size == os.path.getsize(tmp_path / "copy.db")
        want = {ns: _export(a.using(ns), tmp_path / f"{ns}.jsonl") for ns in ("a", "b")}
    assert sorted(os.listdir(tmp_path)) == ["a.jsonl", "b.jsonl", "copy.db", "s.db"]  # nothing else beside it
    with Memory(tmp_path / "copy.db", namespace="a") as copy:
        assert sorted(copy.namespaces()) == ["a", "b"]
        for ns in ("a", "b"):
            assert _export(copy.using(ns), tmp_path / f"{ns}-copy.jsonl") == want[ns]
        assert copy.check()["ok"]
        assert copy.search("heron project day 5", k=1)[0].text == "heron note 5: the heron project meets on day 5"


def test_a_backup_holds_what_the_log_holds_and_a_copy_of_the_file_does_not(tmp_path):
    # The reference hazard: in WAL mode the latest commits live in the -wal until a checkpoint, so copying the file
    # alone loses them. The backup holds them.
    store = tmp_path / "s.db"
    with Memory(store) as mem:
        mem.add("the first note")
        mem._rt.store.checkpoint()
        mem.add("a note only the log holds yet")
        assert os.path.getsize(str(store) + "-wal") > 0
        shutil.copyfile(store, tmp_path / "cp.db")
        mem.backup(tmp_path / "bk.db")
    assert _texts(tmp_path / "cp.db", "default") == ["the first note"]
    assert _texts(tmp_path / "bk.db", "default") == ["the first note", "a note only the log holds yet"]


WRITER = textwrap.dedent("""
    import sys
    import hippo
    mem = hippo.Memory(sys.argv[1], namespace="w")
    print("ready", flush=True)
    for i in range(100000):
        mem.add_many([{"text": f"batch {i} first"}, {"text": f"batch {i} second"}])
""")


@contextlib.contextmanager
def _writer(store: Path):
    """Another process adding pairs of messages to ``store`` (namespace "w"), one transaction a pair, until the
    block ends. The store holds the pair "batch start" first."""
    with Memory(store, namespace="w") as mem:
        mem.add_many([{"text": "batch start first"}, {"text": "batch start second"}])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(store)], stdout=subprocess.PIPE, env=env, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        yield
    finally:
        proc.kill()
        proc.wait()


def _one_committed_state(path: Path) -> int:
    """How many messages the copy at ``path`` holds, checking that they are a prefix of the writer's sequence in
    whole pairs (each pair is one transaction)."""
    texts = _texts(path, "w")
    assert len(texts) % 2 == 0
    assert texts == ["batch start first", "batch start second"] + [
        f"batch {i} {part}" for i in range(len(texts) // 2 - 1) for part in ("first", "second")]
    return len(texts)


def test_backups_taken_while_another_process_writes_are_each_one_committed_state(tmp_path):
    store = tmp_path / "s.db"
    counts = []
    with _writer(store), Memory(store, namespace="w") as mem:
        for k in range(4):
            dest = tmp_path / f"bk{k}.db"
            mem.backup(dest)
            counts.append(_one_committed_state(dest))
            with Memory(dest, read_only=True) as copy:
                assert copy.check()["ok"]
    assert counts == sorted(counts)


def test_a_restore_from_a_store_another_process_writes_is_one_committed_state(tmp_path):
    # the backup named is a store in use (its -wal and -shm beside it): read through SQLite's locks, not copied as
    # bytes, which a checkpoint between copying the file and its log could tear
    live = tmp_path / "live.db"
    with _writer(live):
        for k in range(4):
            dest = tmp_path / f"r{k}.db"
            backup_mod.restore(live, dest)
            _one_committed_state(dest)


def test_an_in_memory_store_is_saved_to_a_file(tmp_path):
    mem = Memory(None, namespace="x")
    _fill(mem, "wren", 5)
    mem.backup(tmp_path / "saved.db")
    assert _texts(tmp_path / "saved.db", "x") == [m.text for m in mem.list()]


def test_a_backup_refuses_the_store_itself_and_a_store_in_use(tmp_path):
    store = tmp_path / "s.db"
    with Memory(store) as mem:
        mem.add("one note")
        for bad in (store, str(store) + "-wal", str(store) + "-shm"):
            with pytest.raises(InvalidInput, match="store file itself"):
                mem.backup(bad)
        with pytest.raises(NotFound, match="folder does not exist"):
            mem.backup(tmp_path / "no" / "such.db")
        (tmp_path / "dir.db").mkdir()
        with pytest.raises(InvalidInput, match="not a regular file"):
            mem.backup(tmp_path / "dir.db")
        with pytest.raises(InvalidInput, match="path must be a str"):
            mem.backup(3)
        # another store, open: replacing it would mix its log into the copy
        with Memory(tmp_path / "other.db") as other:
            other.add("the other store's note")
            before = (tmp_path / "other.db").read_bytes()
            with pytest.raises(InvalidInput, match="open in some process"):
                mem.backup(tmp_path / "other.db")
            assert (tmp_path / "other.db").read_bytes() == before
            assert [m.text for m in other.list()] == ["the other store's note"]
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


HOLDER = textwrap.dedent("""
    import sys, time
    from hippo import Memory
    mem = Memory(sys.argv[1])
    mem.add("the held store's note")
    print("ready", flush=True)
    time.sleep(60)
""")


def test_a_backup_replaces_a_backup_that_was_checked_read_only_but_not_a_store_another_process_holds(tmp_path):
    # a nightly backup checked with a read-only open (which leaves its -wal and -shm behind): the next night's
    # backup replaces it
    with Memory(tmp_path / "s.db") as mem:
        mem.add("monday's note")
        mem.backup(tmp_path / "nightly.db")
        with Memory(tmp_path / "nightly.db", read_only=True) as check:
            assert check.check()["ok"]
        mem.add("tuesday's note")
        assert mem.backup(tmp_path / "nightly.db") == os.path.getsize(tmp_path / "nightly.db")
        assert not [p for p in os.listdir(tmp_path) if p.startswith("nightly.db-")]
        assert _texts(tmp_path / "nightly.db", "default") == ["monday's note", "tuesday's note"]
        # a store another process has open is still refused, and left as it was
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path / "held.db")], stdout=subprocess.PIPE,
                                env=env, text=True)
        try:
            assert proc.stdout.readline().strip() == "ready"
            with pytest.raises(InvalidInput, match="open in some process"):
                mem.backup(tmp_path / "held.db")
        finally:
            proc.kill()
            proc.wait()
    with Memory(tmp_path / "held.db") as held:
        assert [m.text for m in held.list()] == ["the held store's note"]


def test_a_store_that_is_no_file_says_how_to_back_it_up():
    # Store's own default, which the PostgreSQL store keeps: its server's tools back it up
    from hippo.store.postgres import PostgresStore

    assert PostgresStore.backup is Store.backup
    with pytest.raises(StoreError, match="pg_dump"):
        Store.backup(types.SimpleNamespace(), "x.db")


def test_restore_in_place_while_a_process_holds_the_store(tmp_path):
    store = tmp_path / "s.db"
    holder = Memory(store)
    _fill(holder, "heron", 6)
    holder.backup(tmp_path / "bk.db")
    holder.add("a later note about the Dublin marathon")
    holder.delete([holder.list()[0].id])
    assert holder.search("Dublin marathon", k=1)
    report = backup_mod.restore(str(tmp_path / "bk.db"), str(store))
    assert report["messages"] == 6 and report["namespaces"] == 1
    # the open handle reads the restored store: the later note is gone, the deleted one back
    assert [m.text for m in holder.list()] == _texts(tmp_path / "bk.db", "default")
    assert not [h for h in holder.search("Dublin marathon", k=5) if "Dublin" in h.text]
    holder.add("a note after the restore")
    holder.close()
    with Memory(store) as mem:
        assert mem.check()["ok"]
        assert [m.text for m in mem.list()][-1] == "a note after the restore"
        assert len(mem.list()) == 7


def test_restore_of_another_store_with_the_same_counters_is_seen_by_an_open_handle(tmp_path):
    # Two stores written the same way hold the same generation, next seq and change version: only the raised
    # generation tells the open handle that what it holds in memory is no longer the store.
    with Memory(tmp_path / "b.db") as b:
        _fill(b, "kestrel", 5)
    holder = Memory(tmp_path / "a.db")
    _fill(holder, "heron", 5)
    assert holder.search("heron project", k=1)
    backup_mod.restore(str(tmp_path / "b.db"), str(tmp_path / "a.db"))
    assert [m.text for m in holder.list()] == _texts(tmp_path / "b.db", "default")
    assert holder.search("kestrel project day 3", k=1)[0].text.startswith("kestrel note 3")
    holder.close()


def test_restore_in_place_of_a_store_of_another_page_size(tmp_path):
    # a store made by another SQLite build or setting: SQLite refuses to write a copy of one page size into a file
    # in WAL mode of another ("attempt to write a readonly database")
    other = sqlite3.connect(tmp_path / "other.db")
    other.execute("PRAGMA page_size=8192")
    other.execute("VACUUM")
    other.close()
    with Memory(tmp_path / "other.db") as mem:
        _fill(mem, "kestrel", 5)
    store = tmp_path / "s.db"
    holder = Memory(store)
    _fill(holder, "heron", 3)
    page = holder._rt.store._query("PRAGMA page_size")[0][0]
    assert page != 8192
    report = backup_mod.restore(tmp_path / "other.db", store)
    assert report["messages"] == 5
    assert [m.text for m in holder.list()] == _texts(tmp_path / "other.db", "default")
    holder.close()
    with Memory(store) as mem:
        assert mem.check()["ok"] and mem._rt.store._query("PRAGMA page_size")[0][0] == page


def test_restore_to_a_free_path_and_of_an_older_store(tmp_path):
    shutil.copy(DATA / "store_v2.db", tmp_path / "old.db")
    report = backup_mod.restore(str(tmp_path / "old.db"), str(tmp_path / "new.db"))
    assert report["namespaces"] == 2
    for ns in ("alpha", "beta"):
        with Memory(tmp_path / "new.db", namespace=ns) as mem:
            assert mem.check()["ok"]
            got = [m.text for m in mem.list()]
        # the backup itself is untouched: still schema 2, and it reads the same through an upgrading copy
        assert got and got == _texts_upgraded(tmp_path, ns)
    db = sqlite3.connect(tmp_path / "old.db")
    assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("2",)
    db.close()
    assert sorted(os.listdir(tmp_path)) == ["new.db", "old.db", "scratch.db"]


def _texts_upgraded(tmp_path: Path, ns: str) -> list[str]:
    shutil.copy(DATA / "store_v2.db", tmp_path / "scratch.db")
    with Memory(tmp_path / "scratch.db", namespace=ns) as mem:
        return [m.text for m in mem.list()]


def test_restore_refuses_what_is_no_store_and_leaves_the_path_as_it_was(tmp_path):
    (tmp_path / "text.db").write_text("hello")
    foreign = sqlite3.connect(tmp_path / "app.db")
    foreign.execute("CREATE TABLE orders(id INTEGER)")
    foreign.commit()
    foreign.close()
    with Memory(tmp_path / "s.db") as mem:
        mem.add("kept as it was")
    for bad, err in (("text.db", InvalidInput), ("app.db", InvalidInput), ("none.db", NotFound)):
        with pytest.raises(err):
            backup_mod.restore(str(tmp_path / bad), str(tmp_path / "s.db"))
        with pytest.raises(err):
            backup_mod.restore(str(tmp_path / bad), str(tmp_path / "free.db"))
    with pytest.raises(InvalidInput, match="itself"):
        backup_mod.restore(str(tmp_path / "s.db"), str(tmp_path / "s.db"))
    assert _texts(tmp_path / "s.db", "default") == ["kept as it was"]
    assert not (tmp_path / "free.db").exists()
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_the_backup_and_restore_commands(tmp_path, capsys):
    store = tmp_path / "s.db"
    with Memory(store) as mem:
        _fill(mem, "heron", 4)
    run = cli(capsys, "backup", tmp_path / "bk.db", "--path", store, "--json")
    assert run.code == 0
    assert json.loads(run.out) == {"path": str(store), "backup": str(tmp_path / "bk.db"),
                                   "bytes": os.path.getsize(tmp_path / "bk.db")}
    with Memory(store) as mem:
        mem.add("added after the backup")
    run = cli(capsys, "restore", tmp_path / "bk.db", "--path", store)  # standard input is no terminal: refused
    assert run.code != 0 and "--yes" in run.err
    assert len(_texts(store, "default")) == 5
    run = cli(capsys, "restore", tmp_path / "bk.db", "--path", store, "--yes", "--json")
    assert run.code == 0 and json.loads(run.out)["messages"] == 4
    assert len(_texts(store, "default")) == 4
    run = cli(capsys, "backup", tmp_path / "x.db", "--path", "postgresql://u@h/db")
    assert run.code != 0 and "pg_dump" in run.err
    run = cli(capsys, "backup", tmp_path / "x.db", "--path", tmp_path / "missing.db")
    assert run.code != 0 and "no store" in run.err


def test_restore_takes_path_objects_and_names_a_bad_argument(tmp_path):
    with Memory(tmp_path / "s.db") as mem:
        _fill(mem, "heron", 3)
        mem.backup(tmp_path / "bk.db")
    report = backup_mod.restore(tmp_path / "bk.db", tmp_path / "r.db")  # os.PathLike, as Memory.backup takes
    assert report["messages"] == 3 and _texts(tmp_path / "r.db", "default") == _texts(tmp_path / "s.db", "default")
    good = str(tmp_path / "bk.db")
    for args, kwargs, name in (((None, str(tmp_path / "x.db")), {}, "backup_path"), ((123, "x.db"), {}, "backup_path"),
                               ((good, None), {}, "path"), ((good, 5), {}, "path"), ((good, "x\x00"), {}, "path"),
                               ((good, "\ud800.db"), {}, "path"), ((good, ""), {}, "path"),
                               ((good, str(tmp_path / "x.db")), {"busy_timeout_s": "10"}, "busy_timeout_s"),
                               ((good, str(tmp_path / "x.db")), {"busy_timeout_s": float("nan")}, "busy_timeout_s"),
                               ((good, str(tmp_path / "x.db")), {"busy_timeout_s": None}, "busy_timeout_s")):
        with pytest.raises(InvalidInput, match=name):
            backup_mod.restore(*args, **kwargs)
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp") or p.startswith(("x.db", "\ufffd"))]


def test_restore_of_a_copy_taken_with_its_log(tmp_path):
    # a store copied with its -wal beside it (a file-system snapshot of a store in use): SQLite reads both
    store = tmp_path / "s.db"
    mem = Memory(store)
    mem.add("in the file")
    mem._rt.store.checkpoint()
    mem.add("only in the log")
    (tmp_path / "snap").mkdir()
    shutil.copyfile(store, tmp_path / "snap" / "s.db")
    shutil.copyfile(str(store) + "-wal", tmp_path / "snap" / "s.db-wal")
    mem.close()
    backup_mod.restore(str(tmp_path / "snap" / "s.db"), str(tmp_path / "r.db"))
    assert _texts(tmp_path / "r.db", "default") == ["in the file", "only in the log"]
    # nothing was written beside the backup (no -shm: its folder may be read-only media)
    assert sorted(os.listdir(tmp_path / "snap")) == ["s.db", "s.db-wal"]


RESTORE_AT_A_LIMIT = textwrap.dedent("""
    import json, os, resource, signal, sys
    from hippo.store import backup
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[3]), resource.RLIM_INFINITY))
    try:
        backup.restore(sys.argv[1], sys.argv[2])
        print(json.dumps(["returned", ""]))
    except BaseException as exc:
        print(json.dumps([type(exc).__name__, str(exc)]))
""")


@pytest.mark.skipif(sys.platform != "linux", reason="rlimits as on Linux")
@pytest.mark.parametrize("with_log", [False, True])
def test_restore_on_a_full_disk_raises_a_store_error_and_leaves_nothing(tmp_path, with_log):
    # a file size limit stands for a full disk: no file may grow past half the backup's size
    store = tmp_path / "s.db"
    (tmp_path / "bk").mkdir()
    mem = Memory(store)
    _fill(mem, "heron", 40)
    if with_log:  # a snapshot of the store in use
        shutil.copyfile(store, tmp_path / "bk" / "b.db")
        shutil.copyfile(str(store) + "-wal", tmp_path / "bk" / "b.db-wal")
    mem.close()
    if not with_log:
        shutil.copyfile(store, tmp_path / "bk" / "b.db")
    before = sorted(os.listdir(tmp_path / "bk"))
    (tmp_path / "out").mkdir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.run([sys.executable, "-c", RESTORE_AT_A_LIMIT, str(tmp_path / "bk" / "b.db"),
                           str(tmp_path / "out" / "r.db"), str(os.path.getsize(store) // 2)],
                          capture_output=True, text=True, env=env, timeout=120)
    kind, message = json.loads(proc.stdout)
    assert kind == "StoreError", (kind, message)
    assert "not a readable" not in message  # the backup is sound: the disk is what failed
    assert os.listdir(tmp_path / "out") == []
    assert sorted(os.listdir(tmp_path / "bk")) == before


LOCK_HOLDER = textwrap.dedent("""
    import sqlite3, sys, time
    db = sqlite3.connect(sys.argv[1], isolation_level=None)
    db.execute("BEGIN IMMEDIATE")  # a writer that keeps the write lock (a stuck transaction)
    print("ready", flush=True)
    time.sleep(60)
""")


def test_restore_into_a_store_another_writer_keeps_locked_gives_up_after_the_busy_timeout(tmp_path):
    store = tmp_path / "s.db"
    with Memory(store) as mem:
        _fill(mem, "heron", 3)
        mem.backup(tmp_path / "bk.db")
        mem.add("after the backup")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, str(store)], stdout=subprocess.PIPE, env=env,
                            text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        with pytest.raises(hippo.StoreBusy, match="busy_timeout_s=0.2"):
            backup_mod.restore(tmp_path / "bk.db", store, busy_timeout_s=0.2)
    finally:
        proc.kill()
        proc.wait()
    assert len(_texts(store, "default")) == 4  # left as it was
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


KILLED_WRITER = textwrap.dedent("""
    import os, sys
    from hippo import Memory
    m = Memory(sys.argv[1])
    m.add("before the log")
    m._rt.store.checkpoint()
    m._rt.store._db.execute("PRAGMA wal_autocheckpoint=0")
    for i in range(30):
        m.add(f"committed message number {i} about the harbor")
    os._exit(0)
""")


def test_restore_refuses_a_copy_whose_log_is_damaged_where_sqlite_would_drop_commits(tmp_path):
    # a file-system snapshot of a store in use whose -wal took a bit flip: SQLite alone would replay the log up
    # to the flip and drop the 30-odd commits after it without a word; opening it with hippo refuses it
    (tmp_path / "snap").mkdir()
    snap = tmp_path / "snap" / "s.db"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    subprocess.run([sys.executable, "-c", KILLED_WRITER, str(snap)], check=True, timeout=120, env=env)
    log = Path(str(snap) + "-wal")
    data = bytearray(log.read_bytes())
    page = int.from_bytes(data[8:12], "big")
    data[32 + 4 * (24 + page) + 24 + 300] ^= 0x20  # a byte of the fifth frame's page
    log.write_bytes(bytes(data))
    with pytest.raises(CorruptData, match="damaged at frame 4"):
        Memory(snap, read_only=True)
    with Memory(tmp_path / "s.db") as mem:
        mem.add("the live store's note")
    for dest in ("s.db", "free.db"):
        with pytest.raises(InvalidInput, match="damaged at frame 4.*nothing was restored"):
            backup_mod.restore(snap, tmp_path / dest)
    assert _texts(tmp_path / "s.db", "default") == ["the live store's note"]
    assert not (tmp_path / "free.db").exists()
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
    assert log.read_bytes() == bytes(data)  # the backup is left as it was


def test_hippo_exports_what_the_docs_use():
    assert callable(hippo.Memory.backup) and callable(backup_mod.restore)


def test_a_copy_left_by_a_killed_backup_or_restore_is_cleared_by_the_next(tmp_path):
    # a process killed mid-copy (kill -9, a crash) leaves its hidden copy beside the destination; the next backup or
    # restore there removes it, while the copy of a process still running stays
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(ended.stdout)
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        store = tmp_path / "s.db"
        with Memory(store) as mem:
            mem.add("one note")
        for dest in ("bk.db", "s.db"):
            stale = tmp_path / f".{dest}.{dead}.abc123.tmp"
            live = tmp_path / f".{dest}.{running.pid}.def456.tmp"
            for f in (stale, live, tmp_path / f"{stale.name}-wal"):
                f.write_bytes(b"partial copy")
            if dest == "bk.db":
                with Memory(store) as mem:
                    mem.backup(tmp_path / dest)
            else:
                backup_mod.restore(tmp_path / "bk.db", store)
            assert not stale.exists() and not (tmp_path / f"{stale.name}-wal").exists()
            assert live.exists()
            live.unlink()
        assert _texts(store, "default") == ["one note"]
    finally:
        running.kill()
        running.wait()
