"""hippo.engine.hierarchy.lazy.IntMap against a plain dict through random loads, lookups, writes and deletions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hippo.engine.hierarchy.lazy import IntMap
from tests.map_oracle import missing, step_like_a_dict

ops = st.lists(st.tuples(st.sampled_from(["set", "del", "pop", "get", "in", "many"]), st.integers(-5, 60),
                         st.integers(-3, 1000)), max_size=120)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.integers(-5, 60), st.integers(-3, 1000), max_size=40), ops, st.booleans())
def test_behaves_like_a_dict(base, steps, shuffled):
    keys = list(base)
    if not shuffled:
        keys.sort()
    m = IntMap(np.array(keys, dtype=np.int64), np.array([base[k] for k in keys], dtype=np.int64))
    ref = dict(base)
    for op, key, value in steps:
        probe = np.int64(key) if value % 2 else key  # numpy and Python ints alike
        if step_like_a_dict(m, ref, op, key, probe):
            pass
        elif op == "set":
            m[probe] = value
            ref[key] = value
        else:  # get
            assert m.get(probe, "none") == ref.get(key, "none")
            if key in ref:
                assert m[probe] == ref[key] and type(m[probe]) is int
            else:
                missing(m, probe)
        assert len(m) == len(ref) and bool(m) == bool(ref)
    assert dict(m.items()) == ref and m == ref
    k, v = m.arrays()
    assert list(k) == list(m) and dict(zip(k.tolist(), v.tolist())) == ref
    again = IntMap(k, v)  # what a snapshot would reload
    assert again == ref


def test_refuses_repeated_keys_and_mismatched_arrays():
    with pytest.raises(ValueError):
        IntMap([3, 1, 3], [0, 1, 2])
    with pytest.raises(ValueError):
        IntMap([1, 2], [0])
    assert "x" not in IntMap([1], [2]) and IntMap().get(True) is None
    assert IntMap().get_many([1, 2], -1) == [-1, -1] and IntMap([1], [2]).get_many([], -1) == []


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.integers(-5, 60), st.integers(-3, 1000), max_size=40), ops, st.booleans())
def test_folding_later_entries_into_the_arrays_keeps_a_dict(base, steps, shuffled):
    """With a fold every few writes (a key below the arrays' keys, one deleted before, one set again)."""
    from hippo.engine.hierarchy import lazy

    saved, lazy.FOLD_MIN = lazy.FOLD_MIN, 2
    try:
        test_behaves_like_a_dict.hypothesis.inner_test(base, steps, shuffled)
    finally:
        lazy.FOLD_MIN = saved


def test_a_map_grown_entry_by_entry_holds_arrays():
    """The hierarchy's message maps grow by one entry per message: a dict's hundred bytes an entry (key, value and
    slot), sixteen in the folded arrays."""
    import tracemalloc

    n = 60_000
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        m = IntMap()
        for k in range(n):
            m[1_000_000 + 3 * k] = 7 * k
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert held < 40 * n
    assert len(m) == n and m[1_000_000 + 3 * 59_999] == 7 * 59_999 and 1_000_001 not in m
    assert m.get_many([1_000_000, 1_000_003, 5], -1) == [0, 7, -1]
