"""The speaker profiles follow this process's appends in the background (hippo.engine.state): a recall that asks
about a person finds them caught up, and answers exactly as if it had read every message itself."""

from __future__ import annotations

import time

import numpy as np
import pytest

from hippo import Memory
from hippo.engine import rank as rank_mod
from hippo.engine import state as state_mod
from hippo.engine.profiles import ProfileIndex

PEOPLE = ("Maya", "Omar", "Lena")
SAYINGS = ("I love {x}.", "My favourite food is {x}.", "I live in {x} now.", "I work as a {x}.",
           "I'm reading a book about {x}.", "We talked about {x} yesterday.")
THINGS = ("hiking", "ramen", "Lisbon", "nurse", "volcanoes", "chess", "Berlin", "pottery", "tacos", "teacher")


def messages(n: int) -> list[dict]:
    out = []
    for k in range(n):
        text = SAYINGS[k % len(SAYINGS)].format(x=THINGS[(k * 7) % len(THINGS)])
        out.append({"text": text, "speaker": PEOPLE[k % len(PEOPLE)], "role": "user", "timestamp": 1.7e9 + 60 * k,
                    "session_id": f"s{k // 20}"})
    return out


def by_hand(msgs: list[dict], ids: list[int] | None = None) -> ProfileIndex:
    """The reference: one profile index fed every message in one call (ids 1, 2, ... unless given)."""
    prof = ProfileIndex()
    prof.append(ids or list(range(1, len(msgs) + 1)), [m["speaker"] for m in msgs], [m["text"] for m in msgs],
                [m["timestamp"] for m in msgs])
    return prof


def snapshot(prof: ProfileIndex) -> tuple:
    meta, arrays = prof.to_snapshot()
    return meta, {k: np.asarray(v).tolist() for k, v in arrays.items()}


def test_the_profiles_catch_up_after_appends_without_a_recall():
    msgs = messages(100)
    with Memory(None) as mem:
        for m in msgs:
            mem.add(**m)
        st = mem.engine.state()
        assert st.wait_warm(60)
        # nothing asked about anyone, yet the appended messages were read (at least all but the last lag's worth)
        assert st._profiles is not None
        assert len(st.index) - st._profiles_done < state_mod.PROFILE_LAG
        with mem.engine.rt.lock.read():
            prof = st.profiles()
        assert snapshot(prof) == snapshot(by_hand(msgs))  # message ids are 1.. in arrival order


def test_a_recall_reads_what_the_catch_up_left_and_answers_the_same(monkeypatch):
    msgs = messages(90)
    question = "What does Maya love?"
    with Memory(None) as ref:
        monkeypatch.setattr(state_mod, "PROFILE_LAG", 10**9)  # no catch-up: the recall reads every message itself
        ref.add_many(msgs)
        expected = ref.recall(question, budget_tokens=120)
        with ref.engine.rt.lock.read():
            ref_prof = snapshot(ref.engine.state().profiles())
    monkeypatch.setattr(state_mod, "PROFILE_LAG", 8)
    stopped = []

    def one_step(self, warm):  # a catch-up that read one chunk and was stopped
        with self.host.lock.read(), self._profiles_lock:
            hi = min(len(self.index), self._profiles_done + 5)
            self._consume(self._profiles, self.index, self._profiles_done, hi)
            self._profiles_done = hi
        stopped.append(hi)

    monkeypatch.setattr(state_mod.NamespaceState, "_catch_up_profiles", one_step)
    with Memory(None) as mem:
        for m in msgs:
            mem.add(**m)
        st = mem.engine.state()
        assert st.wait_warm(60)
        assert stopped and st._profiles_done < len(st.index)  # the thread left messages for the recall
        got = mem.recall(question, budget_tokens=120)
        with mem.engine.rt.lock.read():
            assert snapshot(st.profiles()) == ref_prof
    assert [m.text for m in got.messages] == [m.text for m in expected.messages]
    assert got.text == expected.text


def test_after_a_deletion_the_profiles_hold_only_the_surviving_messages(monkeypatch):
    msgs = messages(80)
    with Memory(None) as mem:
        ids = [mem.add(**m).id for m in msgs]
        st = mem.engine.state()
        assert st.wait_warm(60)
        gone = ids[0]  # "I love ..." by Maya
        mem.delete([gone])
        assert st.wait_warm(60)
        with mem.engine.rt.lock.read():
            prof = st.profiles()
        # rebuilt from the surviving messages alone, as if the deleted one had never been said
        assert snapshot(prof) == snapshot(by_hand(msgs[1:], ids[1:]))


def test_a_stored_namespace_loads_or_builds_its_profiles_on_append(tmp_path):
    n = 40
    path = tmp_path / "p.db"
    with Memory(path) as mem:
        mem.add_many(messages(n))
        st = mem.engine.state()
        assert st.wait_warm(60)
        with mem.engine.rt.lock.read():
            first = snapshot(st.profiles())
    with Memory(path) as mem:  # reopened: the next appends catch up from the saved profiles (or a rebuild)
        for m in messages(2 * n)[n:]:
            mem.add(**m)
        st = mem.engine.state()
        assert st.wait_warm(60)
        with mem.engine.rt.lock.read():
            again = snapshot(st.profiles())
    assert first != again
    assert again == snapshot(by_hand(messages(2 * n)))


def test_while_messages_keep_coming_the_catch_up_waits(monkeypatch):
    monkeypatch.setattr(state_mod, "PROFILE_IDLE", 3600.0)  # every append is "recent" for this test
    with Memory(None) as mem:
        mem.add_many(messages(60))
        st = mem.engine.state()
        assert state_mod._CATCH_UP in st._warming  # started, and waiting for a pause in the appends
        time.sleep(0.2)
        assert st._profiles_done == 0  # a bulk import shares the interpreter with nobody
        with mem.engine.rt.lock.read():
            prof = st.profiles()  # asked for: read on the spot, the same as ever
        assert snapshot(prof) == snapshot(by_hand(messages(60)))


def test_the_profiles_follow_another_handles_appends(tmp_path):
    path = tmp_path / "shared.db"
    msgs = messages(70)
    with Memory(path) as writer, Memory(path) as reader:
        writer.add(**msgs[0])
        reader.search("hiking", k=1)  # the reader has opened the namespace
        st = reader.engine.state()
        assert st._profiles is None
        for m in msgs[1:]:
            writer.add(**m)
        reader.search("hiking", k=1)  # reads the change feed: 69 messages appended by the writer
        assert st.wait_warm(60)
        assert st._profiles is not None and st._profiles_done == len(st.index) == 70
        with reader.engine.rt.lock.read():
            assert snapshot(st.profiles()) == snapshot(by_hand(msgs))


@pytest.mark.parametrize("asked", [False, True])
def test_a_long_import_nobody_asked_about_is_left_to_the_first_question(monkeypatch, asked):
    monkeypatch.setattr(state_mod, "SYNC_ROWS", 50)
    msgs = messages(200)
    with Memory(None) as mem:
        mem.add_many(msgs[:40])  # a short history: its profiles are started at once
        st = mem.engine.state()
        if asked:
            with mem.engine.rt.lock.read():
                st.profiles()
        mem.add_many(msgs[40:])  # then 160 more, faster than the 0.25 s pause the catch-up waits for
        assert st.wait_warm(60)
        if asked:  # profiles someone reads follow every append
            assert st._profiles is not None and st._profiles_done == len(st.index)
        else:  # an import of more than SYNC_ROWS messages nobody asked about: no background reading of all of it
            assert st._profiles is None
        with mem.engine.rt.lock.read():
            assert snapshot(st.profiles()) == snapshot(by_hand(msgs))  # and the answer is the same either way


def test_asked_during_a_long_import_the_profiles_are_built_as_before(tmp_path, monkeypatch):
    monkeypatch.setattr(state_mod, "SYNC_ROWS", 50)
    monkeypatch.setattr(state_mod, "PROFILE_IDLE", 3600.0)  # the import is still going on
    msgs = messages(200)
    with Memory(tmp_path / "long.db") as mem:
        mem.add_many(msgs[:40])  # profiles started for a short history...
        mem.add_many(msgs[40:])  # ...which is now 200 messages, none of them read yet
        st = mem.engine.state()
        with mem.engine.rt.lock.read():
            first = st.profiles()  # a stored history this long without a snapshot: built in the background
        assert len(first) == 0  # the neutral stand-in, as before the background reading existed
        assert state_mod._CATCH_UP not in st._warming  # and the reading started for the short history is stopped
        assert st.wait_warm(60)
        with mem.engine.rt.lock.read():
            assert snapshot(st.profiles()) == snapshot(by_hand(msgs))


def test_an_append_that_committed_returns_even_if_the_profiles_cannot_be_loaded(tmp_path, monkeypatch, caplog):
    from hippo.base.errors import StoreError

    def broken(self):
        raise StoreError("the store is unavailable for a moment")

    monkeypatch.setattr(state_mod.NamespaceState, "_load_profiles", broken)
    with Memory(tmp_path / "s.db") as mem:
        items = mem.add_many(messages(40))  # the 40th message takes the lag to PROFILE_LAG: profiles are loaded
        assert len(items) == 40 and mem.engine.state()._profiles is None
        assert [mem.get(i.id).text for i in items] == [m["text"] for m in messages(40)]
    # the rest of the derived state stood: nothing had to be rebuilt from the store
    assert not any("derived state after an add failed" in r.getMessage() for r in caplog.records)


def test_a_trait_question_about_no_known_speaker_reads_no_profiles(monkeypatch):
    monkeypatch.setattr(state_mod, "SYNC_ROWS", 50)
    msgs = messages(200)
    with Memory(None) as mem:
        mem.add_many(msgs)  # a long import nobody asked about: profiles left to the first question that needs them
        st = mem.engine.state()
        assert st.wait_warm(60) and st._profiles is None
        rows = np.arange(len(st.index), dtype=np.int64)
        # a question about the traits of a speaker the store does not know: every factor is 1, and the full
        # profile index (every message read) is not built for it
        question = "What kind of music does Zed like?"
        assert st.profile_names().query_intent(question) == (None, True)
        with mem.engine.rt.lock.read():
            assert (rank_mod.profile_factors(st, question, rows) == 1.0).all()
        assert st._profiles is None
        # the same from the full index, as the reference: identity for a speaker it does not know either
        with mem.engine.rt.lock.read():
            assert (st.profiles().boost(question, st.index.ids.view[rows]) == 1.0).all()
        # a question about a known speaker's traits still reads them
        named = msgs[0]["speaker"]
        q2 = f"What kind of music does {named} like?"
        assert st.profile_names().query_intent(q2)[0] == named
        with mem.engine.rt.lock.read():
            got = rank_mod.profile_factors(st, q2, rows)
            assert got.tolist() == st.profiles().boost(q2, st.index.ids.view[rows]).tolist()
        assert (got > 1.0).any()  # her statements of what she likes are lifted


def test_a_question_naming_no_one_does_not_wait_for_a_step_of_the_profile_reader():
    """The background reader of the profiles holds their lock while it reads a step of statements; a recall whose
    question names no known speaker needs only the speakers' names and answers meanwhile, as it answers after."""
    import threading

    msgs = messages(60)
    with Memory(None) as mem:
        mem.add_many(msgs)
        st = mem.engine.state()
        assert st.wait_warm(60)
        question = "Which books about volcanoes came up?"
        got: list = []
        with st._profiles_lock:  # a reader's step in progress
            worker = threading.Thread(target=lambda: got.append(mem.recall(question, budget_tokens=120)),
                                      daemon=True)
            worker.start()
            worker.join(60)  # a recall that waits for the lock never ends while it is held
            assert not worker.is_alive() and got
        after = mem.recall(question, budget_tokens=120)
        assert got[0].text == after.text and [m.id for m in got[0].messages] == [m.id for m in after.messages]
