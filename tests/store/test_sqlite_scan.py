"""``SQLiteStore.scan`` reads a namespace's rows a page at a time, inside one read transaction of its own: the rows it
yields are those of its start, whatever another connection commits between two pages, and the rows not yet read
are never held all at once."""

from __future__ import annotations

import tracemalloc

import pytest

from hippo.base.errors import ClosedError
from hippo.store import sqlite as sqlite_mod
from hippo.store.sqlite import SQLiteStore
from tests.store.test_conformance import batch


def _rows(rows) -> list[tuple]:
    return [(r.id, r.seq, r.metadata, r.speaker, r.session_id) for r in rows]


@pytest.fixture
def small_pages(monkeypatch):
    monkeypatch.setattr(sqlite_mod, "SCAN_PAGE", 4)


def test_a_scan_sees_the_rows_of_its_start_under_another_writer(tmp_path, small_pages) -> None:
    path = tmp_path / "s.db"
    st = SQLiteStore(path)
    other = SQLiteStore(path)
    try:
        st.append("a", batch(11))
        before = _rows(st.scan("a"))
        scan = st.scan("a")
        got = [next(scan)]
        # another connection appends, deletes rows not read yet, rewrites a row's metadata and seals, between pages
        other.append("a", batch(5, start=11))
        other.delete("a", [before[6][0], before[9][0]])
        assert other.update_metadata("a", before[8][0], {"k": "changed"})
        other.seal("a", 1)
        got.extend(scan)
        assert _rows(got) == before
        # this store's own connection is free between pages: it writes while a scan is being read
        scan = st.scan("a")
        first = next(scan)
        st.append("a", batch(2, start=16))
        rest = list(scan)
        now = _rows(other.scan("a"))
        assert len(now) == 11 - 2 + 5 + 2
        assert _rows([first] + rest) == now[:-2]
    finally:
        st.close()
        other.close()


def test_a_scan_of_a_read_only_store_and_of_an_in_memory_store(tmp_path, small_pages) -> None:
    path = tmp_path / "s.db"
    st = SQLiteStore(path)
    st.append("a", batch(13))
    st.append("b", batch(3))
    expected = _rows(st.scan("a"))
    assert [r[1] for r in expected] == list(range(13))
    st.close()
    ro = SQLiteStore(path, read_only=True)
    try:
        assert _rows(ro.scan("a")) == expected
    finally:
        ro.close()
    mem = SQLiteStore(None)
    try:
        for k in range(0, 13, 5):  # rows of another namespace in between
            mem.append("a", batch(min(5, 13 - k), start=k))
            mem.append("b", batch(2))
        assert [r.seq for r in mem.scan("a")] == list(range(13))
        assert [r.metadata["k"] for r in mem.scan("a")] == list(range(13))
        assert list(mem.scan("c")) == []
    finally:
        mem.close()


def test_an_unfinished_scan_leaves_no_connection_and_fails_after_close(tmp_path, small_pages) -> None:
    st = SQLiteStore(tmp_path / "s.db")
    st.append("a", batch(9))
    scan = st.scan("a")
    next(scan)
    assert len(st._scans) == 1
    scan.close()
    assert not st._scans
    scan = st.scan("a")
    next(scan)
    st.close()
    assert not st._scans
    with pytest.raises(ClosedError):
        list(scan)


def test_a_scan_holds_one_page_of_rows(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(sqlite_mod, "SCAN_PAGE", 64)
    st = SQLiteStore(tmp_path / "s.db")
    try:
        for k in range(0, 4096, 512):
            st.append("a", batch(512, start=k))
        tracemalloc.start()
        try:
            held = list(st.scan("a"))
            _, whole = tracemalloc.get_traced_memory()
            del held
            tracemalloc.reset_peak()
            base, _ = tracemalloc.get_traced_memory()
            n = 0
            for r in st.scan("a"):
                n += r.n_tokens > 0
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert n == 4096
        # the rows of every page but one are never held: a tenth of what the whole list of rows takes
        assert peak - base < whole / 10
    finally:
        st.close()
