"""``Memory.write_many`` and ``Memory.delete_namespaces``: writes and deletions in several namespaces in one
transaction of the store, on SQLite and PostgreSQL. The reference is the namespaces as they were before the call
(a call that raised changed none of them) and the same calls made one namespace at a time (one that returned)."""

from __future__ import annotations

import asyncio

import pytest

import hippo
from hippo.engine.state import NamespaceState
from tests.processes import run_together
from tests.store_faults import fail_at, fail_dropping


def _content(mem: hippo.Memory, name: str) -> list[tuple[int, str, dict]]:
    """A namespace as the store holds it, read back through a fresh look at the store."""
    return [(m.id, m.text, m.metadata) for m in mem.using(name).list()]


def _seed(mem: hippo.Memory) -> None:
    for name in ("a", "b"):
        view = mem.using(name)
        view.add_many([{"text": f"{name} keeps this note", "metadata": {"k": "keep"}},
                       {"text": f"{name} replaces this note", "metadata": {"k": "old"}}])
        view.flush()  # the replaced message sits in a sealed chunk, which the deletion rewrites


def _writes() -> dict:
    return {"a": {"items": [{"text": "a stores this", "metadata": {"k": "new"}}], "replacing": {"k": "old"}},
            "b": {"items": [{"text": "b stores this", "metadata": {"k": "new"}}], "replacing": {"k": "old"}}}


@pytest.mark.parametrize("failing", ["a", "b"])
@pytest.mark.parametrize("step", ["judge", "append", "chunk", "record"])
def test_a_failure_at_any_step_of_any_namespace_changes_none(location, monkeypatch, step, failing):
    mem = hippo.Memory(location)
    try:
        _seed(mem)
        before = {n: _content(mem, n) for n in ("a", "b")}
        versions = {n: mem.using(n).version() for n in ("a", "b")}
        fail_at(monkeypatch, mem.engine.rt.store, step, failing)
        with pytest.raises(hippo.StoreError, match=step):
            mem.write_many(_writes())
        monkeypatch.undo()
        assert {n: _content(mem, n) for n in ("a", "b")} == before
        assert {n: mem.using(n).version() for n in ("a", "b")} == versions
        # the handle's own followers were left as they were: they answer as the store does
        for n in ("a", "b"):
            assert mem.using(n).count() == 2
            assert [h.text for h in mem.using(n).search(f"{n} replaces", k=5)][0] == f"{n} replaces this note"
        # a second handle, reading the store afresh, agrees
        with hippo.Memory(location) as other:
            assert {n: _content(other, n) for n in ("a", "b")} == before
        out = mem.write_many(_writes())
        assert {n: [i.text for i in items] for n, items in out.items()} == \
            {"a": ["a stores this"], "b": ["b stores this"]}
        for n in ("a", "b"):
            assert [m.text for m in mem.using(n).list()] == [f"{n} keeps this note", f"{n} stores this"]
            assert [h.text for h in mem.using(n).search(f"{n} stores", k=5)][0] == f"{n} stores this"
    finally:
        mem.close()


def test_it_stores_what_add_many_in_each_namespace_stores(location):
    """Reference: the same writes made with ``add_many`` one namespace at a time, in a store of their own."""
    got, ref = hippo.Memory(location), hippo.Memory(None)
    try:
        for mem in (got, ref):
            _seed(mem)
        out = got.write_many(_writes())
        for name, args in _writes().items():
            want = ref.using(name).add_many(args["items"], replacing=args["replacing"])
            assert [(i.text, i.metadata, i.namespace) for i in out[name]] == \
                [(i.text, i.metadata, i.namespace) for i in want]
        for name in ("a", "b"):
            assert [(t, md) for _, t, md in _content(got, name)] == [(t, md) for _, t, md in _content(ref, name)]
        # only deleting in one namespace, only adding in a new one, ids as replacing
        keep = got.using("a").list()[0].id
        got.write_many({"a": {"replacing": [keep]}, "c": {"items": [{"text": "c is new"}]}})
        assert [m.text for m in got.using("a").list()] == ["a stores this"]
        assert [m.text for m in got.using("c").list()] == ["c is new"]
        assert got.write_many({}) == {}
    finally:
        got.close()
        ref.close()


def test_an_if_version_that_changed_in_one_namespace_writes_nothing_anywhere(location):
    mem = hippo.Memory(location)
    try:
        _seed(mem)
        before = {n: _content(mem, n) for n in ("a", "b")}
        stale = mem.using("b").version()
        mem.using("b").add("someone else wrote here")
        before["b"] = _content(mem, "b")
        writes = _writes()
        writes["a"]["if_version"] = mem.using("a").version()
        writes["b"]["if_version"] = stale
        with pytest.raises(hippo.Changed):
            mem.write_many(writes)
        assert {n: _content(mem, n) for n in ("a", "b")} == before
        writes["b"]["if_version"] = mem.using("b").version()
        mem.write_many(writes)
        assert [m.text for m in mem.using("a").list()] == ["a keeps this note", "a stores this"]
    finally:
        mem.close()


def test_followers_failing_after_the_commit_do_not_fail_the_call(location, monkeypatch):
    """What follows the commit maintains process-local state: it must not raise (a retry would store the messages
    twice). The namespace whose followers failed is rebuilt from the store on its next use."""
    mem = hippo.Memory(location)
    try:
        _seed(mem)
        real = NamespaceState.catch_up

        def catch_up(self, *args, **kwargs):
            if self.name == "a":
                raise RuntimeError("simulated failure of a follower")
            return real(self, *args, **kwargs)

        monkeypatch.setattr(NamespaceState, "catch_up", catch_up)
        out = mem.write_many(_writes())
        monkeypatch.undo()
        assert [i.text for i in out["a"]] == ["a stores this"]
        for n in ("a", "b"):
            assert [m.text for m in mem.using(n).list()] == [f"{n} keeps this note", f"{n} stores this"]
            assert mem.using(n).count() == 2
            assert [h.text for h in mem.using(n).search(f"{n} stores", k=5)][0] == f"{n} stores this"
    finally:
        mem.close()


def test_bad_arguments_raise_invalid_input_naming_them_and_write_nothing(tmp_path):
    mem = hippo.Memory(str(tmp_path / "m.db"))
    try:
        _seed(mem)
        before = {n: _content(mem, n) for n in ("a", "b")}
        ok = {"items": [{"text": "fine"}]}
        cases = [
            ([("a", ok)], "writes must be a dict"),
            ({"a": ok, "": ok}, "writes key ''"),
            ({"a": ok, 3: ok}, "writes key 3"),
            ({"a": ok, "b": [{"text": "x"}]}, r"writes\['b'\] must be a dict"),
            ({"a": ok, "b": {"items": [], "replace": [1]}}, r"writes\['b'\]: unknown argument"),
            ({"a": ok, "b": {"items": "text"}}, r"writes\['b'\]\['items'\] must be"),
            ({"a": ok, "b": {"items": [{"text": ""}]}}, r"writes\['b'\]\['items'\]\[0\]"),
            ({"a": ok, "b": {"replacing": {}}}, r"writes\['b'\]\['replacing'\]"),
            ({"a": ok, "b": {"replacing": ["x"]}}, r"writes\['b'\]\['replacing'\]"),
            ({"a": ok, "b": {"replacing": {"k": {"$bad": 1}}}}, r"writes\['b'\]\['replacing'\]"),
            ({"a": ok, "b": {"if_version": "1"}}, r"writes\['b'\]\['if_version'\]"),
        ]
        for writes, message in cases:
            with pytest.raises(hippo.InvalidInput, match=message):
                mem.write_many(writes)
        for bad, message in (("a", "namespaces must be"), (["a", ""], r"namespaces\[1\]"), (None, "namespaces")):
            with pytest.raises(hippo.InvalidInput, match=message):
                mem.delete_namespaces(bad)
        assert {n: _content(mem, n) for n in ("a", "b")} == before
    finally:
        mem.close()
    with hippo.Memory(str(tmp_path / "m.db"), read_only=True) as ro:
        with pytest.raises(hippo.ReadOnlyError):
            ro.write_many({"a": {"items": [{"text": "x"}]}})
        with pytest.raises(hippo.ReadOnlyError):
            ro.delete_namespaces(["a"])


def test_delete_namespaces_removes_all_or_none(location, monkeypatch):
    mem = hippo.Memory(location)
    try:
        _seed(mem)
        mem.using("c").add("another namespace stays")
        before = {n: _content(mem, n) for n in ("a", "b", "c")}
        fail_dropping(monkeypatch, mem.engine.rt.store, "b")
        with pytest.raises(hippo.StoreError, match="dropping b"):
            mem.delete_namespaces(["a", "b"])
        monkeypatch.undo()
        assert {n: _content(mem, n) for n in ("a", "b", "c")} == before
        assert mem.namespaces() == ["a", "b", "c"]
        assert mem.delete_namespaces(["b", "a", "a"]) == 4
        assert mem.namespaces() == ["c"] and mem.using("a").count() == 0 and mem.using("b").list() == []
        assert mem.delete_namespaces([]) == 0
    finally:
        mem.close()


def test_the_async_twin_takes_its_turn_in_every_namespace_it_writes():
    """The async calls of a namespace take effect in the order they were called, a write of several namespaces
    included in each of them (reference: the same calls made one after the other)."""
    mem = hippo.Memory(None)

    async def run() -> None:
        a, b = mem.using("a"), mem.using("b")
        await asyncio.gather(
            a.aadd("a one"), b.aadd("b one"),
            mem.awrite_many({"b": {"items": [{"text": "b two"}]}, "a": {"items": [{"text": "a two"}]}}),
            a.aadd("a three"),
            mem.awrite_many({"a": {"items": [{"text": "a four"}]}, "b": {"items": [{"text": "b three"}]}}),
            b.aadd("b four"))

    try:
        asyncio.run(run())
        assert [m.text for m in mem.using("a").list()] == ["a one", "a two", "a three", "a four"]
        assert [m.text for m in mem.using("b").list()] == ["b one", "b two", "b three", "b four"]
    finally:
        mem.close()


_ROUNDS = 40


def _writer(location: str, order: tuple[str, str], start, errors) -> None:
    """One process writing both namespaces ``_ROUNDS`` times, naming them in ``order``. A deadlock the server had to
    break is an error here (it is not retried), so that taking the locks in opposite orders shows."""
    try:
        from hippo.store import postgres
        postgres._RETRY_STATES = ("40001",)
        mem = hippo.Memory(location)
        start.wait()
        try:
            for i in range(_ROUNDS):
                mem.write_many({n: {"items": [{"text": f"{order[0]} first, round {i}",
                                               "metadata": {"by": order[0], "round": i}}]} for n in order})
        finally:
            mem.close()
    except BaseException as exc:  # noqa: BLE001 - reported to the test
        errors.put(f"{type(exc).__name__}: {exc}")


def test_two_processes_writing_two_namespaces_in_opposite_orders_both_finish(location):
    with hippo.Memory(location) as mem:  # created before the writers race to create it
        mem.using("a").add("first")
        mem.using("b").add("first")
    run_together(_writer, [(location, ("a", "b")), (location, ("b", "a"))])
    with hippo.Memory(location) as mem:
        for n in ("a", "b"):
            assert len(mem.using(n).list()) == 1 + 2 * _ROUNDS
        # one transaction each: both namespaces hold the writes in one order
        assert [(m.metadata["by"], m.metadata["round"]) for m in mem.using("a").list()[1:]] == \
            [(m.metadata["by"], m.metadata["round"]) for m in mem.using("b").list()[1:]]


def test_a_postgres_writer_waiting_for_one_namespace_holds_no_lock_of_the_other(pg_url):
    """Two writes of the same namespaces wait for each other in a cycle only when one holds a lock the other waits
    for while it waits itself. Both take the locks in one order (of their keys) whatever the order the call names
    the namespaces: a write waiting for the first of them holds none (reference: the server's own ``pg_locks``)."""
    import threading

    import psycopg

    from hippo.store.postgres import parse_url

    mem = hippo.Memory(pg_url)
    try:
        store = mem.engine.rt.store
        first, second = sorted(["a", "b"], key=store._lock_key)
        for order in ((first, second), (second, first)):
            with psycopg.connect(parse_url(pg_url)[0], autocommit=True) as holder:
                holder.execute("SELECT pg_advisory_lock(%s)", (store._lock_key(first),))
                done = threading.Event()
                worker = threading.Thread(target=lambda: (mem.write_many(
                    {n: {"items": [{"text": f"note of {n}"}]} for n in order}), done.set()))
                worker.start()
                try:
                    waiting = held = None
                    for _ in range(600):  # until the writer waits for the lock the holder keeps
                        rows = holder.execute(
                            "SELECT (classid::bigint << 32) | objid::bigint, granted FROM pg_locks"
                            " WHERE locktype = 'advisory' AND pid <> pg_backend_pid()").fetchall()
                        waiting = [k for k, granted in rows if not granted]
                        held = [k for k, granted in rows if granted]
                        if waiting:
                            break
                        threading.Event().wait(0.05)
                    assert waiting == [store._lock_key(first)] and held == [], (order, waiting, held)
                finally:
                    holder.execute("SELECT pg_advisory_unlock_all()")
                    worker.join(60)
                assert done.is_set()
        for n in ("a", "b"):
            assert [m.text for m in mem.using(n).list()] == [f"note of {n}", f"note of {n}"]
    finally:
        mem.close()


def test_the_encoding_gate_judges_each_namespace_as_add_many_does():
    """Reference: the same items given to ``add_many`` in each namespace of a store of their own."""
    items = {"a": [{"text": "I moved to Lisbon in 2010 and love the tram number 0"},
                   {"text": "totally new: my sister Zoe plays cello"}],
             "b": [{"text": "hello b"}, {"text": "My daughter Mia starts school in Porto next September"}]}
    answers = []
    for multi in (True, False):
        with hippo.Memory(None, config={"gate": {"enabled": True}}) as mem:
            for i in range(5):
                mem.using("a").add(f"I moved to Lisbon in {2010 + i} and love the tram number {i}")
            if multi:
                out = mem.write_many({n: {"items": v} for n, v in items.items()})
            else:
                out = {n: mem.using(n).add_many(v) for n, v in items.items()}
            answers.append(({n: [(type(i).__name__, i.id, i.text) for i in got] for n, got in out.items()},
                            {n: [m.text for m in mem.using(n).list()] for n in items}))
    assert answers[0] == answers[1]


def test_promoting_entries_into_another_namespace_stores_the_memories_and_the_promotion_together(location,
                                                                                                 monkeypatch):
    """``consolidate_entries("deep", into=...)`` wrote the memories into ``into``, then marked each entry promoted in
    its own namespace, one transaction each. When marking failed, the call raised with the memories stored, and a
    process that opened the store next found the entries unpromoted and wrote their memories a second time. Now
    both are one transaction. Reference: one memory per entry, however the calls before failed."""
    text = "Always deploy with the blue-green script; the order id is ORD-1234 for the outage ticket. " * 3
    mem = hippo.Memory(location)
    try:
        work = mem.using("work")
        entry = work.index_entry(text, persist=True)
        st = type(mem.engine.rt.store)
        real = st._record

        def record(self, cur, namespace, kind, *args, **kwargs):
            if namespace == "work" and kind == "update":
                raise hippo.StoreError("simulated failure: marking the entry promoted")
            return real(self, cur, namespace, kind, *args, **kwargs)

        monkeypatch.setattr(st, "_record", record)
        with pytest.raises(hippo.StoreError, match="promoted"):
            work.consolidate_entries("deep", into="lt")
        monkeypatch.undo()
        assert mem.using("lt").count() == 0
    finally:
        mem.close()
    for _ in range(2):  # the next processes: the first promotes the entry once, the second finds it promoted
        with hippo.Memory(location) as again:
            again.using("work").consolidate_entries("deep", into="lt")
            assert [m.metadata["from_entry"] for m in again.using("lt").list()] == [entry.id]
            assert again.using("work").entry(entry.id).lifecycle.get("promoted")
