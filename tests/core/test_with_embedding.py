"""``Memory.with_embedding``: the store with an embedding channel, as the framework adapters need it when they are
given an embedding (LangGraph's ``index["embed"]``, LlamaIndex's ``embed_model``) and a memory opened without one."""

from __future__ import annotations

import pytest

import hippo


def _embed(texts):
    return [[float(len(t) % 7) + 1.0, float("cat" in t), float("car" in t), 0.5] for t in texts]


def test_same_embedding_is_the_same_handle():
    mem = hippo.Memory(None, embed=_embed)
    assert mem.with_embedding(_embed) is mem
    with pytest.raises(hippo.InvalidInput, match="differs"):
        mem.with_embedding(lambda texts: _embed(texts))


def test_a_file_is_opened_a_second_time_with_the_embedding(tmp_path):
    path = tmp_path / "m.db"
    plain = hippo.Memory(path, namespace="notes")
    plain.add("the cat sleeps on the mat")
    twin = plain.with_embedding(_embed)
    try:
        assert twin is not plain and twin.namespace == "notes" and twin.embedding is _embed
        assert plain.embedding is None
        twin.add("the car is in the garage")
        hits = twin.search("garage car", k=2)
        assert hits[0].text == "the car is in the garage" and "embedding" in hits[0].channels
        # one file: each handle sees what the other wrote
        assert [m.text for m in plain.list()] == ["the cat sleeps on the mat", "the car is in the garage"]
        plain.add("a third line")
        assert twin.count() == 3
    finally:
        twin.close()
    assert plain.count() == 3  # closing the second handle leaves the first open
    plain.close()


def test_refused_where_it_cannot_work():
    with pytest.raises(hippo.InvalidInput, match="in-memory"):
        hippo.Memory(None).with_embedding(_embed)
    with pytest.raises(hippo.InvalidInput, match="embed"):
        hippo.Memory(None).with_embedding(None)
    with pytest.raises(hippo.InvalidInput, match="embed"):
        hippo.Memory(None).with_embedding(42)


def test_codes_of_messages_deleted_while_they_are_embedded_are_not_saved(tmp_path):
    """A handle with an embedding computes the codes of messages another handle wrote without one; that handle
    deletes them while the embedding function runs: no code or vector of theirs stays in the file."""
    import sqlite3
    import threading

    path = tmp_path / "m.db"
    doomed: list[int] = []

    def embed(texts):
        if doomed:
            ids = list(doomed)
            doomed.clear()
            # another process's deletion, committed at this moment (a thread: this one holds the handle's lock)
            t = threading.Thread(target=lambda: hippo.Memory(path).delete(ids))
            t.start()
            t.join()
        return _embed(texts)

    mem = hippo.Memory(path, embed=embed)
    mem.add("the cat sleeps on the mat")
    with hippo.Memory(path) as other:  # writes without an embedding: the first handle embeds these itself
        doomed.extend(it.id for it in other.add_many([{"text": "the car is red"}, {"text": "a cat and a car"}]))
    ids = list(doomed)
    assert [h.text for h in mem.search("car cat", k=5)] == ["the cat sleeps on the mat"]
    assert mem.check()["ok"]
    mem.close()
    with sqlite3.connect(path) as db:
        assert [r[0] for r in db.execute("SELECT id FROM codes")] == [1]
        assert db.execute(f"SELECT count(*) FROM codes WHERE id IN ({ids[0]}, {ids[1]})").fetchone() == (0,)
