"""A deletion takes the deleted messages out of the speaker profiles, reading again only the statements of the speakers
whose values may change, and leaves exactly the profiles a rebuild from the surviving messages builds.

The reference is a :class:`ProfileIndex` fed every surviving message in order; the comparison is of the whole saved
form (every value with its provenance and time order, the style sums, the statements the prior reads). Cost is the
number of messages whose text or statements are read again, never time.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from hippo import Memory
from hippo.engine import profiles as profiles_mod
from hippo.engine.profiles import ProfileIndex
from hippo.text import attributes

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
    "I'm a big fan of {name}.",
    "Thanks, I really appreciate it.",
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


def read_statements(monkeypatch) -> list[int]:
    """The messages whose statements the profiles read from now on (by id)."""
    reads: list[int] = []
    real = ProfileIndex._statements

    def counted(self, sp, message_id, *args):
        reads.append(message_id)
        return real(self, sp, message_id, *args)

    monkeypatch.setattr(ProfileIndex, "_statements", counted)
    return reads


def stating(items) -> set[int]:
    """The messages that hold a first-person statement of a value that holds (read by the extractor itself)."""
    return {it.id for it in items if it.speaker is not None
            and any(st.first_person and not st.negated for st in attributes.extract(it.text, it.speaker))}


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_after_deletions_the_profiles_equal_a_rebuild_from_the_survivors(seed, monkeypatch):
    reads = read_texts(monkeypatch)
    statements = read_statements(monkeypatch)
    r = random.Random(seed)
    mem = Memory(None)
    mem.add_many(corpus(300, seed))
    assert mem.speakers()
    st = mem.engine.state()
    prof = st._profiles
    for step in range(10):
        items = mem.list()
        firsts, lasts = {}, {}
        for it in items:
            firsts.setdefault(it.speaker, it)
            lasts[it.speaker] = it
        gone = r.sample(items, r.randint(1, 4))
        # a speaker's first message, a speaker's last message, and (once) every message of a speaker
        gone.append(r.choice([firsts, lasts])[r.choice(list(firsts))])
        if step == 5:
            gone.extend(it for it in items if it.speaker == "Omar")
        gone = list({it.id: it for it in gone}.values())
        reads.clear()
        statements.clear()
        mem.delete([it.id for it in gone])
        assert st._profiles is prof  # taken out in place, never dropped for a rebuild
        assert sorted(reads) == sorted(it.text for it in gone if it.speaker is not None)
        assert set(statements) <= stating(mem.list())
        ref = rebuilt(mem)
        assert mem.speakers() == ref.speakers()
        assert saved_form(st._profiles) == saved_form(ref)
        for name in ref.speakers():
            assert mem.profile(name) == ref.profile(name)
    assert "Omar" not in mem.speakers()
    mem.close()


def test_deleting_one_message_of_a_long_two_person_chat_reads_only_statements(monkeypatch):
    """Speakers of more messages than a deletion would read again used to be rebuilt from every message."""
    from hippo.engine import state as state_mod

    monkeypatch.setattr(state_mod, "SYNC_ROWS", 40)  # each speaker below holds several times this
    items = corpus(400, 11)
    for k, it in enumerate(items):
        it["speaker"] = "Maya" if k % 2 == 0 else "Leo"
        if k % 10 > 1:  # most of a chat states nothing about its speaker
            it["text"] = f"We talked about the {k}th chapter for a while."
    mem = Memory(None)
    mem.add_many(items)
    assert mem.speakers() == ["Maya", "Leo"]
    st = mem.engine.state()
    prof = st._profiles
    reads = read_texts(monkeypatch)
    statements = read_statements(monkeypatch)
    r = random.Random(3)
    for _ in range(6):
        items = mem.list()
        gone = r.choice([items[0], items[-1], r.choice(items)])
        reads.clear()
        statements.clear()
        mem.delete(gone.id)
        assert st._profiles is prof
        assert reads == [gone.text]
        assert len(statements) <= len(stating(mem.list())) < len(items) // 5
        assert saved_form(prof) == saved_form(rebuilt(mem))
    mem.close()


def test_a_deletion_reads_the_deleted_texts_a_few_at_a_time_and_a_mass_deletion_rebuilds(monkeypatch):
    """The deleted messages' texts are read in chunks before they go (a deletion of most of a long history held them
    all at once); deleting more than half of the messages the profiles read rebuilds them from the survivors."""
    from hippo.engine import state as state_mod
    from hippo.index.coindex import NamespaceIndex

    monkeypatch.setattr(state_mod, "_TALLY_ROWS", 7)
    sizes: list[int] = []
    real = NamespaceIndex.texts_of

    def counted(self, rows):
        rows = list(rows)
        sizes.append(len(rows))
        return real(self, rows)

    mem = Memory(None)
    mem.add_many(corpus(200, 21))
    mem.speakers()
    st = mem.engine.state()
    prof = st._profiles
    items = mem.list()
    monkeypatch.setattr(NamespaceIndex, "texts_of", counted)
    mem.delete([it.id for it in items[10:40]])
    monkeypatch.setattr(NamespaceIndex, "texts_of", real)
    assert st._profiles is prof and max(sizes) <= 7
    assert saved_form(prof) == saved_form(rebuilt(mem))
    mem.delete([it.id for it in mem.list()[:100]])  # most of what is left
    assert st._profiles is not prof
    assert saved_form(st.profiles(complete=True)) == saved_form(rebuilt(mem))
    mem.close()


@pytest.mark.parametrize("wide_at", [None, 1000])
def test_style_sums_stay_exact_past_float_rounding(monkeypatch, wide_at):
    """A speaker's style sum is exact at any length: taking messages out leaves the sum a rebuild makes, also where a
    float64 running sum rounds (a component of a long text, fine to 2**-41, added to a sum past 2**12), and past
    what an int64 sum holds (``wide_at``: the messages after which the sum is kept in Python integers, lowered from
    2**22 here)."""
    if wide_at is not None:
        monkeypatch.setattr(profiles_mod, "_INT64_STYLES", wide_at)
    dim = 512
    big = np.zeros(dim, dtype=np.float32)
    big[0] = 1.0
    tiny = np.zeros(dim, dtype=np.float32)
    tiny[0] = np.float32(2.0 ** -18 + 2.0 ** -41)
    tiny[1] = np.float32(np.sqrt(1 - float(tiny[0]) ** 2))
    vectors = {"big": big, "tiny": tiny}
    monkeypatch.setattr(profiles_mod, "style_vector", lambda text, **kw: vectors[text])
    n = 6_000
    said = ["tiny" if k % 7 == 3 else "big" for k in range(n)]
    running = np.zeros(dim)
    for t in said:
        running += vectors[t]
    exact = sum(1 for t in said if t == "big") + sum(1 for t in said if t == "tiny") * float(tiny[0])
    assert float(running[0]) != exact  # a float64 running sum has rounded here
    prof = ProfileIndex(dim=dim)
    prof.append(list(range(1, n + 1)), ["Ann"] * n, said, [float(k) for k in range(n)])
    r = random.Random(5)
    gone = sorted(r.sample(range(2, n + 1), 40))
    prof.remove(gone, prof.tally([("Ann", said[a - 1]) for a in gone]), {"Ann": 1}, float(n - 1), lambda arrivals: [])
    survivors = [k for k in range(1, n + 1) if k not in set(gone)]
    ref = ProfileIndex(dim=dim)
    ref.append(survivors, ["Ann"] * len(survivors), [said[k - 1] for k in survivors],
               [float(k - 1) for k in survivors])
    assert saved_form(prof) == saved_form(ref)
    assert np.array_equal(prof.style("Ann"), ref.style("Ann"))
    assert (prof._speakers["Ann"].style.dtype == object) == (wide_at is not None)
    meta, arrays = prof.to_snapshot()  # the saved sum reads back to the same sum
    again = ProfileIndex.from_snapshot(prof.settings(), meta, arrays)
    assert saved_form(again) == saved_form(prof)
    assert np.array_equal(again.style("Ann"), ref.style("Ann"))


def test_a_style_vector_is_a_whole_number_of_units():
    """The exact style sums count each component in 2**-41: true of the longest and most repetitive texts read."""
    for text in ("\U0001F600" * 30_000, "a" * 30_000, "ab" * 15_000 + "\U0001F600", "x y", "é" * 7):
        v = profiles_mod.style_vector(text).astype(np.float64)
        units = v * 2.0 ** 41
        assert np.array_equal(units, np.rint(units))
        assert float(np.abs(v[v != 0]).min()) >= 2.0 ** -18


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
        gone = next(it for it in again.list()[20:] if it.speaker)  # deleted after the reopen
        reads.clear()
        again.delete(gone.id)
        assert reads == [gone.text]
        assert saved_form(again.engine.state()._profiles) == saved_form(rebuilt(again))


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
