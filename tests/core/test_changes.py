"""The store's change feed (``Store.changes``), incremental loads and the schema migrations from versions 2 and 3.

Every append, deletion and metadata update of a namespace takes the next number of its change sequence in the
same transaction; a reader asks for what changed after the number it saw. The references here are hand-written
expectations and full reads of the same store.
"""

from __future__ import annotations

import importlib.util
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from rowcount import count_rows

from hippo import Memory
from hippo.store.base import Change
from hippo.base.errors import CorruptData
from hippo.store.sqlite import COMPATIBLE_FROM, SCHEMA_VERSION, SQLiteStore
from hippo.text import tokenizer
from tests.upgrades import uses_a_newer_schema_as_it_is

DATA = Path(__file__).parent / "data"


def _writer(name: str = "make_store_v2"):
    """The script that wrote a fixture store with an earlier version's code (its messages are the expectations)."""
    spec = importlib.util.spec_from_file_location(name, DATA / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _v2_writer():
    """The script that wrote ``data/store_v2.db`` with the schema-2 code."""
    return _writer("make_store_v2")


def _texts(n: int, tag: str = "m") -> list[dict]:
    return [{"text": f"{tag} {i}: the lighthouse keeper logged {i} ships and a storm from the west"} for i in range(n)]


def test_every_change_takes_the_next_version_and_the_feed_returns_exactly_them(tmp_path):
    with Memory(tmp_path / "c.db") as mem:
        store = mem.engine.rt.store
        assert store.changes("default", store.state("default").version) == []
        a = mem.add_many(_texts(3))
        b = mem.add("one more")
        mem.update(a[1].id, metadata={"k": 1})
        mem.delete([a[0].id, b.id])
        st = store.state("default")
        feed = store.changes("default", 0)
    assert [c.version for c in feed] == [1, 2, 3, 4]
    assert feed == [Change(1, "append", 0, 2), Change(2, "append", 3, 3), Change(3, "update", ids=(a[1].id,)),
                    Change(4, "delete", ids=(a[0].id, b.id))]
    assert st.version == 4 and st.next_seq == 4 and st.generation == 1


def test_failed_and_empty_calls_record_nothing(tmp_path):
    with Memory(tmp_path / "c.db") as mem:
        store = mem.engine.rt.store
        mem.add("first")
        v = store.state("default").version
        assert mem.delete([10**6]) == 0
        assert not store.update_metadata("default", 10**6, {"x": 1})
        assert not store.update_metadata("other", 1, {"x": 1})  # id of another namespace
        assert store.state("default").version == v and store.changes("default", v) == []


def test_readers_behind_a_trimmed_feed_or_a_deleted_namespace_must_rebuild(tmp_path):
    with Memory(tmp_path / "c.db") as mem:
        store = mem.engine.rt.store
        for i in range(5):
            mem.add(f"message {i}")
        assert store.trim_changes("default", 3) == 3
        assert store.changes("default", 2) is None        # the feed no longer reaches back to 2
        assert [c.version for c in store.changes("default", 3)] == [4, 5]
        assert store.changes("default", 6) is None        # a version this namespace never had
        old = store.state("default")
        mem.delete_namespace("default")
        assert store.changes("default", old.version) is None
        mem.add("a new namespace under the old name")
        new = store.state("default")
        assert new.version > old.version and new.generation > old.generation
        assert store.changes("default", old.version) is None
        assert [c.kind for c in store.changes("default", new.version - 1)] == ["append"]


@pytest.mark.parametrize("seal_tokens", [1, 60, 10**9])
def test_load_after_seq_reads_only_later_rows_and_matches_a_full_load(tmp_path, seal_tokens):
    with Memory(tmp_path / "c.db", config={"seal_tokens": seal_tokens}) as mem:
        items = mem.add_many(_texts(40))
        mem.add_many(_texts(15, "late"))
        mem.delete([items[5].id, items[30].id])
        store = mem.engine.rt.store
        full = store.load("default")
        tokens = store.load_tokens("default")
        assert np.array_equal(tokens, np.concatenate([r.tokens for r in full]))
        counter = count_rows(store)
        for after in (-1, 0, 4, 5, 29, 30, 38, 54, 60):
            want = [(r.id, r.seq, r.tokens.tolist()) for r in full if r.seq > after]
            before = counter.rows
            got = store.load("default", after_seq=after)
            assert [(r.id, r.seq, r.tokens.tolist()) for r in got] == want
            # the rows past `after`, the chunks holding their tokens and, to verify those chunks' checksums, the
            # (id, seq, n_tokens) of the earlier messages those chunks cover: never any other earlier row
            chunks = [c for c in store._chunks("default") if c.last_seq > after]
            covered = sum(1 for r in full if r.seq <= after and any(c.first_seq <= r.seq <= c.last_seq
                                                                     for c in chunks))
            assert counter.rows - before <= len(want) + covered + 8


def test_migration_from_a_schema_2_store(tmp_path):
    v2 = _v2_writer()
    path = tmp_path / "old.db"
    shutil.copy(DATA / "store_v2.db", path)
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("2",)
    db.close()
    for ns in ("alpha", "beta"):
        with Memory(path, namespace=ns) as mem:
            want = [m["text"] for k, m in enumerate(v2.messages(ns)) if k not in v2.DELETED[ns]]
            assert [it.text for it in mem.list()] == want
            tagged = [it for it in mem.list() if it.metadata.get("tag") == "updated"]
            assert [it.text for it in tagged] == [v2.messages(ns)[10]["text"]]
            quote = v2.messages(ns)[2]["text"]
            assert mem.search(quote, k=1)[0].text == quote
            assert quote in mem.recall(quote, budget_tokens=300).text
            store = mem.engine.rt.store
            st = store.state(ns)
            assert st.version == 0 and store.changes(ns, 0) == []  # an upgraded store starts its feed empty
            new = mem.add("written after the upgrade")
            assert store.changes(ns, 0) == [Change(1, "append", st.next_seq, st.next_seq)]
            mem.delete([new.id])
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)
    cols = {r[1] for r in db.execute("PRAGMA table_info(namespaces)")}
    assert {"version", "horizon"} <= cols
    db.close()
    with Memory(path, namespace="alpha") as mem:  # and it opens again as a current store
        assert mem.count() == 88


def _v3_feed_expected(v3, ns: str) -> list[tuple[str, dict]]:
    out = []
    for k, m in enumerate(v3.messages(ns)):
        if k in v3.DELETED[ns]:
            continue
        md = {"turn": k, "bird": "updated"} if k == v3.UPDATED else m["metadata"]
        out.append((m["text"], md))
    return out


def test_migration_from_a_schema_3_store_that_has_the_change_feed(tmp_path):
    # Numbered 3 by the code that wrote it, with the feed's columns and no checksums (make_store_v3_feed.py): the
    # upgrade adds the checksums and keeps the feed, instead of adding the feed's columns a second time.
    v3 = _writer("make_store_v3_feed")
    path = tmp_path / "old.db"
    shutil.copy(DATA / "store_v3_feed.db", path)
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("3",)
    assert "checksum" not in {r[1] for r in db.execute("PRAGMA table_info(chunks)")}
    feeds = {ns: db.execute("SELECT version, kind FROM changes WHERE namespace = ? ORDER BY version",
                            (ns,)).fetchall() for ns in ("alpha", "beta")}
    db.close()
    assert feeds["alpha"] == [(1, "append"), (2, "delete"), (3, "update")]
    for ns in ("alpha", "beta"):
        with Memory(path, namespace=ns) as mem:
            want = _v3_feed_expected(v3, ns)
            assert [(it.text, it.metadata) for it in mem.list()] == want
            quote = want[3][0]
            assert mem.search(quote, k=1)[0].text == quote
            assert quote in mem.recall(quote, budget_tokens=300).text
            assert mem.check()["ok"]
            store = mem.engine.rt.store
            st = store.state(ns)
            assert st.version == len(feeds[ns])  # the feed the old code wrote is kept
            assert [(c.version, c.kind) for c in store.changes(ns, 0)] == feeds[ns]
            new = mem.add("written after the upgrade")
            assert store.changes(ns, st.version) == [Change(st.version + 1, "append", st.next_seq, st.next_seq)]
            mem.delete([new.id])
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)
    assert db.execute("SELECT COUNT(*), COUNT(checksum) FROM chunks").fetchone()[0] > 0
    assert db.execute("SELECT COUNT(*) - COUNT(checksum) FROM chunks").fetchone() == (0,)
    db.close()
    with Memory(path, namespace="alpha") as mem:  # and it opens again as a current store
        assert mem.count() == 58 and mem.check()["ok"]


def test_a_schema_3_store_that_has_the_change_feed_reads_read_only_as_it_is(tmp_path):
    v3 = _writer("make_store_v3_feed")
    path = tmp_path / "old.db"
    shutil.copy(DATA / "store_v3_feed.db", path)
    before = path.read_bytes()
    with Memory(path, namespace="beta", read_only=True) as mem:
        assert mem.engine.rt.store.version == 3
        assert [(it.text, it.metadata) for it in mem.list()] == _v3_feed_expected(v3, "beta")
        assert mem.using("alpha").count() == 58
        assert mem.check()["ok"]  # verified as far as the store allows (no checksums yet)
        assert [c.kind for c in mem.engine.rt.store.changes("beta", 0)] == ["append", "delete", "update"]
    assert path.read_bytes() == before


def _meta(path, key: str):
    db = sqlite3.connect(path)
    try:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]
    finally:
        db.close()


def test_every_creation_and_upgrade_says_which_code_can_use_the_store(tmp_path):
    with Memory(tmp_path / "new.db"):
        pass
    assert _meta(tmp_path / "new.db", "compatible") == f"{SCHEMA_VERSION}:{COMPATIBLE_FROM}"
    shutil.copy(DATA / "store_v2.db", tmp_path / "old.db")
    with Memory(tmp_path / "old.db"):
        pass
    assert _meta(tmp_path / "old.db", "compatible") == f"{SCHEMA_VERSION}:{COMPATIBLE_FROM}"


def test_a_newer_schema_this_code_can_use_is_used_as_it_is(tmp_path):
    # A newer version upgraded the store with a migration older code can live with (a column it does not name) and
    # said so (compatible_from): this version, open or opened now (a rollback), keeps reading and writing it.
    path = tmp_path / "s.db"
    newer = str(SCHEMA_VERSION + 1)

    def upgrade() -> None:
        db = sqlite3.connect(path)
        with db:
            db.execute("ALTER TABLE messages ADD COLUMN later_field REAL")
            db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (newer,))
            db.execute("UPDATE meta SET value = ? WHERE key = 'compatible'", (f"{newer}:{SCHEMA_VERSION}",))
        db.close()

    uses_a_newer_schema_as_it_is(lambda **kw: Memory(path, **kw), upgrade)
    assert _meta(path, "schema_version") == newer  # used as it is: nothing downgraded


def test_a_newer_schema_this_code_cannot_use_is_refused_by_name(tmp_path):
    path = tmp_path / "s.db"
    with Memory(path) as mem:
        mem.add("the heron nests by the north pond")
    newer = SCHEMA_VERSION + 1
    for compatible in (f"{newer}:{newer}",  # a newer version's migration that this code cannot live with
                       f"{newer - 1}:{newer - 1}"):  # one by a version that did not say (the key left as it was)
        db = sqlite3.connect(path)
        with db:
            db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(newer),))
            db.execute("UPDATE meta SET value = ? WHERE key = 'compatible'", (compatible,))
        db.close()
        for read_only in (False, True):
            with pytest.raises(CorruptData, match=f"schema version {newer} is newer than this hippo supports "
                                                  f"\\({SCHEMA_VERSION}\\).*upgrade hippo"):
                Memory(path, read_only=read_only)
        assert _meta(path, "schema_version") == str(newer) and _meta(path, "compatible") == compatible
    db = sqlite3.connect(path)
    assert db.execute("SELECT COUNT(*) FROM messages").fetchone() == (1,)
    db.close()


def test_a_process_of_an_older_version_cannot_write_to_the_store_once_it_is_upgraded(tmp_path):
    # A process of schema-2 hippo opened the file before a newer process upgraded it, and goes on writing as it did
    # (the statements of its append and seal, as that code ran them): rows without checksums, which would make the
    # namespace unreadable for the newer version, and no change feed. Its writes are refused, storing nothing.
    path = tmp_path / "old.db"
    shutil.copy(DATA / "store_v2.db", path)
    old = sqlite3.connect(path, isolation_level=None)
    assert old.execute("SELECT COUNT(*) FROM messages WHERE namespace = 'alpha'").fetchone() == (88,)
    with Memory(path, namespace="alpha") as mem:  # the upgrade
        assert mem.count() == 88
    old.execute("BEGIN IMMEDIATE")
    seq = old.execute("SELECT next_seq FROM namespaces WHERE name = 'alpha'").fetchone()[0]
    cur = old.execute("INSERT INTO messages(namespace, seq, n_tokens, speaker, role, ts, session_id, metadata,"
                      " created_at) VALUES ('alpha', ?, 2, NULL, 'user', NULL, NULL, '{}', 1.0)", (seq,))
    with pytest.raises(sqlite3.DatabaseError, match="upgraded by a newer version of hippo"):
        old.execute("INSERT INTO tail(id, namespace, seq, tokens) VALUES (?, 'alpha', ?, ?)",
                    (cur.lastrowid, seq, np.array([1, 2], dtype="<u4").tobytes()))
    with pytest.raises(sqlite3.DatabaseError, match="upgraded by a newer version of hippo"):
        old.execute("INSERT INTO chunks(namespace, first_seq, last_seq, n_messages, n_tokens, blob)"
                    " VALUES ('alpha', ?, ?, 1, 2, x'00')", (seq, seq))
    old.execute("ROLLBACK")
    old.close()
    with Memory(path, namespace="alpha") as mem:
        assert mem.count() == 88 and mem.check()["ok"]
        mem.add("written by the newer version")  # whose own rows carry their checksums
        mem.flush()
        assert mem.count() == 89 and mem.check()["ok"]


def test_messages_appended_without_their_change_are_read_by_the_handles_that_follow_the_feed(tmp_path):
    # A process of schema-3 hippo (checksums, no change feed) still running on the upgraded file appends as that code
    # did: the message, its checksummed tail row and the namespace's next_seq, and no change. A handle following the
    # feed sees the fingerprint move with nothing in the feed: it reads the namespace again instead of missing them.
    from hippo.store.common import tail_checksum

    path = tmp_path / "s.db"
    with Memory(path) as writer:
        writer.add_many(_texts(4))
    reader = Memory(path)
    assert reader.count() == 4
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN IMMEDIATE")
    seq = db.execute("SELECT next_seq FROM namespaces WHERE name = 'default'").fetchone()[0]
    tokens = np.array(tokenizer.encode("the walrus arrived by the old pier"), dtype="<u4")
    mid = db.execute("INSERT INTO messages(namespace, seq, n_tokens, speaker, role, ts, session_id, metadata,"
                     " created_at) VALUES ('default', ?, ?, NULL, 'user', NULL, NULL, '{}', 1.0)",
                     (seq, int(tokens.size))).lastrowid
    db.execute("INSERT INTO tail(id, namespace, seq, tokens, checksum) VALUES (?, 'default', ?, ?, ?)",
               (mid, seq, tokens.tobytes(), tail_checksum("default", mid, seq, int(tokens.size), tokens.tobytes())))
    db.execute("UPDATE namespaces SET next_seq = ? WHERE name = 'default'", (seq + 1,))
    db.execute("COMMIT")
    db.close()
    assert reader.count() == 5
    assert reader.search("walrus pier", k=1)[0].id == mid
    assert reader.check()["ok"]
    reader.close()


def test_a_failed_migration_leaves_the_old_store_untouched(tmp_path, monkeypatch):
    from hippo.store import sqlite as sqlite_mod

    path = tmp_path / "old.db"
    shutil.copy(DATA / "store_v2.db", path)

    def broken(db):
        db.execute("ALTER TABLE namespaces ADD COLUMN version INTEGER NOT NULL DEFAULT 0")
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setitem(sqlite_mod._MIGRATIONS, 2, broken)
    with pytest.raises(Exception):
        SQLiteStore(path)
    monkeypatch.undo()
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("2",)
    assert "version" not in {r[1] for r in db.execute("PRAGMA table_info(namespaces)")}
    db.close()
    with Memory(path, namespace="beta") as mem:  # the next open upgrades it
        assert mem.count() == 89
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)
    db.close()
