"""hippo.engine.hierarchy.lazy.ListMap (message id -> semantic ids) against a dict of lists through random loads,
lookups, appends, removals and deletions, a deep copy, and a hierarchy snapshot saved and loaded."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hippo.engine.hierarchy import lazy
from hippo.engine.hierarchy.lazy import ListMap
from tests.map_oracle import missing, step_like_a_dict

ops = st.lists(st.tuples(st.sampled_from(["add", "discard", "set", "del", "pop", "get", "in", "many", "copy"]),
                         st.integers(-5, 60), st.integers(-3, 40)), max_size=150)
lists = st.dictionaries(st.integers(-5, 60), st.lists(st.integers(-3, 40), max_size=4, unique=True), max_size=40)


def _load(base: dict[int, list[int]], shuffled: bool) -> ListMap:
    keys = list(base)
    if not shuffled:
        keys.sort()
    ptr = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum([len(base[k]) for k in keys], out=ptr[1:])
    vals = np.array([x for k in keys for x in base[k]], dtype=np.int64)
    return ListMap.from_csr(np.array(keys, dtype=np.int64), ptr, vals)


@settings(max_examples=200, deadline=None)
@given(lists, ops, st.booleans())
def test_behaves_like_a_dict_of_lists(base, steps, shuffled):
    m = _load(base, shuffled)
    ref = {k: list(v) for k, v in base.items()}
    copies: list[tuple[ListMap, dict]] = []
    for op, key, value in steps:
        probe = np.int64(key) if value % 2 else key  # numpy and Python ints alike
        if step_like_a_dict(m, ref, op, key, probe):
            pass
        elif op == "add":
            m.add(probe, value)
            lst = ref.setdefault(key, [])
            if value not in lst:
                lst.append(value)
        elif op == "discard":
            m.discard(probe, value)
            if value in ref.get(key, ()):
                ref[key].remove(value)
        elif op == "set":
            m[probe] = [value, value + 1]
            ref[key] = [value, value + 1]
        elif op == "get":
            got = m.get(probe, "none")
            assert got == ref.get(key, "none")
            if key in ref:
                assert m[probe] == ref[key] and all(type(x) is int for x in m[probe])
                got.append(-99)  # a value read is the caller's: the map does not change
                assert m[probe] == ref[key]
            else:
                missing(m, probe)
        elif op == "copy":
            copies.append((copy.deepcopy(m), {k: list(v) for k, v in ref.items()}))
        assert len(m) == len(ref) and bool(m) == bool(ref)
    assert dict(m.items()) == ref and m == ref
    for c, want in copies:  # copies are unchanged by what the original did after them
        assert c == want
    keys, ptr, vals = m.csr()
    assert keys.tolist() == list(m)
    assert {k: vals[ptr[j]: ptr[j + 1]].tolist() for j, k in enumerate(keys.tolist())} == ref
    assert _load(ref, True) == ListMap.from_csr(keys, ptr, vals) == ref  # what a snapshot would reload


@settings(max_examples=200, deadline=None)
@given(lists, ops, st.booleans())
def test_folding_later_entries_into_the_arrays_keeps_a_dict_of_lists(base, steps, shuffled):
    """With a fold every few writes (a key below the arrays' keys, one deleted before, one changed again)."""
    saved, lazy.FOLD_MIN = lazy.FOLD_MIN, 2
    try:
        test_behaves_like_a_dict_of_lists.hypothesis.inner_test(base, steps, shuffled)
    finally:
        lazy.FOLD_MIN = saved


def test_refuses_repeated_keys_and_inconsistent_offsets():
    with pytest.raises(ValueError):
        ListMap.from_csr([3, 1, 3], [0, 1, 2, 3], [5, 6, 7])
    with pytest.raises(ValueError):
        ListMap.from_csr([1, 2], [0, 2], [5, 6])
    with pytest.raises(ValueError):
        ListMap.from_csr([1, 2], [0, 2, 1], [5, 6])
    assert "x" not in ListMap() and ListMap().get(True) is None
    assert ListMap().get_many([1, 2], -1) == [-1, -1]
    big = ListMap.from_csr([7], [0, 2], [1 << 40, 3])  # values past int32 are kept whole
    assert big[7] == [1 << 40, 3]


def _quoted_by(h) -> dict[int, set[int]]:
    """Message id -> the semantics that name it among their sources, read from the semantics themselves."""
    out: dict[int, set[int]] = {}
    for sid in list(h.semantics):
        for mid in h.semantics[sid].message_ids:
            out.setdefault(mid, set()).add(sid)
    return out


def test_a_hierarchy_s_message_semantics_survive_folds_deletions_and_a_reopen(tmp_path, monkeypatch):
    from hippo import Memory

    monkeypatch.setattr(lazy, "FOLD_MIN", 2)  # a fold every few semantics
    rng = np.random.default_rng(5)
    words = ("garden painting pottery hiking camping guitar violin museum concert beach mountain river school "
             "parade festival market bakery library").split()
    items = []
    for k in range(240):  # repeated sentences merge into earlier semantics (several sources per semantic)
        picks = rng.choice(words, size=4, replace=False)
        items.append({"text": f"I went to the {picks[0]} with my {picks[1]} on day {k % 9}. "
                              f"The {picks[2]} was near the {picks[3]}.",
                      "speaker": "Ann" if k % 2 else "Bob", "session_id": f"s{k // 60}"})
    path = tmp_path / "m.db"
    with Memory(path) as mem:
        ids = [it.id for it in mem.add_many(items)]
        mem.consolidate("deep")
        h = mem.engine.state().life().hier
        assert any(len(h.semantics[s].message_ids) > 1 for s in h.semantics)
        mem.delete(ids[3:200:7])
        want = _quoted_by(h)
        got = {k: v for k, v in h.msg_semantics.items() if v}
        assert {k: set(v) for k, v in got.items()} == want
        assert all(len(v) == len(set(v)) for v in got.values())
        before = dict(h.msg_semantics.items())
    with Memory(path) as mem:
        h = mem.engine.state().life().hier
        assert dict(h.msg_semantics.items()) == before
        assert {k: set(v) for k, v in h.msg_semantics.items() if v} == _quoted_by(h)
