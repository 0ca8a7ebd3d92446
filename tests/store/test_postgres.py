"""What only the PostgreSQL store has: URLs, migrations of its schema, writers in several processes, idempotent
appends, and faults of a real server (backends terminated mid-transaction and mid-commit, a restart mid-run)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from typing import Callable

import pytest

psycopg = pytest.importorskip("psycopg")
psycopg_pool = pytest.importorskip("psycopg_pool")

from hippo import Memory  # noqa: E402
from hippo.base.errors import (  # noqa: E402
    Changed, ClosedError, CorruptData, InvalidInput, NotFound, ReadOnlyError, StoreBusy, StoreError)
from hippo.store import postgres  # noqa: E402
from hippo.store.postgres import PostgresStore, parse_url  # noqa: E402
from hippo.text import tokenizer  # noqa: E402
from tests.forked import DEADLINE_S, in_child  # noqa: E402
from tests.upgrades import uses_a_newer_schema_as_it_is  # noqa: E402

from .test_conformance import assert_same, batch, msg  # noqa: E402

ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")


def admin(pg_server):
    return psycopg.connect(pg_server.url("hippo"), autocommit=True)


@contextlib.contextmanager
def namespace_held(pg_server, st, namespace: str):
    """Another session holding ``namespace``'s writer lock of store ``st`` while the block runs (given that session)."""
    with admin(pg_server) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (st._lock_key(namespace),))
        yield conn


@contextlib.contextmanager
def namespaces_table_locked(pg_server, pg_url):
    """The store's namespaces table held in ACCESS EXCLUSIVE mode by another session (a schema change, a REINDEX)
    while the block runs."""
    with admin(pg_server) as conn:
        conn.execute("BEGIN")
        conn.execute(f'LOCK TABLE "{schema_of(pg_url)}".namespaces IN ACCESS EXCLUSIVE MODE')
        yield
        conn.execute("ROLLBACK")


def wait_for(predicate, timeout: float = 20.0, what: str = "a condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = predicate()
        if got:
            return got
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def spy(monkeypatch, obj, name: str) -> list:
    """Record every result of ``obj.name(...)`` (the method still runs)."""
    calls: list = []
    real = getattr(obj, name)

    def wrapper(*args, **kwargs):
        calls.append(real(*args, **kwargs))
        return calls[-1]

    monkeypatch.setattr(obj, name, wrapper)
    return calls


def schema_of(url: str) -> str:
    return parse_url(url)[2]["hippo_schema"]


def _opening(url: str, opened: list) -> threading.Thread:
    """A thread (not started) that opens ``Memory(url, namespace="n")`` and appends it, or what it raised, to
    ``opened``."""
    def opener() -> None:
        try:
            opened.append(Memory(url, namespace="n"))
        except BaseException as exc:  # noqa: BLE001 - asserted by the caller
            opened.append(exc)

    return threading.Thread(target=opener)


# -- URLs ---------------------------------------------------------------------------------------------------------
def test_urls_keep_passwords_out_of_sight_and_hippo_parameters_out_of_libpq() -> None:
    libpq, shown, ours = parse_url("postgresql://app:s3cret@db.example:6432/mem?sslmode=require&password=other"
                                   "&hippo_schema=tenant_7&hippo_pool_max=8")
    assert "s3cret" not in shown and "other" not in shown and shown.startswith("postgresql://app@db.example:6432/mem")
    assert "hippo_" not in libpq and "s3cret" in libpq and "sslmode=require" in libpq
    assert ours == {"hippo_schema": "tenant_7", "hippo_pool_max": "8"}
    _, shown, _ = parse_url("postgres://u@/db?host=/run/postgresql")
    assert shown == "postgres://u@/db?host=/run/postgresql"
    # the passphrase of the client's SSL key was shown in every message and in the pool's log lines
    libpq, shown, _ = parse_url("postgresql://app@db.example/mem?sslmode=verify-full&sslkey=/k/app.key"
                                "&sslpassword=keypass&sslcert=/k/app.crt")
    assert "keypass" not in shown and shown == ("postgresql://app@db.example/mem?sslmode=verify-full&sslkey=/k/app.key"
                                                "&sslcert=/k/app.crt")
    assert "sslpassword=keypass" in libpq


@pytest.mark.parametrize("url, match", [
    ("postgresql://u@h/db?hippo_schema=bad-name", "hippo_schema"),
    ("postgresql://u@h/db?hippo_schema=", "hippo_schema"),
    ("postgresql://u@h/db?hippo_pool_max=0", "hippo_pool_max"),
    ("postgresql://u@h/db?hippo_pool_min=5&hippo_pool_max=2", "hippo_pool_max"),
    ("postgresql://u@h/db?hippo_prepare_threshold=soon", "hippo_prepare_threshold"),
    ("postgresql://u@h/db?hippo_idle_s=0", "hippo_idle_s"),
    # digits int() cannot read ('²', '①'): a ValueError escaped before
    ("postgresql://u@h/db?hippo_pool_max=%C2%B2", "hippo_pool_max"),
    ("postgresql://u@h/db?hippo_retry_s=%E2%91%A0", "hippo_retry_s"),
    ("postgresql://u@h/db?hippo_prepare_threshold=%C2%B2", "hippo_prepare_threshold"),
    ("postgresql://u@h/db?hippo_colour=blue", "unknown hippo parameter"),
    ("postgresql://u@h/db?not_a_libpq_option=1", "not a valid PostgreSQL URL"),
    ("mysql://u@h/db", "postgresql://"),
    # a host's bracket left open or stray: urlsplit's ValueError ('Invalid IPv6 URL') escaped
    ("postgresql://u:hunter2@[::1/db", "not a valid PostgreSQL URL"),
    ("postgresql://u:hunter2@db]/mem", "not a valid PostgreSQL URL"),
])
def test_bad_urls_are_invalid_input_naming_the_parameter(url, match) -> None:
    with pytest.raises(InvalidInput, match=match) as info:
        PostgresStore(url)
    assert "hunter2" not in str(info.value)
    if url.startswith("postgresql://"):  # what Memory opens as a PostgreSQL store (anything else is a file path)
        with pytest.raises(InvalidInput, match=match):
            Memory(url, namespace="n")


def test_an_unreachable_database_is_a_store_error_without_the_password(pg_server) -> None:
    url = pg_server.url("no_such_database").replace("postgres@", "postgres:hunter2@")
    with pytest.raises(StoreError) as info:
        Memory(url)
    assert "hunter2" not in str(info.value) and "no_such_database" in str(info.value)


def connects(monkeypatch) -> list:
    """Every connection attempt of an open (an exception where it failed)."""
    tries: list = []
    real = psycopg.connect

    def connect(*args, **kwargs):
        try:
            tries.append(real(*args, **kwargs))
        except psycopg.Error as exc:
            tries.append(exc)
            raise
        return tries[-1]

    monkeypatch.setattr(postgres.psycopg, "connect", connect)
    return tries


@pytest.mark.parametrize("database, extra, match", [
    ("no_such_database", "", "does not exist"),  # the server answered
    ("hippo", "&require_auth=password", "authentication method requirement"),  # the client's own settings
])
def test_a_refused_connection_is_reported_at_once(pg_server, monkeypatch, database, extra, match) -> None:
    tries = connects(monkeypatch)
    with pytest.raises(StoreError, match=match):
        PostgresStore(pg_server.url(database) + extra)
    assert len(tries) == 1  # nothing to wait for


def test_an_open_while_the_server_is_down_waits_for_it_up_to_retry_s(pg_server, pg_url, monkeypatch) -> None:
    with Memory(pg_url, namespace="n") as mem:
        mem.add("kept across the restart")
    tries = connects(monkeypatch)
    opened: list = []
    pg_server.stop()
    try:
        with pytest.raises(StoreError, match="cannot reach the PostgreSQL server"):
            PostgresStore(pg_url + "&hippo_retry_s=0")
        assert len(tries) == 1
        tries.clear()

        worker = _opening(pg_url, opened)
        worker.start()
        wait_for(lambda: len(tries) >= 2 or opened, what="the open to try the stopped server")
    finally:
        pg_server.start()
    worker.join(60)
    assert not worker.is_alive()
    mem = opened[0]
    assert isinstance(mem, Memory), mem
    assert all(isinstance(t, psycopg.OperationalError) for t in tries[:-1])
    with mem:
        assert [it.text for it in mem.list()] == ["kept across the restart"]


def test_an_open_whose_login_through_pgbouncer_waited_out_query_wait_timeout_is_retried(pg_url, monkeypatch) -> None:
    # pgbouncer's answer to a login that found no server connection within its query_wait_timeout (the server down,
    # no login of it cached yet): the server may be back a moment later, as with "server login has been failing"
    real = psycopg.connect
    tries: list = []

    def connect(*args, **kwargs):
        tries.append(args)
        if len(tries) == 1:
            raise psycopg.OperationalError('connection failed: connection to server on socket "/run/pgbouncer/'
                                           '.s.PGSQL.6432" failed: FATAL:  query_wait_timeout')
        return real(*args, **kwargs)

    monkeypatch.setattr(postgres.psycopg, "connect", connect)
    with Memory(pg_url, namespace="n") as mem:
        mem.add("after the pooler's wait")
        assert [it.text for it in mem.list()] == ["after the pooler's wait"]
    assert len(tries) == 2
    monkeypatch.setattr(postgres.psycopg, "connect", lambda *a, **k: (_ for _ in ()).throw(
        psycopg.OperationalError("FATAL:  query_wait_timeout")))
    with pytest.raises(StoreError, match="no free server connection within its query_wait_timeout"):
        PostgresStore(pg_url + "&hippo_retry_s=0")


def test_an_open_that_meets_a_restart_opens(pg_server, pg_url, monkeypatch) -> None:
    # the termination a restart sends to the open's own connection, in the middle of reading the schema
    with Memory(pg_url, namespace="n") as mem:
        mem.add("kept across the restart")
    real = PostgresStore._installed_version
    ended: list = []

    def installed_version(self, conn):
        if not ended:
            with admin(pg_server) as other:
                ended.append(other.execute("SELECT pg_terminate_backend(%s)", (conn.info.backend_pid,)).fetchone()[0])
        return real(self, conn)

    monkeypatch.setattr(PostgresStore, "_installed_version", installed_version)
    with Memory(pg_url, namespace="n") as mem:
        assert [it.text for it in mem.list()] == ["kept across the restart"]
    assert ended == [True]


def test_memory_opens_a_url_and_reopens_it_with_an_embedding(pg_url) -> None:
    def embed(texts):
        return [[float(len(t)), float(t.count("a")), 1.0] for t in texts]

    with Memory(pg_url, namespace="n") as mem:
        assert mem.path.startswith("postgresql://") and repr(mem).startswith("Memory(path='postgresql://")
        mem.add("the harbour master keeps a logbook")
        with mem.with_embedding(embed) as twin:
            assert twin.path == mem.path and twin.count() == 1
            twin.add("a second entry with an embedding")
        assert mem.count() == 2


def test_every_connection_gives_up_connecting_after_a_bound_unless_the_url_sets_one(pg_url) -> None:
    # libpq waits without limit by default: the pool's attempts to reach a host that drops packets would hang
    from hippo.store.postgres import CONNECT_TIMEOUT_S

    with Memory(pg_url) as mem:
        pool = mem.engine.rt.store._pool
        assert pool.kwargs["connect_timeout"] == CONNECT_TIMEOUT_S
        with pool.connection() as conn:
            assert conn.info.get_parameters().get("connect_timeout") == str(CONNECT_TIMEOUT_S)
    sep = "&" if "?" in pg_url else "?"
    with Memory(f"{pg_url}{sep}connect_timeout=3") as mem:
        pool = mem.engine.rt.store._pool
        assert "connect_timeout" not in pool.kwargs
        with pool.connection() as conn:
            assert conn.info.get_parameters().get("connect_timeout") == "3"


# -- schema and migrations ----------------------------------------------------------------------------------------
def _columns(conn, schema: str) -> set[tuple[str, str, str]]:
    return set(conn.execute("SELECT table_name, column_name, data_type FROM information_schema.columns"
                            " WHERE table_schema = %s", (schema,)).fetchall())


def test_a_schema_without_the_offset_column_is_read_as_it_is_and_given_it_without_a_new_number(pg_server,
                                                                                              pg_url) -> None:
    schema = schema_of(pg_url)
    st = PostgresStore(pg_url)
    st.append("a", batch(3))
    st.close()
    with admin(pg_server) as conn:  # as the last release wrote it: schema 3 without messages.utc_offset
        conn.execute(f'ALTER TABLE "{schema}".messages DROP COLUMN utc_offset')
    ro = PostgresStore(pg_url, read_only=True)
    try:
        assert [r.utc_offset for r in ro.load("a")] == [None] * 3
    finally:
        ro.close()
    st = PostgresStore(pg_url)
    try:
        st.append("a", [msg("said in New York", timestamp="2023-03-03T23:30-05:00")])
        assert [r.utc_offset for r in st.load("a")] == [None] * 3 + [-18000.0]
    finally:
        st.close()
    with admin(pg_server) as conn:  # the same number: releases that refuse any newer one still open it
        assert conn.execute(f'SELECT value FROM "{schema}".meta WHERE key = %s', ("schema_version",)).fetchone() \
            == (str(postgres.SCHEMA_VERSION),) == ("3",)


def test_a_store_without_stamps_is_read_as_it_is_and_given_them_without_a_new_number(pg_server, pg_url) -> None:
    # A store of schema 3 as written before the changes carried stamps: read-only it is read as it is; a writable
    # open adds the columns (the same schema number), changes written from then on carry stamps, and a handle that
    # follows the feed across the upgrade reads the others' changes from it without reading the namespace again.
    schema = schema_of(pg_url)
    st = PostgresStore(pg_url)
    st.append("a", batch(3))
    st.close()
    with admin(pg_server) as conn:
        conn.execute(f'ALTER TABLE "{schema}".namespaces DROP COLUMN stamp, DROP COLUMN prev_stamp,'
                     " DROP COLUMN horizon_stamp")
        conn.execute(f'ALTER TABLE "{schema}".changes DROP COLUMN stamp')
    ro = PostgresStore(pg_url, read_only=True)
    try:
        fp = ro.state("a")
        assert (fp.next_seq, fp.version, fp.stamp) == (3, 1, None)
        assert [c.kind for c in ro.changes("a", 0)] == ["append"]
    finally:
        ro.close()
    st = PostgresStore(pg_url)
    try:
        assert st.state("a").stamp is None
        st.append("a", batch(2, start=3))
        fp = st.state("a")
        assert fp.version == 2 and fp.stamp is not None and fp.prev is None
        assert [c.kind for c in st.changes("a", 1, None)] == ["append"]
        st.update_metadata("a", st.load("a")[0].id, {"x": 1})
        after = st.state("a")
        assert after.prev == fp.stamp and after.stamp not in (None, fp.stamp) and after.follows(fp)
        assert [c.kind for c in st.changes("a", 2, fp.stamp)] == ["update"]
        assert st.changes("a", 2, after.stamp) is None  # not the stamp change 2 was written with
        assert st.changes("a", 3, after.stamp) == []
        assert_same(st.load("a")[1:], batch(5)[1:])
    finally:
        st.close()
    with admin(pg_server) as conn:
        assert conn.execute(f'SELECT value FROM "{schema}".meta WHERE key = %s', ("schema_version",)).fetchone() \
            == (str(postgres.SCHEMA_VERSION),) == ("3",)


def test_a_version_1_store_is_migrated_in_place_on_open(pg_server, pg_url) -> None:
    schema = schema_of(pg_url)
    st = PostgresStore(pg_url)
    msgs = batch(6)
    st.append("a", msgs[:4])
    st.seal("a", 1)
    st.append("a", msgs[4:])
    st.close()
    with admin(pg_server) as conn:  # back to schema 1, as a store written before the change feed and keys
        for stmt in ("DROP TABLE {s}.changes",
                     "ALTER TABLE {s}.namespaces DROP COLUMN version, DROP COLUMN horizon, DROP COLUMN stamp,"
                     " DROP COLUMN prev_stamp, DROP COLUMN horizon_stamp",
                     "ALTER TABLE {s}.messages DROP COLUMN idem_key, DROP COLUMN utc_offset",
                     "UPDATE {s}.meta SET value = '1' WHERE key = 'schema_version'"):
            conn.execute(stmt.replace("{s}", f'"{schema}"'))
        reference = "ref_v1_" + schema[2:]
        conn.execute(f'CREATE SCHEMA "{reference}"')
        for stmt in postgres._MIGRATIONS[1]:
            conn.execute(stmt.replace("{s}", f'"{reference}"'))
        assert _columns(conn, schema) == {(f"{t}", c, d) for t, c, d in _columns(conn, reference)}
    with pytest.raises(StoreError, match="writable once"):
        PostgresStore(pg_url, read_only=True)
    st = PostgresStore(pg_url)
    try:
        assert_same(st.load("a"), msgs)
        assert st.state("a").version == 0 and st.changes("a", 0) == []
        more = batch(2, start=6)
        assert st.append("a", more) == st.append("a", more)  # keys work on the upgraded table
        assert st.changes("a", 0)[0].kind == "append"
        assert_same(st.load("a"), msgs + more)
        # the messages stored before have no offset; one given now is kept
        local = [msg("said in New York", timestamp="2023-03-03T23:30-05:00")]
        st.append("a", local)
        assert [r.utc_offset for r in st.load("a")] == [None] * 8 + [-18000.0]
    finally:
        st.close()
    with admin(pg_server) as conn:
        assert conn.execute(f'SELECT value FROM "{schema}".meta WHERE key = %s', ("schema_version",)).fetchone()[0] \
            == str(postgres.SCHEMA_VERSION)


def test_a_newer_schema_is_refused(pg_server, pg_url) -> None:
    PostgresStore(pg_url).close()
    newer = postgres.SCHEMA_VERSION + 1
    for compatible in (f"{newer}:{newer}",  # a newer version's migration that this code cannot live with
                       f"{newer - 1}:{newer - 1}"):  # one by a version that did not say (the key left as it was)
        with admin(pg_server) as conn:
            conn.execute(f'UPDATE "{schema_of(pg_url)}".meta SET value = %s WHERE key = %s',
                         (str(newer), "schema_version"))
            conn.execute(f'UPDATE "{schema_of(pg_url)}".meta SET value = %s WHERE key = %s', (compatible, "compatible"))
        with pytest.raises(CorruptData, match=f"schema version {newer} .* newer than this hippo supports"):
            PostgresStore(pg_url)
        with pytest.raises(CorruptData, match="upgrade hippo"):
            Memory(pg_url, read_only=True)


def test_a_newer_schema_this_code_can_use_is_used_as_it_is(pg_server, pg_url) -> None:
    # A newer version upgraded the schema with a migration older code can live with (a column it does not name) and
    # said so (compatible_from): app servers still on this version, open or opened now, keep reading and writing.
    schema = schema_of(pg_url)
    newer = str(postgres.SCHEMA_VERSION + 1)

    def upgrade() -> None:
        with admin(pg_server) as conn:
            assert conn.execute(f'SELECT value FROM "{schema}".meta WHERE key = %s', ("compatible",)).fetchone() \
                == (f"{postgres.SCHEMA_VERSION}:{postgres.COMPATIBLE_FROM}",)
            conn.execute(f'ALTER TABLE "{schema}".messages ADD COLUMN later_field double precision')
            conn.execute(f'UPDATE "{schema}".meta SET value = %s WHERE key = %s', (newer, "schema_version"))
            conn.execute(f'UPDATE "{schema}".meta SET value = %s WHERE key = %s',
                         (f"{newer}:{postgres.SCHEMA_VERSION}", "compatible"))

    uses_a_newer_schema_as_it_is(lambda **kw: Memory(pg_url, namespace="a", **kw), upgrade)
    with admin(pg_server) as conn:  # used as it is: nothing downgraded
        assert conn.execute(f'SELECT value FROM "{schema}".meta WHERE key = %s',
                            ("schema_version",)).fetchone() == (newer,)


def _waiting_for_a_table_lock(conn, schema: str) -> bool:
    return conn.execute("SELECT EXISTS (SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
                        " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relname ="
                        " 'messages' AND NOT l.granted AND l.mode = 'AccessExclusiveLock')", (schema,)).fetchone()[0]


def test_an_upgrade_gives_way_to_the_older_app_servers_using_the_tables(pg_server, pg_url, monkeypatch) -> None:
    # A newer version's migration alters a table while an older app server has a transaction on it open (a long
    # read, an import, pg_dump). While an ALTER waits for its lock, every later statement on the table queues behind
    # it: the upgrade must give way in short attempts, not hold the other servers' reads for busy_timeout_s.
    schema = schema_of(pg_url)
    with Memory(pg_url, namespace="a") as mem:
        mem.add("the heron nests by the north pond")
    newer = postgres.SCHEMA_VERSION + 1
    monkeypatch.setitem(postgres._MIGRATIONS, newer, ["ALTER TABLE {s}.messages ADD COLUMN later_field bigint"])
    monkeypatch.setattr(postgres, "SCHEMA_VERSION", newer)
    outcome: dict = {}

    def upgrade() -> None:
        try:
            PostgresStore(pg_url, busy_timeout_s=60).close()
            outcome["ok"] = True
        except Exception as exc:  # reported below
            outcome["error"] = exc

    with admin(pg_server) as long_read, admin(pg_server) as watcher, admin(pg_server) as reader:
        long_read.autocommit = False
        long_read.execute(f'SELECT count(*) FROM "{schema}".messages').fetchone()  # holds the table while open
        worker = threading.Thread(target=upgrade, daemon=True)
        worker.start()
        wait_for(lambda: _waiting_for_a_table_lock(watcher, schema) or not worker.is_alive(),
                 what="the upgrade to wait for the table")
        assert worker.is_alive(), outcome
        # another app server's read now: it waits at most one attempt of the upgrade, far below busy_timeout_s
        reader.execute("SET lock_timeout = '10s'")
        assert reader.execute(f'SELECT count(*) FROM "{schema}".messages').fetchone() == (1,)
        long_read.rollback()  # the long read ends: the upgrade goes through
        worker.join(60)
    assert outcome == {"ok": True}
    with admin(pg_server) as conn:
        assert conn.execute(f'SELECT value FROM "{schema}".meta WHERE key = %s',
                            ("schema_version",)).fetchone() == (str(newer),)
        assert "later_field" in {r[0] for r in conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = %s AND table_name = 'messages'",
            (schema,))}


def test_a_read_only_open_creates_nothing(pg_server, pg_url) -> None:
    with pytest.raises(NotFound, match="holds no hippo store"):
        Memory(pg_url, read_only=True)
    with admin(pg_server) as conn:
        assert conn.execute("SELECT to_regnamespace(%s)", (schema_of(pg_url),)).fetchone()[0] is None


def test_processes_opening_a_new_database_at_once_create_the_schema_once(pg_url) -> None:
    errors, stores = [], []

    def open_one() -> None:
        try:
            stores.append(PostgresStore(pg_url))
        except Exception as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(stores) == 6
    stores[0].append("a", batch(1))
    assert all(s.state("a").next_seq == 1 for s in stores)
    for s in stores:
        s.close()


def test_an_open_waits_for_a_stalled_schema_creation_at_most_busy_timeout(pg_server, pg_url) -> None:
    # A process paused or hung while it creates the schema holds the schema's advisory lock. Another process's open
    # waited for it without bound; it now waits busy_timeout_s, raises StoreBusy and has created nothing.
    key = PostgresStore.__new__(PostgresStore)
    key._lock_base = schema_of(pg_url) + "\x00"
    out: dict = {}

    def open_one() -> None:
        try:
            out["store"] = PostgresStore(pg_url, busy_timeout_s=0.2)
        except Exception as exc:  # noqa: BLE001 - asserted below
            out["error"] = exc

    with admin(pg_server) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (key._lock_key(None),))
        opener = threading.Thread(target=open_one, daemon=True)
        opener.start()
        opener.join(60)
        assert not opener.is_alive(), "the open still waits for the schema's lock"
        assert isinstance(out.get("error"), StoreBusy) and "creating or upgrading" in str(out["error"])
        assert conn.execute("SELECT to_regnamespace(%s)", (schema_of(pg_url),)).fetchone()[0] is None
    st = PostgresStore(pg_url)  # the lock released: the schema is made
    st.append("a", batch(1))
    assert st.state("a").next_seq == 1
    st.close()


# -- read-only and check through Memory ---------------------------------------------------------------------------
def test_memory_read_only_and_check(pg_server, pg_url) -> None:
    with Memory(pg_url, namespace="n", config={"seal_tokens": 32}) as mem:
        added = mem.add_many({"text": f"entry {k} about the lighthouse keeper's log"} for k in range(12))
        report = mem.check()
        assert report["ok"] and report["namespaces"]["n"]["messages"]["verified"] == 12
    with Memory(pg_url, namespace="n", read_only=True) as ro:
        assert ro.count() == 12 and ro.search("lighthouse", k=3)
        with pytest.raises(ReadOnlyError):
            ro.add("not stored")
        with pytest.raises(ReadOnlyError):
            ro.delete([added[0].id])
    with admin(pg_server) as conn:  # damage from outside hippo: next_seq behind the last message
        conn.execute(f'UPDATE "{schema_of(pg_url)}".namespaces SET next_seq = 3')
    with Memory(pg_url, namespace="n") as mem:
        report = mem.check()
        assert report["damaged"] == ["n/namespace_row"]
        assert mem.check(repair=True)["ok"] and mem.check()["ok"]
        assert mem.add("after the repair").id > added[-1].id


# -- idempotent appends -------------------------------------------------------------------------------------------
def test_an_append_repeated_with_its_keys_returns_the_stored_rows(pg_url) -> None:
    st = PostgresStore(pg_url)
    try:
        msgs = batch(3)
        first = st.append("a", msgs)
        state = st.state("a")
        again = st.append("a", msgs)  # what a retry after an unconfirmed commit does
        assert [(r.id, r.seq) for r in again] == [(r.id, r.seq) for r in first]
        assert_same(again, msgs)
        assert st.state("a") == state and len(st.load("a")) == 3
        other = batch(1, start=9)[0]
        other.key = msgs[1].key
        with pytest.raises(InvalidInput, match="idempotency key"):
            st.append("a", [other])
        with pytest.raises(InvalidInput, match="same idempotency key"):
            st.append("a", [msgs[0], msgs[0]])
        assert st.append("b", msgs)[0].namespace == "b"  # keys are unique per namespace only
        assert st.state("a") == state
    finally:
        st.close()


def _first_commit_unheard(st, monkeypatch) -> list[int]:
    """Make ``st``'s first committing batch commit on the server and lose its connection before the client hears it,
    the outcome impossible to learn; returns the list that receives the lost backend's pid."""
    real_batch = st._batch
    lost: list[int] = []

    def commit_then_lose(conn, statements):
        if ("COMMIT", None) in statements and not lost:
            real_batch(conn, statements)  # committed; the client never hears it
            lost.append(conn.info.backend_pid)
            conn.close()
            raise psycopg.OperationalError("server closed the connection unexpectedly")
        return real_batch(conn, statements)

    monkeypatch.setattr(st, "_batch", commit_then_lose)
    monkeypatch.setattr(st, "_outcome", lambda xid: None)  # whether it committed cannot be learned
    return lost


def test_an_append_with_messages_without_a_key_retried_after_its_commit_was_lost_returns_the_stored_rows(
        pg_url, monkeypatch) -> None:
    # The connection broke right after COMMIT and the server could not be asked about the transaction: the append
    # ran again. With a message without an idempotency key in the batch (a key is optional in the store contract),
    # the retry found the other keys stored and raised InvalidInput ("already used by messages that this append did
    # not store"), although it had stored them itself. The keyed messages now place the stored batch.
    st = PostgresStore(pg_url)
    try:
        st.append("a", batch(2))
        msgs = batch(3, start=2)
        msgs[1].key = None
        lost = _first_commit_unheard(st, monkeypatch)
        rows = st.append("a", msgs)
        assert lost and [r.seq for r in rows] == [2, 3, 4]
        assert_same(rows, msgs)
        assert_same(st.load("a")[2:], msgs)  # stored once
        assert st.state("a").next_seq == 5 and st.state("a").version == 2
        again = batch(1, start=5)
        again[0].key = msgs[0].key  # a key of this batch on another message is still refused
        with pytest.raises(InvalidInput, match="idempotency key"):
            st.append("a", [*again, msgs[2]])
        assert st.state("a").next_seq == 5
    finally:
        st.close()


def test_an_append_expecting_a_version_retried_after_its_commit_was_lost_returns_the_stored_rows(
        pg_url, monkeypatch) -> None:
    # An append made only while the namespace is at a version (append(expect=...)) committed, the connection broke
    # and the server could not be asked: the retry must find its own rows by their keys, not take its own change for
    # another writer's and raise Changed (the caller would read again and decide on rows it did store).
    st = PostgresStore(pg_url)
    try:
        st.append("a", batch(2))
        version = st.state("a").version
        msgs = batch(2, start=2)
        lost = _first_commit_unheard(st, monkeypatch)
        rows = st.append("a", msgs, expect=version)
        assert lost and [r.seq for r in rows] == [2, 3]
        assert_same(st.load("a")[2:], msgs)  # stored once
        assert st.state("a").version == version + 1
        with pytest.raises(Changed):
            st.append("a", batch(1, start=4), expect=version)
        assert st.state("a").next_seq == 4
    finally:
        st.close()


# -- concurrency --------------------------------------------------------------------------------------------------
def test_writers_of_one_namespace_wait_for_each_other_up_to_busy_timeout(pg_server, pg_url) -> None:
    st = PostgresStore(pg_url, busy_timeout_s=0.2)
    try:
        st.append("a", batch(1))
        with namespace_held(pg_server, st, "a") as conn:
            with pytest.raises(StoreBusy):
                st.append("a", batch(2, start=1))
            st.append("b", batch(1))  # another namespace does not wait
            assert len(st.load("a")) == 1  # readers do not wait either
        assert st.state("a").next_seq == 1
    finally:
        st.close()


def test_a_statement_timeout_set_by_the_dba_ends_a_writers_wait_as_busy(pg_server, pg_url) -> None:
    # A statement_timeout of the role or database (here: in the URL's options) shorter than busy_timeout_s cancels a
    # writer's wait for the namespace's lock: that is StoreBusy, as for busy_timeout_s, and a statement the server
    # cancelled otherwise says so; both were "cannot reach the PostgreSQL server" (a server that answered).
    PostgresStore(pg_url).close()
    st = PostgresStore(pg_url + "&options=-c%20statement_timeout%3D200", busy_timeout_s=30)
    try:
        st.append("a", batch(1))
        with namespace_held(pg_server, st, "a") as conn:
            with pytest.raises(StoreBusy, match="statement_timeout"):
                st.append("a", batch(2, start=1))
            st.append("b", batch(1))
        assert st.state("a").next_seq == 1 and len(st.load("a")) == 1
        with namespaces_table_locked(pg_server, pg_url):
            with pytest.raises(StoreError, match="statement_timeout") as info:
                st.state("a")
            assert not isinstance(info.value, StoreBusy) and "cannot reach" not in str(info.value)
        assert st.state("a").next_seq == 1
    finally:
        st.close()


def test_a_statement_timeout_that_ends_a_writes_first_statement_is_not_taken_for_another_writer(pg_server,
                                                                                               pg_url) -> None:
    # The first statement of an append (reserving its seqs and ids) goes to the server with the wait for the
    # namespace's lock. A statement_timeout of the role that cancelled it (a large batch, a slow server) was reported
    # as StoreBusy "locked by another writer" with no other writer anywhere, and a caller retrying on StoreBusy
    # retried for ever. Here a trigger makes that statement outlast the timeout, nobody holding the lock.
    PostgresStore(pg_url).close()
    schema = schema_of(pg_url)
    st = PostgresStore(pg_url + "&options=-c%20statement_timeout%3D300", busy_timeout_s=30)
    try:
        st.append("a", batch(1))
        with admin(pg_server) as conn:
            conn.execute(f'CREATE FUNCTION "{schema}".slow() RETURNS trigger LANGUAGE plpgsql AS'
                         " $$BEGIN PERFORM pg_sleep(2); RETURN NEW; END$$")
            conn.execute(f'CREATE TRIGGER slow BEFORE UPDATE ON "{schema}".namespaces FOR EACH ROW'
                         f' EXECUTE FUNCTION "{schema}".slow()')
        with pytest.raises(StoreError, match="statement_timeout") as info:
            st.append("a", batch(2, start=1))
        assert not isinstance(info.value, StoreBusy) and "another writer" not in str(info.value)
        assert st.state("a").next_seq == 1 and len(st.load("a")) == 1  # nothing of it stored
        with admin(pg_server) as conn:
            conn.execute(f'DROP TRIGGER slow ON "{schema}".namespaces')
        assert [r.seq for r in st.append("a", batch(2, start=1))] == [1, 2]
        with namespace_held(pg_server, st, "a"):  # a wait for another writer is still busy
            with pytest.raises(StoreBusy, match="statement_timeout"):
                st.append("a", batch(1, start=3))
        assert st.state("a").next_seq == 3
    finally:
        st.close()


def test_a_write_that_waited_out_busy_timeout_for_a_locked_table_does_not_blame_a_writer(pg_server, pg_url) -> None:
    # An append or a deletion queued behind a table lock (a schema change, a REINDEX, a VACUUM FULL) until
    # busy_timeout_s ran out said "the namespace is locked by another writer": no writer held the namespace.
    PostgresStore(pg_url).close()
    st = PostgresStore(pg_url, busy_timeout_s=0.3)
    try:
        st.append("a", batch(2))
        ids = [r.id for r in st.load("a")]
        with namespaces_table_locked(pg_server, pg_url):
            for write in (lambda: st.append("a", batch(1, start=2)), lambda: st.delete("a", ids[:1])):
                with pytest.raises(StoreBusy, match="table of the store stayed locked") as info:
                    write()
                assert "writer" not in str(info.value)
        with namespace_held(pg_server, st, "a"):  # a wait for another writer still says so
            for write in (lambda: st.append("a", batch(1, start=2)), lambda: st.delete("a", ids[:1])):
                with pytest.raises(StoreBusy, match="locked by another writer .waited the configured busy_timeout_s"):
                    write()
        assert st.state("a").next_seq == 2 and len(st.load("a")) == 2
    finally:
        st.close()


def test_a_read_that_waited_out_the_roles_lock_timeout_does_not_blame_a_writer(pg_server, pg_url) -> None:
    # A read queued behind a table lock (a schema change, a REINDEX) until the lock_timeout of the role ran out said
    # "the namespace is locked by another writer (waited the configured busy_timeout_s)": no writer held the
    # namespace and busy_timeout_s (30 s here) was never waited. It is still StoreBusy, saying what it waited for.
    PostgresStore(pg_url).close()
    st = PostgresStore(pg_url + "&options=-c%20lock_timeout%3D200", busy_timeout_s=30)
    try:
        with namespaces_table_locked(pg_server, pg_url):
            with pytest.raises(StoreBusy, match="table of the store stayed locked") as info:
                st.state("a")
            assert "writer" not in str(info.value) and "busy_timeout_s" not in str(info.value)
        assert st.state("a").next_seq == 0
    finally:
        st.close()


def test_a_writer_stopped_mid_transaction_holds_the_namespace_at_most_idle_s(pg_url) -> None:
    # A process stopped in the middle of an append (SIGSTOP, a paused VM, a hung thread) held the namespace's lock for
    # as long as it stayed stopped: every other writer of the namespace raised StoreBusy all that time, however long.
    # The server now ends a write transaction idle for hippo_idle_s; the stopped call, resumed, finds its connection
    # lost, runs again and stores its messages once.
    paused = PostgresStore(pg_url + "&hippo_idle_s=1")
    other = PostgresStore(pg_url, busy_timeout_s=0.2)
    try:
        paused.append("a", batch(1))
        in_body, release = threading.Event(), threading.Event()
        real_write = paused._write

        def held_write(what, body, *args, **kwargs):
            def held(cur, *rest):
                out = body(cur, *rest)
                if not in_body.is_set():  # the first attempt stops between its statements, holding the lock
                    in_body.set()
                    release.wait(60)
                return out
            return real_write(what, held, *args, **kwargs)

        paused._write = held_write
        mine = batch(2, start=1)
        out: dict = {}
        worker = threading.Thread(target=lambda: out.setdefault("rows", paused.append("a", mine)), daemon=True)
        worker.start()
        assert in_body.wait(30)
        theirs = batch(1, start=3)

        def other_append():
            try:
                return other.append("a", theirs)
            except StoreBusy:
                return None

        assert wait_for(other_append, timeout=30, what="the stopped writer's lock to be released")[0].seq == 1
        release.set()
        worker.join(60)
        assert [r.seq for r in out["rows"]] == [2, 3]  # ran again after the other writer's append
        assert_same(other.load("a")[1:], theirs + mine)  # each once
        assert other.state("a").version == 3
    finally:
        release.set()
        paused.close()
        other.close()


def test_a_transaction_the_server_ended_for_idling_runs_again(pg_url) -> None:
    # The server ends a transaction idle past idle_in_transaction_session_timeout (hippo's idle_s on a write, the
    # DBA's on a read) with SQLSTATE 25P03, which psycopg raises as an InternalError: it was not taken for a lost
    # connection, so a metadata update resumed after its stop raised StoreError (stored nothing) instead of running
    # again, and a consistent read that idled (a busy interpreter, a paused VM) raised instead of reading again.
    st = PostgresStore(pg_url + "&hippo_idle_s=1")
    try:
        st.append("a", batch(2))
        rid = st.load("a")[0].id
        real_write = st._write
        stopped: list = []

        def held_write(what, body, *args, **kwargs):
            def held(cur, *rest):
                out = body(cur, *rest)
                if not stopped:  # the first attempt stops past idle_s before its COMMIT
                    stopped.append(what)
                    time.sleep(1.5)
                return out
            return real_write(what, held, *args, **kwargs)

        st._write = held_write
        assert st.update_metadata("a", rid, {"checked": True}) is True
        del st._write
        assert stopped == ["updating metadata"]
        assert st.rows("a", [rid])[rid].metadata == {"checked": True}
        assert [c.kind for c in st.changes("a", 0)] == ["append", "update"]  # recorded once
    finally:
        st.close()
    reader = PostgresStore(pg_url + "&options=-c%20idle_in_transaction_session_timeout%3D200")
    try:
        attempts: list = []

        def read():
            first = reader.state("a")
            attempts.append(first)
            if len(attempts) == 1:
                time.sleep(0.6)  # idle inside the block past the server's bound
            return first, reader.load("a")

        fp, rows = reader.read_consistently(read)
        assert len(attempts) == 2 and fp.next_seq == 2 and len(rows) == 2
    finally:
        reader.close()


def test_deletions_of_two_namespaces_at_once_never_take_the_epochs_back(pg_server, pg_url) -> None:
    # x's deletion commits its epochs while y's deletion (another namespace's lock) waits for their row with a value
    # computed from an older snapshot: the epochs must end past both deleted namespaces' versions. Before, y's value
    # overwrote x's, x reused by name started at a version a process caching the old x had seen, and that process
    # kept answering with the deleted messages.
    stale = Memory(pg_url, namespace="x")
    writer = Memory(pg_url, namespace="x")
    a, b = PostgresStore(pg_url), PostgresStore(pg_url)
    try:
        for text in ("alpha apples are red", "beta bananas are yellow", "gamma grapes are green"):
            writer.add(text)
        writer.using("y").add("delta dates are brown")
        assert len(stale.search("apples bananas grapes", k=5)) == 3
        in_body, release = threading.Event(), threading.Event()
        real_write = a._write

        def held_write(what, body, *args, **kwargs):
            def held(cur, *rest):
                out = body(cur, *rest)
                in_body.set()
                release.wait(30)
                return out
            return real_write(what, held, *args, **kwargs)

        a._write = held_write
        ta = threading.Thread(target=a.delete_namespace, args=("x",))
        ta.start()
        assert in_body.wait(30)
        tb = threading.Thread(target=b.delete_namespace, args=("y",))
        tb.start()
        with admin(pg_server) as conn:
            wait_for(lambda: conn.execute("SELECT 1 FROM pg_stat_activity WHERE datname = 'hippo'"
                                          " AND wait_event_type = 'Lock'").fetchone(), what="y's deletion to wait")
        release.set()
        ta.join(30)
        tb.join(30)
        with admin(pg_server) as conn:
            epoch = conn.execute(f'SELECT value::bigint FROM "{schema_of(pg_url)}".meta'
                                 " WHERE key = 'change_epoch'").fetchone()[0]
        assert epoch > 3  # past x's three changes (and y's one)
        writer.add("epsilon elderberries are purple")  # x again, by name
        expected = ["epsilon elderberries are purple"]
        with Memory(pg_url, namespace="x") as fresh:
            assert [h.text for h in fresh.search("apples bananas grapes elderberries", k=5)] == expected
        assert [h.text for h in stale.search("apples bananas grapes elderberries", k=5)] == expected
    finally:
        for handle in (stale, writer, a, b):
            handle.close()


def test_the_first_recall_on_a_pool_of_one_connection_does_not_wait_for_itself(pg_url, monkeypatch) -> None:
    # Opening a namespace reads the lifecycle's snapshot in a helper thread while the co-index is built. The recall
    # then waited for that thread inside its snapshot read, holding the pool's only connection (hippo_pool_max=1),
    # which the helper needed: when the helper ran after the block had begun, the recall raised StoreError ("couldn't
    # get a connection") once hippo_retry_s ran out.
    from hippo.engine.state import NamespaceState

    with Memory(pg_url) as writer:
        writer.add_many([{"text": f"the lighthouse note {k} about lamps and doors"} for k in range(60)])
        writer.recall("lighthouse", budget_tokens=100)  # and saved on close: the lifecycle's snapshot
    helper_started, block_begun = threading.Event(), threading.Event()
    real_reading, real_blob = PostgresStore.reading, NamespaceState._read_life_blob

    def reading(self):
        if helper_started.is_set():
            block_begun.set()
        return real_reading(self)

    def late_blob(self):
        helper_started.set()
        block_begun.wait(2)  # the helper thread scheduled late, after the recall's next snapshot read began
        return real_blob(self)

    monkeypatch.setattr(PostgresStore, "reading", reading)
    monkeypatch.setattr(NamespaceState, "_read_life_blob", late_blob)
    with Memory(pg_url + "&hippo_pool_min=1&hippo_pool_max=1&hippo_retry_s=3") as reader:
        got = reader.recall("lighthouse lamps", budget_tokens=200)
        assert got.messages and all("lighthouse" in m.text for m in got.messages)
        assert reader.engine.state().current_life() is not None  # loaded from its snapshot, not left for later


def test_a_namespace_created_while_another_is_deleted_is_followed_from_its_first_message(pg_url) -> None:
    # x's creation reads the epochs (change feed numbering) before y's deletion moves them, and commits after a
    # process has seen x not exist at the moved epochs: x's feed then starts at a version that process has seen.
    # Before, that process followed the feed after it and never held x's first message.
    admin_mem = Memory(pg_url)
    asker = Memory(pg_url, namespace="x")
    creator = Memory(pg_url, namespace="x")
    try:
        admin_mem.using("y").add("yak notes")  # y: version 1
        for k in range(5):
            admin_mem.using("z").add(f"zebra {k}")
        admin_mem.delete_namespace("z")  # the change epoch moves past y's version
        store = creator.engine.rt.store
        in_body, release = threading.Event(), threading.Event()
        real_write = store._write

        def held_write(what, body, *args, **kwargs):
            if what != "adding messages" or in_body.is_set():
                return real_write(what, body, *args, **kwargs)

            def held(cur, *rest):
                out = body(cur, *rest)  # x's row reserved with the epochs as they are now
                in_body.set()
                release.wait(30)
                return out
            return real_write(what, held, *args, **kwargs)

        store._write = held_write
        adding = threading.Thread(target=creator.add, args=("the xylophone lesson is on Friday",))
        adding.start()
        assert in_body.wait(30)
        admin_mem.delete_namespace("y")
        assert asker.search("xylophone lesson", k=5) == []  # x does not exist yet, at the moved epochs
        release.set()
        adding.join(30)
        creator.add("the xylophone teacher is Vera")
        expected = ["the xylophone lesson is on Friday", "the xylophone teacher is Vera"]
        with Memory(pg_url, namespace="x") as fresh:
            assert sorted(h.text for h in fresh.search("xylophone", k=5)) == expected
        assert sorted(h.text for h in asker.search("xylophone", k=5)) == expected
        assert asker.count() == 2
    finally:
        for handle in (admin_mem, asker, creator):
            handle.close()


WRITER = """
import json, sys
from hippo import Memory
url, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with Memory(url, namespace="shared", config={"seal_tokens": 48}) as mem:
    ids = [mem.add(f"{name} note {k}: the tide table for pier {k} changed", speaker=name).id for k in range(n)]
    mem.add_many([{"text": f"{name} batch {k}", "speaker": name} for k in range(5)])
    print(json.dumps({"ids": ids, "seen": mem.count()}))
"""


def test_processes_append_to_one_namespace_without_losing_or_doubling_anything(pg_url) -> None:
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, pg_url, f"w{k}", "25"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=ENV) for k in range(4)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    st = PostgresStore(pg_url)
    try:
        rows = st.load("shared")  # every chunk and tail row verified against its checksum
        assert [r.seq for r in rows] == list(range(4 * 30))
        assert len({r.id for r in rows}) == 120
        text_by_id = {r.id: tokenizer.decode(r.tokens) for r in rows}
        returned = sorted(i for res in results for i in res["ids"])
        assert returned == sorted(i for i, t in text_by_id.items() if " note " in t)  # what add() returned is stored
        expected = sorted([f"w{w} note {k}: the tide table for pier {k} changed" for w in range(4) for k in range(25)]
                          + [f"w{w} batch {k}" for w in range(4) for k in range(5)])
        assert sorted(text_by_id.values()) == expected
        assert st.sizes()["chunks"] >= 1
    finally:
        st.close()
    with Memory(pg_url, namespace="shared") as mem:
        assert mem.check()["ok"]


READER = """
import json, sys
from hippo import Memory
with Memory(sys.argv[1], namespace="shared") as mem:
    print("ready", flush=True)
    for line in sys.stdin:
        hits = mem.search(line.strip(), k=10)
        print(json.dumps([h.text for h in hits]), flush=True)
"""


def test_a_forget_in_one_process_is_honoured_by_the_next_read_in_another(pg_url) -> None:
    reader = subprocess.Popen([sys.executable, "-c", READER, pg_url], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        assert reader.stdout.readline().strip() == "ready"

        def ask(query: str) -> list[str]:
            reader.stdin.write(query + "\n")
            reader.stdin.flush()
            return json.loads(reader.stdout.readline())

        with Memory(pg_url, namespace="shared") as writer:
            writer.add_many([{"text": "The vault code is 4471, kept by Marta.", "metadata": {"topic": "vault"}},
                             {"text": "Lunch is at noon on the terrace.", "metadata": {"topic": "lunch"}}])
            assert any("4471" in t for t in ask("vault code"))
            assert writer.forget({"topic": "vault"}) == 1
            assert ask("vault code") == []
            assert ask("lunch terrace") == ["Lunch is at noon on the terrace."]
            writer.add("The vault code changed to 9902.")
            assert ask("vault code") == ["The vault code changed to 9902."]
    finally:
        reader.stdin.close()
        reader.wait(timeout=60)


# -- faults -------------------------------------------------------------------------------------------------------
def _backends(conn, schema_app: str = "") -> list[int]:
    return [r[0] for r in conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = 'hippo'"
                                       " AND pid <> pg_backend_pid() AND backend_type = 'client backend'").fetchall()]


def test_terminated_backends_are_retried(pg_server, pg_url, monkeypatch) -> None:
    st = PostgresStore(pg_url, pool_min=2, pool_max=3)
    lost = spy(monkeypatch, st, "_after_lost_connection")
    try:
        msgs = batch(4)
        st.append("a", msgs[:2])
        with admin(pg_server) as conn:
            for _ in range(3):
                for pid in _backends(conn):
                    conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
                assert_same(st.load("a"), msgs[:2])  # a read on a dead connection is retried on a new one
        with admin(pg_server) as conn:
            for pid in _backends(conn):
                conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
        st.append("a", msgs[2:])  # so is a write that never reached the server
        assert_same(st.load("a"), msgs)
        assert len(lost) >= 4  # every round met a dead connection
    finally:
        st.close()


def test_a_call_that_finds_every_connection_in_use_by_this_process_is_busy_not_unreachable(pg_url) -> None:
    # with the server up and the pool's only connection held by another thread for longer than the call waits, the
    # call raised StoreError "cannot reach the PostgreSQL server (couldn't get a connection after 2.00 sec)"
    st = PostgresStore(pg_url + "&hippo_pool_max=1&hippo_retry_s=2")
    inside, release = threading.Event(), threading.Event()

    def holder() -> None:
        with st.reading():
            st.state("a")
            inside.set()
            release.wait(60)

    worker = threading.Thread(target=holder)
    worker.start()
    try:
        assert inside.wait(20)
        with pytest.raises(StoreBusy, match=r"hippo_pool_max=1\) was in use by other calls of this process"):
            st.state("a")
    finally:
        release.set()
        worker.join(20)
    assert st.state("a").next_seq == 0  # the connection is back: the next call has it
    st.close()


def test_a_call_that_lost_its_connection_does_not_wait_for_the_test_of_the_pools_other_connections(
        pg_server, pg_url, monkeypatch) -> None:
    """After a lost connection the pool's idle connections are tested with a query each; behind pgbouncer with no free
    server connection each test waits query_wait_timeout (measured: a count with hippo_retry_s=6 and
    query_wait_timeout=2 raised after 9.1 s, 7 s of it in the test of three idle connections). Here the test of
    every idle connection is held until the call is over: the call retries on a new connection and returns."""
    caller = threading.get_ident()
    release = threading.Event()
    tested: list[str] = []
    real = psycopg_pool.ConnectionPool.check_connection

    def check_connection(conn) -> None:
        if threading.get_ident() == caller:
            tested.append("by the call")
        else:
            tested.append("aside")
            release.wait(60)  # a pooler's queue: over when the test releases it
        real(conn)

    st = PostgresStore(pg_url, pool_min=3, pool_max=4)
    try:
        msgs = batch(3)
        st.append("a", msgs)
        wait_for(lambda: st._pool.get_stats().get("pool_available", 0) >= 2, what="idle connections in the pool")
        monkeypatch.setattr(psycopg_pool.ConnectionPool, "check_connection", staticmethod(check_connection))
        with admin(pg_server) as conn:
            for pid in _backends(conn):
                conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
        assert_same(st.load("a"), msgs)  # retried on a new connection while the others are still being tested
        assert "by the call" not in tested
        release.set()
        wait_for(lambda: "aside" in tested, what="the pool's idle connections tested")
        st.append("a", batch(4)[3:])
        assert len(st.load("a")) == 4
    finally:
        release.set()
        st.close()


@pytest.mark.parametrize("where", ["catching up", "opening", "loading the lifecycle"])
def test_a_connection_lost_inside_a_consistent_read_is_retried(pg_server, pg_url, monkeypatch, where) -> None:
    # The engine reads a fingerprint, the change feed and rows in one snapshot (Store.reading). Its connection lost in
    # the middle (a restart, a terminated backend) made the search raise StoreError, where every other read is
    # retried for up to hippo_retry_s: the block is now read again on another connection.
    texts = [f"the lighthouse note {k} about lamps and doors" for k in range(40 if "lifecycle" in where else 1)]
    with Memory(pg_url) as writer:
        writer.add_many([{"text": t} for t in texts])
        writer.recall("lighthouse", budget_tokens=100)
    reader = Memory(pg_url)
    writer = Memory(pg_url)
    try:
        if where == "catching up":
            assert len(reader.search("lighthouse", k=3)) == 1
        writer.add("the lighthouse lamp was replaced in May")
        texts.append("the lighthouse lamp was replaced in May")
        # the read inside a block whose connection is terminated: the feed read when catching up, every row when
        # opening without a snapshot, the feed after the lifecycle's snapshot (the second feed read in a block)
        method, nth = {"catching up": ("changes", 1), "opening": ("load", 1),
                       "loading the lifecycle": ("changes", 2)}[where]
        if where == "opening":
            assert writer.engine.rt.store.get_units("default", "derived.index") is not None
            monkeypatch.setattr(PostgresStore, "get_units", lambda self, ns, kind: None)
        terminated: list[int] = []
        in_block: list[int] = []
        real = getattr(PostgresStore, method)

        def terminate_nth(self, *args, **kwargs):
            conn = getattr(self._local, "conn", None)
            if conn is not None:
                in_block.append(1)
                if len(in_block) == nth:
                    terminated.append(conn.info.backend_pid)
                    with admin(pg_server) as other:
                        other.execute("SELECT pg_terminate_backend(%s)", (terminated[0],))
            return real(self, *args, **kwargs)

        monkeypatch.setattr(PostgresStore, method, terminate_nth)
        hits = reader.search("lighthouse", k=50) if where != "loading the lifecycle" else \
            reader.recall("lighthouse lamps", budget_tokens=2000).messages
        assert sorted(h.text for h in hits) == sorted(texts)
        assert terminated  # the connection was lost inside the block
    finally:
        writer.close()
        reader.close()


def test_a_write_terminated_before_it_committed_is_retried_once(pg_server, pg_url, monkeypatch) -> None:
    st = PostgresStore(pg_url)
    outcomes = spy(monkeypatch, st, "_outcome")
    try:
        st.append("a", batch(1))
        msgs = batch(3, start=1)
        out: dict = {}
        with namespace_held(pg_server, st, "a") as conn:
            worker = threading.Thread(target=lambda: out.setdefault("rows", st.append("a", msgs)))
            worker.start()
            waiting = "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory'"
            pid = wait_for(lambda: conn.execute(waiting).fetchone(), what="the append to wait for the lock")[0]
            conn.execute("SELECT pg_terminate_backend(%s)", (pid,))  # inside the transaction, before COMMIT
            wait_for(lambda: (conn.execute(waiting).fetchone() or (None,))[0] not in (None, pid),
                     what="the retried append to wait for the lock")
            conn.execute("SELECT pg_advisory_unlock(%s)", (st._lock_key("a"),))
            worker.join(60)
        assert_same(out["rows"], msgs)
        assert_same(st.load("a")[1:], msgs)  # exactly once
        assert st.state("a").next_seq == 4
        assert outcomes == []  # the connection broke before COMMIT: retried without asking
    finally:
        st.close()


@pytest.mark.parametrize("operation", ["append", "delete"])
def test_a_connection_lost_during_commit_is_resolved_by_asking_the_server(pg_server, pg_url, operation,
                                                                          monkeypatch) -> None:
    """COMMIT made to hang in synchronous replication (to a standby that does not exist), then the backend is
    terminated: the transaction committed locally but the client never heard back. The store asks the server
    (pg_xact_status) and returns the committed result: nothing lost, nothing applied twice, also for a delete,
    which could not simply be run again."""
    st = PostgresStore(pg_url)
    outcomes = spy(monkeypatch, st, "_outcome")
    try:
        rows = st.append("a", batch(3))
        before = st.state("a")
        out: dict = {}

        def run() -> None:
            try:
                out["value"] = st.append("a", batch(2, start=3)) if operation == "append" else \
                    st.delete("a", [rows[1].id])
            except Exception as exc:  # noqa: BLE001 - asserted below
                out["error"] = exc

        with admin(pg_server) as conn:
            conn.execute("ALTER SYSTEM SET synchronous_standby_names = 'nobody'")
            conn.execute("SELECT pg_reload_conf()")
            try:
                time.sleep(0.2)  # the reload reaches every backend
                worker = threading.Thread(target=run)
                worker.start()
                pid = wait_for(lambda: conn.execute("SELECT pid FROM pg_stat_activity WHERE wait_event = 'SyncRep'"
                                                    ).fetchone(), what="COMMIT to wait for the standby")[0]
                conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
                worker.join(60)
            finally:
                conn.execute("ALTER SYSTEM RESET synchronous_standby_names")
                conn.execute("SELECT pg_reload_conf()")
        assert "error" not in out, out.get("error")
        after = st.state("a")
        if operation == "append":
            assert [r.seq for r in out["value"]] == [3, 4]
            assert after.next_seq == 5 and len(st.load("a")) == 5
        else:
            assert out["value"] == [rows[1].id]
            assert after.generation == before.generation + 1 and len(st.load("a")) == 2
        assert after.version == before.version + 1  # one change, applied once
        assert outcomes == ["committed"]
    finally:
        st.close()


@pytest.mark.parametrize("when", ["before COMMIT", "after COMMIT"])
def test_a_client_side_error_of_the_driver_counts_as_a_lost_connection(pg_url, monkeypatch, when) -> None:
    """A backend terminated while psycopg reads a pipeline's results can surface as an OperationalError without
    SQLSTATE ("cannot exit pipeline mode ...", which replaces the termination) on a connection not marked bad. It was
    taken for a plain error: the append raised StoreError without retrying, and when its COMMIT had gone through, a
    call that raised had stored its messages. Now it is a lost connection: retried before COMMIT, resolved by asking
    the server after."""
    st = PostgresStore(pg_url)
    outcomes = spy(monkeypatch, st, "_outcome")
    failed: list[str] = []

    def then_fail(real, committing: bool):
        def run(conn, statements):
            if not failed and committing == (when == "after COMMIT"):
                if committing:
                    real(conn, statements)  # the transaction commits; the client hears an error
                failed.append(when)
                raise psycopg.OperationalError("cannot exit pipeline mode while busy")
            return real(conn, statements)
        return run

    try:
        st.append("a", batch(2))
        # the transaction's start (_begin) and its last statement with COMMIT (_batch)
        monkeypatch.setattr(st, "_begin", then_fail(st._begin, False))
        monkeypatch.setattr(st, "_batch", then_fail(st._batch, True))
        msgs = batch(3, start=2)
        rows = st.append("a", msgs)
        assert failed == [when]
        assert [r.seq for r in rows] == [2, 3, 4]
        assert_same(st.load("a")[2:], msgs)  # stored exactly once
        assert st.state("a").version == 2
        assert outcomes == ([] if when == "before COMMIT" else ["committed"])
    finally:
        st.close()


def test_a_handle_keeps_working_across_a_server_restart(pg_server, pg_url, monkeypatch) -> None:
    done: list[int] = []
    errors: list[BaseException] = []
    with Memory(pg_url, namespace="r", config={"seal_tokens": 40}) as mem:
        lost = spy(monkeypatch, mem.engine.rt.store, "_after_lost_connection")
        mem.add("before the restart")

        def writer() -> None:
            try:
                for k in range(30):
                    done.append(mem.add(f"during the restart, entry {k}").id)
                    time.sleep(0.03)
            except BaseException as exc:  # noqa: BLE001 - asserted below
                errors.append(exc)

        worker = threading.Thread(target=writer)
        worker.start()
        wait_for(lambda: len(done) >= 5, what="the first writes")
        pg_server.restart()
        worker.join(120)
        assert errors == []
        assert len(done) == 30
        texts = [it.text for it in mem.list()]
        assert texts == ["before the restart"] + [f"during the restart, entry {k}" for k in range(30)]
        assert mem.search("entry 29", k=1)[0].text == "during the restart, entry 29"
        assert mem.check()["ok"]
        assert lost  # the restart was met, and retried through


def test_a_handle_closed_while_the_server_is_down_is_closed(pg_server, pg_url) -> None:
    # close() saves derived state first; with the server gone that save raised out of close() and left the store
    # open: its pool's threads kept reconnecting, and `with Memory(...)` ended on an error with the handle still open
    mem = Memory(pg_url + "&hippo_retry_s=0", namespace="n")
    for k in range(30):
        mem.add(f"note {k} on the harbour's tides")
    assert mem.search("tides", k=1)
    store = mem._rt.store
    pg_server.stop()
    try:
        mem.close()
        assert store._pool.closed
        with pytest.raises(ClosedError):
            mem.count()
        mem.close()  # idempotent
    finally:
        pg_server.start()
    with Memory(pg_url, namespace="n") as again:  # nothing lost: the messages are all in their rows
        assert again.count() == 30 and again.search("tides", k=1)


def test_a_close_with_the_server_down_waits_for_it_once_not_once_per_namespace(pg_server, pg_url, monkeypatch) -> None:
    # each namespace's save and seal waited hippo_retry_s for the server: 16.1 s for four namespaces with
    # hippo_retry_s=2, eight minutes with the default 30 s
    mem = Memory(pg_url + "&hippo_retry_s=0", namespace="n0")
    views = [mem] + [mem.using(f"n{i}") for i in range(1, 4)]
    for view in views:
        for k in range(5):
            view.add(f"note {k} on the harbour's tides")
        assert view.search("tides", k=1)
    failed = spy_failures(monkeypatch, mem._rt.store, ("state", "seal", "put_units_many"))
    pg_server.stop()
    try:
        mem.close()
        assert len(failed) == 1, failed
        with pytest.raises(ClosedError):
            views[2].count()
    finally:
        pg_server.start()
    with Memory(pg_url, namespace="n3") as again:
        assert again.count() == 5 and again.search("tides", k=1)


def spy_failures(monkeypatch, store, names) -> list:
    """The calls of ``store.<name>`` that raised, by name."""
    failed: list = []
    for name in names:
        real = getattr(store, name)

        def wrapper(*args, _real=real, _name=name, **kwargs):
            try:
                return _real(*args, **kwargs)
            except Exception:
                failed.append(_name)
                raise

        monkeypatch.setattr(store, name, wrapper)
    return failed


def test_the_pool_reconnects_again_for_the_outage_window_then_while_a_call_waits() -> None:
    """Each round of the pool's attempts to reconnect lasts _RECONNECT_MAX_S; at its end another starts while the
    outage is shorter than the window (hippo_retry_s, at least 60 s), after it only while a call waits for a
    connection, and a connection made ends the outage, so that the next one has its whole window again."""
    class Pool:
        closed = False

    now = [1000.0]
    waiting = [False]
    starts: list[float] = []
    rounds = postgres._Reconnecting(60.0, lambda: starts.append(now[0]), lambda: waiting[0], clock=lambda: now[0])
    for _ in range(30):  # a round every 2 s: 29 more after the first one given up, within its 60 s
        rounds.failed(Pool())
        now[0] += 2.0
    assert starts == [1000.0 + 2 * k for k in range(30)]
    rounds.failed(Pool())  # 60 s after the first round was given up: the pool stops until a call needs a connection
    assert len(starts) == 30
    waiting[0] = True  # a call waits (it began after the window): the pool goes on trying for it
    for _ in range(3):
        now[0] += 2.0
        rounds.failed(Pool())
    assert len(starts) == 33
    waiting[0] = False
    rounds.connected(None)  # a connection was made: the next outage has its whole window
    now[0] += 100.0
    rounds.failed(Pool())
    assert len(starts) == 34
    closed = Pool()
    closed.closed = True
    rounds.failed(closed)
    assert len(starts) == 34


def _count_through_an_outage(pg_server, mem: Memory, until: Callable[[], bool], timeout: float, what: str) -> None:
    """Stop the server, count the store's one message from another thread (the count meets the outage: the pool
    starts reconnecting), start the server again once ``until()`` holds, and check that the count returned 1."""
    pg_server.stop()
    try:
        got: list = []
        worker = threading.Thread(target=lambda: got.append(mem.count()))
        worker.start()
        wait_for(until, timeout=timeout, what=what)
    finally:
        pg_server.start()
    worker.join(60)
    assert got == [1]


def test_a_call_begun_after_the_outage_window_has_the_pool_reconnect_until_it_gets_a_connection(
        pg_server, pg_url, monkeypatch) -> None:
    # with the window over, the pool made one round of attempts (2 s) for a call and stopped: the call waited for
    # the pool's 30 s timeout with the server back meanwhile (and raised StoreError with hippo_retry_s=30)
    with Memory(pg_url + "&hippo_retry_s=60", namespace="w") as mem:
        mem.add("before the outage")
        store = mem._rt.store
        store._reconnecting.window_s = 0.0  # the window of a long outage is over
        attempts: list = []
        real = psycopg.Connection.connect.__func__

        def connect(cls, *args, **kwargs):  # the pool's attempts (psycopg.Connection.connect)
            attempts.append(1)
            return real(cls, *args, **kwargs)

        monkeypatch.setattr(psycopg.Connection, "connect", classmethod(connect))
        _count_through_an_outage(pg_server, mem, lambda: len(attempts) >= 16, 25,
                                 "the pool to go on reconnecting for the call")


@pytest.mark.parametrize("first_wait", [None, 4.0])
def test_a_handle_reconnects_at_most_two_seconds_after_the_server_is_back(pg_server, pg_url, monkeypatch,
                                                                          first_wait) -> None:
    # psycopg_pool doubles the wait between its attempts to reconnect (1, 2, 4, 8 s ...): after an outage of 20 s a
    # call waited 10 s more with the server up, and one begun with the outage raised StoreError after hippo_retry_s.
    # The bound holds through the pool's public parameters, whatever its backoff: with a first wait of 4 s (as another
    # release of psycopg_pool could choose) it was 4 s, the bound resting on a private method of the pool.
    if first_wait is not None:
        from psycopg_pool.base import AttemptWithBackoff

        monkeypatch.setattr(AttemptWithBackoff, "INITIAL_DELAY", first_wait)
    with Memory(pg_url, namespace="r") as mem:
        mem.add("before the outage")
        pool = mem.engine.rt.store._pool
        waits: list[float] = []
        real = pool.schedule_task

        def schedule_task(task, delay):
            waits.append(delay)
            return real(task, delay)

        monkeypatch.setattr(pool, "schedule_task", schedule_task)
        _count_through_an_outage(pg_server, mem, lambda: len(waits) >= 4, 60, "four attempts to reconnect")
        assert max(waits) <= postgres._RECONNECT_MAX_S, waits
        assert mem.add("after the outage").text == "after the outage"


ISLANDS = ["Capri", "Ischia", "Procida", "Elba", "Giglio", "Ponza", "Lipari", "Salina", "Vulcano", "Stromboli",
           "Panarea", "Alicudi", "Filicudi", "Ustica", "Favignana", "Levanzo", "Marettimo", "Pantelleria", "Lampedusa",
           "Linosa", "Gorgona", "Capraia", "Pianosa", "Montecristo", "Giannutri", "Ventotene", "Zannone", "Palmarola",
           "Asinara", "Tavolara"]


def test_through_pgbouncer_in_transaction_mode(pg_server, pg_url) -> None:
    """Behind a pgbouncer in transaction mode (two server connections for every client) with prepared statements
    off: no call relies on session state, so two handles keep working, freshness included."""
    from hippo_bench.pgserver import PgBouncer, find_pgbouncer

    if find_pgbouncer() is None:
        pytest.skip("pgbouncer is not installed (Debian: apt-get install pgbouncer; .ci/run installs it)")
    bouncer = PgBouncer(pg_server, "hippo", pool_mode="transaction", pool_size=2)
    try:
        url = bouncer.url(hippo_schema=schema_of(pg_url), hippo_prepare_threshold="none")
        with Memory(url, namespace="a", config={"seal_tokens": 48}) as host_a, \
                Memory(url, namespace="a") as host_b:
            for k, word in enumerate(ISLANDS):  # past psycopg's prepare threshold many times over
                host_a.add(f"The ferry to {word} leaves at {k % 12 + 1} o'clock.", metadata={"k": k})
                assert host_b.count() == k + 1
                assert host_b.search(word, k=1)[0].metadata == {"k": k}
            assert host_a.forget({"k": {"$lt": 10}}) == 10
            assert host_b.count() == 20 and host_b.search(ISLANDS[3], k=5) == []
            assert all(h.metadata["k"] >= 10 for h in host_b.search("ferry", k=30))
            assert host_b.check()["ok"]
        with admin(pg_server) as conn:  # what went through the bouncer is in the server
            assert conn.execute(f'SELECT COUNT(*) FROM "{schema_of(pg_url)}".messages').fetchone()[0] == 20
    finally:
        bouncer.close()


def test_through_pgbouncer_in_transaction_mode_with_statements_prepared(pg_server, pg_url, caplog) -> None:
    """pgbouncer before 1.21 in transaction mode loses the statements psycopg prepares (after 5 runs) between
    transactions: with the URL left as it was, 28 of 30 rounds of add / count / search raised StoreError ('prepared
    statement "_pg3_2" does not exist'). The first such failure turns preparing off for the handle (a warning says
    so) and the read runs again; every later call works as with hippo_prepare_threshold=none."""
    from hippo_bench.pgserver import PgBouncer, find_pgbouncer

    if find_pgbouncer() is None:
        pytest.skip("pgbouncer is not installed (Debian: apt-get install pgbouncer; .ci/run installs it)")
    bouncer = PgBouncer(pg_server, "hippo", port=6548, pool_mode="transaction", pool_size=2)
    try:
        url = bouncer.url(hippo_schema=schema_of(pg_url))
        with caplog.at_level("WARNING", logger="hippo.store"), Memory(url, namespace="a") as host_a, \
                Memory(url, namespace="a") as host_b:
            for k, word in enumerate(ISLANDS):
                host_a.add(f"The ferry to {word} leaves at {k % 12 + 1} o'clock.", metadata={"k": k})
                assert host_b.count() == host_a.count() == k + 1
                assert host_b.search(word, k=1)[0].metadata == {"k": k}
            assert host_a.forget({"k": {"$lt": 10}}) == 10
            assert host_b.count() == 20 and host_b.search(ISLANDS[3], k=5) == []
            assert host_a.check()["ok"] and host_b.check()["ok"]
        warned = [r for r in caplog.records if "no longer prepared" in r.getMessage()]
        assert 1 <= len(warned) <= 2, warned  # once per handle that met the pooler's loss
        with admin(pg_server) as conn:
            assert conn.execute(f'SELECT COUNT(*) FROM "{schema_of(pg_url)}".messages').fetchone()[0] == 20
    finally:
        bouncer.close()


def test_a_write_whose_prepared_statement_the_pooler_lost_runs_again_and_stores_once(pg_server, pg_url,
                                                                                     monkeypatch) -> None:
    """An append whose statement, prepared on one of pgbouncer's server connections, ran on the other (where it does
    not exist) failed inside its transaction, which the server reported failed: it raised StoreError having stored
    nothing. It now runs again, without preparing, and every message is stored once."""
    from hippo_bench.pgserver import PgBouncer, find_pgbouncer

    if find_pgbouncer() is None:
        pytest.skip("pgbouncer is not installed (Debian: apt-get install pgbouncer; .ci/run installs it)")
    bouncer = PgBouncer(pg_server, "hippo", port=6549, pool_mode="transaction", pool_size=2)
    try:
        url = bouncer.url(hippo_schema=schema_of(pg_url))
        writer, reader = PostgresStore(url, pool_max=1), PostgresStore(url, pool_max=1)
        try:
            attempts: list = []
            real = writer._attempt_write
            monkeypatch.setattr(writer, "_attempt_write", lambda *a, **k: (attempts.append(1), real(*a, **k))[1])
            msgs = batch(12)
            for k in range(8):  # every statement of an append run past psycopg's threshold: prepared on a server
                writer.append("a", msgs[k:k + 1])  # connection, the one pgbouncer hands the only client
            with reader.reading():  # holds that server connection: the next appends get the other
                reader.state("a")
                for k in range(8, 12):
                    writer.append("a", msgs[k:k + 1])
            assert len(attempts) == 13  # one append met the lost statement, and ran again
            assert_same(writer.load("a"), msgs)
        finally:
            writer.close()
            reader.close()
        with admin(pg_server) as conn:
            assert conn.execute(f'SELECT COUNT(*) FROM "{schema_of(pg_url)}".messages').fetchone()[0] == 12
    finally:
        bouncer.close()


def test_a_write_the_server_does_not_report_failed_is_not_run_again_after_a_prepared_statement_error(
        pg_url) -> None:
    """A prepared statement lost by a pooler proves that a write stored nothing only while the server reports its
    transaction failed; otherwise (a COMMIT that may have run) the write raises as before, naming the fix, and the
    store prepares nothing from then on."""
    st = PostgresStore(pg_url)
    try:
        conn = st._getconn()
        assert conn.prepare_threshold == 5
        exc = psycopg.errors.InvalidSqlStatementName('prepared statement "_pg3_4" does not exist')
        with pytest.raises(StoreError, match="hippo_prepare_threshold=none"):
            st._failed(exc, conn, "adding messages", True, None, writing=True)
        assert conn.closed
        st._putconn(conn)
        again = st._getconn()
        assert again.prepare_threshold is None  # every connection handed out from now on
        st._putconn(again)
        with pytest.raises(postgres._PreparedLost):  # a read stored nothing: it runs again
            read = st._getconn()
            try:
                read.prepare_threshold = 5
                st._failed(psycopg.errors.DuplicatePreparedStatement('prepared statement "_pg3_0" already exists'),
                           read, "reading the store", False)
            finally:
                st._putconn(read)
    finally:
        st.close()


def test_an_open_through_pgbouncer_while_the_server_is_down_waits_for_the_server(pg_server, pg_url) -> None:
    """A pgbouncer that has not logged in to the server yet answers a login with query_wait_timeout while the server is
    down: the open is retried until the server is back, as without the pooler."""
    from hippo_bench.pgserver import PgBouncer, find_pgbouncer

    if find_pgbouncer() is None:
        pytest.skip("pgbouncer is not installed (Debian: apt-get install pgbouncer; .ci/run installs it)")
    with Memory(pg_url, namespace="n") as mem:
        mem.add("kept across the outage")
    bouncer = PgBouncer(pg_server, "hippo", port=6545, pool_size=2,
                        settings={"query_wait_timeout": "1", "server_login_retry": "1"})
    opened: list = []
    try:
        url = bouncer.url(hippo_schema=schema_of(pg_url), hippo_prepare_threshold="none", hippo_retry_s="120")

        pg_server.stop()
        worker = _opening(url, opened)
        try:
            worker.start()
            wait_for(lambda: opened or "pooler error: query_wait_timeout" in bouncer.log.read_text(errors="replace"),
                     what="pgbouncer to give up on a login")
        finally:
            pg_server.start()
        worker.join(120)
        assert not worker.is_alive()
        assert isinstance(opened[0], Memory), opened[0]
        with opened[0] as mem:
            assert [it.text for it in mem.list()] == ["kept across the outage"]
    finally:
        bouncer.close()


def test_pgbouncer_in_statement_mode_is_reported_at_once(pg_server, pg_url, monkeypatch) -> None:
    # pgbouncer refuses a transaction in statement mode and closes the connection: a lost connection by its SQLSTATE
    # (08P01), which the open tried again for hippo_retry_s (30 s) before it reported "cannot reach the server"
    from hippo_bench.pgserver import PgBouncer, find_pgbouncer

    if find_pgbouncer() is None:
        pytest.skip("pgbouncer is not installed (Debian: apt-get install pgbouncer; .ci/run installs it)")
    bouncer = PgBouncer(pg_server, "hippo", port=6546, pool_mode="statement", pool_size=2)
    try:
        tries = connects(monkeypatch)
        url = bouncer.url(hippo_schema=schema_of(pg_url), hippo_prepare_threshold="none")
        with pytest.raises(StoreError, match="pool_mode = statement refuses: use pool_mode = transaction"):
            Memory(url, namespace="n")
        assert len(tries) == 1
    finally:
        bouncer.close()


def test_a_writers_wait_ended_by_pgbouncers_query_timeout_is_busy(pg_server, pg_url, monkeypatch) -> None:
    # pgbouncer's query_timeout closes the connection of a writer waiting for the namespace's lock: it was retried as a
    # lost connection, each attempt waiting the same, and raised "cannot reach the PostgreSQL server" after
    # hippo_retry_s; as when the DBA's statement_timeout ends the wait, it is StoreBusy at once, having stored nothing
    from hippo_bench.pgserver import PgBouncer, find_pgbouncer

    if find_pgbouncer() is None:
        pytest.skip("pgbouncer is not installed (Debian: apt-get install pgbouncer; .ci/run installs it)")
    with Memory(pg_url, namespace="n") as mem:  # the schema made without the pooler's bound on statements
        mem.add("before the other writer")
    bouncer = PgBouncer(pg_server, "hippo", port=6547, pool_size=2, settings={"query_timeout": "1"})
    try:
        url = bouncer.url(hippo_schema=schema_of(pg_url), hippo_prepare_threshold="none", hippo_retry_s="3")
        with Memory(url, namespace="n") as mem:
            store = mem._rt.store
            attempts: list = []
            real_begin = store._begin
            monkeypatch.setattr(store, "_begin", lambda conn, statements: (attempts.append(1),
                                                                           real_begin(conn, statements))[1])
            with admin(pg_server) as other:
                other.execute("BEGIN")
                other.execute("SELECT pg_advisory_xact_lock(%s)", (store._lock_key("n"),))
                with pytest.raises(StoreBusy, match="query_timeout"):
                    mem.add("while the other writer holds the namespace")
                other.execute("ROLLBACK")
            assert len(attempts) == 1  # not tried again: the other writer still held the namespace
            assert [it.text for it in mem.list()] == ["before the other writer"]
    finally:
        bouncer.close()


def test_row_level_security_as_docs_deploy_sets_it_up(pg_server, pg_url) -> None:
    """The policies of docs/deploy.md: a tenant's role reads and writes its own namespaces and sees no other."""
    schema = schema_of(pg_url)
    with Memory(pg_url, namespace="t1") as owner:
        owner.add("tenant one's secret: the launch is on Friday")
        owner.using("t2").add("tenant two's secret: the budget is 40k")
    role = "tenant_" + schema[2:10]
    with admin(pg_server) as conn:
        for table, column in (("messages", "namespace"), ("tail", "namespace"), ("chunks", "namespace"),
                              ("codes", "namespace"), ("units", "namespace"), ("changes", "namespace"),
                              ("namespaces", "name")):
            conn.execute(f'ALTER TABLE "{schema}".{table} ENABLE ROW LEVEL SECURITY')
            conn.execute(f'CREATE POLICY tenant ON "{schema}".{table}'
                         f" USING (split_part({column}, '.', 1) = current_setting('hippo.tenant'))"
                         f" WITH CHECK (split_part({column}, '.', 1) = current_setting('hippo.tenant'))")
        conn.execute(f"CREATE ROLE {role} LOGIN")
        conn.execute(f'GRANT USAGE ON SCHEMA "{schema}" TO {role}')
        conn.execute(f'GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "{schema}" TO {role}')
        conn.execute(f'GRANT USAGE ON ALL SEQUENCES IN SCHEMA "{schema}" TO {role}')
        conn.execute(f"ALTER ROLE {role} SET hippo.tenant = 't1'")
    tenant_url = pg_url.replace("postgres@", f"{role}@", 1)
    with Memory(tenant_url, namespace="t1") as mine:
        assert [it.text for it in mine.list()] == ["tenant one's secret: the launch is on Friday"]
        mine.add("tenant one adds a note")
        assert mine.using("t1.docs").add("a child namespace of tenant one").id > 0
        assert mine.namespaces() == ["t1", "t1.docs"]
        other = mine.using("t2")
        assert other.count() == 0 and other.search("budget", k=5) == []
        with pytest.raises(StoreError, match="row-level security"):
            other.add("writing into tenant two")
    with Memory(pg_url, namespace="t2") as owner:
        assert [it.text for it in owner.list()] == ["tenant two's secret: the budget is 40k"]


def test_a_reindex_waits_for_another_connections_lock_at_most_busy_timeout(pg_server, pg_url) -> None:
    # REINDEX waits for every transaction holding a lock on its table, and every later statement on the table
    # queues behind the waiting REINDEX, readers included. A transaction held open elsewhere (a slow report, a
    # paused client) made `check(repair=True)` wait for as long as it stayed open; it now gives up after
    # busy_timeout_s with StoreBusy, and the store works on afterwards.
    st = PostgresStore(pg_url, busy_timeout_s=0.2)
    st.append("a", batch(2))
    out: dict = {}

    def reindex() -> None:
        try:
            st.reindex()
            out["done"] = True
        except Exception as exc:  # noqa: BLE001 - asserted below
            out["error"] = exc

    with admin(pg_server) as conn:
        conn.execute("BEGIN")
        conn.execute(f'SELECT count(*) FROM "{schema_of(pg_url)}".messages')  # holds ACCESS SHARE until it ends
        worker = threading.Thread(target=reindex, daemon=True)
        worker.start()
        worker.join(20)  # before the fix, REINDEX is still waiting here, and only ends with the transaction
        held = worker.is_alive()
        conn.execute("ROLLBACK")
    worker.join(60)
    assert not held and isinstance(out.get("error"), StoreBusy), out
    assert st.state("a").next_seq == 2
    st.reindex()  # no lock held: it runs, and no session's lock_timeout is left set
    with st._session("x") as cur:
        assert cur.execute("SHOW lock_timeout").fetchone()[0] == "0"
    st.close()


def test_maintenance_sets_nothing_beyond_its_transaction(pg_server, pg_url, monkeypatch) -> None:
    # docs/deploy.md: no SET outside a transaction. Behind pgbouncer's transaction pooling a session-level SET (and
    # the RESET after it) can land on different server connections, leaving lock_timeout set for another client.
    st = PostgresStore(pg_url, busy_timeout_s=5)
    st.append("a", batch(2))
    seen: list[tuple[str, bool]] = []
    execute = psycopg.Cursor.execute

    def recording(cur, query, *args, **kwargs):
        text = query if isinstance(query, str) else query.as_string(cur)
        seen.append((" ".join(text.split()).upper(), cur.connection.info.transaction_status
                     != psycopg.pq.TransactionStatus.IDLE))
        return execute(cur, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.Cursor, "execute", recording)
    st.reindex()
    st.vacuum()
    monkeypatch.undo()
    sets = [(q, in_txn) for q, in_txn in seen if q.startswith(("SET ", "RESET "))]
    assert sets and all(q.startswith("SET LOCAL ") and in_txn for q, in_txn in sets), sets
    assert any(q.startswith("REINDEX TABLE") for q, _ in seen) and any(q.startswith("VACUUM") for q, _ in seen)
    assert st.state("a").next_seq == 2
    st.close()


def test_a_handle_open_across_a_restore_of_its_schema_neither_mixes_nor_writes(pg_server, pg_url):
    """pg_restore --clean of an earlier dump while an app server has the namespace loaded: the restored counters,
    ids and change numbers are ones that handle has seen with other content, so it must not answer from (or write on
    top of) what it holds in memory; a handle opened after the restore is the reference."""
    tools = [os.path.join(pg_server.bindir, b) for b in ("pg_dump", "pg_restore")]
    if not all(os.access(t, os.X_OK) for t in tools):
        pytest.skip("pg_dump / pg_restore are not beside the server binaries")
    schema, host = schema_of(pg_url), str(pg_server.socket_dir)
    dump = pg_server.root / f"{schema}.dump"
    mem = Memory(pg_url, namespace="n")
    st = PostgresStore(pg_url)
    kept = [f"kept message {i} about apples" for i in range(3)]
    for text in kept:
        mem.add(text, role="user")
    pg_server._run("pg_dump", "-h", host, "--format=custom", f"--schema={schema}", f"--file={dump}", "hippo")
    for i in range(3):
        mem.add(f"lost message {i} about the submarine Nautilus", role="user")
    assert [h.text for h in mem.search("submarine Nautilus", k=1)] == ["lost message 0 about the submarine Nautilus"]
    pg_server._run("pg_restore", "-h", host, "--clean", "--dbname=hippo", str(dump))
    other = Memory(pg_url, namespace="n")  # opened after the restore: writes the same counts again
    new = [f"new message {i} about the giraffe Melman" for i in range(3)]
    for text in new:
        other.add(text, role="user")
    expected = sorted(kept + new)
    assert sorted(x.text for x in other.list(limit=None)) == expected
    other.close()

    for call in (mem.count, lambda: mem.list(limit=None), lambda: mem.search("giraffe Melman"),
                 lambda: mem.recall("giraffe"), lambda: mem.add("written by the stale handle", role="user")):
        with pytest.raises(StoreError, match="dropped and created again"):
            call()
    with pytest.raises(StoreError, match="dropped and created again"):  # the write's own check, past the engine
        st.append("n", batch(1))
    mem.close()
    st.close()
    fresh = Memory(pg_url, namespace="n")
    assert sorted(x.text for x in fresh.list(limit=None)) == expected
    assert [h.text for h in fresh.search("giraffe Melman", k=1)] == ["new message 0 about the giraffe Melman"]
    assert fresh.check()["ok"]
    fresh.close()


def _dump_and_restore_data(pg_server, pg_url):
    """(dump, restore): ``dump()`` takes a dump of the store's schema, ``restore()`` empties its tables and restores
    that dump's rows into them (``pg_restore --data-only``: the tables, and so their object ids, stay)."""
    tools = [os.path.join(pg_server.bindir, b) for b in ("pg_dump", "pg_restore")]
    if not all(os.access(t, os.X_OK) for t in tools):
        pytest.skip("pg_dump / pg_restore are not beside the server binaries")
    schema, host = schema_of(pg_url), str(pg_server.socket_dir)
    path = pg_server.root / f"{schema}.data.dump"

    def dump() -> None:
        pg_server._run("pg_dump", "-h", host, "--format=custom", f"--schema={schema}", f"--file={path}", "hippo")

    def restore() -> None:
        with admin(pg_server) as conn:
            conn.execute("TRUNCATE " + ", ".join(f'"{schema}".{t}' for t in postgres.TABLES))
        pg_server._run("pg_restore", "-h", host, "--data-only", "--dbname=hippo", str(path))

    return dump, restore


def _three_kept_then_three_lost(mem: Memory, dump) -> list[str]:
    """Three messages about apples, the dump, then three about the submarine Nautilus that a restore of the dump
    removes: the texts kept."""
    kept = [f"kept message {i} about apples" for i in range(3)]
    for text in kept:
        mem.add(text, role="user")
    dump()
    for i in range(3):
        mem.add(f"lost message {i} about the submarine Nautilus", role="user")
    return kept


@pytest.mark.parametrize("written", [3, 5])
def test_a_handle_open_across_a_data_only_restore_reads_the_restored_store(pg_server, pg_url, written):
    """TRUNCATE and pg_restore --data-only of an earlier dump keep the tables (their object ids): a handle that had
    the namespace loaded saw counters and change numbers the restore took back, and once another handle wrote as
    many messages again it took the store for the one it held and answered with the messages the restore removed
    (and its next write went on top of them); with more written, it applied the changes past what it saw on top of
    them. A handle opened after the restore is the reference."""
    dump, restore = _dump_and_restore_data(pg_server, pg_url)
    mem = Memory(pg_url, namespace="n")
    kept = _three_kept_then_three_lost(mem, dump)
    assert [h.text for h in mem.search("submarine Nautilus", k=1)] == ["lost message 0 about the submarine Nautilus"]
    restore()
    other = Memory(pg_url, namespace="n")  # opened after the restore: writes the same counts again
    new = [f"new message {i} about the giraffe Melman" for i in range(written)]
    for text in new:
        other.add(text, role="user")
    expected = sorted(kept + new)
    assert sorted(x.text for x in other.list(limit=None)) == expected
    other.close()

    assert sorted(x.text for x in mem.list(limit=None)) == expected
    assert mem.count() == 3 + written
    assert [h.text for h in mem.search("giraffe Melman", k=1)] == ["new message 0 about the giraffe Melman"]
    assert not [h for h in mem.search("submarine Nautilus", k=5) if "Nautilus" in h.text]
    mem.add("written by the handle opened before", role="user")
    mem.close()
    fresh = Memory(pg_url, namespace="n")
    assert sorted(x.text for x in fresh.list(limit=None)) == sorted(expected + ["written by the handle opened before"])
    assert fresh.check()["ok"]
    fresh.close()


def test_a_write_of_a_handle_whose_store_was_restored_under_it_meanwhile_is_not_applied_on_what_it_held(
        pg_server, pg_url, monkeypatch):
    """The restore (and another handle's writes up to one change short of this handle's own) lands between the
    handle's look at the store and its append: the fingerprint after the append is its own plus one change, as
    when nobody wrote in between, and the handle applied its message on top of the messages the restore removed."""
    dump, restore = _dump_and_restore_data(pg_server, pg_url)
    mem = Memory(pg_url, namespace="n")
    kept = _three_kept_then_three_lost(mem, dump)
    assert mem.count() == 6
    new = [f"new message {i} about the giraffe Melman" for i in range(3)]
    store = mem.engine.rt.store
    real = store.append

    def restored_first(namespace, messages, codes=None):
        monkeypatch.setattr(store, "append", real)
        restore()
        other = Memory(pg_url, namespace="n")
        for text in new:
            other.add(text, role="user")
        other.close()
        return real(namespace, messages, codes=codes)

    monkeypatch.setattr(store, "append", restored_first)
    mem.add("written by the handle opened before", role="user")
    expected = sorted(kept + new + ["written by the handle opened before"])
    assert sorted(x.text for x in mem.list(limit=None)) == expected
    assert not [h for h in mem.search("submarine Nautilus", k=5) if "Nautilus" in h.text]
    mem.close()
    fresh = Memory(pg_url, namespace="n")
    assert sorted(x.text for x in fresh.list(limit=None)) == expected
    fresh.close()


def test_a_feed_trimmed_to_the_change_a_reader_saw_still_tells_that_change_by_its_stamp(pg_url) -> None:
    st = PostgresStore(pg_url)
    try:
        st.append("a", batch(2))
        st.append("a", batch(2, start=2))
        seen = st.state("a")
        st.append("a", batch(1, start=4))
        assert st.trim_changes("a", seen.version) == 2
        assert [c.version for c in st.changes("a", seen.version, seen.stamp)] == [seen.version + 1]
        assert st.changes("a", seen.version, "00000000-0000-0000-0000-000000000000") is None  # another history
        assert st.changes("a", seen.version - 1, seen.prev) is None  # trimmed past it
    finally:
        st.close()


# -- forks --------------------------------------------------------------------------------------------------------
def _backend_pid(store: PostgresStore) -> int:
    return store._read("asking for the session", lambda cur: cur.execute("SELECT pg_backend_pid()").fetchone()[0])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_memory_opened_before_a_fork_works_in_parent_and_child_on_sessions_of_their_own(pg_url) -> None:
    # The child used the pool it inherited: the parent's sockets, whose server sessions answered whichever process
    # read first (both hung waiting for answers the other had read), and its close sent the server a Terminate on
    # them, ending the parent's session.
    import gc

    with Memory(pg_url + "&hippo_pool_min=1&hippo_pool_max=1&hippo_retry_s=5", namespace="shared") as mem:
        mem.add_many([{"text": f"note {i}: the parent keeps a red bicycle"} for i in range(10)])
        store = mem.engine.rt.store
        parent_session = _backend_pid(store)
        started = threading.Event()
        parent_errors: list[BaseException] = []

        def parent_writes() -> None:
            started.wait()
            try:
                for i in range(10):
                    mem.add(f"the parent bought bicycle bell {i}")
                    mem.count()
            except BaseException as exc:  # noqa: BLE001
                parent_errors.append(exc)

        def child() -> list:
            child_store = mem.engine.rt.store
            out = [_backend_pid(child_store) != parent_session]
            for i in range(10):
                mem.add(f"the child bought kayak paddle {i}")
            out += [mem.count(), [h.text for h in mem.search("kayak paddle 7", k=1)]]
            mem.close()  # closes the child's own pool, not a connection of the parent's
            gc.collect()
            return out

        writer = threading.Thread(target=parent_writes, daemon=True)
        writer.start()
        got = in_child(child, started.set)  # the parent writes while the child does
        writer.join(DEADLINE_S)
        assert not writer.is_alive(), "the parent's calls hung"
        assert not parent_errors, parent_errors
        assert got.get("result") is not None, got
        own_session, child_count, child_hits = got["result"]
        assert own_session
        assert child_count >= 20 and child_hits == ["the child bought kayak paddle 7"]
        assert mem.count() == 30
        assert _backend_pid(store) == parent_session  # the parent's session was never ended by the child
        texts = {h.text for h in mem.search("kayak paddle", k=30)}
        assert {f"the child bought kayak paddle {i}" for i in range(10)} <= texts


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_store_used_without_a_memory_makes_a_pool_of_its_own_in_a_forked_child(pg_url) -> None:
    st = PostgresStore(pg_url + "&hippo_pool_min=1&hippo_pool_max=1&hippo_retry_s=5")
    try:
        st.append("ns", [msg("written before the fork")])
        parent_session = _backend_pid(st)

        def child() -> list:
            session = _backend_pid(st)
            st.append("ns", [msg("written by the child")])
            rows = [tokenizer.decode(r.tokens) for r in st.load("ns")]
            st.close()
            return [session != parent_session, rows]

        got = in_child(child)
        assert got.get("result") == [True, ["written before the fork", "written by the child"]], got
        assert _backend_pid(st) == parent_session
        assert [tokenizer.decode(r.tokens) for r in st.load("ns")] == ["written before the fork",
                                                                        "written by the child"]
    finally:
        st.close()


def test_a_units_save_derived_before_a_data_only_restore_is_not_written_over_the_restored_store(pg_server, pg_url):
    """The restore took the namespace back, and another handle wrote it up to the same counters again: the save of
    a blob derived from the history before, checked at its generation and version alone, found them unchanged and
    wrote it over the restored store; the stamp of the change it was derived at tells the two histories apart."""
    dump, restore = _dump_and_restore_data(pg_server, pg_url)
    st = PostgresStore(pg_url)
    try:
        st.append("n", batch(3))
        dump()
        st.append("n", batch(3, start=3, tag="lost"))
        seen = st.state("n")
        restore()
        st.append("n", batch(3, start=3, tag="new"))  # the same counters as seen, in another history
        now = st.state("n")
        assert (now.generation, now.next_seq, now.version) == (seen.generation, seen.next_seq, seen.version)
        assert now.stamp != seen.stamp
        assert st.put_units_many("n", {"derived.index": b"of the old history"}, generation=seen.generation,
                                 version=seen.version, stamp=seen.stamp) is False
        assert st.get_units("n", "derived.index") is None
        assert st.put_units_many("n", {"derived.index": b"of the restored history"}, generation=now.generation,
                                 version=now.version, stamp=now.stamp) is True
        assert st.get_units("n", "derived.index") == b"of the restored history"
    finally:
        st.close()


def test_a_handle_open_across_a_data_only_restore_does_not_save_what_it_derived_before_over_it(pg_server, pg_url,
                                                                                                monkeypatch):
    """The restore and another handle's writes, back to this handle's counters, land between this handle's look at
    the store and its save of the derived index: the save went through and replaced the index the other handle
    saved from the restored messages with one of messages the restore removed."""
    dump, restore = _dump_and_restore_data(pg_server, pg_url)
    config = {"hierarchy": {"enabled": False}, "decay": {"enabled": False}}  # the index alone is derived
    mem = Memory(pg_url, namespace="n", config=config)
    _three_kept_then_three_lost(mem, dump)
    store = mem.engine.rt.store
    real = store.put_units_many
    saved: list = []

    def restored_first(namespace, payloads, **kwargs):
        if not saved:
            restore()
            with Memory(pg_url, namespace="n", config=config) as other:
                for i in range(3):
                    other.add(f"new message {i} about the giraffe Melman", role="user")
            saved.append(store.get_units("n", "derived.index"))
            assert saved[0] is not None
        result = real(namespace, payloads, **kwargs)
        saved.append((kwargs.get("version"), result))
        return result

    monkeypatch.setattr(store, "put_units_many", restored_first)
    mem.close()
    assert saved[1] == (6, False), saved[1:]  # the save derived at change 6 of the history before
    monkeypatch.undo()
    with Memory(pg_url, namespace="n", config=config) as fresh:
        assert sorted(x.text for x in fresh.list(limit=None)) == sorted(
            [f"kept message {i} about apples" for i in range(3)]
            + [f"new message {i} about the giraffe Melman" for i in range(3)])
        assert fresh.engine.rt.store.get_units("n", "derived.index") == saved[0]


# What a server whose lc_messages is German answers (the server here has no German locale, so the text is put in
# place of the English one): the SQLSTATE stays 57014 whatever the language.
_GERMAN_CANCELS = {"statement timeout": "storniere Anfrage wegen Zeitüberschreitung der Anweisung",
                   "user request": "storniere Anfrage wegen Benutzeraufforderung"}


@pytest.fixture
def german_messages(monkeypatch):
    english = psycopg.errors.QueryCanceled.__str__

    def german(self) -> str:
        text = english(self)
        for en, de in _GERMAN_CANCELS.items():
            text = text.replace(f"canceling statement due to {en}", de)
        return text

    monkeypatch.setattr(psycopg.errors.QueryCanceled, "__str__", german)


def test_a_statement_timeout_is_told_from_a_cancel_in_any_language_of_the_server(pg_server, pg_url,
                                                                                 german_messages) -> None:
    # The statement_timeout of the role that ended a writer's wait for the namespace's lock was told by the English
    # text of the server's message: with lc_messages in another language the wait of a writer behind another was
    # "the server cancelled the statement" (StoreError), not StoreBusy, and a caller retrying on StoreBusy gave up.
    PostgresStore(pg_url).close()
    st = PostgresStore(pg_url + "&options=-c%20statement_timeout%3D300", busy_timeout_s=30)
    try:
        st.append("a", batch(1))
        with namespace_held(pg_server, st, "a"):
            with pytest.raises(StoreBusy, match="statement_timeout") as info:
                st.append("a", batch(2, start=1))
        assert st.state("a").next_seq == 1
    finally:
        st.close()


def test_a_cancel_request_during_a_writers_wait_is_not_taken_for_a_statement_timeout(pg_server, pg_url,
                                                                                   german_messages) -> None:
    # pg_cancel_backend (a DBA, a pooler) ends the wait long before the role's statement_timeout: the server
    # cancelled the call, no other writer is to blame by a timeout; nothing is stored.
    PostgresStore(pg_url).close()
    st = PostgresStore(pg_url + "&options=-c%20statement_timeout%3D60000&application_name=cancelled", busy_timeout_s=30)
    try:
        st.append("a", batch(1))
        with namespace_held(pg_server, st, "a") as conn:
            def cancel() -> None:
                wait_for(lambda: conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'cancelled'"
                    " AND wait_event_type = 'Lock'").fetchone()[0] > 0, what="the writer waiting for the lock")
                conn.execute("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'cancelled'"
                             " AND wait_event_type = 'Lock'")

            t = threading.Thread(target=cancel)
            t.start()
            try:
                with pytest.raises(StoreError, match="cancelled") as info:
                    st.append("a", batch(2, start=1))
            finally:
                t.join()
            assert not isinstance(info.value, StoreBusy)
            assert "Benutzeraufforderung" in str(info.value)
        assert st.state("a").next_seq == 1
    finally:
        st.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_fork_inside_a_consistent_read_leaves_the_parents_transaction_to_the_parent(pg_url) -> None:
    # A child forked inside a reading() block read through the block's connection, the parent's socket, and on
    # leaving the block committed the parent's transaction there and handed the connection to its own pool, which
    # refused it, so it closed it: the parent's session ended in the middle of the parent's block.
    st = PostgresStore(pg_url + "&hippo_pool_min=1&hippo_pool_max=1&hippo_retry_s=5")
    try:
        st.append("ns", [msg("written before the fork")])
        r, w = os.pipe()
        with st.reading():
            session = _backend_pid(st)
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child's result travels through the pipe
                os.close(r)
                try:
                    inside = _backend_pid(st)
                    out = {"result": [inside != session]}
                except BaseException as exc:  # noqa: BLE001
                    out = {"error": f"{type(exc).__name__}: {exc}"}
        if pid == 0:  # pragma: no cover
            try:
                st.append("ns", [msg("written by the child")])
                out.setdefault("result", []).append([tokenizer.decode(r.tokens) for r in st.load("ns")])
                st.close()
            except BaseException as exc:  # noqa: BLE001
                out = {"error": f"{type(exc).__name__}: {exc}"}
            os.write(w, json.dumps(out).encode())
            os._exit(0)
        os.close(w)
        deadline = time.monotonic() + DEADLINE_S
        while not os.waitpid(pid, os.WNOHANG)[0]:
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                pytest.fail("the child hung")
            time.sleep(0.02)
        with os.fdopen(r, "rb") as f:
            got = json.loads(f.read() or b'{"error": "no result"}')
        assert got.get("result") == [True, ["written before the fork", "written by the child"]], got
        assert _backend_pid(st) == session  # the parent's session lives on
        assert [tokenizer.decode(r.tokens) for r in st.load("ns")] == ["written before the fork",
                                                                        "written by the child"]
    finally:
        st.close()


@pytest.fixture(scope="module")
def german_server():
    """A throwaway server of its own whose ``lc_messages`` is German (the locale compiled into a temporary folder the
    server alone is pointed at; skipped where glibc's localedef or its de_DE source is missing)."""
    import shutil
    import tempfile
    from pathlib import Path

    from hippo_bench.pgserver import PgServer, unavailable_reason

    if unavailable_reason():
        pytest.skip(unavailable_reason())
    locales = Path(tempfile.mkdtemp(prefix="hippo-locales-"))  # the server's user reads it: not under pytest's 0700
    try:
        locales.chmod(0o755)
        try:
            made = subprocess.run(["localedef", "-i", "de_DE", "-f", "UTF-8", str(locales / "de_DE.UTF-8")],
                                  capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as exc:
            pytest.skip(f"no German locale can be made here: {exc}")
        if made.returncode not in (0, 1) or not (locales / "de_DE.UTF-8").is_dir():  # 1: made, with warnings
            pytest.skip(f"no German locale can be made here: {made.stderr.strip()}")
        for path in locales.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        server = PgServer(extra={"lc_messages": "'de_DE.UTF-8'"}, env={"LOCPATH": str(locales)})
        try:
            server.create_database("hippo")
            if "existiert nicht" not in str(_connect_error(server.url("no_such_database"))):
                pytest.skip("the server has no German translation of its messages")
            yield server
        finally:
            server.close()
    finally:
        shutil.rmtree(locales, ignore_errors=True)


def test_an_open_during_a_restart_of_a_german_server_waits_for_it(german_server, monkeypatch) -> None:
    # libpq gives no SQLSTATE for a refused connection, and what the server answers while it shuts down or starts up
    # (57P03) is in the language of its lc_messages: "das Datenbanksystem fährt herunter" was not the English text
    # the open looked for, and an open during a restart raised StoreError at once instead of waiting for the server.
    url = german_server.url("hippo", hippo_schema="restarted")
    with Memory(url, namespace="n") as mem:
        mem.add("kept across the restart")
    opened: list = []

    worker = _opening(url, opened)
    held = psycopg.connect(german_server.url("hippo"), autocommit=True)  # a smart shutdown waits for it
    try:
        german_server.stop("smart", wait=False)
        wait_for(lambda: (german_server.data / "postmaster.pid").exists() and "fährt herunter" in str(
            _connect_error(german_server.url("hippo"))), what="the server refusing new sessions in German")
        tries = connects(monkeypatch)
        worker.start()
        wait_for(lambda: sum("fährt herunter" in str(t) for t in tries) >= 2 or opened,
                 what="the open to meet the shutting-down server twice")
        assert not opened, opened
    finally:
        held.close()
        wait_for(lambda: not (german_server.data / "postmaster.pid").exists(), what="the server to stop")
        german_server.start()
    worker.join(60)
    assert not worker.is_alive()
    mem = opened[0]
    assert isinstance(mem, Memory), mem
    with mem:
        assert [it.text for it in mem.list()] == ["kept across the restart"]


def _connect_error(url: str) -> BaseException | None:
    try:
        psycopg.connect(url).close()
    except psycopg.Error as exc:
        return exc
    return None


def test_a_refusal_of_a_german_server_is_still_reported_at_once(german_server, monkeypatch) -> None:
    # what the server refuses for good (a database that does not exist) is not taken for a server starting up
    tries = connects(monkeypatch)
    with pytest.raises(StoreError, match="existiert nicht"):
        PostgresStore(german_server.url("no_such_database"))
    assert len(tries) == 1


def test_an_open_whose_client_speaks_german_waits_for_a_stopped_server(pg_server, pg_url, monkeypatch) -> None:
    # libpq's own messages and the operating system's ("Datei oder Verzeichnis nicht gefunden") are in the language
    # of the client's locale: the socket the server has not made yet is told by its errno instead
    with Memory(pg_url, namespace="n") as mem:
        mem.add("kept across the restart")
    real = psycopg.connect
    tries: list = []

    def connect(*args, **kwargs):
        try:
            return real(*args, **kwargs)
        except psycopg.OperationalError as exc:
            german = str(exc).replace("No such file or directory", "Datei oder Verzeichnis nicht gefunden")
            tries.append(german)
            raise psycopg.OperationalError(german, pgconn=exc.pgconn) from None

    monkeypatch.setattr(postgres.psycopg, "connect", connect)
    opened: list = []
    pg_server.stop()
    try:
        worker = _opening(pg_url, opened)
        worker.start()
        wait_for(lambda: len(tries) >= 2 or opened, what="the open to try the stopped server")
        assert "nicht gefunden" in tries[0] and not opened, (tries, opened)
    finally:
        pg_server.start()
    worker.join(60)
    mem = opened[0]
    assert isinstance(mem, Memory), mem
    with mem:
        assert [it.text for it in mem.list()] == ["kept across the restart"]


def test_a_refusal_the_server_no_longer_gives_is_tried_once_more(pg_server, pg_url, monkeypatch) -> None:
    # "das Datenbanksystem startet" (57P03) read by libpq a moment before the server finished starting up: asked
    # again, the server lets the user in, so the open tries once more; a refusal that stays is reported after that
    # one more attempt, not retried for hippo_retry_s
    PostgresStore(pg_url).close()
    real = psycopg.connect
    tries: list = []
    failing = [1]

    def connect(*args, **kwargs):
        tries.append(args)
        if len(tries) <= failing[0]:
            try:  # a failed connection's libpq state: the server's host, port, user
                real(pg_server.url("hippo") + "&require_auth=password")
            except psycopg.OperationalError as exc:
                pgconn = exc.pgconn
            raise psycopg.OperationalError(f'connection failed: connection to server on socket "{pg_server.root}'
                                           '/.s.PGSQL.5432" failed: FATAL:  das Datenbanksystem startet',
                                           pgconn=pgconn)
        return real(*args, **kwargs)

    monkeypatch.setattr(postgres.psycopg, "connect", connect)
    PostgresStore(pg_url).close()
    assert len(tries) == 2
    tries.clear()
    failing[0] = 10
    with pytest.raises(StoreError, match="startet"):
        PostgresStore(pg_url)
    assert len(tries) == 2


def test_embedding_codes_computed_across_a_data_only_restore_are_not_saved_for_the_messages_it_brought(
        pg_server, pg_url):
    """A handle embeds another handle's messages (stored without codes) while a data-only restore of an earlier dump
    lands and a third handle writes new messages, which get the ids of the messages the restore removed: the codes
    of the removed messages' texts were saved under the new messages' ids, and every handle opened later used them
    for the new messages. The reference: the codes computed again from the messages the store holds."""
    dump, restore = _dump_and_restore_data(pg_server, pg_url)

    def embed(texts):
        return [[float(len(t)), float(t.count("a")), float(t.count("e")), float(t.count("o")), 1.0] for t in texts]

    restored: list = []

    def slow_embed(texts):
        vectors = embed(texts)  # computed from the texts as read, before the restore
        if not restored and any("Nautilus" in t for t in texts):
            restore()
            with Memory(pg_url, namespace="n") as third:  # no embedding: stores its messages without codes
                restored.extend(third.add(f"new message {i} about the giraffe Melman", role="user").id
                                for i in range(3))
        return vectors

    with Memory(pg_url, namespace="n") as writer:
        _three_kept_then_three_lost(writer, dump)
        lost = [it.id for it in writer.list(limit=None) if "Nautilus" in it.text]
    with Memory(pg_url, namespace="n", embed=slow_embed) as reader:
        reader.search("apples", k=1)
    assert sorted(restored) == sorted(lost)  # the new messages took the removed ones' ids
    store = PostgresStore(pg_url)
    try:
        stored = store.get_codes("n")
    finally:
        store.close()
    with admin(pg_server) as conn:
        conn.execute(f'DELETE FROM "{schema_of(pg_url)}".codes')
    with Memory(pg_url, namespace="n", embed=embed) as fresh:
        fresh.search("apples", k=1)
        reference = fresh.engine.rt.store.get_codes("n")
    assert len(reference) == 6
    assert {i: c for i, c in stored.items() if c != reference.get(i)} == {}


# -- scans of a large namespace ---------------------------------------------------------------------------------------
@pytest.fixture
def fetched(monkeypatch) -> list[int]:
    """The number of rows of every result this process fetched from the server (the scan's pages four rows long)."""
    sizes: list[int] = []
    real = psycopg.Cursor.fetchall

    def fetchall(self):
        rows = real(self)
        sizes.append(len(rows))
        return rows

    monkeypatch.setattr(psycopg.Cursor, "fetchall", fetchall)
    monkeypatch.setattr(postgres, "SCAN_PAGE_ROWS", 4, raising=False)
    return sizes


def test_a_scan_reads_a_page_at_a_time(pg_url, fetched) -> None:
    # Every row of the namespace was fetched at the first step of a scan (list, export, forget): a namespace of 1M
    # tokens held all its rows, metadata included, in memory at once.
    st = PostgresStore(pg_url)
    try:
        st.append("n", batch(30))
        fetched.clear()
        assert [r.metadata["k"] for r in st.scan("n")] == list(range(30))
        assert fetched and max(fetched) <= 4
        assert st._in_use == 0
    finally:
        st.close()


def test_a_scan_sees_the_namespace_as_it_began_while_another_process_writes_between_its_pages(pg_url,
                                                                                               fetched) -> None:
    st, other = PostgresStore(pg_url), PostgresStore(pg_url)
    try:
        rows = st.append("n", batch(12))
        scan = st.scan("n")
        first = [next(scan) for _ in range(5)]  # the second page read
        other.append("n", batch(3, start=12))
        other.delete("n", [rows[9].id])
        other.update_metadata("n", rows[10].id, {"k": "changed"})
        rest = list(scan)
        assert [r.metadata["k"] for r in first + rest] == list(range(12))
        assert [r.id for r in first + rest] == [r.id for r in rows]
        assert st._in_use == 0
        assert [r.metadata["k"] for r in st.scan("n")] == [k if k != 10 else "changed" for k in range(15) if k != 9]
    finally:
        st.close()
        other.close()


def test_a_scan_left_early_gives_its_connection_back(pg_url, fetched) -> None:
    st = PostgresStore(pg_url + "&hippo_pool_max=1")
    try:
        st.append("n", batch(12))
        scan = st.scan("n")
        assert next(scan).metadata["k"] == 0
        scan.close()
        assert st._in_use == 0
        assert st.state("n").next_seq == 12  # the pool's one connection serves the next call
        with st.reading():
            assert [r.metadata["k"] for r in st.scan("n")] == list(range(12))
            assert st.state("n").next_seq == 12
    finally:
        st.close()


def test_a_scan_whose_connection_is_lost_between_pages_goes_on_after_the_last_row(pg_server, pg_url, fetched) -> None:
    st = PostgresStore(pg_url)
    try:
        st.append("n", batch(12))
        scan = st.scan("n")
        first = [next(scan) for _ in range(4)]
        with admin(pg_server) as conn:  # the scan's session, the one idle in its transaction
            assert conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE"
                                " 'FETCH % FROM hippo_scan_%' AND pid <> pg_backend_pid()").fetchone()[0]
        rest = list(scan)
        assert [r.metadata["k"] for r in first + rest] == list(range(12))
        assert st._in_use == 0
    finally:
        st.close()


def test_a_scan_of_one_page_holds_no_connection_while_its_rows_are_used(pg_url, fetched) -> None:
    st = PostgresStore(pg_url + "&hippo_pool_max=1")
    try:
        st.append("n", batch(3))
        for row in st.scan("n"):
            assert st._in_use == 0  # the pool's one connection serves a call made meanwhile
            assert st.state("n").next_seq == 3
    finally:
        st.close()


def test_calls_made_from_an_export_progress_callback_answer_on_a_pool_of_one(pg_url, tmp_path) -> None:
    from tests.export_callback import check_calls_made_from_an_export_progress_callback_answer

    check_calls_made_from_an_export_progress_callback_answer(pg_url + "&hippo_pool_max=1", tmp_path)
