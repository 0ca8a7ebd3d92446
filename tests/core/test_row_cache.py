"""The store rows a namespace keeps between calls (``NamespaceState.rows``): what a recall, a search or a get returns
must be the store's current row, after metadata updates and deletions made here or by another process."""

from __future__ import annotations

from hippo import Memory
from hippo.engine import state as state_mod

_TEXTS = ["I adopted a greyhound named Mochi from the rescue.", "Mochi loves the beach at sunrise.",
          "The rescue said greyhounds sleep most of the day.", "We walk Mochi twice a day."]


def _fill(mem):
    return [mem.add(t, speaker="Ann", metadata={"n": k}).id for k, t in enumerate(_TEXTS)]


def _meta(items):
    return {m.id: m.metadata for m in items}


def test_updates_and_deletions_reach_recall_in_this_process():
    mem = Memory(None, namespace="a")
    ids = _fill(mem)
    first = _meta(mem.recall("Mochi greyhound", budget_tokens=500).messages)
    assert first[ids[0]] == {"n": 0}
    mem.update(ids[0], metadata={"n": 10})
    assert _meta(mem.recall("Mochi greyhound", budget_tokens=500).messages)[ids[0]] == {"n": 10}
    assert {h.id: h.metadata for h in mem.search("Mochi greyhound", k=4)}[ids[0]] == {"n": 10}
    mem.delete(ids[0])
    assert ids[0] not in _meta(mem.recall("Mochi greyhound", budget_tokens=500).messages)
    mem.close()


def test_another_process_changes_reach_the_kept_rows(tmp_path):
    path = str(tmp_path / "m.db")
    a = Memory(path, namespace="a")
    ids = _fill(a)
    b = Memory(path, namespace="a")  # a second handle stands for another process: its own namespace state
    assert _meta(a.recall("Mochi greyhound", budget_tokens=500).messages)[ids[1]] == {"n": 1}
    assert _meta(b.recall("Mochi greyhound", budget_tokens=500).messages)[ids[1]] == {"n": 1}
    b.update(ids[1], metadata={"n": 11, "by": "b"})
    b.delete(ids[2])
    got = _meta(a.recall("Mochi greyhound", budget_tokens=500).messages)
    assert got[ids[1]] == {"n": 11, "by": "b"}
    assert ids[2] not in got
    assert a.get(ids[1]).metadata == {"n": 11, "by": "b"}
    a.close()
    b.close()


def test_kept_rows_equal_the_store_and_stay_bounded(monkeypatch):
    monkeypatch.setattr(state_mod, "_ROW_CACHE", 3)
    mem = Memory(None, namespace="a")
    ids = _fill(mem)
    st = mem.engine.state()
    store = st.host.store
    for want in ([ids[0], ids[1]], ids, [ids[3], 999_999], ids[::-1]):
        assert st.rows(want) == store.rows("a", want)
        assert len(st._row_cache) <= 3
    mem.close()
