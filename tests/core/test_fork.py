"""A Memory opened before ``os.fork()`` (``multiprocessing``'s fork start method, gunicorn ``--preload``).

The child uses the handle it inherited as if it had opened the store itself: its own connection, nothing of the
parent's background work, locks or unsaved state. Each child runs under a deadline only so that a hang fails the
test instead of stalling the run.
"""

from __future__ import annotations

import os
import threading
import time

import pytest

from hippo import ClosedError, Memory
from tests.forked import fork, in_child, result

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

def _in_child_while_held(hold, work) -> dict:
    """:func:`in_child` of ``work`` while another thread of the parent is inside ``hold()`` (a lock's context)."""
    held, release = threading.Event(), threading.Event()

    def holder() -> None:
        with hold():
            held.set()
            release.wait()

    t = threading.Thread(target=holder)
    t.start()
    held.wait()
    try:
        return in_child(work)
    finally:
        release.set()
        t.join()


def _child_work(mem: Memory) -> list:
    mem.add("the child process bought a blue kayak")
    out = [mem.count(), [h.text for h in mem.search("blue kayak", k=1)], len(mem.contradictions())]
    mem.consolidate()
    mem.close()
    return out


@pytest.fixture()
def opened(tmp_path):
    path = tmp_path / "forked.db"
    with Memory(path) as mem:
        mem.add_many([{"text": f"note {i}: the parent keeps a red bicycle"} for i in range(30)])
    mem = Memory(path)
    assert mem.count() == 30
    yield mem
    mem.close()


def test_a_child_uses_the_inherited_handle_while_a_rebuild_ran_in_the_parent(opened) -> None:
    """A background rebuild running in the parent at the fork has no thread in the child: waiting for it there
    (contradictions, consolidate, close) hung forever."""
    mem = opened
    state = mem.engine.state()
    release = threading.Event()
    state._start("truth", lambda warm: release.wait())  # a rebuild in progress at the fork
    try:
        got = in_child(lambda: _child_work(mem))
    finally:
        release.set()
    assert got == {"result": [31, ["the child process bought a blue kayak"], 0]}
    assert mem.count() == 31  # the parent sees the child's write without reopening
    assert mem.search("blue kayak", k=1)[0].text == "the child process bought a blue kayak"


def test_a_child_uses_the_inherited_handle_while_a_parent_thread_held_its_lock(opened) -> None:
    """A lock another thread of the parent held at the fork is never released in the child: its first write
    waited forever."""
    mem = opened
    got = _in_child_while_held(mem.engine.rt.lock.read, lambda: _child_work(mem))
    assert got == {"result": [31, ["the child process bought a blue kayak"], 0]}
    assert mem.count() == 31


def test_a_child_whose_store_file_is_gone_gets_a_closed_handle_not_the_parents_connection(tmp_path) -> None:
    path = tmp_path / "gone.db"
    mem = Memory(path)
    mem.add("kept by the parent")
    moved = tmp_path / "moved.db"
    os.rename(path, moved)
    for side in ("-wal", "-shm"):
        if os.path.exists(str(path) + side):
            os.rename(str(path) + side, str(moved) + side)

    def work():
        try:
            mem.add("written by the child")
        except ClosedError as exc:
            return str(exc)
        return "no error"

    got = in_child(work)
    assert "could not reopen its store after the process forked" in got["result"], got
    assert not path.exists()  # the child created no empty store in its place
    mem.close()
    with Memory(moved) as again:
        assert [it.text for it in again.list()] == ["kept by the parent"]


def test_a_child_keeps_writing_after_the_parent_closed_and_another_process_opened(tmp_path) -> None:
    """The child's own connection shared SQLite's per-process record of the file with the inherited one, so it
    never took the locks that record said were held: once the parent closed, the next process to open the file
    reset the write-ahead log under the child, whose next write raised "database disk image is malformed"."""
    import subprocess
    import sys

    path = tmp_path / "shared.db"
    mem = Memory(path)
    mem.add_many([{"text": f"parent note {i}"} for i in range(20)])
    go_r, go_w = os.pipe()

    def child() -> list:
        mem.add("the child's first write")
        os.read(go_r, 1)  # the parent has closed and a third process has written
        mem.add("the child's second write")
        count = mem.count()
        mem.close()
        return [count]

    pid, r = fork(child)
    mem.close()
    third = subprocess.run([sys.executable, "-c", "import sys; from hippo import Memory\n"
                            "with Memory(sys.argv[1]) as m: m.add('a third process writes')", str(path)],
                           capture_output=True, text=True, timeout=120,
                           env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert third.returncode == 0, third.stderr[-2000:]
    os.write(go_w, b"x")
    got = result(r)
    os.waitpid(pid, 0)
    assert got == {"result": [23]}, got
    with Memory(path) as again:
        texts = [it.text for it in again.list()]
        assert sorted(texts[20:]) == ["a third process writes", "the child's first write", "the child's second write"]
        assert again.check()["ok"]


def test_a_child_recalls_while_a_parent_thread_held_a_module_lock(opened) -> None:
    """Module-level locks (the recall caches, the per-token tables built on first use) held by another thread of
    the parent at the fork were never released in the child: its first recall waited forever."""
    from hippo.engine import evidence

    mem = opened
    got = _in_child_while_held(lambda: evidence._lock,
                               lambda: [mem.recall("red bicycle", budget_tokens=200).text != "", mem.count()])
    assert got == {"result": [True, 30]}


def test_a_fork_while_another_thread_writes_leaves_the_child_able_to_write(tmp_path) -> None:
    """Forked in the middle of another thread's write transaction, the child inherited a connection holding the
    write lock that no thread would ever release there, and every write of the child raised StoreBusy. The fork
    now waits for the transaction to end."""
    path = tmp_path / "busy.db"
    with Memory(path, config={"busy_timeout_s": 1}) as mem:
        mem.add_many([{"text": f"note {i}"} for i in range(10)])
        store = mem.engine.rt.store
        held = threading.Event()

        def writer() -> None:
            with store.transaction("a write in progress") as db:
                db.execute("INSERT INTO meta(key, value) VALUES ('probe', '1')"
                           " ON CONFLICT(key) DO UPDATE SET value = excluded.value")
                held.set()
                time.sleep(0.3)  # the transaction is open while the main thread forks

        t = threading.Thread(target=writer)
        t.start()
        held.wait()
        try:
            got = in_child(lambda: [mem.add("written by the child").text, mem.count()])
        finally:
            t.join()
        assert got == {"result": ["written by the child", 11]}, got
        assert mem.count() == 11


def test_a_child_writes_new_words_while_a_parent_thread_described_tokens(opened) -> None:
    """The process-wide stem vocabulary describes a token on first sight under its lock: held by another thread of
    the parent at the fork, it was never released in the child, whose first write of words the process had not
    met yet (consolidated into episodes) waited forever."""
    from hippo.text import vocab

    mem = opened

    def work() -> list:
        for s in range(3):
            mem.add_many([{"text": f"zebras {s} quixotically play the xylophone {k} in Kathmandu.",
                           "session_id": f"s{s}", "timestamp": 1.7e9 + s * 86400 + k * 60} for k in range(8)])
        hits = mem.search("xylophone Kathmandu", k=1)
        return [mem.count(), "xylophone" in hits[0].text]

    got = _in_child_while_held(lambda: vocab.vocab().lock, work)
    assert got == {"result": [54, True]}, got
    assert mem.count() == 54


@pytest.mark.parametrize("held", ["read", "write"])
def test_a_child_of_an_in_memory_store_writes_while_a_parent_thread_held_its_lock(held) -> None:
    """A Memory in memory kept in the child every structure of the parent, its lock too: a search of another thread
    of the parent (or the parent's background catch-up of speaker profiles, which reads under it) held at the fork
    was never released there, and the child's first write waited forever. The child keeps its copy of the
    database and loads the namespace again from it, as a child of a Memory on a file does."""
    mem = Memory(None)
    mem.add_many([{"text": f"note {i}: the parent keeps a red bicycle"} for i in range(30)])
    mem.recall("red bicycle", budget_tokens=200)
    lock = mem.engine.rt.lock

    def work() -> list:
        item = mem.add("the child process bought a blue kayak")
        return [item.id, mem.count(), [h.text for h in mem.search("blue kayak", k=1)],
                [h.text for h in mem.search("red bicycle note 7", k=1)]]

    got = _in_child_while_held(getattr(lock, held), work)
    assert got == {"result": [31, 31, ["the child process bought a blue kayak"],
                              ["note 7: the parent keeps a red bicycle"]]}, got
    assert mem.count() == 30  # the child wrote into its own copy
    mem.close()
