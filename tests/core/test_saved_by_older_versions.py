"""A store whose derived snapshots an older version saved (a span table without a column added since, annotations and
masked forms read by older rules) answers, once this version opens it, exactly as the same messages stored afresh by
this version, and is not rebuilt from its messages for what the older snapshot lacks."""

from __future__ import annotations

import logging
import random

import numpy as np
import pytest

from hippo import Memory
from hippo.index import coindex
from hippo.store.sqlite import SQLiteStore
from hippo.text import masking, timeexpr

T0 = 1_772_359_200  # 1 March 2026 10:00:00 UTC
NOUNS = "kiln teapot bicycle marathon violin passport camera budget invoice garden".split()
VERBS = "bought fixed painted booked visited repaired sold borrowed".split()
DAYS = "on Monday|last Tuesday|next Friday|yesterday|in June|two weeks ago|tomorrow morning|on 3 May".split("|")


def _messages(n: int) -> list[dict]:
    """A chat of two people and a deploy bot (marked as the chat importers mark one), with a tool's outputs and
    an application's tool results stored as the user's."""
    rng = random.Random(5)
    out = []
    for k in range(n):
        at = T0 + 600 * k
        if k % 9 == 4:
            out.append({"text": "Deploy %08x of api-gateway succeeded in %dm%02ds" % (
                rng.getrandbits(32), rng.randint(1, 9), rng.randint(0, 59)), "role": "user", "speaker": "deploybot",
                "metadata": {"bot": True}, "timestamp": at})
        elif k % 13 == 6:
            out.append({"text": "412 passed in %.2fs" % rng.uniform(60, 300), "role": "user", "speaker": "ann",
                        "metadata": {"type": "tool_result"}, "timestamp": at})
        elif k % 17 == 8:  # a person's text of a machine output's form: never grouped
            out.append({"text": "Deploy %08x of api-gateway succeeded in %dm%02ds" % (
                rng.getrandbits(32), rng.randint(1, 9), rng.randint(0, 59)), "role": "user", "speaker": "bob",
                "timestamp": at})
        else:
            out.append({"text": f"I {rng.choice(VERBS)} the {rng.choice(NOUNS)} {rng.choice(DAYS)} with "
                                f"{rng.choice(['Lena', 'Omar', 'my sister'])}, it cost {rng.randint(5, 900)} euros.",
                        "role": "user", "speaker": rng.choice(["ann", "bob"]), "session_id": f"s{k // 20}",
                        "timestamp": at})
    return out


QUESTIONS = ["which deploys of the api-gateway succeeded?", "how many tests passed?", "what did I buy last Tuesday?",
             "when did I repair the bicycle with Lena?", "what cost 300 euros?", "what is planned for next Friday?"]


def _as_an_older_version_saved(monkeypatch) -> None:
    """This code writing its snapshots as the version before the column of messages written by programs, masking
    rule 12 and time rule 10 wrote them (that time rule read fewer times)."""
    real = coindex.NamespaceIndex.to_snapshot

    def old_snapshot(self):
        meta, arrays = real(self)
        arrays.pop("program")
        return meta, arrays

    monkeypatch.setattr(coindex.NamespaceIndex, "to_snapshot", old_snapshot)
    monkeypatch.setattr(masking, "RULE", masking.RULE - 1)
    monkeypatch.setattr(timeexpr, "RULE", timeexpr.RULE - 1)
    # a rule that read fewer times: none said with a weekday or as tomorrow
    real_find = timeexpr.find
    monkeypatch.setattr(timeexpr, "find", lambda text, *a, **k: [
        r for r in real_find(text, *a, **k) if not any(d in r.phrase.lower() for d in ("day", "tomorrow"))])


def _same_annotations(mem: Memory, fresh: Memory) -> None:
    """Every annotation of the two stores' messages is the same (times, fingerprints, surprise, statements)."""
    (ma, aa), (mb, ab) = mem.engine.state().truth.to_snapshot(), fresh.engine.state().truth.to_snapshot()
    assert ma == mb and sorted(aa) == sorted(ab)
    for name in aa:
        assert np.array_equal(aa[name], ab[name], equal_nan=aa[name].dtype.kind == "f"), name


@pytest.mark.parametrize("background", [False, True])
def test_a_store_an_older_version_saved_answers_as_one_stored_afresh_without_a_rebuild(tmp_path, monkeypatch,
                                                                                         caplog, background):
    from hippo.engine import state as state_mod

    msgs = _messages(400)
    path = str(tmp_path / "old.db")
    _as_an_older_version_saved(monkeypatch)
    with Memory(path) as mem:
        mem.add_many(msgs)
        with mem.engine.rt.lock.write():
            assert mem.engine.state().save_derived(force=True)
    monkeypatch.undo()

    loaded: list[int] = []
    real_load = SQLiteStore.load

    def load(self, namespace, after_seq=-1, upto_seq=None):
        rows = real_load(self, namespace, after_seq, upto_seq)
        loaded.append(len(rows))
        return rows

    monkeypatch.setattr(SQLiteStore, "load", load)
    if background:  # the times read again in the background, 64 messages at a time
        monkeypatch.setattr(state_mod, "SYNC_ROWS", 100)
        monkeypatch.setattr(state_mod, "_CHUNK", 64)
    with caplog.at_level(logging.INFO, logger="hippo"), Memory(path) as mem, Memory(None) as fresh:
        fresh.add_many(msgs)
        idx = mem.engine.state().index
        mem.engine.state().wait_annotated()
        # the snapshot was used: no message was read again with its tokens to make the index
        assert sum(loaded) == 0
        assert not [r for r in caplog.records if "rebuilding the co-index" in r.getMessage()]
        ref = fresh.engine.state().index
        assert idx.program.view.tolist() == ref.program.view.tolist()
        assert idx.program.view.tolist() == [bool(m.get("metadata")) for m in msgs]
        assert idx.near_keys.tolist() == ref.near_keys.tolist()
        _same_annotations(mem, fresh)
        bot_rows = [k for k, m in enumerate(msgs) if m.get("metadata", {}).get("bot")]
        assert [len(idx.copies_of(k)) for k in bot_rows] == [len(bot_rows)] * len(bot_rows)
        person = next(k for k, m in enumerate(msgs) if m["speaker"] == "bob" and m["text"].startswith("Deploy"))
        assert len(idx.copies_of(person)) == 1
        for q in QUESTIONS:
            assert mem.recall(q, budget_tokens=400).text == fresh.recall(q, budget_tokens=400).text, q
            assert [(h.id, h.text, h.score) for h in mem.search(q, k=8)] == \
                [(h.id, h.text, h.score) for h in fresh.search(q, k=8)], q
    # saved again in this version's form: the next open reads it as it is
    monkeypatch.setattr(SQLiteStore, "rows_mentioning", lambda *a: (_ for _ in ()).throw(AssertionError(a)))
    with Memory(path) as mem:
        assert mem.engine.state().index.program.view.tolist() == [
            bool(m.get("metadata")) for m in msgs]


def _change(mem: Memory, ids: list[int], change: str) -> None:
    if change == "marked":  # a person's message marked as a bot's afterwards, a bot's unmarked
        mem.update(ids[10], metadata={"bot": True})
        mem.update(ids[4], metadata={})
    elif change == "deleted":
        mem.delete([ids[4], ids[13]])
    else:
        mem.add("Deploy 0badc0de of api-gateway succeeded in 3m07s", role="user", speaker="deploybot",
                metadata={"bot": True}, timestamp=T0 + 600 * 400)


@pytest.mark.parametrize("change", ["marked", "deleted", "appended"])
def test_what_changed_after_an_older_versions_snapshot_is_grouped_as_in_a_fresh_store(tmp_path, monkeypatch, change):
    msgs = _messages(300)
    path = str(tmp_path / "old.db")
    _as_an_older_version_saved(monkeypatch)
    with Memory(path) as mem:
        ids = [it.id for it in mem.add_many(msgs)]
        with mem.engine.rt.lock.write():
            assert mem.engine.state().save_derived(force=True)
        _change(mem, ids, change)
    monkeypatch.undo()
    with Memory(path) as mem, Memory(None) as fresh:
        assert [it.id for it in fresh.add_many(msgs)] == ids
        _change(fresh, ids, change)
        mem.engine.state().wait_annotated()
        idx, ref = mem.engine.state().index, fresh.engine.state().index
        assert idx.program.view.tolist() == ref.program.view.tolist()
        assert idx.near_keys.tolist() == ref.near_keys.tolist()
        for q in QUESTIONS[:3]:
            assert mem.recall(q, budget_tokens=400).text == fresh.recall(q, budget_tokens=400).text, q


def test_a_deletion_while_the_times_are_read_again_leaves_the_annotations_of_a_fresh_store(tmp_path, monkeypatch):
    from hippo.engine import state as state_mod

    msgs = _messages(300)
    path = str(tmp_path / "old.db")
    _as_an_older_version_saved(monkeypatch)
    with Memory(path) as mem:
        ids = [it.id for it in mem.add_many(msgs)]
    monkeypatch.undo()
    monkeypatch.setattr(state_mod, "SYNC_ROWS", 100)
    monkeypatch.setattr(state_mod, "_CHUNK", 32)
    # the background work rests after each step until a caller hurries it
    monkeypatch.setattr(state_mod._Warm, "breathe", lambda self, since: self.hurry.wait(60))
    with Memory(path) as mem, Memory(None) as fresh:
        fresh.add_many(msgs)
        mem.recall("what did I buy last Tuesday?")  # opened: the saved annotations stand in
        assert 0 < mem.engine.state().truth.untimed
        mem.delete([ids[3], ids[150]])
        fresh.delete([ids[3], ids[150]])
        mem.engine.state().wait_annotated()
        assert mem.engine.state().truth.untimed == 0
        _same_annotations(mem, fresh)
        for q in QUESTIONS[2:]:
            assert mem.recall(q, budget_tokens=400).text == fresh.recall(q, budget_tokens=400).text, q


def test_annotations_read_again_under_a_newer_time_rule_are_logged_with_their_progress(tmp_path, monkeypatch, caplog):
    """An operator sees why the first open after an upgrade works on: the log names the rules and the messages to
    annotate again, a closing handle how many of them are done, and the end of the work."""
    from hippo.engine import state as state_mod

    msgs = _messages(300)
    path = str(tmp_path / "old.db")
    monkeypatch.setattr(timeexpr, "RULE", timeexpr.RULE - 1)
    with Memory(path) as mem:
        mem.add_many(msgs)
    monkeypatch.undo()
    monkeypatch.setattr(state_mod, "SYNC_ROWS", 100)  # annotated in the background from 100 messages on
    monkeypatch.setattr(state_mod, "_CHUNK", 10)
    # the background annotation rests after its first ten messages until the handle closes
    monkeypatch.setattr(state_mod._Warm, "breathe", lambda self, since: self.hurry.wait(60))
    with caplog.at_level(logging.INFO, logger="hippo"):
        with Memory(path) as mem:
            mem.recall("what did I buy last Tuesday?")
        said = [r.getMessage() for r in caplog.records if r.name.startswith("hippo")]
    assert f"namespace 'default': its annotations were saved under time rule {timeexpr.RULE - 1}, this version " \
           f"reads times by rule {timeexpr.RULE}: the times of its 300 messages are read again in the background" \
           in said
    closing = [m for m in said if "finishing the rebuild of the annotations before closing" in m]
    assert closing == ["namespace 'default': finishing the rebuild of the annotations before closing (10 of 300 "
                       "messages done)"]
    assert any(m.startswith("namespace 'default': annotated 300 messages in the background in ") for m in said)
