"""``Memory.list(filter={"session_id": ...})`` reads only that session's rows (found in the co-index) and lists
exactly what the whole-namespace scan lists: the same filter written so that it takes the scan is the reference."""

from __future__ import annotations

import random

from hippo import Memory


def _scan(filter: dict) -> dict:
    return {"$and": [filter]}  # the same messages, through the scan of the namespace


def _check(mem: Memory, rng: random.Random, sessions: list) -> None:
    for s in sessions + ["nowhere"]:
        for extra in ({}, {"role": "user"}, {"turn": {"$gte": 5}}):
            flt = {"session_id": s, **extra}
            want = mem.list(filter=_scan(flt))
            assert mem.list(filter=flt) == want
            offset, limit = rng.randint(0, 4), rng.choice([None, 1, 3])
            assert mem.list(filter=flt, offset=offset, limit=limit) == \
                mem.list(filter=_scan(flt), offset=offset, limit=limit)


def test_listing_a_session_lists_what_the_scan_lists(tmp_path):
    rng = random.Random(3)
    sessions = ["a", "b", None, "c"]
    path = str(tmp_path / "m.db")
    mem, other = Memory(path), Memory(path)
    try:
        for step in range(30):
            writer = other if step % 3 == 0 else mem  # another handle's appends reach this one through the feed
            writer.add_many({"text": f"message {step}.{k}", "session_id": rng.choice(sessions),
                             "role": rng.choice(["user", "assistant"]), "metadata": {"turn": k}}
                            for k in range(rng.randint(1, 6)))
            ids = [m.id for m in mem.list()]
            if step % 5 == 4:  # deletions renumber the rows and may drop a session's last message
                mem.delete(rng.sample(ids, min(len(ids), rng.randint(1, 8))))
            if step % 7 == 6:
                target = rng.choice([m.id for m in mem.list()])
                mem.update(target, metadata={"turn": 99})
            _check(mem, rng, sessions)
        assert mem.list(filter={"session_id": "nowhere"}) == []
        assert {m.session_id for m in mem.list(filter={"session_id": None})} == {None}
    finally:
        mem.close()
        other.close()


def test_listing_a_session_does_not_read_the_namespace(monkeypatch):
    """An agent's thread is read back by its session: the other sessions' rows are not read."""
    mem = Memory(None)
    try:
        mem.add_many({"text": f"turn {k}", "session_id": f"t{k % 50}"} for k in range(500))
        read = []
        store = mem._rt.store
        real_scan, real_rows = store.scan, store.rows
        monkeypatch.setattr(store, "scan", lambda ns: read.append("scan") or real_scan(ns))
        monkeypatch.setattr(store, "rows", lambda ns, ids: read.append(len(list(ids))) or real_rows(ns, ids))
        got = mem.list(filter={"session_id": "t7"})
        assert [m.text for m in got] == [f"turn {k}" for k in range(7, 500, 50)]
        assert read == [10]
        page = mem.list(filter={"session_id": "t7"}, offset=2, limit=3)
        assert [m.text for m in page] == ["turn 107", "turn 157", "turn 207"]
        assert read == [10, 3]  # a page of the session alone reads that page
    finally:
        mem.close()
