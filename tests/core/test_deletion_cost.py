"""What a deletion in a large store costs, and that the cheaper path leaves every later call as the full one did.

A reopened store reads its hierarchy's units lazily (:class:`hippo.engine.hierarchy.lazy.LazyUnits`); the snapshot a
deletion writes copies the units never read from the columns they were loaded from instead of building each one."""

from __future__ import annotations

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
