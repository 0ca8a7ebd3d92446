"""Snapshots written a chunk at a time (:class:`hippo.store.snapshot.Blob`): the encoder writes a blob to a temporary
file as it deflates it, and each store copies it from there in chunks (SQLite: incremental blob I/O into a row of its
size; PostgreSQL: ``COPY ... FROM STDIN``), in the transaction of the save: neither holds a copy of the arrays or of
the blob, and a save that fails between any two chunks leaves the snapshot saved before it."""

from __future__ import annotations

import io
import tracemalloc

import numpy as np
import pytest

import hippo
from hippo import Memory
from hippo.store import snapshot


def _arrays(seed: int, n: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"ids": np.arange(n, dtype=np.int64) * 3 + seed,  # a ramp
            "flags": np.zeros(n, dtype=np.uint8),  # one value
            "times": np.cumsum(rng.integers(0, 90, n)).astype(np.int64),
            "codes": rng.integers(0, 1 << 31, n, dtype=np.int64).astype(np.int32),
            "weights": rng.random(n)}


def _same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    return a.keys() == b.keys() and all(a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]) for k in a)


@pytest.fixture
def small_chunks(monkeypatch) -> int:
    monkeypatch.setattr(snapshot, "CHUNK", 4096)
    return 4096


def test_a_blob_is_the_bytes_dump_writes_and_reads_back():
    arrays = _arrays(1, 70_000)
    blob = snapshot.Blob.dump({"a": 1}, arrays, level=1)
    try:
        data = bytes(blob)
        assert len(blob) == len(data) and data == snapshot.dump({"a": 1}, arrays, level=1)
        assert b"".join(blob.chunks(1000)) == data
        meta, back = snapshot.load(data)
        assert meta == {"a": 1} and _same(back, arrays)
        assert snapshot.head(blob) == snapshot.head(data)
    finally:
        blob.close()


def test_rewriting_from_a_blob_copies_its_pieces():
    """A blob in a file serves as the earlier blob of ``reuse`` as one in memory does: the same bytes."""
    arrays = _arrays(2, 200_000)
    made: list[snapshot.Pieces] = []
    first = snapshot.Blob.dump({}, arrays, level=1, pieces=made)
    changed = {k: v.copy() for k, v in arrays.items()}
    changed["times"][100_000:] += 5
    try:
        from_file = snapshot.dump({}, changed, level=1, reuse=(made[0], first))
        from_bytes = snapshot.dump({}, changed, level=1, reuse=(made[0], bytes(first)))
    finally:
        first.close()
    assert from_file == from_bytes == snapshot.dump({}, changed, level=1)


def test_dump_holds_no_copy_of_the_arrays():
    """Beyond the arrays, an encoder writing to a file holds a few chunks: before, it held every array byte-shuffled
    (as large as the arrays), the deflated pieces, and the blob joined from them twice."""
    arrays = _arrays(3, 1 << 20)  # 25 MB
    total = sum(a.nbytes for a in arrays.values())
    tracemalloc.start()
    try:
        blob = snapshot.Blob.dump({}, arrays, level=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    try:
        assert len(blob) > 4 * snapshot.CHUNK  # what a copy of the blob would weigh
        assert peak < 6 * snapshot.CHUNK < total / 4
        assert _same(snapshot.load(bytes(blob))[1], arrays)
    finally:
        blob.close()


def test_a_blob_larger_than_a_chunk_is_stored_whole(store, small_chunks, blob_io):
    first = snapshot.Blob.dump({"v": 1}, _arrays(4, 30_000), level=1)
    second = snapshot.Blob.dump({"v": 2}, _arrays(5, 20_000), level=1)
    try:
        assert len(first) > 10 * small_chunks and len(second) > 10 * small_chunks
        assert store.put_units_many("a", {"x": first, "y": b"Y1"}) is True
        assert store.get_units("a", "x") == bytes(first) and store.get_units("a", "y") == b"Y1"
        copy = store.get_units_blob("a", "x")  # read back a chunk at a time where the store can
        try:
            assert bytes(copy) == bytes(first) and snapshot.Pieces(len(first), 0, {}).usable(copy) is False
        finally:
            copy.close()
        assert store.get_units_blob("a", "none") is None
        store.put_units("a", "x", second)  # replaced by a shorter blob
        assert store.get_units("a", "x") == bytes(second)
        assert snapshot.load(store.get_units("a", "x"))[0] == {"v": 2}
        state = store.state("a")
        assert store.put_units_many("a", {"x": first}, generation=state.generation, version=state.version,
                                    expect={"x": snapshot.head(second)}) is True
        assert store.get_units("a", "x") == bytes(first)
    finally:
        first.close()
        second.close()


def test_a_save_failing_at_any_chunk_leaves_the_snapshot_saved_before(store, small_chunks, blob_io, monkeypatch):
    before = snapshot.dump({"v": 1}, _arrays(6, 5_000), level=1)
    blob = snapshot.Blob.dump({"v": 2}, _arrays(7, 10_000), level=1)
    store.put_units_many("a", {"x": before, "y": b"Y1"})
    chunks = -(-len(blob) // small_chunks)
    real, real_read = snapshot.Blob.chunks, snapshot.Blob.read
    try:
        assert chunks > 3
        for fail_at in range(chunks + 1 if blob_io else 1):  # before each chunk, and after the last one
            def failing(self, size=None, fail_at=fail_at):
                for k, chunk in enumerate(real(self, size)):
                    if k == fail_at:
                        break
                    yield chunk
                raise hippo.StoreError(f"simulated failure at chunk {fail_at}")

            def failing_read(self, lo, hi):  # the blob bound whole (Python 3.10)
                raise hippo.StoreError("simulated failure reading the blob")

            monkeypatch.setattr(snapshot.Blob, "chunks", failing)
            if not blob_io:
                monkeypatch.setattr(snapshot.Blob, "read", failing_read)
            with pytest.raises(hippo.StoreError, match="simulated"):
                store.put_units_many("a", {"y": b"Y2", "x": blob, "z": b"Z"})
            assert store.get_units("a", "x") == before, fail_at
            assert store.get_units("a", "y") == b"Y1" and store.get_units("a", "z") is None
        monkeypatch.setattr(snapshot.Blob, "chunks", real)
        if not blob_io:
            monkeypatch.setattr(snapshot.Blob, "read", real_read)
        assert store.put_units_many("a", {"y": b"Y2", "x": blob}) is True
        assert store.get_units("a", "x") == bytes(blob) and store.get_units("a", "y") == b"Y2"
    finally:
        blob.close()


@pytest.fixture(params=["chunks", "whole"])
def blob_io(request, store, monkeypatch) -> bool:
    """Runs a SQLite test with incremental blob I/O and as on Python 3.10, whose sqlite3 has none (a blob bound
    whole); runs a PostgreSQL test once."""
    from hippo.store import sqlite

    if request.param == "whole":
        if not isinstance(store, sqlite.SQLiteStore):
            pytest.skip("SQLite only")
        monkeypatch.setattr(sqlite, "BLOB_IO", False)
    elif isinstance(store, sqlite.SQLiteStore) and not sqlite.BLOB_IO:
        pytest.skip("this Python's sqlite3 has no incremental blob I/O (3.11+)")
    return request.param == "chunks"


def test_a_store_writes_a_blob_without_holding_it(store):
    from hippo.store import sqlite

    if isinstance(store, sqlite.SQLiteStore) and not sqlite.BLOB_IO:
        pytest.skip("this Python's sqlite3 has no incremental blob I/O (3.11+)")
    data = np.random.default_rng(8).integers(0, 256, 16 << 20, dtype=np.uint8).tobytes()  # does not deflate
    blob = snapshot.Blob()
    blob.file.write(data)
    blob.size = len(data)
    tracemalloc.start()
    try:
        store.put_units_many("a", {"x": blob})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        blob.close()
    assert peak < 3 * snapshot.CHUNK < len(data) / 4
    tracemalloc.start()
    try:
        copy = store.get_units_blob("a", "x")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    try:
        assert peak < 4 * snapshot.CHUNK and len(copy) == len(data) and bytes(copy) == data  # a temporary file
    finally:
        copy.close()
    assert store.get_units("a", "x") == data


def test_a_full_disk_while_encoding_is_a_store_error(monkeypatch):
    class Full(io.BytesIO):
        def write(self, data):
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(snapshot.tempfile, "SpooledTemporaryFile", lambda **kwargs: Full())
    with pytest.raises(hippo.StoreError, match="temporary file"):
        snapshot.Blob.dump({}, _arrays(9, 100), level=1)


def _answers(mem: Memory, questions: list[str]) -> list:
    out = []
    for q in questions:
        rec = mem.recall(q, budget_tokens=300)
        out.append((rec.text, [m.id for m in rec.messages], [(u["level"], u["id"]) for u in rec.units],
                    [(h.id, round(h.score, 12)) for h in mem.search(q, k=8)]))
    return out + [[(t["id"], t.get("summary")) for t in mem.topics()]]


def test_snapshots_written_in_chunks_restore_the_state(location, small_chunks):
    """Every snapshot of a namespace larger than a chunk (here 4 KB) goes through the chunked write; a reopened store
    reads them back and answers as the handle that wrote them."""
    from hippo_bench.scale import SyntheticConversation

    stream = SyntheticConversation(3, n_nouns=400, n_people=30, n_places=20, n_speakers=6).generate(12_000)
    questions = [nd.question for nd in stream.needles[:6]] + ["what did they talk about last week?"]
    with Memory(location) as mem:
        mem.add_many(stream.items[:400])
        mem.consolidate("deep")
        live = _answers(mem, questions)
        store = mem.engine.rt.store
    with Memory(location) as mem:
        store = mem.engine.rt.store
        sizes = [len(store.get_units("default", k) or b"") for k in ("derived.index", "derived.life")]
        assert min(sizes) > 4 * small_chunks
        assert _answers(mem, questions) == live


def test_a_full_temporary_directory_fails_the_save_not_the_call(tmp_path, monkeypatch, caplog):
    """A save whose temporary file cannot be written logs a warning and leaves the snapshots saved before; the call
    that saved (a consolidation, then close) returns, and the next open catches up from them."""
    from hippo_bench.scale import SyntheticConversation

    items = SyntheticConversation(5, n_nouns=400, n_people=30, n_places=20, n_speakers=6).generate(9_000).items
    path = str(tmp_path / "memory.db")
    with Memory(path) as mem:
        mem.add_many(items[:200])
    with Memory(path) as mem:
        store = mem.engine.rt.store
        saved = {k: store.get_units("default", k) for k in ("derived.index", "derived.life")}
        assert all(saved.values())

    class Full(io.BytesIO):
        def write(self, data):
            raise OSError(28, "No space left on device")

    with Memory(path) as mem:
        mem.add_many(items[200:])
        monkeypatch.setattr(snapshot.tempfile, "SpooledTemporaryFile", lambda **kwargs: Full())
        with caplog.at_level("WARNING", logger="hippo.engine"):
            mem.consolidate("deep")
            mem.close()
    assert "temporary file" in caplog.text
    monkeypatch.undo()
    with Memory(path) as mem:
        store = mem.engine.rt.store
        assert {k: store.get_units("default", k) for k in saved} == saved
        assert mem.count() == len(items)
