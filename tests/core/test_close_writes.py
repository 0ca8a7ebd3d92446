"""close() after a few adds leaves them to the change feed instead of rewriting snapshots sized by the history; the
next open applies them and holds what the closing process held."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hippo_bench.scale import SyntheticConversation

from hippo import Memory
from hippo.engine import persist
from hippo.engine import state as state_mod
from hippo.engine.hierarchy import decay as decay_mod


@pytest.fixture(autouse=True)
def frozen_clock(monkeypatch):
    """Strengths depend on wall-clock time: freeze it so two handles decay alike."""
    monkeypatch.setattr(decay_mod, "now", lambda: 1_760_000_000.0)


def _corpus(n: int, seed: int) -> list[dict]:
    items = SyntheticConversation(seed, n_nouns=400, n_people=30, n_places=20, n_speakers=6).generate(
        n * 30, n_needles=0).items[:n]
    items[n // 2] = {**items[n // 2], "text": "I moved to Denver in March, the new job starts soon."}
    return items


def _spy(mem: Memory) -> dict[str, int]:
    """Bytes of every snapshot kind ``mem``'s store is asked to write from now on."""
    written: dict[str, int] = {}
    store = mem.engine.rt.store
    real = store.put_units_many

    def put(namespace, payloads, **kw):
        for kind, blob in payloads.items():
            written[kind] = written.get(kind, 0) + len(blob or b"")
        return real(namespace, payloads, **kw)

    store.put_units_many = put
    return written


def _derived(mem: Memory) -> list:
    """The co-index, annotations and lifecycle of the namespace as their snapshots would save them."""
    st = mem.engine.state()
    life = st.life()
    assert st.wait_warm(120)
    st.truth.sync(st.index)
    parts = [st.index.to_snapshot(), st.truth.to_snapshot(), life.to_snapshot()]
    # the id of a save and the time consolidation took are no part of the state
    return [({k: v for k, v in meta.items() if k not in ("save_id", "consolidation_s")},
             {k: (np.asarray(v).dtype.str, np.shape(v), np.ascontiguousarray(v).tobytes()) for k, v in arrays.items()})
            for meta, arrays in parts]


def _base(path: Path) -> None:
    """A store whose close saved every follower, the speaker profiles included."""
    with Memory(path) as mem:
        mem.add_many(_corpus(400, seed=3))
        assert mem.speakers()


def test_close_after_a_few_adds_writes_no_snapshot_and_the_next_open_holds_the_same_state(tmp_path):
    path = tmp_path / "m.db"
    _base(path)
    with Memory(path) as mem:
        mem.add_many(_corpus(3, seed=9))
        held = _derived(mem)
        written = _spy(mem)
    assert not written.get(persist.INDEX) and not written.get(persist.LIFE)
    with Memory(path) as again:
        assert _derived(again) == held
        assert again.count() == 403 and again.search("Denver", k=1)[0].text.startswith("I moved to Denver")


def _assert_saved_for_every_message(path, written, held) -> None:
    """The close wrote the index and lifecycle snapshots, and the next open loads a snapshot that covers every message
    and holds what the closing handle held."""
    assert written.get(persist.INDEX) and written.get(persist.LIFE)
    with Memory(path) as again:
        state = again.engine.state()
        assert state.saved[persist.INDEX] == state.seen.version  # the snapshot covers every message
        assert _derived(again) == held


def test_close_saves_as_before_when_more_changed(tmp_path, monkeypatch):
    path = tmp_path / "m.db"
    _base(path)
    with Memory(path) as mem:  # a recall reinforces what it returns: the accesses are saved
        mem.add_many(_corpus(3, seed=9))
        mem.recall("Where did they move?", budget_tokens=200)
        written = _spy(mem)
    assert written.get(persist.LIFE) or written.get(persist.ACCESS)
    monkeypatch.setattr(state_mod, "CLOSE_SLACK", 2)
    with Memory(path) as mem:  # more appended messages than the close leaves to the feed
        mem.add_many(_corpus(3, seed=11))
        held = _derived(mem)
        written = _spy(mem)
    _assert_saved_for_every_message(path, written, held)


def test_close_saves_when_the_few_appended_messages_are_long(tmp_path):
    """A few long messages (documents, long answers) are no cheap catch-up for the next open, nor for every open
    after it that saves nothing (a search, a reader): the close saves them as before."""
    from hippo.text import tokenizer

    path = tmp_path / "m.db"
    _base(path)
    long = [{**it, "text": " ".join(x["text"] for x in _corpus(400, seed=20 + k))}
            for k, it in enumerate(_corpus(3, seed=9))]
    assert sum(len(tokenizer.encode(it["text"])) for it in long) > 16_384
    with Memory(path) as mem:
        mem.add_many(long)
        held = _derived(mem)
        written = _spy(mem)
    _assert_saved_for_every_message(path, written, held)


def test_two_threads_closing_one_handle_at_once_save_once_and_warn_of_nothing(tmp_path, monkeypatch, caplog):
    """A server's shutdown hook and an ``atexit`` handler closing the same handle at once: both went on past the
    ``closed`` check, and the second, once the first had saved and closed the store, warned for every namespace
    that its derived state could not be saved (it had been)."""
    import logging
    import threading

    from hippo.engine.state import NamespaceState

    path = tmp_path / "closing.db"
    mem = Memory(path)
    for ns in ("a", "b"):
        mem.using(ns).add_many([{"text": f"{ns} note {i}: the kayak is red"} for i in range(300)])
    both = threading.Barrier(2)
    close = NamespaceState.close

    def side_by_side(self, finish=False):
        if self.name == "a":
            both.wait(timeout=10)  # both closers are past the check
        return close(self, finish)

    monkeypatch.setattr(NamespaceState, "close", side_by_side)
    caplog.set_level(logging.WARNING)
    closers = [threading.Thread(target=mem.close) for _ in range(2)]
    for t in closers:
        t.start()
    for t in closers:
        t.join()
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    monkeypatch.undo()
    with Memory(path) as again:
        assert again.using("a").count() == again.using("b").count() == 300
        assert again.check()["ok"]
