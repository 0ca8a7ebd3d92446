"""Data safety on real content: nothing a user stores locks them out, duplicates a write or lingers after forget.

One regression test (or more) per defect of the data-safety issue, each checked against an independent reference
(the text that was added, Python set algebra, the raw bytes of the store's files), plus property tests over
repetitive and multibyte text through add, seal, merge, close, reopen, recall and export.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hippo import Memory
from hippo.text import tokenizer
from hippo.base.errors import CorruptData, HippoError, InvalidInput, LLMError, StoreError
from hippo.store import codec
from hippo.store.sqlite import tail_checksum
from llm_server import llm_server  # noqa: F401 - pytest fixture
from tailstore import tail_store

# -- the repetitive contents of the issue, each well past the old 64x inflation cap ----------------------------------
REPETITIVE = {
    "words": "word " * 20000,
    "log lines": "2024-05-01T12:00:00Z INFO worker-3 request served in 12 ms (status=200)\n" * 2000,
    "json rows": json.dumps([{"id": 7, "name": "widget", "ok": True, "tags": []}] * 2000, indent=2),
    "csv zeros": "a,b,c,d,e,f\n" + "0,0,0,0,0,0\n" * 5000,
    "html table": "<table>\n" + "<tr><td></td><td></td><td></td></tr>\n" * 3000 + "</table>",
    "ha": "ha" * 50000,
}


def _chunks(path) -> list[tuple[int, bytes]]:
    db = sqlite3.connect(path)
    try:
        return [(r[0], bytes(r[1])) for r in db.execute("SELECT id, blob FROM chunks ORDER BY first_seq")]
    finally:
        db.close()


def _texts(mem: Memory) -> list[str]:
    return [it.text for it in mem.list()]


# ------------------------------------------------------------------------------------------------- item 1
@pytest.mark.parametrize("name", sorted(REPETITIVE))
def test_repetitive_message_reads_back_after_restart(tmp_path, name) -> None:
    text = REPETITIVE[name]
    path = tmp_path / "rep.db"
    with Memory(path) as mem:
        mem.add("an ordinary message before it", speaker="Ann")
        item = mem.add(text, role="tool")
        mem.add("an ordinary message after it", speaker="Bob")
    # the case is real: the sealed chunk inflates far beyond the 64x the old decoder allowed
    assert max(len(codec.inflate(blob)) / len(blob) for _, blob in _chunks(path)) > 64
    with Memory(path) as mem:
        assert mem.count() == 3
        assert _texts(mem) == ["an ordinary message before it", text, "an ordinary message after it"]
        assert mem.get(item.id).text == text
        assert mem.search("ordinary message after", k=3)
        mem.recall("ordinary message", budget_tokens=300)
        assert mem.export(tmp_path / "x.jsonl") == 3
        assert mem.forget({"role": "tool"}) == 1
        assert _texts(mem) == ["an ordinary message before it", "an ordinary message after it"]
    exported = [json.loads(line) for line in (tmp_path / "x.jsonl").read_text(encoding="utf-8").splitlines()[1:]]
    assert exported[1]["text"] == text


def test_repetitive_chunks_survive_geometric_merges(tmp_path) -> None:
    """Small seals merged geometrically (older chunk <= 2x newer): every merge re-encodes repetitive chunks."""
    path = tmp_path / "merge.db"
    added = []
    with Memory(path, config={"seal_tokens": 200}) as mem:
        for k, name in enumerate(sorted(REPETITIVE) * 2):
            added.append(REPETITIVE[name][: 3000 + 500 * k])
            mem.add(added[-1])
        assert len(_chunks(path)) < len(added)  # merges happened
    with Memory(path) as mem:
        assert _texts(mem) == added


def test_codec_bounds_inflation_by_the_declared_size() -> None:
    tokens = np.full(100_000, 1264, dtype=np.uint32)  # one token over and over
    blob = codec.encode(tokens, 17)
    raw = zlib.decompress(blob)
    assert len(raw) > 300 * len(blob)
    assert np.array_equal(codec.decode(blob), tokens)
    # the header's n off by one, with every checksum recomputed: the declared size no longer matches the stream
    from hippo.native import reseal

    forged = bytearray(raw)
    forged[24:32] = (101_000).to_bytes(8, "little")
    with pytest.raises(CorruptData, match="inflates|declares"):
        codec.decode(zlib.compress(reseal(bytes(forged))))
    # a header declaring more than deflate can hold is refused before inflating
    forged[24:32] = (1 << 39).to_bytes(8, "little")
    with pytest.raises(CorruptData, match="more than deflate"):
        codec.decode(zlib.compress(bytes(forged[:64])))
    # trailing bytes after the stream, a truncated stream, another structure's header
    with pytest.raises(CorruptData):
        codec.decode(blob + b"\x00")
    with pytest.raises(CorruptData):
        codec.decode(blob[:-3])
    with pytest.raises(CorruptData):
        codec.decode(zlib.compress(b"HIPPOBIX" + raw[8:]))


def test_encoder_refuses_what_the_decoder_would_refuse(tmp_path, monkeypatch) -> None:
    """A chunk that does not decode back is never committed: the seal rolls back, the tail stays readable."""
    path = tmp_path / "refuse.db"
    with Memory(path) as mem:
        mem.add("first message about the lighthouse")
        monkeypatch.setattr(codec, "decode", lambda blob: np.zeros(1, np.uint32))
        with pytest.raises(CorruptData, match="does not decode back"):
            codec.encode(np.arange(5, dtype=np.uint32), 17)
        with pytest.raises(CorruptData):  # an explicit flush reports it; nothing is sealed
            mem.flush()
        monkeypatch.undo()
        assert _chunks(path) == []
        assert _texts(mem) == ["first message about the lighthouse"]


def test_index_entry_of_repetitive_tool_output_survives_restart(tmp_path) -> None:
    path = tmp_path / "entries.db"
    out = REPETITIVE["json rows"]
    with Memory(path, namespace="ctx") as mem:
        entry = mem.index_entry(out, type="tool_result", source="inventory.get")
        eid = entry.id
    with Memory(path, namespace="ctx") as mem:
        assert mem.entry(eid).id == eid
        full = mem.complete(eid, max_tokens=10**6)
        assert full.complete and not full.stale and full.text == out
        assert "widget" in mem.complete(eid, "widget", max_tokens=200).text


# ------------------------------------------------------------------------------------------------- item 2
def test_repetitive_add_after_a_sealed_chunk_returns_normally_and_stores_once(tmp_path) -> None:
    path = tmp_path / "twin.db"
    with Memory(path) as mem:
        mem.add_many([{"text": f"sealed message {i} about the harbor"} for i in range(20)])
        mem.flush()
        assert len(_chunks(path)) == 1
        mem.add("ha" * 50000)  # seals and merges with the older chunk
        mem.add("a later message")
        assert mem.count() == 22
    with Memory(path) as mem:
        texts = _texts(mem)
        assert texts.count("ha" * 50000) == 1 and len(texts) == 22 and texts[-1] == "a later message"


def test_a_seal_that_fails_after_the_append_does_not_fail_the_add(tmp_path, monkeypatch) -> None:
    path = tmp_path / "seal.db"
    with Memory(path, config={"seal_tokens": 1}) as mem:
        def broken(tokens):
            raise CorruptData("simulated encoder failure")

        monkeypatch.setattr(mem._rt.store.codec, "encode", broken)
        item = mem.add("stored although its seal failed")
        assert mem.count() == 1 and mem.get(item.id).text == "stored although its seal failed"
        monkeypatch.undo()
        mem.add("the next add seals both")
        assert len(_chunks(path)) == 1
    with Memory(path) as mem:
        assert _texts(mem) == ["stored although its seal failed", "the next add seals both"]


# ------------------------------------------------------------------------------------------------- item 3
MULTIBYTE = "aé漢字かな한국😀👍🏽👨‍👩‍👧‍👦ß̃ñ\u0301 Ωж"


def test_decode_span_cuts_on_character_boundaries() -> None:
    rng = random.Random(5)
    for _ in range(200):
        text = "".join(rng.choice(MULTIBYTE + "  .,") for _ in range(rng.randint(1, 80)))
        ids = tokenizer.encode(text)
        a = rng.randint(0, len(ids))
        b = rng.randint(a, len(ids))
        part = tokenizer.decode_span(ids[a:b])
        raw = tokenizer.encoding().decode_bytes(ids[a:b].tolist())
        assert part in text  # whole characters of the message, in order
        assert len(raw) - len(part.encode("utf-8")) <= 6  # at most a partial character cut at each end
        assert tokenizer.decode_span(ids) == text
    clipped = tokenizer.clip("😀" * 10, 3)
    assert clipped and set(clipped) == {"😀"}


def test_damaged_bytes_inside_a_span_are_still_corrupt_data() -> None:
    """Only a partial character at either end is trimmed; an invalid byte between whole characters is damage."""
    cont = tokenizer.encoding().encode_single_token(b"\x80")  # a lone continuation byte
    a, z = tokenizer.encoding().encode_ordinary("a")[0], tokenizer.encoding().encode_ordinary("z")[0]
    assert tokenizer.decode_span([cont, a, z]) == "az"
    with pytest.raises(CorruptData):
        tokenizer.decode_span([a, cont, z])
    with pytest.raises(CorruptData):
        tokenizer.decode_span([a, 10**7])


def test_recall_over_random_multibyte_text_never_raises() -> None:
    rng = random.Random(11)
    texts = ["".join(rng.choice(MULTIBYTE + "  ") for _ in range(rng.randint(5, 150))) + " note"
             for _ in range(400)]
    with Memory(None) as mem:
        mem.add_many([{"text": t, "speaker": "Ann" if k % 2 else "Bob", "session_id": f"s{k // 40}"}
                      for k, t in enumerate(texts)])
        for q in ("漢字 note", "😀 Ann", "what did Bob say about 한국", "note"):
            r = mem.recall(q, budget_tokens=800)
            for m in r.messages:
                assert m.text == texts[m.seq]
            mem.search(q, k=5)
        mem.topics()
        mem.consolidate("deep")
        assert _texts(mem) == texts


BEAM = Path(__file__).resolve().parents[3] / "shared" / "data" / "beam100k" / "4" / "chat.json"


@pytest.mark.skipif(not BEAM.exists(), reason="needs ../shared/data/beam100k")
def test_beam_conversation_4_recalls() -> None:
    data = json.loads(BEAM.read_text(encoding="utf-8"))
    items = [{"text": m["content"], "role": m["role"], "speaker": m["role"], "session_id": f"batch-{b['batch_number']}",
              "metadata": {"chat_id": m["id"]}}
             for b in data for turn in b["turns"] for m in turn if m["content"].strip()]
    with Memory(None) as mem:
        mem.add_many(items)
        r = mem.recall("What did I decide about the schedule?", budget_tokens=2000)
        assert r.messages and r.tokens <= 2000


# ------------------------------------------------------------------------------------------------- item 4
class _LockHolder:
    """Another connection that takes the write lock right after our append commits and keeps it."""

    def __init__(self, path) -> None:
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)

    def take(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def release(self) -> None:
        self.db.execute("COMMIT")
        self.db.close()


def _embed(texts):
    out = np.zeros((len(texts), 32), dtype=np.float32)
    for k, t in enumerate(texts):
        for w in t.split():
            out[k, sum(map(ord, w)) % 32] += 1.0
    return out


def _saved_turn(db: sqlite3.Connection) -> int:
    """The turn (messages seen) recorded in the saved strength snapshot."""
    from hippo.store import snapshot

    (payload,) = db.execute("SELECT payload FROM units WHERE kind = 'derived.life'").fetchone()
    return snapshot.load(payload)[0]["body"]["turn"]


def test_post_commit_work_under_a_competing_writer_never_raises(tmp_path) -> None:
    """With embed= and a unit snapshot due on every add, a writer grabbing the lock just after the append commits
    must not make add raise: the message is stored exactly once, codes with it, the rest is deferred."""
    path = tmp_path / "busy.db"
    cfg = {"busy_timeout_s": 0.2, "seal_tokens": 1, "hierarchy": {"persist_every": 1}}
    with Memory(path, config=cfg, embed=_embed) as mem:
        mem.add("a first message about the harbor ferry")
        mem.add("a second message about the weather")
        store = mem._rt.store
        holder = _LockHolder(path)
        real_append = store.append

        def append_then_lock(*args, **kwargs):
            rows = real_append(*args, **kwargs)
            holder.take()
            return rows

        store.append = append_then_lock
        try:
            item = mem.add("the ferry leaves at nine from pier four")
        finally:
            store.append = real_append
            holder.release()
        assert mem.count() == 3
        raw = sqlite3.connect(path)
        try:
            assert raw.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == 3
            # the embedding code was stored in the append's own transaction
            assert raw.execute("SELECT COUNT(*) FROM codes WHERE id = ?", (item.id,)).fetchone()[0] == 1
            assert raw.execute("SELECT COUNT(*) FROM tail").fetchone()[0] == 1  # its seal was deferred
            assert _saved_turn(raw) == 2  # and so was the snapshot: it still covers the first two messages
        finally:
            raw.close()
        mem.add("a third message once the lock is free")  # the deferred seal and snapshot happen now
        raw = sqlite3.connect(path)
        try:
            assert raw.execute("SELECT COUNT(*) FROM tail").fetchone()[0] == 0
            assert _saved_turn(raw) == 4
        finally:
            raw.close()
        assert mem.search("ferry pier", k=1)[0].id == item.id
    with Memory(path, embed=_embed) as mem:
        assert [it.text for it in mem.list()].count("the ferry leaves at nine from pier four") == 1


def test_a_failing_embed_function_stores_nothing() -> None:
    def broken(texts):
        raise ConnectionError("embedding service down")

    with Memory(None, embed=broken) as mem:
        with pytest.raises(LLMError, match="embed"):
            mem.add("not stored")
        assert mem.count() == 0


# ------------------------------------------------------------------------------------------------- item 5
SECRET = "The vault combination is zebra-quokka-7731; the backup phrase is marmalade origami lantern"
SECRET_META = "secret-metadata-value-4417"


def _scan(path: Path, needles: dict[str, bytes]) -> dict[str, list[str]]:
    """Which needles occur in the raw bytes of the store file, its -wal and its -shm."""
    found: dict[str, list[str]] = {}
    for suffix in ("", "-wal", "-shm"):
        f = Path(str(path) + suffix)
        if f.exists():
            data = f.read_bytes()
            found[suffix or "db"] = [name for name, needle in needles.items() if needle in data]
    return found


def _needles(sealed_blob: bytes | None = None) -> dict[str, bytes]:
    out = {"metadata": SECRET_META.encode(), "token ids": tokenizer.encode(SECRET).astype("<u4").tobytes()[:48],
           "text": SECRET.encode()[:32]}
    if sealed_blob is not None:
        out["chunk blob"] = sealed_blob[:64]
    return out


@pytest.mark.parametrize("how", ["delete", "forget", "delete_namespace", "clear"])
@pytest.mark.parametrize("sealed", [False, True], ids=["tail", "sealed"])
def test_forgotten_content_leaves_the_files_when_the_call_returns(tmp_path, how, sealed) -> None:
    path = tmp_path / "forget.db"
    mem = Memory(path)
    try:
        ns = mem.using("private") if how in ("delete_namespace", "clear") else mem
        mem.add_many([{"text": f"ordinary message {i} about the weather"} for i in range(30)])
        mem.flush()
        item = ns.add(SECRET, metadata={"tag": SECRET_META})
        blob = None
        if sealed:
            ns.flush()
            db = sqlite3.connect(path)
            blob = bytes(db.execute("SELECT blob FROM chunks WHERE first_seq <= ? AND last_seq >= ? AND namespace = ?",
                                    (item.seq, item.seq, ns.namespace)).fetchone()[0])
            db.close()
        needles = _needles(blob)
        before = _scan(path, needles)
        assert any(before.values()), before  # the secret really was written to the files
        if how == "delete":
            assert mem.delete(item.id) == 1
        elif how == "forget":
            assert mem.forget({"tag": SECRET_META}) == 1
        elif how == "clear":
            assert ns.clear() == 1
        else:
            assert mem.delete_namespace("private") == 1
        after = _scan(path, needles)
        assert not any(after.values()), after
        assert _texts(mem) == [f"ordinary message {i} about the weather" for i in range(30)]
    finally:
        mem.close()


def _snapshot_text(path: Path) -> str:
    """Everything the saved derived snapshots hold (their headers and every array, inflated), as text."""
    from hippo.store import snapshot

    db = sqlite3.connect(path)
    try:
        blobs = [r[0] for r in db.execute("SELECT payload FROM units")]
    finally:
        db.close()
    out = []
    for b in blobs:
        head, arrays = snapshot.load(b)
        out.append(json.dumps(head))
        out += [np.ascontiguousarray(a).tobytes().decode("utf-8", "ignore") for a in arrays.values()]
    return " ".join(out)


@pytest.mark.parametrize("reopen", [False, True], ids=["same session", "after reopen"])
def test_llm_text_about_forgotten_messages_leaves_the_snapshot(tmp_path, llm_server, reopen) -> None:
    path = tmp_path / "llm.db"
    llm = {"base_url": llm_server.base_url, "model": "m", "backoff_s": 0.001, "max_backoff_s": 0.005}
    mem = Memory(path, llm=llm)
    try:
        mem.add_many([{"text": "We adopted a beagle named Rufus from the shelter.", "speaker": "Ann",
                       "session_id": "s1"},
                      {"text": SECRET, "speaker": "Ann", "session_id": "s1"},
                      {"text": "My sister is visiting from Lisbon next week.", "speaker": "Bob", "session_id": "s1"}])
        assert mem.consolidate("deep")["llm_facts"] >= 1
        if reopen:
            mem.close()
            assert "zebra-quokka" in _snapshot_text(path)  # an LLM fact restates the secret
            mem = Memory(path)  # no LLM now, and the hierarchy is not loaded when the delete runs
        else:
            state = mem.engine.state()
            with mem.engine.rt.lock.write():
                state.save_derived(force=True)
            assert "zebra-quokka" in _snapshot_text(path)
        db = sqlite3.connect(path)
        (old_payload,) = db.execute("SELECT payload FROM units WHERE kind = 'derived.life'").fetchone()
        db.close()
        assert mem.forget({"$and": [{"speaker": "Ann"}, {"$not": {"id": 1}}]}) == 1
        assert "zebra-quokka" not in _snapshot_text(path)
        assert not any(_scan(path, {"old snapshot": bytes(old_payload)[-68:-4]}).values())  # compressed part
        assert [it.text for it in mem.list()] == ["We adopted a beagle named Rufus from the shelter.",
                                                  "My sister is visiting from Lisbon next week."]
    finally:
        mem.close()


@pytest.mark.parametrize("reopen", [False, True], ids=["same session", "after reopen"])
def test_offline_units_quoting_a_forgotten_message_lose_its_text(tmp_path, reopen) -> None:
    """An extractive episode summary and an offline fact are verbatim sentences of their messages: deleting the
    message they quote removes that text from every unit (the summary is rewritten from the spans that remain, a
    fact whose quoted message is gone goes, even when a near-duplicate of another message merged into it)."""
    path = tmp_path / "units.db"
    secret = "my locker combination at the Riverside gym is Qxzzyplonk and I renew the membership every March."
    twin = "my locker combination at the Riverside gym is 4471 and I renew the membership every March."
    mem = Memory(path)
    try:
        a = mem.add(f"Ann: {secret}", speaker="Ann", session_id="a")
        mem.add("We went to Oslo with Mary Johnson in 1980 for the opera festival.", speaker="Bob", session_id="a")
        mem.add_many([{"text": f"We talked about the weather and the football game number {i} yesterday.",
                       "speaker": "Bob", "session_id": f"s{i}"} for i in range(10)])
        b = mem.add(f"Ann: {twin}", speaker="Ann", session_id="b")
        mem.add_many([{"text": f"We talked about the weather and the football game number {i} yesterday.",
                       "speaker": "Bob", "session_id": f"t{i}"} for i in range(10)])
        mem.consolidate("deep")
        h = mem.engine.state().life().hier
        quoted = [s for s in h.semantics.values() if "Qxzzyplonk" in s.text]
        assert quoted and set(quoted[0].message_ids) == {a.id, b.id}  # the twin merged into the secret's fact
        assert any("Qxzzyplonk" in e.summary and "Oslo" in e.summary for e in h.episodes.values())
        if reopen:
            mem.close()
            assert "Qxzzyplonk" in _snapshot_text(path)
            mem = Memory(path)
        assert mem.delete(a.id) == 1
        h = mem.engine.state().life().hier
        assert not any("Qxzzyplonk" in s.text for s in h.semantics.values())
        summaries = [e.summary for e in h.episodes.values()]
        assert not any("Qxzzyplonk" in x for x in summaries)
        # the other sentence of that episode is still its summary
        assert "Bob: We went to Oslo with Mary Johnson in 1980 for the opera festival." in summaries
        shown = json.dumps(mem.topics()) + "".join(mem.topic(t["id"]) for t in mem.topics() if t["id"] != "current")
        shown += json.dumps(mem.recall("locker combination gym", budget_tokens=300).units)
        assert "Qxzzyplonk" not in shown
        mem.close()
        assert "Qxzzyplonk" not in _snapshot_text(path)
        mem = Memory(path)
        assert [m.id for m in mem.search("locker combination", k=5)] == [b.id]
    finally:
        mem.close()


@pytest.mark.parametrize("how", ["delete", "delete_namespace"])
def test_a_handle_closing_after_a_deletion_elsewhere_writes_no_derived_text_back(tmp_path, how) -> None:
    """A handle that still holds the deleted messages in its derived state (it has not read since) saves nothing
    derived from them when it closes: the deletion's scrub stays in force."""
    path = tmp_path / "two.db"
    fact = "I live in Xylophonia now, near the harbour."
    with Memory(path, namespace="u") as mem:
        mem.add_many([{"text": f"ordinary message {i} about the weather", "speaker": "Ann"} for i in range(20)])
        mem.add(fact, speaker="Maya")
    assert "Xylophonia" in _snapshot_text(path)  # the annotations keep the statement's sentence
    holder = Memory(path, namespace="u")
    holder.add("one more message", speaker="Ann")  # unsaved derived state, saved on close
    with Memory(path, namespace="u") as other:
        if how == "delete":
            assert other.forget({"speaker": "Maya"}) == 1
        else:
            assert other.delete_namespace("u") == 22
    assert "Xylophonia" not in _snapshot_text(path)
    holder.close()
    assert "Xylophonia" not in _snapshot_text(path)
    with Memory(path, namespace="u") as mem:
        assert [m.text for m in mem.list()] == ([] if how == "delete_namespace" else
                                                [f"ordinary message {i} about the weather" for i in range(20)]
                                                + ["one more message"])
        assert mem.check()["ok"]
        if how == "delete_namespace":
            assert list(mem.check()["namespaces"]) == []

def test_llm_text_about_forgotten_messages_leaves_a_lifecycle_snapshot_being_caught_up(tmp_path, llm_server,
                                                                                        monkeypatch) -> None:
    """The saved lifecycle lags too far behind, so it is caught up in the background; a forget meanwhile cannot
    rewrite it and removes it instead (the caught-up lifecycle, without the forgotten message, is saved later)."""
    from hippo.engine import state as state_mod

    path = tmp_path / "lag.db"
    llm = {"base_url": llm_server.base_url, "model": "m", "backoff_s": 0.001, "max_backoff_s": 0.005}
    rows = [{"text": "We adopted a beagle named Rufus from the shelter.", "speaker": "Ann", "session_id": "s1"},
            {"text": SECRET, "speaker": "Ann", "session_id": "s1"},
            {"text": "My sister is visiting from Lisbon next week.", "speaker": "Bob", "session_id": "s1"}]
    with Memory(path, llm=llm) as mem:
        mem.add_many(rows)
        assert mem.consolidate("deep")["llm_facts"] >= 1
    with Memory(path, config={"hierarchy": {"enabled": False}, "decay": {"enabled": False}}) as mem:
        mem.add("one more message the saved lifecycle has not seen")
    assert "zebra-quokka" in _snapshot_text(path)
    monkeypatch.setattr(state_mod, "SYNC_ROWS", 0)  # one message behind is too far: caught up in the background
    gate = state_mod.threading.Event()
    real = state_mod.NamespaceState._replay_life

    def held(self, life, runs, next_seq, lock=None, warm=None):
        if warm is not None:  # the background catch-up, holding no lock here
            gate.wait(60)
        return real(self, life, runs, next_seq, lock, warm)

    monkeypatch.setattr(state_mod.NamespaceState, "_replay_life", held)
    mem = Memory(path)
    try:
        mem.recall("beagle")
        assert "life" in mem.engine.state()._warming
        assert mem.forget({"$and": [{"speaker": "Ann"}, {"$not": {"id": 1}}]}) == 1
        assert "zebra-quokka" not in _snapshot_text(path)
        gate.set()
        assert mem.engine.state().wait_warm(60)
    finally:
        gate.set()
        mem.close()
    assert "zebra-quokka" not in _snapshot_text(path)
    with Memory(path) as mem:
        assert [it.text for it in mem.list()] == [rows[0]["text"], rows[2]["text"],
                                                  "one more message the saved lifecycle has not seen"]

def test_replaced_metadata_leaves_the_files(tmp_path) -> None:
    path = tmp_path / "update.db"
    with Memory(path) as mem:
        item = mem.add("a message with a private tag", metadata={"tag": SECRET_META})
        mem.update(item.id, metadata={"tag": "public"})
        assert not any(_scan(path, {"metadata": SECRET_META.encode()}).values())
        assert mem.get(item.id).metadata == {"tag": "public"}


def test_a_reader_elsewhere_delays_the_scrub_to_the_next_write(tmp_path) -> None:
    path = tmp_path / "reader.db"
    with Memory(path, config={"busy_timeout_s": 0.3}) as mem:
        mem.add_many([{"text": f"filler {i}"} for i in range(10)])
        item = mem.add(SECRET, metadata={"tag": SECRET_META})
        reader = sqlite3.connect(path, isolation_level=None)
        reader.execute("BEGIN")
        reader.execute("SELECT COUNT(*) FROM messages").fetchone()  # holds a snapshot that needs the log
        mem.delete(item.id)  # returns although the log cannot be truncated yet
        assert mem._rt.store._scrub_pending
        reader.execute("COMMIT")
        reader.close()
        mem.add("the next write")
        assert not mem._rt.store._scrub_pending
        assert not any(_scan(path, _needles()).values())


# ------------------------------------------------------------------------------------------------- item 6
FILTER_ROWS = [
    {"text": f"message {k}", "speaker": ["Ann", "Bob", "Cid"][k % 3], "session_id": f"s{k % 4}",
     "metadata": {"n": k, "kind": ["note", "task", "log"][k % 3], **({"flag": True} if k % 5 == 0 else {})}}
    for k in range(30)
]


@pytest.fixture
def fmem():
    m = Memory(None)
    m.add_many(FILTER_ROWS)
    yield m
    m.close()


def _ids(mem: Memory, flt) -> set[int]:
    return {it.metadata["n"] for it in mem.list(filter=flt)}


ATOMS = [{"speaker": "Ann"}, {"kind": "task"}, {"n": {"$gte": 20}}, {"flag": {"$exists": True}},
         {"session_id": {"$in": ["s1", "s2"]}}, {"n": {"$lt": 7}}, {"kind": {"$ne": "log"}}]


@st.composite
def _trees(draw, depth=0):
    """A random filter with its set of matching rows computed by set algebra over the atoms' own results."""
    if depth >= 3 or draw(st.booleans()):
        k = draw(st.integers(0, len(ATOMS) - 1))
        return ATOMS[k], ("atom", k)
    op = draw(st.sampled_from(["$and", "$or", "$not"]))
    if op == "$not":
        sub, ref = draw(_trees(depth + 1))
        return {"$not": sub}, ("not", ref)
    parts = [draw(_trees(depth + 1)) for _ in range(draw(st.integers(1, 3)))]
    return {op: [p[0] for p in parts]}, (op, [p[1] for p in parts])


def _reference(ref, atom_sets, universe):
    kind = ref[0]
    if kind == "atom":
        return atom_sets[ref[1]]
    if kind == "not":
        return universe - _reference(ref[1], atom_sets, universe)
    sets = [_reference(r, atom_sets, universe) for r in ref[1]]
    return set.intersection(*sets) if kind == "$and" else set.union(*sets)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_trees())
def test_logical_filters_match_set_algebra(fmem, tree) -> None:
    flt, ref = tree
    universe = set(range(len(FILTER_ROWS)))
    atom_sets = [_ids(fmem, a) for a in ATOMS]
    assert _ids(fmem, flt) == _reference(ref, atom_sets, universe)


def test_top_level_or_forgets_what_it_names(fmem) -> None:
    """The issue's case: {"$or": [...]} was read as a metadata key and deleted nothing."""
    expected = {k for k in range(30) if k % 3 == 0 or k >= 25}
    n = fmem.forget({"$or": [{"speaker": "Ann"}, {"n": {"$gte": 25}}]})
    assert n == len(expected)
    assert _ids(fmem, None) == set(range(30)) - expected


def test_filter_grammar_in_search_recall_and_field_level_not(fmem) -> None:
    flt = {"$and": [{"speaker": {"$not": {"$in": ["Bob", "Cid"]}}}, {"$not": {"flag": True}}]}
    expected = {k for k in range(30) if k % 3 == 0 and k % 5 != 0}
    assert _ids(fmem, flt) == expected
    assert {h.metadata["n"] for h in fmem.search("message", k=30, filter=flt)} <= expected
    assert {m.metadata["n"] for m in fmem.recall("message", budget_tokens=500, filter=flt).messages} <= expected


@pytest.mark.parametrize("bad", [
    {"$nor": [{"speaker": "Ann"}]}, {"$or": []}, {"$and": {"speaker": "Ann"}}, {"$not": []},
    {"speaker": {"$regex": "A.*"}}, {"n": {"$exists": "yes"}}, {"$where": "1"}, {"n": {}},
])
def test_unknown_or_malformed_operators_are_refused(fmem, bad) -> None:
    for call in (lambda: fmem.list(filter=bad), lambda: fmem.forget(bad), lambda: fmem.search("x", filter=bad),
                 lambda: fmem.recall("x", filter=bad)):
        with pytest.raises(InvalidInput):
            call()
    assert fmem.count() == 30


def test_deeply_nested_filters_are_refused_not_recursed(fmem) -> None:
    flt: dict = {"speaker": "Ann"}
    for _ in range(5000):
        flt = {"$not": flt}
    with pytest.raises(InvalidInput, match="nested"):
        fmem.list(filter=flt)


# ------------------------------------------------------------------------------------------------- item 8
HOSTILE_IDS = [2**63, 2**64, 10**30, -1, -(2**70), np.uint64(2**63)]


@pytest.mark.parametrize("bad", HOSTILE_IDS, ids=str)
def test_out_of_range_ids_are_invalid_input(fmem, bad) -> None:
    for call in (lambda: fmem.get(bad), lambda: fmem.delete(bad), lambda: fmem.delete([bad]),
                 lambda: fmem.read(bad), lambda: fmem.update(bad, metadata={}), lambda: fmem.strength(bad),
                 lambda: fmem.reinforce([bad]), lambda: fmem.list(limit=bad), lambda: fmem.list(offset=bad)):
        with pytest.raises(InvalidInput):
            call()
    assert fmem.count() == 30


def test_hostile_namespaces_metadata_and_paths(tmp_path, fmem) -> None:
    for ns in ("bad\ud800name", "\udfff"):
        with pytest.raises(InvalidInput, match="surrogate"):
            fmem.using(ns)
        with pytest.raises(InvalidInput):
            Memory(None, namespace=ns)
        with pytest.raises(InvalidInput):
            fmem.delete_namespace(ns)
    deep: dict = {}
    node = deep
    for _ in range(100_000):
        node["x"] = {}
        node = node["x"]
    for call in (lambda: fmem.add("deep", metadata=deep), lambda: fmem.update(1, metadata=deep),
                 lambda: fmem.add_many([{"text": "deep", "metadata": {"k": [deep]}}])):
        with pytest.raises(InvalidInput, match="nested"):
            call()
    for p in ("a\x00b.db", tmp_path / "a\x00b"):
        with pytest.raises(InvalidInput, match="NUL"):
            Memory(p)
        with pytest.raises(InvalidInput, match="NUL"):
            fmem.export(p)
        with pytest.raises(InvalidInput, match="NUL"):
            fmem.import_(p)
    with pytest.raises(InvalidInput):
        Memory("bad\udcffname.db")
    assert fmem.count() == 30


def test_long_integers_in_an_import_file_are_corrupt_data(tmp_path, fmem) -> None:
    f = tmp_path / "big.jsonl"
    f.write_text(json.dumps({"format": "hippo-export", "version": 1}) + "\n" + '{"text": "x", "metadata": {"n": '
                 + "9" * 6000 + "}}\n", encoding="utf-8")
    with pytest.raises(CorruptData):
        fmem.import_(f)
    assert fmem.count() == 30


@pytest.mark.parametrize("column,value", [("created_at", 1e300), ("created_at", "yesterday"), ("ts", -1e20),
                                          ("created_at", None)])
def test_damaged_times_are_corrupt_data(tmp_path, column, value) -> None:
    path = tmp_path / "times.db"
    with Memory(path) as mem:
        item = mem.add("a message whose time gets damaged", timestamp=1_700_000_000)
    db = sqlite3.connect(path)
    if value is None:
        # NOT NULL holds, so damage the type instead: a blob where a number belongs
        value = b"\x00\x01"
    db.execute(f"UPDATE messages SET {column} = ? WHERE id = ?", (value, item.id))
    db.commit()
    db.close()
    with Memory(path) as mem:
        for call in (lambda: mem.get(item.id), mem.list, lambda: mem.export(tmp_path / "x.jsonl"),
                     lambda: mem.search("damaged", k=1)):
            with pytest.raises(CorruptData, match=f"message {item.id}"):
                call()
    assert not (tmp_path / "x.jsonl.tmp").exists() and not (tmp_path / "x.jsonl").exists()


FULL_DISK = """
import os, resource, signal, sys
from hippo import Memory, StoreError
store, out = sys.argv[1], sys.argv[2]
m = Memory(store, read_only=True)
m.count()
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG instead of killing us
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))
try:
    m.export(out)
    print("exported")
except StoreError as e:
    print("StoreError", e)
print("tmp left" if os.path.exists(out + ".tmp") else "no tmp", "out" if os.path.exists(out) else "no out")
"""


def test_export_on_a_full_disk_is_store_error_and_leaves_nothing(tmp_path) -> None:
    store = tmp_path / "big.db"
    with Memory(store) as mem:
        mem.add_many([{"text": f"message {i} " + "padding words " * 30} for i in range(200)])
    out = tmp_path / "out.jsonl"
    proc = subprocess.run([sys.executable, "-c", FULL_DISK, str(store), str(out)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("StoreError") and "export file" in lines[0], proc.stdout
    assert lines[1] == "no tmp no out"


# ------------------------------------------------------------------------------------------------- item 9


def test_a_bit_flip_in_the_tail_is_detected(tmp_path) -> None:
    path, mid = tail_store(tmp_path)
    db = sqlite3.connect(path)
    original = bytes(db.execute("SELECT tokens FROM tail WHERE id = ?", (mid,)).fetchone()[0])
    for bit in range(8 * len(original)):  # the first flip that leaves valid token ids and valid UTF-8
        blob = bytearray(original)
        blob[bit // 8] ^= 1 << (bit % 8)
        try:
            if tokenizer.decode(np.frombuffer(bytes(blob), "<u4")) != "the unsealed tail message":
                break  # only the checksum can tell this from an added message
        except CorruptData:
            continue
    db.execute("UPDATE tail SET tokens = ? WHERE id = ?", (bytes(blob), mid))
    db.commit()
    db.close()
    with Memory(path) as mem:
        with pytest.raises(CorruptData, match=f"message {mid}.*checksum"):
            mem.list()


@pytest.mark.parametrize("edit", ["n_tokens", "seq"])
def test_edits_of_a_sealed_message_are_detected(tmp_path, edit) -> None:
    path, _ = tail_store(tmp_path)
    db = sqlite3.connect(path)
    if edit == "n_tokens":  # move a boundary: the chunk's total stays right, two texts change
        db.execute("UPDATE messages SET n_tokens = n_tokens + 1 WHERE seq = 3")
        db.execute("UPDATE messages SET n_tokens = n_tokens - 1 WHERE seq = 4")
    else:  # swap the order of two sealed messages
        db.execute("UPDATE messages SET seq = -1 WHERE seq = 3")
        db.execute("UPDATE messages SET seq = 3 WHERE seq = 4")
        db.execute("UPDATE messages SET seq = 4 WHERE seq = -1")
    db.commit()
    db.close()
    with Memory(path) as mem:
        with pytest.raises(CorruptData, match="checksum"):
            mem.list()


def test_tail_checksum_covers_what_locates_the_tokens() -> None:
    base = tail_checksum("ns", 7, 3, 2, b"\x01\x00\x00\x00\x02\x00\x00\x00")
    assert len(base) == 8
    for other in (tail_checksum("nt", 7, 3, 2, b"\x01\x00\x00\x00\x02\x00\x00\x00"),
                  tail_checksum("ns", 8, 3, 2, b"\x01\x00\x00\x00\x02\x00\x00\x00"),
                  tail_checksum("ns", 7, 4, 2, b"\x01\x00\x00\x00\x02\x00\x00\x00"),
                  tail_checksum("ns", 7, 3, 1, b"\x01\x00\x00\x00\x02\x00\x00\x00"),
                  tail_checksum("ns", 7, 3, 2, b"\x01\x00\x00\x00\x03\x00\x00\x00")):
        assert other != base


# ------------------------------------------------------------------------------------------------- properties
_UNITS = st.sampled_from(["ha", "word ", "0,", "<td></td>", "INFO ok\n", "{\"a\": 1}, ", "漢", "😀", "é", "👨‍👩‍👧",
                          "- [ ] ", "\t", "ж"])
_MB = st.text(alphabet=st.sampled_from(list(MULTIBYTE + " \n.,;") + ["ﬁ", "\u200b", "\ufeff", "𝔘"]), min_size=1,
              max_size=300)


@st.composite
def _message(draw) -> str:
    kind = draw(st.sampled_from(["repetitive", "multibyte", "mixed"]))
    if kind == "repetitive":
        text = draw(_UNITS) * draw(st.integers(1, 6000))
    elif kind == "multibyte":
        text = draw(_MB)
    else:
        text = draw(_MB) + draw(_UNITS) * draw(st.integers(1, 800)) + draw(_MB)
    return text if text.strip() else text + "x"


QUERY = "ha word 漢 😀 INFO ok note"


@settings(max_examples=25, deadline=None)
@given(st.lists(_message(), min_size=1, max_size=8), st.integers(1, 400), st.booleans())
def test_every_accepted_text_reads_back_byte_for_byte(texts, seal_tokens, one_by_one) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "prop.db")
        accepted = []
        with Memory(path, config={"seal_tokens": seal_tokens}) as mem:
            if one_by_one:
                for t in texts:
                    mem.add(t)
                    accepted.append(t)
            else:
                mem.add_many([{"text": t} for t in texts])
                accepted = list(texts)
            r = mem.recall(QUERY, budget_tokens=400)
            assert all(m.text == accepted[m.seq] for m in r.messages)
            assert _texts(mem) == accepted
        with Memory(path) as mem:  # reopen: chunks (merged) and the tail decode
            assert _texts(mem) == accepted
            r = mem.recall(QUERY, budget_tokens=400)
            assert all(m.text == accepted[m.seq] for m in r.messages)
            mem.export(os.path.join(tmp, "x.jsonl"))
        with Memory(None) as mem:
            mem.import_(os.path.join(tmp, "x.jsonl"))
            assert _texts(mem) == accepted


# ------------------------------------------------------------------------------------------------- items 8, all calls
SWEEP_VALUES = [None, True, -1, 2**53 + 1, 2**63, 2**64, -(2**70), 1e308, float("nan"), float("inf"), "", " ",
                "\x00", "\ud800", "x" * 200_000, b"bytes", [], {}, [1, "a"], {"$or": []}, {"a": {"b": object()}},
                object(), np.uint64(2**63), np.float32(1.5), "9" * 5000, {"k": "\ud800"}, ("t",), -0.0]
SWEEP_DEFAULTS = {"text": "hello", "query": "kayaks", "id": 1, "ids": [1], "message_id": 1, "content": "x y z",
                  "filter": {"speaker": "Ann"}, "metadata": {}, "topic_id": "current", "namespace": "n2",
                  "query_or_entity": "Ann", "items": [{"text": "q"}], "level": "light", "blocks": {}}
# destructive without being wrong (clear, delete_namespace) or covered with paths of their own (export, import_,
# backup: a path such as " " is a file name, written in the working folder; tests/store/test_backup.py)
SWEEP_SKIP = {"close", "using", "vacuum", "clear", "delete_namespace", "import_", "export", "check", "backup"}


def test_every_public_call_raises_only_hippo_errors(tmp_path) -> None:
    """Each argument of each public method, in turn, gets each hostile value (the others valid): the call succeeds or
    raises a HippoError, and a call that raised changed nothing stored."""
    import inspect

    mem = Memory(tmp_path / "sweep.db")
    mem.add_many([{"text": f"message {i} about kayaks", "speaker": "Ann"} for i in range(20)])
    entry = mem.index_entry("some tool output\n" * 200)
    defaults = dict(SWEEP_DEFAULTS, entry_id=entry.id)

    def stored() -> list[tuple]:
        """What the store holds, in brief: messages, their metadata and the namespace rows."""
        return mem._rt.store._query(
            "SELECT (SELECT COUNT(*) FROM messages), (SELECT COALESCE(MAX(id), 0) FROM messages),"
            " (SELECT COALESCE(SUM(LENGTH(metadata)), 0) FROM messages),"
            " (SELECT group_concat(name || ':' || generation || ':' || next_seq) FROM namespaces)")
    escaped: dict[tuple, str] = {}
    calls = 0
    try:
        for name, fn in inspect.getmembers(mem, predicate=inspect.ismethod):
            if name.startswith("_") or name in SWEEP_SKIP or inspect.iscoroutinefunction(fn):
                continue
            params = [p for p in inspect.signature(fn).parameters.values()
                      if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
            for p in params:
                for value in SWEEP_VALUES:
                    args, kwargs = [], {}
                    for q in params:
                        if q is not p and q.default is not inspect.Parameter.empty:
                            continue
                        v = value if q is p else defaults.get(q.name, "x")
                        (kwargs.__setitem__(q.name, v) if q.kind == q.KEYWORD_ONLY else args.append(v))
                    before = stored()
                    calls += 1
                    try:
                        fn(*args, **kwargs)
                    except HippoError:
                        assert stored() == before, (name, p.name, value)
                    except Exception as exc:  # noqa: BLE001 - the point of the test
                        escaped.setdefault((name, p.name, type(exc).__name__), f"{value!r:.40}: {exc!s:.120}")
    finally:
        mem.close()
    assert calls > 1000
    assert not escaped, "\n".join(f"{k}: {v}" for k, v in sorted(escaped.items()))



# A damaged index of the messages (namespace, seq), as a flipped bit in one of its pages leaves it while the table
# still holds every row right: its pages are swapped with those of another index over the messages, which every
# REINDEX rebuilds too. "lost": it holds only the first 100 messages; "reordered": it holds them in reverse;
# "not_text": its namespace keys end in a byte that is not UTF-8.
_DAMAGED_INDEX = {"lost": "CREATE INDEX part ON messages(namespace, seq) WHERE seq < 100",
                  "reordered": "CREATE INDEX part ON messages(namespace, 299 - seq)",
                  "not_text": "CREATE INDEX part ON messages(CAST(namespace || CAST(x'ff' AS TEXT) AS TEXT), seq)"}


def _damage_index_of_messages(path, how: str) -> None:
    db = sqlite3.connect(path)
    db.execute(_DAMAGED_INDEX[how])
    roots = dict(db.execute("SELECT name, rootpage FROM sqlite_master WHERE name IN"
                            " ('part', 'sqlite_autoindex_messages_1')").fetchall())
    db.execute("PRAGMA writable_schema=ON")
    for name, other in (("part", "sqlite_autoindex_messages_1"), ("sqlite_autoindex_messages_1", "part")):
        db.execute("UPDATE sqlite_master SET rootpage = ? WHERE name = ?", (roots[other], name))
    db.commit()
    db.close()


@pytest.mark.parametrize("how", sorted(_DAMAGED_INDEX))
def test_a_damaged_index_of_messages_is_corrupt_data_not_a_wrong_list(tmp_path, how) -> None:
    """list, export and clear read the messages in order through SQLite's index of them, which SQLite walks
    without checking: with two thirds of its entries lost, list and export answered 100 of 300 messages as if
    they were all; with its order damaged, they answered the messages out of order. ``check()`` reports the
    damage (it raised CorruptData when a key was not text) and ``check(repair=True)`` rebuilds the index."""
    path = tmp_path / "index.db"
    texts = [f"note {i} about the garden" for i in range(300)]
    with Memory(path) as mem:
        mem.add_many([{"text": t} for t in texts])
    _damage_index_of_messages(path, how)
    with Memory(path) as mem:
        assert mem.count() == 300
        for call in (mem.list, lambda: mem.export(tmp_path / "out.jsonl"), mem.clear):
            with pytest.raises(CorruptData, match="index of messages is damaged"):
                call()
        assert not (tmp_path / "out.jsonl").exists()
        assert mem.count() == 300  # clear deleted nothing
        report = mem.check()
        assert not report["ok"] and "file" in report["damaged"]
        assert mem.check(repair=True)["ok"]
        assert [it.text for it in mem.list()] == texts
        assert mem.export(tmp_path / "out.jsonl") == 300



@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
@pytest.mark.parametrize("read_only", [False, True])
def test_a_path_that_is_a_named_pipe_is_invalid_input_not_a_hang(tmp_path, read_only) -> None:
    """Opening a FIFO read-only blocked in open(2) until some other process wrote to it; writable, SQLite answered
    "disk I/O error"."""
    import threading

    fifo = tmp_path / "pipe.db"
    os.mkfifo(fifo)
    link = tmp_path / "link.db"
    link.symlink_to(fifo)
    for path in (fifo, link):
        got: list = []

        def open_it(path=path) -> None:
            try:
                Memory(path, read_only=read_only).close()
                got.append(None)
            except BaseException as exc:  # noqa: BLE001 - judged below
                got.append(exc)

        t = threading.Thread(target=open_it, daemon=True)
        t.start()
        t.join(30)
        if t.is_alive():  # release the blocked open so the run goes on, then fail
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            t.join(30)
            pytest.fail(f"opening {path.name} hung")
        assert isinstance(got[0], InvalidInput), got
        assert "named pipe" in str(got[0]) and str(path) in str(got[0])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.db", "pipe.db"]  # nothing created beside it


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_write_after_the_store_file_was_deleted_or_replaced_raises_and_stores_nothing(tmp_path, how) -> None:
    """A long-running handle whose file was deleted (a cleanup job) or replaced by a rename (a restore) wrote on into
    the file it had open, which no one can open any more: every add returned as if stored, and was lost."""
    path = tmp_path / "agent.db"
    mem = Memory(path)
    mem.add_many([{"text": f"kept {i}"} for i in range(3)])
    for side in ("", "-wal", "-shm"):
        if os.path.exists(str(path) + side):
            os.unlink(str(path) + side)
    if how == "replaced":
        with Memory(tmp_path / "backup.db") as other:
            other.add("restored from a backup")
        os.replace(tmp_path / "backup.db", path)
    try:
        with pytest.raises(StoreError, match="deleted or replaced after it was opened; nothing was written"):
            mem.add("said after the file went away")
        with pytest.raises(StoreError, match="deleted or replaced"):
            mem.delete(1)
        assert [it.text for it in mem.list()] == [f"kept {i}" for i in range(3)]  # reads go on
    finally:
        mem.close()
    if how == "deleted":
        assert not path.exists()
    else:
        with Memory(path) as again:
            assert [it.text for it in again.list()] == ["restored from a backup"]


def _open_fds_on(path) -> list[str]:
    fds = Path("/proc/self/fd")
    out = []
    for fd in fds.iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith(str(path)):
            out.append(target)
    return out


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd")
@pytest.mark.parametrize("damage", ["schema_version", "not_a_database"])
def test_an_open_that_raises_leaves_no_connection_open(tmp_path, damage) -> None:
    """A writable open that failed after connecting kept its SQLite connection open (held by a reference cycle
    through the exception) until the garbage collector ran; a later open of the same file in the process shared
    that connection's state (a -shm mapped read-only made it raise "attempt to write a readonly database")."""
    import gc

    path = tmp_path / "store.db"
    with Memory(path) as mem:
        mem.add("kept")
    if damage == "schema_version":
        db = sqlite3.connect(path)
        db.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
        db.commit()
        db.close()
        expected = CorruptData
    else:
        path.write_bytes(b"not a database, " * 512)
        expected = HippoError
    gc.disable()
    try:
        for read_only in (False, True):
            with pytest.raises(expected):
                Memory(path, read_only=read_only)
            assert _open_fds_on(path) == []
    finally:
        gc.enable()


@pytest.mark.parametrize("with_meta", [False, True])
def test_another_applications_sqlite_database_is_refused_and_left_as_it_was(tmp_path, with_meta) -> None:
    """A path naming an application's own SQLite database (by mistake) got hippo's tables added to it and was
    switched to WAL mode for good; with a table named meta, hippo wrote its schema version into it."""
    path = tmp_path / "app.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE bookmarks (id INTEGER PRIMARY KEY, url TEXT)")
    if with_meta:
        db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    db.execute("INSERT INTO bookmarks (url) VALUES ('https://example.com')")
    db.commit()
    db.close()
    before = path.read_bytes()
    for read_only in (True, False):
        with pytest.raises(InvalidInput, match="SQLite database of another application.*bookmarks"):
            Memory(path, read_only=read_only)
    assert path.read_bytes() == before
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    db.close()
    for empty in (tmp_path / "empty.db", tmp_path / "zero.db"):  # an empty database or file becomes a store
        if empty.name == "empty.db":
            sqlite3.connect(empty).close()
        else:
            empty.write_bytes(b"")
        with Memory(empty) as mem:
            mem.add("a store now")
        with Memory(empty, read_only=True) as mem:
            assert [it.text for it in mem.list()] == ["a store now"]


_NO_ROOM_AT_OPEN = r"""
import json, os, resource, signal, sys
from hippo import Memory, StoreError
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as on a full disk
path = sys.argv[1]
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]), hard))
try:
    Memory(path).close()
    error = None
except StoreError as exc:
    error = str(exc)
resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
with Memory(path) as mem:  # room again: the same path opens and stores
    mem.add("stored once there was room")
with Memory(path, read_only=True) as mem:
    texts = [it.text for it in mem.list()]
print(json.dumps({"error": error, "texts": texts}))
"""


@pytest.mark.parametrize("limit", [1000, 20_000])
def test_an_open_without_room_to_write_says_so(tmp_path, limit) -> None:
    """Without room for the first page (1 KB) or for the -shm index (20 KB), creating a store failed with SQLite's
    bare "disk I/O error"."""
    path = tmp_path / "room.db"
    proc = subprocess.run([sys.executable, "-c", _NO_ROOM_AT_OPEN, str(path), str(limit)], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["error"] is not None and "the disk is full, a file size limit was reached" in res["error"], res
    assert res["texts"] == ["stored once there was room"]


def test_a_relative_path_after_the_current_directory_was_removed_is_a_hippo_error(tmp_path, monkeypatch) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    for read_only in (False, True):
        with pytest.raises(HippoError):
            Memory("relative.db", read_only=read_only)
