"""What a deletion in a large store costs, and that the cheaper path leaves every later call as the full one did.

A reopened store reads its hierarchy's units lazily (:class:`hippo.engine.hierarchy.lazy.LazyUnits`); the snapshot a
deletion writes copies the units never read from the columns they were loaded from instead of building each one."""

from __future__ import annotations

import io

import numpy as np
import pytest
from test_restart import answers, copy_store, corpus, save

from hippo import Memory
from hippo.engine.hierarchy import decay as decay_mod
from hippo.engine.hierarchy import persist as hier_persist
from hippo.store.snapshot import StringTable

_STRING_REFS = ("ep.session", "ep.summary", "ep.speakers.val", "sem.text", "sem.speaker", "stems")


@pytest.fixture(autouse=True)
def frozen_clock(monkeypatch):
    monkeypatch.setattr(decay_mod, "now", lambda: 1_760_000_000.0)


def canonical(meta: dict, arrays: dict) -> tuple[dict, dict]:
    """A hierarchy dump with its string references replaced by the strings (the table's order is free)."""
    table = StringTable(arrays)
    out = {}
    for name, values in arrays.items():
        if name in ("strings.blob", "strings.ptr"):
            continue
        out[name] = [table(int(x)) for x in values.tolist()] if name in _STRING_REFS else values
    return meta, out


def assert_same_dump(a: tuple[dict, dict], b: tuple[dict, dict]) -> None:
    (ma, xa), (mb, xb) = canonical(*a), canonical(*b)
    assert ma == mb
    assert xa.keys() == xb.keys()
    for name in xa:
        x, y = xa[name], xb[name]
        if isinstance(x, list):
            assert x == y, name
        else:
            assert x.dtype == y.dtype and x.shape == y.shape, name
            assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), name


def build_all(h) -> None:
    for units in (h.episodes, h.semantics, h.msg_semantics):
        units.values()


def counts(mem: Memory) -> dict:
    """``stats()`` without the sizes of the files (the snapshots' bytes depend on the order of their strings)."""
    return {k: v for k, v in mem.stats().items() if k not in ("store", "store_bytes_per_token")}


@pytest.fixture
def saved_store(tmp_path):
    path = tmp_path / "a.db"
    with Memory(path) as mem:
        mem.add_many(corpus(600))
        mem.recall("what is Maya's job?", budget_tokens=200)
        save(mem)
    return path


def test_a_lazily_loaded_hierarchy_dumps_as_its_built_units_do(saved_store):
    """Units never read, units read, units changed by a deletion and units dropped: the dump equals the one of
    the same hierarchy with every unit built, string for string."""
    with Memory(saved_store) as mem:
        mem.recall("Where does Maya live now?", budget_tokens=300)
        h = mem.engine.state().life().hier
        ids = [it.id for it in mem.list(limit=40, offset=250)]
        mem.delete(ids[::3])
        assert h.semantics.source is not None and h.episodes.source is not None
        assert 0 < len(h.episodes._made) < len(h.episodes) and len(h.semantics._made) < len(h.semantics)
        lazy = hier_persist.dump(h)
        build_all(h)
        full = hier_persist.dump(h)
    assert_same_dump(lazy, full)


def test_a_deletion_after_a_reopen_builds_only_the_units_it_changes_and_answers_as_before(saved_store, tmp_path):
    ref = tmp_path / "ref.db"
    copy_store(saved_store, ref)
    with Memory(saved_store) as mem:
        ids = [it.id for it in mem.list(limit=60, offset=300)]
    gone = ids[::4] + ids[-3:]
    runs = []
    for path, built in ((saved_store, False), (ref, True)):
        with Memory(path) as mem:
            h = mem.engine.state().life().hier
            if built:  # every unit built before the deletion: the snapshot is written from the objects
                build_all(h)
            mem.delete(gone[:1])
            mem.delete(gone[1:])
            if not built:
                assert len(h.episodes._made) < len(h.episodes) // 2, "the snapshots built every unit"
            live = answers(mem) + [counts(mem)]
        with Memory(path) as again:
            h2 = again.engine.state().life().hier
            reopened = answers(again) + [counts(again)]
            stored = hier_persist.dump(h2)
            build_all(h2)
        runs.append((live, reopened, stored))
    (live_a, reopened_a, stored_a), (live_b, reopened_b, stored_b) = runs
    assert live_a == live_b and reopened_a == reopened_b and live_a == reopened_a
    assert_same_dump(stored_a, stored_b)


def _table(n: int, seed: int = 5) -> dict[str, np.ndarray]:
    """Columns of one table of ``n`` rows as snapshots hold them: ids with gaps, times, flags of few values, codes,
    and a blob of text."""
    rng = np.random.default_rng(seed)
    return {
        "ids": np.cumsum(rng.integers(1, 4, n)).astype(np.int64),
        "ts": 1.7e9 + np.cumsum(rng.random(n) * 60.0),
        "role": rng.integers(0, 3, n).astype(np.int8),
        "alive": rng.random(n) < 0.9,
        "codes": rng.integers(0, 2 ** 63, (n, 4), dtype=np.int64).view(np.uint64),
        "strings.blob": np.frombuffer(" ".join(f"word{k % 977} w{k}" for k in range(n)).encode(), dtype=np.uint8),
        "defaults": np.zeros(n, dtype=np.float32),
    }


def _same_arrays(got: dict, want: dict) -> None:
    assert got.keys() == want.keys()
    for k, v in want.items():
        v = np.asarray(v)
        assert got[k].dtype == v.dtype and got[k].shape == v.shape, k
        assert np.array_equal(got[k], v), k


def test_a_snapshot_rewritten_after_a_deletion_deflates_only_the_pieces_that_changed(monkeypatch):
    """A blob written with the pieces of the one before copies those whose bytes did not change: the same bytes as
    a blob written from nothing (the oracle), the same arrays read back, and only the pieces around the deleted rows
    deflated again."""
    from hippo.store import snapshot

    deflated = []
    real = snapshot.zlib.compressobj
    monkeypatch.setattr(snapshot.zlib, "compressobj", lambda *a: deflated.append(1) or real(*a))
    before = _table(120_000)
    made: list[snapshot.Pieces] = []
    first = snapshot.dump({"v": 1}, before, 1, pieces=made)
    everything = len(deflated)
    rows = np.r_[0:120_000]
    for gone in ([40_000], [7, 90_001, 90_002], [119_990]):
        rows = np.delete(rows, np.searchsorted(rows, gone))
        after = {k: (v[rows] if k != "strings.blob" else v) for k, v in before.items()}
        deflated.clear()
        fresh = snapshot.dump({"v": 1}, after, 1)
        from_nothing = len(deflated)
        deflated.clear()
        out: list[snapshot.Pieces] = []
        blob = snapshot.dump({"v": 1}, after, 1, reuse=(made[-1], first), pieces=out)
        assert blob == fresh
        _same_arrays(snapshot.load(blob)[1], after)
        assert from_nothing >= everything - 2 and len(deflated) <= from_nothing // 4, (len(deflated), from_nothing)
        made, first = out, blob
    # pieces of another blob (not the one recorded) are not used
    deflated.clear()
    assert snapshot.dump({"v": 1}, before, 1, reuse=(made[-1], fresh[:-1] + b"\0")) == \
        snapshot.dump({"v": 1}, before, 1)


def test_snapshots_written_as_one_deflated_stream_still_load():
    """A blob whose arrays were deflated as one stream (as every snapshot was written before they were deflated in
    pieces) reads back the same arrays; a damaged piece is refused."""
    import struct
    import zlib

    from hippo.base.errors import CorruptData
    from hippo.store import snapshot

    arrays = _table(50_000)
    blob = snapshot.dump({"v": 1}, arrays, 1)
    start = len(snapshot.MAGIC) + 8 + struct.unpack("<I", blob[len(snapshot.MAGIC) + 4: len(snapshot.MAGIC) + 8])[0]
    raw = zlib.decompress(blob[start:-4])
    body = blob[len(snapshot.MAGIC): start] + zlib.compress(raw, 1)
    one_stream = snapshot.MAGIC + body + struct.pack("<I", zlib.crc32(body) & 0xFFFFFFFF)
    assert one_stream != blob
    _same_arrays(snapshot.load(one_stream)[1], arrays)
    _same_arrays(snapshot.load(blob)[1], arrays)
    # a piece changed (its checksum recomputed, as a piece taken for another would leave it): the stream's own sum
    body = bytearray(blob[len(snapshot.MAGIC):-4])
    body[len(body) // 2] ^= 0x55
    with pytest.raises(CorruptData):
        snapshot.load(snapshot.MAGIC + bytes(body) + struct.pack("<I", zlib.crc32(bytes(body)) & 0xFFFFFFFF))


def _snapshots_checked(monkeypatch) -> list[bool]:
    """Every snapshot written from now on is checked to be the bytes a save from nothing writes; the list returned
    gets, per snapshot, whether it copied pieces of the one written before. Pieces are reused at any size (the test
    store's blobs are small)."""
    from hippo.engine import persist
    from hippo.store import snapshot

    monkeypatch.setattr(persist, "REUSE_BYTES", 0)
    real = snapshot.dump_into
    copied: list[bool] = []

    def checked(out, meta, arrays, level=6, reuse=None, pieces=None):
        size = real(out, meta, arrays, level, reuse=reuse, pieces=pieces)
        out.seek(0)
        fresh = io.BytesIO()
        real(fresh, meta, arrays, level)
        assert out.read(size) == fresh.getvalue()
        copied.append(reuse is not None and reuse[0].usable(reuse[1]))
        return size

    monkeypatch.setattr(snapshot, "dump_into", checked)
    return copied


def test_deletions_rewrite_the_snapshots_from_their_unchanged_pieces(saved_store, monkeypatch):
    """Each deletion's snapshots copy the unchanged pieces of the ones the handle wrote before (read back from the
    store) and are the bytes a save from nothing writes; a reopened store answers as the live handle."""
    copied = _snapshots_checked(monkeypatch)
    with Memory(saved_store) as mem:
        ids = [it.id for it in mem.list(limit=40, offset=200)]
        for k in range(0, 40, 8):
            mem.delete(ids[k: k + 3])
        live = answers(mem) + [counts(mem)]
    assert sum(copied) >= 8  # the co-index and lifecycle of every deletion but the first
    with Memory(saved_store) as again:
        assert answers(again) + [counts(again)] == live


def test_a_handle_copies_no_piece_from_a_snapshot_another_handle_replaced(saved_store, monkeypatch):
    """Two handles deleting in turn: each save finds the blob it wrote last replaced by the other handle's, copies
    nothing from it and writes what a save from nothing writes; both answer as a store reopened after them."""
    copied = _snapshots_checked(monkeypatch)
    a, b = Memory(saved_store), Memory(saved_store)
    try:
        ids = [it.id for it in a.list(limit=30, offset=100)]
        for k, mem in enumerate([a, b, a, b, a]):
            mem.delete(ids[3 * k: 3 * k + 2])
        assert not any(copied[-2:])  # the blobs a wrote before were replaced by b's: nothing copied from them
        live = answers(a)
        assert answers(b) == live
    finally:
        a.close()
        b.close()
    with Memory(saved_store) as again:
        assert answers(again) == live


def test_the_first_save_of_a_lifecycle_rebuilt_during_a_deletion_is_not_refused(saved_store, monkeypatch):
    """A deletion while the lifecycle is rebuilt in the background removes the saved one; the rebuilt lifecycle's
    first save then writes over nothing at once (it was refused, the store read and everything encoded again) and
    the store reopened answers as the live handle."""
    from hippo.engine import state as state_mod
    from hippo.store.sqlite import SQLiteStore

    monkeypatch.setattr(state_mod, "SYNC_ROWS", 8)
    real = SQLiteStore.put_units_many
    refused = []

    def put(self, namespace, payloads, **kw):
        done = real(self, namespace, payloads, **kw)
        refused.append(not done)
        return done

    monkeypatch.setattr(SQLiteStore, "put_units_many", put)
    with Memory(saved_store) as mem:
        mem.search("what is Maya's job?", k=3)  # the co-index only: the lifecycle is loaded by the deletion
        ids = [it.id for it in mem.list(limit=80, offset=100)]
        mem.delete(ids[:40])
        state = mem.engine.state()
        assert state.wait_warm()
        mem.delete(ids[40:42])
        mem.delete(ids[50:51])
        mem.speakers()  # the speaker profiles read in the call (a search meanwhile has their neutral stand-in)
        live = answers(mem) + [counts(mem)]
    assert not any(refused)
    with Memory(saved_store) as again:
        assert answers(again) + [counts(again)] == live


def test_asking_whether_a_semantic_shows_no_message_builds_no_unit(saved_store):
    """A recall asks of every semantic its context reaches whether its text shows an excluded message; without
    exclusions that is answered without building the semantic, and a recall then builds fewer units than there
    are, answering as the store with every unit built does."""
    with Memory(saved_store) as mem:
        h = mem.engine.state().life().hier
        pending = [sid for sid in h.semantics.keys() if sid not in h.semantics._made]
        assert pending
        assert not any(h.quotes(sid, frozenset()) for sid in pending)
        assert not any(sid in h.semantics._made for sid in pending)
        with pytest.raises(KeyError):
            h.quotes(max(h.semantics.keys()) + 1, frozenset())
        got = mem.recall("Where does Maya live now?", budget_tokens=300)
        assert len(h.semantics._made) < len(h.semantics)
    with Memory(saved_store) as mem:
        build_all(mem.engine.state().life().hier)
        full = mem.recall("Where does Maya live now?", budget_tokens=300)
    assert got.text == full.text and [m.id for m in got.messages] == [m.id for m in full.messages]
