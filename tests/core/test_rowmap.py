"""hippo.base.arrays.RowMap (the co-index's message id -> row) against a plain dict through random appends, lookups
and rebuilds from the id column (what a snapshot load and a compaction do)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hippo import Memory
from hippo.base.arrays import RowMap

# a batch of ids: how far from the last id it starts (negative: below ids held), how many, the gap between them
batches = st.lists(st.tuples(st.integers(-300, 300), st.integers(1, 40), st.sampled_from([1, 1, 1, 2, 3, 50, 900])),
                   max_size=25)
probes = st.lists(st.one_of(st.integers(-50, 6000), st.sampled_from([None, "7", 3.0, 3.5, True])), max_size=40)


def check(m: RowMap, ref: dict, keys) -> None:
    assert len(m) == len(ref) and m == ref and set(m) == set(ref)
    for key in keys:
        for probe in (key, np.int64(key)) if isinstance(key, int) and not isinstance(key, bool) else (key,):
            assert (probe in m) == (probe in ref)
            assert m.get(probe, "none") == ref.get(probe, "none")
            if probe in ref:
                assert m[probe] == ref[probe] and type(m[probe]) is int
            else:
                with pytest.raises(KeyError):
                    m[probe]


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 5000), batches, probes)
def test_behaves_like_a_dict(start, steps, keys):
    m, ref, column, last = RowMap(), {}, [], start
    for offset, count, gap in steps:
        first = max(0, last + offset)
        ids = list(range(first, first + count * gap, gap))
        m.append(ids, len(column))
        for k, i in enumerate(ids):
            ref[i] = len(column) + k
        column += ids
        last = ids[-1]
        check(m, ref, keys + ids[:3])
    again = RowMap(np.array(column, dtype=np.int64))  # rebuilt from the column, as a load does
    check(again, ref, keys + column[:5])
    assert len(RowMap(np.array(column, dtype=np.int64))) == len(set(column))  # a load refuses repeated ids by this


def test_ids_close_together_cost_a_few_bytes_each():
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        m = RowMap()
        for s in range(1_000, 101_000, 500):
            m.append(list(range(s, s + 500)), s - 1_000)
        size = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(m) == 100_000 and m[1_000] == 0 and m[100_999] == 99_999
    assert size < 8 * 100_000  # a dict of the same held about 90 bytes an entry


def test_ids_far_apart_are_a_dict():
    m = RowMap()
    for s in range(0, 2_000):
        m.append([s * 1_000], s)
    assert len(m) == 2_000 and m[1_999_000] == 1_999 and 1_500 not in m and m._d is not None


def test_a_reopened_store_finds_the_same_rows(tmp_path):
    """Two namespaces written in turns (ids interleaved), saved, reopened: each one's map is its id column's."""
    path = str(tmp_path / "s.db")
    mems = {ns: Memory(path, namespace=ns) for ns in ("a", "b")}
    for turn in range(6):
        for ns, mem in mems.items():
            mem.add_many([{"text": f"{ns} message {turn} {k} about the garden", "speaker": "u"} for k in range(7)])
    maps = {}
    for ns, mem in mems.items():
        idx = mem._ns.state().index
        maps[ns] = dict(zip(idx.ids.view.tolist(), range(idx.ids.n)))
        assert idx.row_of == maps[ns]
        mem.close()
    for ns in maps:
        with Memory(path, namespace=ns) as mem:
            idx = mem._ns.state().index
            assert idx.row_of == maps[ns] and len(idx.row_of) == 42
            assert [m.id for m in mem.list()] and all(m.id in idx.row_of for m in mem.list())
