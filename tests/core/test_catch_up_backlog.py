"""A handle far behind another handle's writes catches up as an open does, and answers as one would.

When another handle appended more than ``SYNC_ROWS`` messages and saved its snapshots, a loaded state loads those
snapshots plus the changes after them instead of reading, annotating and consolidating every message again
(``NamespaceState._reopen``); what only it holds (accesses it made and did not save) is kept. The references: a
handle opened on the store after the writer closed (it loads the same snapshots), and a handle that followed the
change feed message by message (the path taken when no snapshot covers the backlog). Cost is the number of store
rows read, never time.
"""

from __future__ import annotations

import pytest
from rowcount import count_rows
from test_restart import answers, corpus

from hippo import Memory
from hippo.engine import state as state_mod
from hippo.engine.hierarchy import decay as decay_mod


@pytest.fixture(autouse=True)
def small(monkeypatch):
    monkeypatch.setattr(decay_mod, "now", lambda: 1_760_000_000.0)
    monkeypatch.setattr(state_mod, "SYNC_ROWS", 50)


def _follow_the_feed(mem: Memory) -> None:
    """This handle catches up message by message, as it did before it could load another handle's snapshots."""
    mem.engine.state()._reopen = lambda feed: False


def _grow(path, items) -> None:
    with Memory(path) as writer:
        writer.add_many(items)


def _reader_of_the_first_150(tmp_path):
    """A store of the first 150 of 600 messages, and a reader that has loaded it (its co-index, by a search): the
    store's path, the 600 messages and the reader."""
    path = tmp_path / "m.db"
    items = corpus(600)
    _grow(path, items[:150])
    reader = Memory(path)
    assert reader.search("Maya", k=3)
    return path, items, reader


def test_a_reader_far_behind_loads_the_writers_snapshots_and_answers_as_a_fresh_open(tmp_path):
    path, items, reader = _reader_of_the_first_150(tmp_path)
    reader.engine.state().life()  # the lifecycle loaded, no access made
    _grow(path, items[150:])
    counter = count_rows(reader.engine.rt.store)
    assert reader.count() == 600
    assert counter.rows < 100, counter.rows  # the 450 messages were not read back one by one
    st = reader.engine.state()
    assert st.truth.done == len(st.index) == 600  # the writer's annotations, not annotated again
    got = answers(reader)
    with Memory(path) as fresh:
        want = answers(fresh)
    reader.close()
    assert got == want


def test_a_reader_far_behind_takes_the_writers_profiles_when_they_read_further(tmp_path, monkeypatch):
    """The reader's profiles consumed the first 150 messages; the writer's saved ones all 600: the reader takes
    those instead of reading the 450 messages' statements again, and they are the profiles it would have built."""
    from hippo.engine import profiles as profiles_mod

    path = tmp_path / "m.db"
    items = corpus(600)
    _grow(path, items[:150])
    reader = Memory(path)
    assert reader.speakers()
    with Memory(path) as writer:
        writer.add_many(items[150:])
        assert writer.speakers()  # the writer's profiles read every message, and are saved at close
        with writer.engine.rt.lock.read():
            want = writer.engine.state().profiles().to_snapshot()
    reads: list[str] = []
    real = profiles_mod.style_vector
    monkeypatch.setattr(profiles_mod, "style_vector", lambda text, **kw: reads.append(text) or real(text, **kw))
    assert reader.count() == 600
    with reader.engine.rt.lock.read():
        got = reader.engine.state().profiles().to_snapshot()
    assert not reads
    assert got[0] == want[0] and got[1].keys() == want[1].keys()
    assert all((got[1][k] == want[1][k]).all() for k in got[1])
    reader.close()


def test_without_a_covering_snapshot_the_reader_follows_the_feed(tmp_path):
    path, items, reader = _reader_of_the_first_150(tmp_path)
    _follow_the_feed(reader)
    _grow(path, items[150:])
    counter = count_rows(reader.engine.rt.store)
    assert reader.count() == 600
    assert counter.rows >= 450
    reader.close()


@pytest.mark.parametrize("deleted", [False, True])
def test_a_reader_far_behind_keeps_its_own_accesses_and_answers_as_one_that_followed_the_feed(tmp_path, deleted):
    path = tmp_path / "m.db"
    items = corpus(600)
    _grow(path, items[:150])
    loaded, followed = Memory(path), Memory(path)
    ids = [it.id for it in loaded.list(limit=6, offset=20)]
    for mem in (loaded, followed):
        mem.recall("What does Maya do for work?", budget_tokens=300)
        mem.reinforce(ids)
        with mem.engine.rt.lock.read():
            mem.engine.state().profiles()
    _follow_the_feed(followed)
    with Memory(path) as writer:
        if deleted:
            writer.delete([it.id for it in writer.list(limit=10, offset=60)])
        writer.add_many(items[150:])
    counter = count_rows(loaded.engine.rt.store)
    assert loaded.count() == followed.count() == (590 if deleted else 600)
    assert counter.rows < 100, counter.rows
    for mem in (loaded, followed):  # after a deletion the profiles are rebuilt in the background: not timed here
        assert mem.engine.state().wait_warm(120)
    assert loaded.strength(ids) == followed.strength(ids)
    got, want = answers(loaded), answers(followed)
    assert got == want
    before = loaded.strength(ids)
    loaded.close()
    with Memory(path) as fresh:  # what the reader held of its own was saved at close
        assert fresh.strength(ids) == before
    followed.close()
