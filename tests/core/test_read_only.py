"""``Memory(path, read_only=True)``: every read answers, every write raises ReadOnlyError, the file never changes;
also without write permission and on a full disk. And ``Config.synchronous``: SQLite's durability setting."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import hippo
from hippo import Config, Memory
from hippo.base.errors import InvalidInput, NotFound, ReadOnlyError
from tests.unwritable import unwritable_store

HERE = Path(__file__).resolve().parent
ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _build(path: Path) -> list[str]:
    """A store with two namespaces, sealed chunks, a unit snapshot and entries; returns the default texts."""
    texts = [f"message {i}: Ann took the red kayak to the lake on day {i}" for i in range(60)]
    with Memory(path, config={"seal_tokens": 128}) as mem:
        mem.add_many([{"text": t, "speaker": "Ann" if i % 2 else "Bob", "session_id": f"s{i // 20}",
                       "timestamp": 1_700_000_000 + 3600 * i, "metadata": {"i": i}} for i, t in enumerate(texts)])
        mem.using("other").add("a message in another namespace")
        mem.index_entry("{\"rows\": [" + ", ".join(["{\"sku\": 1}"] * 300) + "]}", type="tool_result")
        mem.recall("kayak lake", budget_tokens=300)
        mem.consolidate("deep")
    return texts


def test_reads_answer_and_writes_raise_without_changing_the_file(tmp_path) -> None:
    path = tmp_path / "ro.db"
    texts = _build(path)
    for suffix in ("-wal", "-shm"):
        assert not Path(str(path) + suffix).exists()  # a clean close leaves only the file
    before = _digest(path)
    out = tmp_path / "export.jsonl"
    with Memory(path, read_only=True) as mem:
        assert mem.read_only
        n = mem.count()
        items = mem.list()
        assert [it.text for it in items][: len(texts)] == texts
        assert mem.get(items[3].id).text == texts[3]
        assert mem.read(items[10].id, before=1, after=1)
        assert mem.search(texts[7], k=3)[0].text == texts[7]
        r = mem.recall("When did Ann take the kayak?", budget_tokens=400)
        assert r.messages and r.tokens <= 400
        assert mem.stats()["messages"] == n
        assert mem.namespaces() == ["default", "other"]
        assert mem.using("other").count() == 1
        assert mem.topics() is not None
        assert mem.strength([items[0].id])
        assert mem.reinforce([items[0].id]) == 1  # kept in memory only
        mem.consolidate("light")
        mem.consolidate("deep")
        (entry,) = mem.entries()
        assert mem.complete(entry.id, max_tokens=10**6).text.startswith('{"rows"')  # reinforces in memory only
        assert mem.export(out) == n
        assert mem.check()["ok"]
        writes = {
            "add": lambda: mem.add("new"),
            "add_many": lambda: mem.add_many([{"text": "new"}]),
            "update": lambda: mem.update(items[0].id, metadata={"x": 1}),
            "delete": lambda: mem.delete(items[0].id),
            "forget": lambda: mem.forget({"speaker": "Ann"}),
            "clear": mem.clear,
            "delete_namespace": lambda: mem.delete_namespace("other"),
            "vacuum": mem.vacuum,
            "flush": mem.flush,
            "import_": lambda: mem.import_(out),
            "index_entry": lambda: mem.index_entry("some tool output " * 50),
            "consolidate archival": lambda: mem.consolidate("archival"),
            "consolidate_entries deep": lambda: mem.consolidate_entries("deep"),
            "check repair": lambda: mem.check(repair=True),
        }
        entries_before = [e.id for e in mem.entries()]
        for name, call in writes.items():
            with pytest.raises(ReadOnlyError):
                call()
        assert mem.count() == n and [e.id for e in mem.entries()] == entries_before
        assert issubclass(ReadOnlyError, hippo.StoreError) and issubclass(ReadOnlyError, hippo.HippoError)
    assert _digest(path) == before
    with Memory(path) as mem:  # and the store is as it was
        assert mem.count() == n and [it.text for it in mem.list()][: len(texts)] == texts


def test_read_only_sees_what_a_crashed_writer_committed(tmp_path) -> None:
    """A writer killed without close leaves its commits in the -wal; a read-only open reads them."""
    path = tmp_path / "crash.db"
    code = ("import os, sys; from hippo import Memory; m = Memory(sys.argv[1]); "
            "m.add_many([{'text': f'committed {i}'} for i in range(25)]); os._exit(0)")
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, timeout=120, env=ENV)
    assert os.path.getsize(str(path) + "-wal") > 0
    with Memory(path, read_only=True) as mem:
        assert [it.text for it in mem.list()] == [f"committed {i}" for i in range(25)]


def test_read_only_arguments() -> None:
    with pytest.raises(InvalidInput, match="read_only"):
        Memory(None, read_only=True)
    with pytest.raises(InvalidInput, match="read_only"):
        Memory(None, read_only="yes")
    with pytest.raises(NotFound):
        Memory(os.path.join(tempfile.gettempdir(), "hippo-no-such-store-7731.db"), read_only=True)


def test_read_only_open_of_a_schema_2_store_does_not_upgrade_it(tmp_path) -> None:
    path = tmp_path / "v2.db"
    db = sqlite3.connect(path)
    db.executescript((HERE / "data" / "store_v2.sql").read_text(encoding="utf-8"))
    db.close()
    before = _digest(path)
    with Memory(path, read_only=True, namespace="alpha") as mem:
        assert mem._rt.store.version == 2
        assert mem.count() == 33
        assert mem.check()["ok"]  # verified as far as schema 2 allows (no checksums yet)
        assert mem.search("lighthouse", k=1)[0].text == "the unsealed tail message about the lighthouse"
    assert _digest(path) == before


_WARM = """
from hippo import Memory
with Memory(None) as w:  # every module a read imports lazily, loaded while the interpreter's files are readable
    w.add_many([{"text": f"warm {i} kayak lake"} for i in range(40)])
    w.recall("kayak"); w.search("kayak"); w.stats(); w.get(1); w.list(); w.topics(); w.check()
"""

_READ = """
from hippo import Memory, ReadOnlyError, StoreError
import sys
path = sys.argv[1]
try:
    Memory(path).add("x")
    print("writable open: stored")
except StoreError as e:
    print("writable open:", type(e).__name__)
with Memory(path, read_only=True) as m:
    print("immutable", m._rt.store.immutable)  # SQLite could not create its -shm index: read as an immutable file
    print("count", m.count())
    print("search", m.search("message 7: Ann took the red kayak to the lake on day 7", k=1)[0].text)
    print("recall", len(m.recall("kayak lake", budget_tokens=300).messages) > 0)
    try:
        m.add("x")
    except ReadOnlyError:
        print("add refused")
"""


def _expect_read_only_output(stdout: str, n: int) -> None:
    lines = stdout.splitlines()
    assert lines[0] == "writable open: StoreError", stdout
    assert lines[1:] == ["immutable True", f"count {n}", "search message 7: Ann took the red kayak to the lake on day 7", "recall True",
                         "add refused"], stdout


@pytest.mark.skipif(sys.platform != "linux", reason="permissions and rlimits as on Linux")
def test_read_only_without_write_permission() -> None:
    """The directory and the file are readable but not writable (SQLite cannot create its -shm index)."""
    built: dict[str, object] = {}

    def build(path: Path) -> None:
        built["texts"] = _build(path)
        with Memory(path) as mem:  # a writable open leaves no -wal / -shm behind when it closes
            built["n"] = mem.count()

    with unwritable_store("hippo-ro-", build) as (path, drop):
        texts, n = built["texts"], built["n"]
        drop = f"import os; {drop}\n" if drop else ""
        proc = subprocess.run([sys.executable, "-c", _WARM + drop + _READ, str(path)], capture_output=True, text=True,
                              timeout=300, env=ENV)
        assert proc.returncode == 0, proc.stderr[-3000:]
        _expect_read_only_output(proc.stdout, n)
        assert sorted(os.listdir(path.parent)) == ["store.db"]
        assert len(texts) == 60


@pytest.mark.skipif(sys.platform != "linux", reason="rlimits as on Linux")
def test_read_only_on_a_full_disk(tmp_path) -> None:
    """No file may grow (RLIMIT_FSIZE = 0, as on a full disk): the -shm index cannot be created either."""
    path = tmp_path / "full.db"
    _build(path)
    with Memory(path) as mem:
        n = mem.count()
    limit = ("import resource, signal\nsignal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
             "resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.RLIM_INFINITY))\n")
    proc = subprocess.run([sys.executable, "-c", _WARM + limit + _READ, str(path)], capture_output=True, text=True,
                          timeout=300, env=ENV)
    assert proc.returncode == 0, proc.stderr[-3000:]
    _expect_read_only_output(proc.stdout, n)


# ----------------------------------------------------------------------------------------------- synchronous
@pytest.mark.parametrize("level,code", [("OFF", 0), ("NORMAL", 1), ("FULL", 2), ("EXTRA", 3)])
def test_synchronous_is_applied(tmp_path, level, code) -> None:
    with Memory(tmp_path / "s.db", config={"synchronous": level}) as mem:
        assert mem.config.synchronous == level
        assert mem._rt.store._query("PRAGMA synchronous")[0][0] == code
        mem.add("durable enough")


def test_synchronous_default_and_validation(tmp_path) -> None:
    assert Config().synchronous == "NORMAL"
    with Memory(tmp_path / "d.db") as mem:
        assert mem._rt.store._query("PRAGMA synchronous")[0][0] == 1
    for bad in ("full", "SAFE", 2, None):
        with pytest.raises(InvalidInput, match="synchronous"):
            Memory(tmp_path / "b.db", config={"synchronous": bad})
    with pytest.raises(InvalidInput, match="synchronous"):
        Memory(tmp_path / "c.db", config=Config(synchronous="MAYBE"))
