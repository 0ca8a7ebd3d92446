"""Concurrency: reader threads against a writer, several processes on one store file, async callers.

No torn reads, no lost or duplicated writes, bounded waits (``StoreBusy`` instead of a hang), and final
contents and query results equal to those of a serial run.
"""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from hippo_bench import reliability as rel

from hippo import ClosedError, HippoError, Memory, StoreBusy, StoreError


def _assert_clean(camp: rel.Campaign) -> None:
    assert not camp.failures, "\n".join(camp.failures[:20])


def test_reader_threads_with_one_writer_equal_a_serial_run(tmp_path) -> None:
    camp = rel.Campaign("threads")
    rel._threads_vs_serial(tmp_path / "t.db", camp, messages=300, readers=4, seed=3)
    _assert_clean(camp)
    assert camp.counts["concurrent_ops"] > 100


def test_writer_processes_and_a_reader_process_on_one_file(tmp_path) -> None:
    camp = rel.Campaign("processes")
    rel._processes(tmp_path / "p.db", camp, processes=3, per_process=120, seed=4, timeout_s=180)
    _assert_clean(camp)
    assert camp.counts["messages_verified"] > 0


def test_async_callers_on_one_event_loop_equal_a_serial_run() -> None:
    camp = rel.Campaign("async")
    rel._async_callers(camp, messages=80, seed=5)
    _assert_clean(camp)


def _hold_write_lock(path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None, timeout=0)
    db.execute("BEGIN IMMEDIATE")
    return db


def test_a_locked_store_gives_store_busy_within_the_timeout(tmp_path) -> None:
    path = tmp_path / "busy.db"
    with Memory(path, config={"busy_timeout_s": 0.3}) as mem:
        kept = mem.add_many([{"text": f"kept message {i} about the lighthouse"} for i in range(10)])
        before = [it.text for it in mem.list()]
        db = _hold_write_lock(path)
        try:
            for call in (lambda: mem.add("blocked write"), lambda: mem.add_many([{"text": "blocked"}]),
                         lambda: mem.delete([kept[0].id]), lambda: mem.forget({"id": kept[1].id}),
                         lambda: mem.flush()):
                t0 = time.monotonic()
                with pytest.raises(StoreBusy, match="locked"):
                    call()
                assert time.monotonic() - t0 < 5.0
            # Readers are not blocked by a writer (WAL).
            assert [it.text for it in mem.list()] == before
            assert mem.search("lighthouse", k=3)
            assert mem.count() == 10
        finally:
            db.execute("ROLLBACK")
            db.close()
        assert [it.text for it in mem.list()] == before  # the failed calls changed nothing
        mem.add("written once the lock is gone")
        assert mem.count() == 11


def test_store_busy_is_a_store_error_and_a_timeout() -> None:
    assert issubclass(StoreBusy, StoreError) and issubclass(StoreBusy, TimeoutError)


def test_a_failed_seal_does_not_fail_a_committed_add(tmp_path, monkeypatch) -> None:
    """Sealing runs in its own transaction after the append committed: if it cannot get the lock (another
    process) or the disk is full, the add has still happened and must be reported as done, or a caller that
    retries would store the messages twice."""
    path = tmp_path / "seal.db"
    with Memory(path, config={"seal_tokens": 1}) as mem:
        store = mem.engine.rt.store

        def busy(*args, **kwargs):
            raise StoreBusy("sealing the tail into a chunk: the store is locked by another writer")

        monkeypatch.setattr(store, "seal", busy)
        items = mem.add_many([{"text": f"message {i} about the orchard"} for i in range(5)])
        assert len(items) == 5
        assert mem.add("one more about the orchard").text == "one more about the orchard"
        monkeypatch.undo()
        assert mem.count() == 6
    with Memory(path) as mem:
        assert [it.text for it in mem.list()][-1] == "one more about the orchard"
        assert mem.count() == 6


def test_cross_process_writes_and_deletes_are_seen_without_reopening(tmp_path) -> None:
    path = tmp_path / "x.db"
    with Memory(path) as mem:
        mem.add("a message from this process about violins")
        assert len(mem.search("violins", k=5)) == 1
        other = textwrap.dedent("""
            import sys
            from hippo import Memory
            with Memory(sys.argv[1]) as m:
                if sys.argv[2] == "add":
                    m.add("a message from another process about violins")
                else:
                    m.forget({"speaker": "Zed"})
        """)
        subprocess.run([sys.executable, "-c", other, str(path), "add"], check=True, timeout=120)
        assert {h.text for h in mem.search("violins", k=5)} == {
            "a message from this process about violins", "a message from another process about violins"}
        mem.add("Zed's note about violins", speaker="Zed")
        subprocess.run([sys.executable, "-c", other, str(path), "forget"], check=True, timeout=120)
        texts = {h.text for h in mem.search("violins", k=5)}
        assert "Zed's note about violins" not in texts  # no ghost after another process deleted it
        assert mem.count() == 2


def test_many_threads_each_writing_lose_nothing(tmp_path) -> None:
    path = tmp_path / "w.db"
    errors: list[str] = []
    with Memory(path, config={"seal_tokens": 200}) as mem:
        def writer(slot: int) -> None:
            try:
                for i in range(25):
                    mem.add(f"thread {slot} message {i} {rel.marker(slot * 100 + i)}")
                    if i % 7 == 0:
                        mem.search(f"thread {slot}", k=3)
            except Exception as exc:  # noqa: BLE001
                errors.append(f"{type(exc).__name__}: {exc}")

        threads = [threading.Thread(target=writer, args=(s,)) for s in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
            assert not t.is_alive(), "a writer thread hung"
        assert not errors, errors
        texts = [it.text for it in mem.list()]
        assert len(texts) == len(set(texts)) == 150
        for slot in range(6):
            want = f"thread {slot} message 24 {rel.marker(slot * 100 + 24)}"
            assert want in [h.text for h in mem.search(rel.marker(slot * 100 + 24), k=5)]
    with Memory(path) as mem:
        assert mem.count() == 150


async def test_async_twins_do_not_block_the_event_loop() -> None:
    ticks = 0
    stop = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0.001)

    with Memory(None) as mem:
        task = asyncio.create_task(ticker())
        await mem.aadd_many([{"text": f"async message {i} about pottery " * 5} for i in range(1500)])
        hits = await mem.asearch("pottery", k=3)
        rec = await mem.arecall("pottery", budget_tokens=200)
        stop.set()
        await task
    assert hits and rec.messages
    assert ticks > 5, "the event loop was blocked while hippo worked"


async def test_async_errors_surface_as_hippo_errors() -> None:
    with Memory(None) as mem:
        with pytest.raises(HippoError):
            await mem.aadd("")
        with pytest.raises(HippoError):
            await mem.asearch("x", k=0)
        results = await asyncio.gather(mem.aadd("fine"), mem.aget(10**9), return_exceptions=True)
        assert results[0].text == "fine" and isinstance(results[1], HippoError)


async def test_async_writes_apply_in_the_order_they_were_called() -> None:
    """Tasks of one ``asyncio.gather`` write in the order they were created, as the same sync calls one after the
    other would (the oracle): each message once, in call order, and a forget called between two adds removes the
    earlier one only. Run side by side in pool threads, the writes reached the store in any order."""
    with Memory(None) as mem:
        calls = []
        for i in range(200):
            if i == 120:
                calls.append(mem.aforget({"session_id": "early"}))
            calls.append(mem.aadd(f"note {i}", session_id="early" if i < 100 else "late"))
        await asyncio.gather(*calls)
        assert [m.text for m in mem.list()] == [f"note {i}" for i in range(100, 200)]
        await asyncio.gather(*(mem.aadd_many([{"text": f"pair {i} a"}, {"text": f"pair {i} b"}]) for i in range(50)),
                             mem.aclear(), mem.aadd("after the clear"))
        assert [m.text for m in mem.list()] == ["after the clear"]


async def test_async_reads_see_the_async_writes_called_before_them_and_not_those_after() -> None:
    """Reads and writes of one ``asyncio.gather`` answer as the same sync calls one after the other would (the
    oracle): a read sees the writes called before it and none called after it. Run side by side, a read often
    missed the write called just before it, or saw one called after it."""
    with Memory(None) as mem:
        for i in range(30):
            before, _, hits, listed, _, after = await asyncio.gather(
                mem.alist(), mem.aadd(f"walrus number {i}", session_id="new"), mem.asearch(f"walrus number {i}", k=1),
                mem.alist(), mem.aforget({"session_id": "new"}), mem.alist())
            assert [m.text for m in before] == [m.text for m in after] == [f"walrus number {j}" for j in range(i)]
            assert [h.text for h in hits] == [f"walrus number {i}"]
            assert [m.text for m in listed] == [f"walrus number {j}" for j in range(i + 1)]
            await mem.aadd(f"walrus number {i}", session_id="kept")  # kept for the next round


async def test_a_cancelled_async_write_that_has_not_started_stores_nothing() -> None:
    """A write waits behind the writes called before it; cancelled while it waits, it never runs."""
    release = threading.Event()

    def slow_items():  # holds the write queue until released
        release.wait(10)
        yield {"text": "first"}

    with Memory(None) as mem:
        first = asyncio.ensure_future(mem.aadd_many(slow_items()))
        second = asyncio.ensure_future(mem.aadd("second"))
        await asyncio.sleep(0.05)
        second.cancel()
        await asyncio.wait([second])  # the cancellation reaches the queued write before the queue moves on
        release.set()
        assert [m.text for m in await first] == ["first"]
        assert second.cancelled()
        assert [m.text for m in mem.list()] == ["first"]


async def test_async_calls_over_many_namespaces_leave_no_write_queue_behind(tmp_path) -> None:
    """A server that makes async calls for users who come and go keeps a namespace's write queue only while a call
    uses it: one kept for every namespace ever called grew without bound. Calls made after one is let go keep their
    order."""
    import gc

    from hippo.base.serial import SerialWorker

    def workers() -> int:
        for t in threading.enumerate():  # a queue's thread ends (and lets its queue go) just after its last write
            if t.name.startswith("hippo-writes-"):
                t.join(10)
        gc.collect()
        return sum(isinstance(o, SerialWorker) for o in gc.get_objects())

    with Memory(tmp_path / "m.db", config={"max_loaded_namespaces": 4}) as mem:
        for u in range(200):
            v = mem.using(f"user.{u}")
            await v.aadd(f"user {u} likes the red kite")
            assert [h.text for h in await v.asearch("red kite", k=1)] == [f"user {u} likes the red kite"]
        assert workers() == 0
        v = mem.using("user.7")
        got = await asyncio.gather(v.aadd("a walrus"), v.asearch("walrus", k=1), v.aforget({"session_id": None}),
                                   v.alist())
        assert [h.text for h in got[1]] == ["a walrus"] and [m.text for m in got[3]] == []
        assert workers() == 0


def test_sealing_reads_the_tail_through_an_index(tmp_path) -> None:
    """Every write looks at the unsealed tail; that lookup must not walk the whole namespace (ingest would
    become quadratic: ~16 ms per add at 60k messages, ~0.04 ms with the index)."""
    path = tmp_path / "plan.db"
    with Memory(path) as mem:
        mem.add_many([{"text": f"message {i}"} for i in range(50)])
    db = sqlite3.connect(path)
    try:
        plan = " ".join(str(r) for r in db.execute(
            "EXPLAIN QUERY PLAN SELECT seq, tokens FROM tail WHERE namespace = ? ORDER BY seq", ("default",)))
    finally:
        db.close()
    assert "tail_ns" in plan, plan


def test_loading_a_namespace_reads_one_snapshot(tmp_path, monkeypatch) -> None:
    """Another process seals and merges chunks between the two reads of a namespace load (rows, then chunks):
    the load must still see one consistent state instead of raising CorruptData."""
    path = tmp_path / "snap.db"
    writer = Memory(path, config={"seal_tokens": 10**9})
    writer.add_many([{"text": f"first part message {i} about owls"} for i in range(20)])
    writer.flush()
    writer.add_many([{"text": f"second part message {i} about owls"} for i in range(20)])  # unsealed tail
    reader = Memory(path)
    store = reader.engine.rt.store
    original = store._chunks

    def chunks_after_a_seal(*args, **kwargs):
        writer.flush()  # seals the tail and merges it with the first chunk, from another connection
        return original(*args, **kwargs)

    monkeypatch.setattr(store, "_chunks", chunks_after_a_seal)
    try:
        assert reader.count() == 40
        monkeypatch.undo()
        assert [it.text for it in reader.list()][-1] == "second part message 19 about owls"
    finally:
        reader.close()
        writer.close()


@pytest.mark.parametrize("loaded", [False, True], ids=["first use", "catching up"])
def test_a_call_the_store_is_closed_under_raises_closed_error(tmp_path, loaded) -> None:
    """Another thread's close() lands after a call checked that the handle is open and read the namespace's
    fingerprint: the call's next read raises ClosedError, a HippoError, not the driver's own error."""
    path = tmp_path / "closing.db"
    with Memory(path) as writer:
        writer.add("the first message")
        mem = Memory(path)
        if loaded:
            assert mem.count() == 1
            writer.add("a second message, to catch up with")
        store = mem.engine.rt.store
        real = store.state

        def state_then_closed(namespace: str):
            fp = real(namespace)
            store.close()  # what a close() in another thread does at this point
            return fp

        store.state = state_then_closed
        with pytest.raises(ClosedError):
            mem.count()


def test_close_while_an_add_starts_a_background_reader_raises_nothing(monkeypatch) -> None:
    """An add in one thread starts a background reader (the speaker profiles' catch-up) while close() runs in
    another: close() never meets that reader registered but not yet started."""
    from hippo.engine import state as state_mod

    mem = Memory(None)
    errors: list[BaseException] = []
    closers: list[threading.Thread] = []
    real_start = state_mod._Warm.start

    def close_first(self) -> None:
        def close() -> None:
            try:
                mem.close()
            except BaseException as exc:  # noqa: BLE001 - asserted below
                errors.append(exc)

        closer = threading.Thread(target=close)
        closers.append(closer)
        closer.start()
        closer.join(0.5)  # a close() that is not held up finishes here, before the reader starts
        real_start(self)

    monkeypatch.setattr(state_mod._Warm, "start", close_first)
    mem.add_many([{"text": f"message {i} about the harbour", "speaker": "Ann"} for i in range(state_mod.PROFILE_LAG)])
    for closer in closers:
        closer.join(60)
    assert closers and not errors, errors
    assert mem._rt.closed
