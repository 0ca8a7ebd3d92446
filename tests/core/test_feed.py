"""Two handles (two connections, or two processes) writing one namespace: each sees exactly the other's appends,
deletions, metadata updates, forgets and namespace deletions, and catching up reads only what changed.

The reference is a plain list of ``(id, text, metadata)`` kept by the test. Cost is the number of rows the
observing handle reads from the store to catch up (``rowcount``), never wall-clock time: the same script run on a
namespace four times as large must read exactly as many rows.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from rowcount import count_rows

from hippo import Memory

CONFIG = {"seal_tokens": 10**9}  # no sealing while the script runs: chunk merges depend on the store's size


def prefix(n: int) -> list[dict]:
    return [{"text": f"background note {i} about the orchard and the {i % 17}th ladder", "speaker": "Ann",
             "metadata": {"who": "prefill", "n": i}} for i in range(n)]


def item(who: str, n: int) -> dict:
    return {"text": f"{who} wrote message {n} with marker zq{who.lower()}{n}x", "speaker": who,
            "metadata": {"who": who, "n": n}}


class Model:
    """What the namespace holds, in order."""

    def __init__(self) -> None:
        self.rows: list[tuple[int, str, dict]] = []

    def add(self, ids: list[int], items: list[dict]) -> None:
        self.rows += [(i, it["text"], it["metadata"]) for i, it in zip(ids, items)]

    def delete(self, ids) -> int:
        gone = set(ids)
        n = sum(1 for r in self.rows if r[0] in gone)
        self.rows = [r for r in self.rows if r[0] not in gone]
        return n

    def update(self, id: int, metadata: dict) -> None:
        self.rows = [(i, t, metadata if i == id else m) for i, t, m in self.rows]

    def forget(self, key: str, value) -> int:
        return self.delete([i for i, _, m in self.rows if m.get(key) == value])

    def view(self) -> list[list]:
        return [[i, t, m] for i, t, m in self.rows]


def script(model: Model):
    """(actor, command, expected result) steps; commands follow feed_child's protocol."""
    a = [item("A", k) for k in range(6)]
    b = [item("B", k) for k in range(6)]
    yield "A", {"op": "add", "items": a[:3]}
    yield "B", {"op": "add", "items": b[:2]}
    yield "A", {"op": "update", "ref": ("B", 0), "metadata": {"who": "B", "n": 0, "edited": True}}
    yield "B", {"op": "delete", "refs": [("A", 1)]}
    yield "A", {"op": "add", "items": a[3:5]}
    yield "B", {"op": "forget", "filter": {"who": "A"}}
    yield "A", {"op": "add", "items": [a[5]]}
    yield "B", {"op": "update", "ref": ("A", 5), "metadata": {"who": "A", "n": 5, "seen_by": "B"}}
    yield "A", {"op": "delete", "refs": [("B", 0), ("B", 1)]}
    yield "B", {"op": "add", "items": b[2:6]}
    yield "A", {"op": "delete_namespace"}
    yield "B", {"op": "add", "items": [item("B", 9)]}
    yield "A", {"op": "add", "items": [item("A", 9)]}


class InProcess:
    """A handle in this process, speaking feed_child's protocol."""

    def __init__(self, path: Path) -> None:
        self.mem = Memory(path, config=CONFIG)
        self.counter = count_rows(self.mem.engine.rt.store)

    def __call__(self, cmd: dict) -> dict:
        before = self.counter.rows
        self.mem.count()
        out = {"rows": self.counter.rows - before}
        op = cmd["op"]
        if op == "add":
            out["ids"] = [it.id for it in self.mem.add_many(cmd["items"])]
        elif op == "delete":
            out["n"] = self.mem.delete(cmd["ids"])
        elif op == "update":
            self.mem.update(cmd["id"], metadata=cmd["metadata"])
        elif op == "forget":
            out["n"] = self.mem.forget(cmd["filter"])
        elif op == "delete_namespace":
            out["n"] = self.mem.delete_namespace("default")
        elif op == "view":
            out["view"] = [[it.id, it.text, it.metadata] for it in self.mem.list()]
        return out

    def close(self) -> None:
        self.mem.close()


class Child:
    """A handle in another process (tests/core/feed_child.py)."""

    def __init__(self, path: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).parent / "feed_child.py"), str(path),
                                      "default"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def __call__(self, cmd: dict) -> dict:
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, "the other process died"
        return json.loads(line)

    def close(self) -> None:
        self.proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
        self.proc.stdin.flush()
        assert self.proc.wait(120) == 0


def run(tmp_path: Path, n: int, other) -> list[int]:
    """Play the script between a handle here (B... or A) and ``other``; returns the rows each catch-up read."""
    path = tmp_path / f"feed{n}.db"
    with Memory(path, config=CONFIG) as mem:
        mem.add_many(prefix(n))
        mem.flush()
    model = Model()
    model.add([r[0] for r in _ids(path)], prefix(n))
    handles = {"A": InProcess(path), "B": other(path)}
    for h in handles.values():  # load both (co-index, lifecycle) before anything is counted
        h({"op": "view"})
    names: dict[tuple[str, int], int] = {}
    rows: list[int] = []
    try:
        for actor, cmd in script(model):
            watcher = handles["B" if actor == "A" else "A"]
            cmd = dict(cmd)
            if "refs" in cmd:
                cmd["ids"] = [names[r] for r in cmd.pop("refs")]
            if "ref" in cmd:
                cmd["id"] = names[cmd.pop("ref")]
            out = handles[actor](cmd)
            if cmd["op"] == "add":
                model.add(out["ids"], cmd["items"])
                names.update({(it["metadata"]["who"], it["metadata"]["n"]): i
                              for i, it in zip(out["ids"], cmd["items"])})
            elif cmd["op"] == "delete":
                assert out["n"] == model.delete(cmd["ids"])
            elif cmd["op"] == "update":
                model.update(cmd["id"], cmd["metadata"])
            elif cmd["op"] == "forget":
                assert out["n"] == model.forget(*next(iter(cmd["filter"].items())))
            elif cmd["op"] == "delete_namespace":
                assert out["n"] == len(model.rows)
                model.rows = []
            seen = watcher({"op": "view"})
            assert seen["view"] == model.view(), (actor, cmd)
            rows.append(seen["rows"])
    finally:
        for h in handles.values():
            h.close()
    return rows


def _ids(path: Path) -> list[tuple]:
    import sqlite3

    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT id FROM messages WHERE namespace = 'default' ORDER BY seq").fetchall()
    finally:
        db.close()


def test_two_handles_see_exactly_each_others_changes_at_a_cost_independent_of_size(tmp_path):
    small, large = run(tmp_path, 150, InProcess), run(tmp_path, 600, InProcess)
    assert small == large
    assert max(small) <= 20  # a handful of rows per catch-up: the fingerprint, the feed, the changed rows


@pytest.mark.parametrize("n", [150, 600])
def test_two_processes_see_exactly_each_others_changes(tmp_path, n):
    rows = run(tmp_path, n, Child)
    assert max(rows) <= 20


def test_two_processes_read_as_many_rows_whatever_the_size(tmp_path):
    assert run(tmp_path, 120, Child) == run(tmp_path, 480, Child)


def test_a_handle_far_behind_a_trimmed_feed_reloads(tmp_path, monkeypatch):
    from hippo.engine import state as state_mod

    path = tmp_path / "trim.db"
    monkeypatch.setattr(state_mod, "RETAIN_CHANGES", 0)
    a, b = Memory(path, config=CONFIG), Memory(path, config=CONFIG)
    try:
        first = a.add("first")
        assert [it.text for it in b.list()] == ["first"]
        for i in range(5):
            a.add(f"message {i}")
        a.delete([first.id])
        with a.engine.rt.lock.write():
            a.engine.state().save_derived(force=True)  # trims the feed behind its snapshot
        st = a.engine.rt.store.state("default")
        assert a.engine.rt.store.changes("default", 1) is None
        assert [it.text for it in b.list()] == [f"message {i}" for i in range(5)]
        assert b.engine.state().seen == st
    finally:
        a.close()
        b.close()
