"""A deletion re-reads only its speakers' messages for the speaker profiles, and leaves exactly the profiles a rebuild
from the surviving messages builds.

The reference is a :class:`ProfileIndex` fed every surviving message in order; the comparison is of the whole saved
form (every value with its provenance and time order, the style sums, the statements the prior reads). Cost is the
number of messages whose statements are read again, never time.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from hippo import Memory
from hippo.engine import profiles as profiles_mod
from hippo.engine.profiles import ProfileIndex

SPEAKERS = ["Maya", "Leo", "Ann", "Omar", None]
LINES = [
    "I live in {place} now.",
    "I'm a {job} at the clinic.",
    "My favourite colour is {colour}.",
    "I love the idea, {name}.",
    "I don't like {thing} at all.",
    "We talked about {thing} and {place} for a while.",
    "My sister lives in {place}.",
    "I moved to {place} in March.",
]


def corpus(n: int, seed: int) -> list[dict]:
    r = random.Random(seed)
    out = []
    for k in range(n):
        text = r.choice(LINES).format(place=r.choice(["Boston", "Denver", "Lyon", "Oslo"]),
                                      job=r.choice(["nurse", "teacher", "pilot"]),
                                      colour=r.choice(["green", "blue", "red"]),
                                      name=r.choice(["Leo", "Maya", "Ann", "Omar"]),
                                      thing=r.choice(["jazz", "cheese", "football"]))
        item = {"text": text, "speaker": r.choice(SPEAKERS)}
        if k == 0:
            item["speaker"] = "Maya"
        if r.random() < 0.8:  # some messages without a time: they take the latest time before them
            item["timestamp"] = 1_700_000_000 + k * 3600 + r.randint(-30_000, 30_000)
        out.append(item)
    return out


def read_texts(monkeypatch) -> list[str]:
    """The texts the profiles read from now on (each message read computes its style vector once)."""
    reads: list[str] = []
    real = profiles_mod.style_vector

    def counted(text, **kwargs):
        reads.append(text)
        return real(text, **kwargs)

    monkeypatch.setattr(profiles_mod, "style_vector", counted)
    return reads


def saved_form(prof: ProfileIndex) -> tuple:
    meta, arrays = prof.to_snapshot()
    return meta, {k: v.tolist() for k, v in arrays.items()}


def rebuilt(mem: Memory) -> ProfileIndex:
    items = mem.list()
    ref = ProfileIndex()
    ref.append([it.id for it in items], [it.speaker for it in items], [it.text for it in items],
               [None if it.timestamp is None else it.timestamp.timestamp() for it in items])
    return ref


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_after_deletions_the_profiles_equal_a_rebuild_from_the_survivors(seed, monkeypatch):
    reads = read_texts(monkeypatch)
    r = random.Random(seed)
    mem = Memory(None)
    mem.add_many(corpus(300, seed))
    assert mem.speakers()
    st = mem.engine.state()
    kept = 0
    for _ in range(8):
        items = mem.list()
        gone = r.sample(items, r.randint(1, 4))
        reads.clear()
        mem.delete([it.id for it in gone])
        spoken = {it.speaker for it in gone if it.speaker is not None}
        if st._profiles is not None:  # read again in place: only the messages of the deleted ones' speakers
            kept += 1
            assert len(reads) == sum(1 for it in mem.list() if it.speaker in spoken)
            assert len(reads) < len(items) - len(gone)
        assert mem.speakers() == rebuilt(mem).speakers()
        assert saved_form(st._profiles) == saved_form(rebuilt(mem))
        for name in ("Maya", "Leo", "Ann", "Omar"):
            if name in mem.speakers():
                assert mem.profile(name) == rebuilt(mem).profile(name)
    assert kept >= 4
    mem.close()


def test_deleting_a_speakers_first_message_rebuilds_them_all_and_still_equals(monkeypatch):
    mem = Memory(None)
    mem.add_many(corpus(120, 5))
    mem.speakers()
    st = mem.engine.state()
    first = {}
    for it in mem.list():
        first.setdefault(it.speaker, it.id)
    mem.delete([first["Leo"]])
    assert saved_form(st.profiles(complete=True)) == saved_form(rebuilt(mem))
    mem.close()


def test_a_reopened_store_reads_the_profiles_a_deletion_left(tmp_path, monkeypatch):
    """The deletion's snapshot holds the profiles it left: a reopened store reads no message to answer about them."""
    from hippo.engine import state as state_mod

    monkeypatch.setattr(state_mod, "SYNC_ROWS", 50)  # the profiles are saved with the store past this size
    path = tmp_path / "p.db"
    with Memory(path) as mem:
        mem.add_many(corpus(200, 7))
        mem.speakers()
        mem.delete([mem.list()[150].id])
        st = mem.engine.state()
        with mem.engine.rt.lock.read():
            want = saved_form(st.profiles(complete=True))
    reads = read_texts(monkeypatch)
    with Memory(path) as again:
        again.speakers()
        assert not reads
        assert saved_form(again.engine.state()._profiles) == want == saved_form(rebuilt(again))


def test_profiles_behind_the_messages_at_a_deletion_leave_no_saved_value_of_the_deleted_message(tmp_path, monkeypatch):
    """Profiles held but not caught up with the last appends are not saved with the deletion's snapshot; the saved
    ones from before, which hold the deleted message's value, must not stay in the store."""
    from hippo.engine import persist
    from hippo.engine import state as state_mod

    monkeypatch.setattr(state_mod, "SYNC_ROWS", 50)
    monkeypatch.setattr(state_mod, "PROFILE_LAG", 10**9)  # the profiles do not follow the appends below
    path = tmp_path / "p.db"
    items = corpus(200, 9)
    items[120] = {"text": "I live in Zanzibar now.", "speaker": "Leo", "timestamp": 1_700_000_000 + 120 * 3600}
    with Memory(path) as mem:
        mem.add_many(items)
        assert "Zanzibar" in str(mem.profile("Leo"))
    with Memory(path) as mem:
        assert "Zanzibar" in str(mem.profile("Leo"))  # loaded from the saved profiles
        mem.add_many(corpus(40, 10))
        st = mem.engine.state()
        assert st._profiles_done < len(st.index)
        mem.delete([mem.list()[120].id])
        blob = mem.engine.rt.store.get_units(mem.namespace, persist.PROFILES)
        assert blob is None or b"Zanzibar" not in persist.snapshot.load(blob)[1]["bulk"].tobytes()
        assert "Zanzibar" not in str(mem.profile("Leo"))
    with Memory(path) as mem:
        assert "Zanzibar" not in str(mem.profile("Leo"))
        assert saved_form(mem.engine.state()._profiles) == saved_form(rebuilt(mem))
