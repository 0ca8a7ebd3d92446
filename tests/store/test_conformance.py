"""The store contract (``hippo.store.base.Store``), method by method, on every backend (the ``backend`` fixture).

The oracle is what was appended: every message read back byte for byte (tokens, metadata, times) whatever happened
to it in between (sealing, merging, deleting its neighbours, reopening), fingerprints that move exactly as the
contract says, and failed calls that leave the store as it was."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hippo import Config
from hippo.base.errors import Changed, CorruptData, InvalidInput, ReadOnlyError
from hippo.engine.prepare import prepare
from hippo.store import codec as codec_mod
from hippo.store import common
from hippo.store.base import Change, MessageRow, NewMessage, Store
from hippo.text import tokenizer

CFG = Config()
TEXTS = [
    "I adopted a border collie named Pixel last weekend.",
    "Zürich → Genève: 3 trains, ½ price, 東京 too 🐕",
    "log line 42: OK " * 40,
    "def f(x):\n    return x * 2  # tabs\tand spaces",
    "The teapot cracked in the kiln, so I'm making another one.",
]


def msg(text: str, **fields) -> NewMessage:
    return prepare({"text": text, **fields}, "add", CFG)


def batch(n: int, start: int = 0, tag: str = "m") -> list[NewMessage]:
    return [msg(f"{tag} {start + k}: " + TEXTS[(start + k) % len(TEXTS)], speaker=f"S{k % 3}",
                metadata={"k": start + k, "tag": tag}, timestamp=1_700_000_000 + 60 * (start + k),
                session_id=f"s{(start + k) // 4}") for k in range(n)]


def text_of(row) -> str:
    return tokenizer.decode(row.tokens)


def assert_same(rows, messages) -> None:
    assert len(rows) == len(messages)
    for r, m in zip(rows, messages):
        assert np.array_equal(r.tokens, m.tokens)
        assert (r.speaker, r.role, r.session_id, r.metadata) == (m.speaker, m.role, m.session_id, m.metadata)
        assert r.ts == m.ts and math.isclose(r.created_at, m.created_at)
        assert r.utc_offset == m.utc_offset


# -- append, load, rows, scan, state ------------------------------------------------------------------------------
def test_append_then_read_back_everything(store) -> None:
    msgs = batch(7)
    rows = store.append("a", msgs)
    assert [r.seq for r in rows] == list(range(7))
    assert len({r.id for r in rows}) == 7
    assert_same(rows, msgs)
    assert_same(store.load("a"), msgs)
    got = store.rows("a", [r.id for r in rows[::2]])
    assert sorted(got) == [r.id for r in rows[::2]]
    assert all(got[r.id].tokens is None and got[r.id].metadata == r.metadata for r in rows[::2])
    assert [r.id for r in store.scan("a")] == [r.id for r in rows]
    assert store.namespaces() == ["a"]
    assert store.state("a").next_seq == 7


def test_reopening_reads_the_same(backend) -> None:
    msgs = batch(9)
    with_store = backend.open()
    with_store.append("a", msgs[:5])
    with_store.seal("a", 1)
    with_store.append("a", msgs[5:])
    with_store.close()
    again = backend.open()
    try:
        assert_same(again.load("a"), msgs)
        assert again.state("a").next_seq == 9
    finally:
        again.close()


def test_the_offset_a_timestamp_was_given_with_is_kept(backend) -> None:
    # the oracle is what was given: -05:00, +05:45, Z and none at all, read back after sealing and a reopen
    stamps = ["2023-03-03T23:30-05:00", "2023-03-04T10:15+05:45", "2023-03-04T04:30Z", 1_677_904_200,
              "2023-03-04T04:30"]
    msgs = [msg(f"m {k}: " + TEXTS[k], timestamp=t) for k, t in enumerate(stamps)]
    assert [m.utc_offset for m in msgs] == [-18000.0, 20700.0, 0.0, None, None]
    st = backend.open()
    try:
        rows = st.append("a", msgs)
        assert_same(rows, msgs)
        assert_same(st.load("a"), msgs)
        st.seal("a", 1)
        assert_same(st.load("a"), msgs)
        assert [r.utc_offset for r in st.scan("a")] == [-18000.0, 20700.0, 0.0, None, None]
        assert [st.rows("a", [r.id])[r.id].utc_offset for r in rows] == [-18000.0, 20700.0, 0.0, None, None]
    finally:
        st.close()
    st = backend.open(read_only=True)
    try:
        assert_same(st.load("a"), msgs)
    finally:
        st.close()


def test_a_damaged_offset_is_refused_as_damage(backend) -> None:
    st = backend.open()
    try:
        rows = st.append("a", [msg("hello", timestamp="2023-03-03T23:30-05:00")])
        backend.sql("UPDATE messages SET utc_offset = ? WHERE id = ?", (90000.0, rows[0].id))
        with pytest.raises(CorruptData, match="utc_offset"):
            st.load("a")
    finally:
        st.close()


def test_state_moves_on_every_append_and_deletion(store) -> None:
    empty = store.state("a")
    assert empty.next_seq == 0
    store.append("a", batch(3))
    s1 = store.state("a")
    assert (s1.generation, s1.next_seq) == (empty.generation, 3)
    store.seal("a", 1)
    assert store.state("a") == s1  # sealing moves tokens, not messages
    rows = store.load("a")
    assert store.delete("a", [rows[1].id]) == [rows[1].id]
    s2 = store.state("a")
    assert (s2.generation, s2.next_seq) == (s1.generation + 1, 3)
    assert store.delete("a", [rows[1].id]) == []  # already gone: nothing changes
    assert store.state("a") == s2


def test_an_append_expecting_a_version_stores_only_while_it_is_the_latest(backend) -> None:
    """``append(expect=v)`` is a read and the write it decides made one step: it stores while the namespace's latest
    change is ``v``, and once another handle (another process) changed the namespace it raises ``Changed`` and
    stores nothing, the namespace's first message and a deletion included."""
    first, other = backend.open(), backend.open()
    try:
        before = first.state("a").version  # a namespace without messages: the version it starts from
        rows = first.append("a", batch(2), expect=before)
        assert first.state("a").version == before + 1 and [r.seq for r in rows] == [0, 1]
        other.append("a", batch(1, start=2))  # another handle: the version read before it is stale
        with pytest.raises(Changed):
            first.append("a", batch(1, start=3), expect=before + 1)
        assert [text_of(r) for r in first.load("a")] == [text_of(r) for r in first.load("a", upto_seq=2)]
        assert len(first.load("a")) == 3 and first.state("a").version == before + 2
        other.delete("a", [rows[0].id])
        with pytest.raises(Changed):
            first.append("a", batch(1, start=3), expect=before + 2)
        assert first.append("a", batch(1, start=3), expect=before + 3)[0].seq == 3
        assert [r.seq for r in first.load("a")] == [1, 2, 3]
    finally:
        first.close()
        other.close()


def test_empty_calls_change_nothing(store) -> None:
    assert store.append("a", []) == []
    assert store.delete("a", []) == []
    assert store.load("a") == [] and store.rows("a", []) == {} and list(store.scan("a")) == []
    assert store.seal("a", 1) == 0
    assert store.namespaces() == []


def test_codes_count_must_match_messages(store) -> None:
    with pytest.raises(InvalidInput, match="codes"):
        store.append("a", batch(2), codes=np.zeros((3, 8), np.uint8))
    assert store.load("a") == []


# -- replace: an append and a deletion in one transaction ---------------------------------------------------------
def test_replace_appends_and_deletes_in_one_change_of_the_feed_each(store) -> None:
    """``replace`` stores the new messages and deletes the given ones in one transaction: the feed records the
    append, then the deletion; what is left is the old messages not replaced, then the new ones."""
    old = batch(4)
    rows = store.append("a", old)
    store.seal("a", 1)  # the replaced messages sit in a chunk: it is rewritten in the same transaction
    before = store.state("a")
    new = batch(2, start=10, tag="n")
    added, gone = store.replace("a", new, [rows[1].id, rows[3].id, 10_000])
    assert gone == sorted([rows[1].id, rows[3].id])
    assert [r.seq for r in added] == [4, 5]
    after = store.state("a")
    assert (after.version, after.generation, after.next_seq) == (before.version + 2, before.generation + 1, 6)
    feed = store.changes("a", before.version, before.stamp)
    assert [(c.kind, c.first_seq, c.last_seq, c.ids) for c in feed] == [
        ("append", 4, 5, ()), ("delete", -1, -1, tuple(gone))]
    assert_same(store.load("a"), [old[0], old[2], *new])


def test_replace_judges_the_replaced_rows_in_its_transaction_and_never_takes_its_own(backend) -> None:
    """With ``where``, only the rows that satisfy it when the transaction runs go; with ``after_seq``, also the rows
    another handle appended after the caller read the namespace; never the rows the call itself stores, even when
    they would match."""
    first, other = backend.open(), backend.open()
    try:
        rows = first.append("a", batch(3))
        seen = first.state("a").next_seq
        late = other.append("a", batch(2, start=3))  # appended after the caller's read
        other.update_metadata("a", rows[0].id, {"k": 0, "tag": "kept"})  # no longer matches

        def tagged(row) -> bool:
            return row.metadata.get("tag") == "m"

        added, gone = first.replace("a", batch(2, start=5), [rows[0].id, rows[1].id], where=tagged, after_seq=seen)
        assert gone == sorted([rows[1].id, *(r.id for r in late)])
        assert [r.metadata["tag"] for r in first.load("a")] == ["kept", "m", "m", "m"]
        assert [r.id for r in first.load("a")] == [rows[0].id, rows[2].id, *(r.id for r in added)]
        # nothing to delete: the append alone, one change
        v = first.state("a").version
        assert first.replace("a", batch(1, start=7), [10_000])[1] == []
        assert [c.kind for c in first.changes("a", v)] == ["append"]
        # nothing to append: the deletion alone
        assert first.replace("a", [], [added[0].id]) == ([], [added[0].id])
        assert first.state("a").version == v + 2
    finally:
        first.close()
        other.close()


def test_replace_expecting_a_version_changes_nothing_once_another_handle_wrote(backend) -> None:
    first, other = backend.open(), backend.open()
    try:
        rows = first.append("a", batch(3))
        v = first.state("a").version
        other.append("a", batch(1, start=3))
        for new in (batch(1, start=4), []):
            with pytest.raises(Changed):
                first.replace("a", new, [rows[0].id], expect=v)
        assert len(first.load("a")) == 4 and first.state("a").version == v + 1
        added, gone = first.replace("a", batch(1, start=4), [rows[0].id], expect=v + 1)
        assert gone == [rows[0].id] and first.state("a").version == v + 3
    finally:
        first.close()
        other.close()


def _fail_replace_at(store, monkeypatch, step: str) -> None:
    from hippo.store import sqlite

    boom = OSError(f"simulated failure: {step}")

    def fail(*args, **kwargs):
        raise boom

    if step == "append":  # storing the new messages' tokens
        monkeypatch.setattr(sqlite, "tail_checksum", fail)
        monkeypatch.setattr(common, "tail_checksum", fail)
    elif step == "chunk":  # rewriting the chunk that held a replaced message
        monkeypatch.setattr(store.codec, "encode", fail)
    elif step == "record":  # recording the deletion in the feed, after everything else
        real = type(store)._record

        def record(self, cur, namespace, kind, *args, **kwargs):
            if kind == "delete":
                raise boom
            return real(self, cur, namespace, kind, *args, **kwargs)

        monkeypatch.setattr(type(store), "_record", record)
    else:
        assert step == "judge"


@pytest.mark.parametrize("step", ["judge", "append", "chunk", "record"])
def test_a_replace_failing_at_any_step_changes_nothing(store, monkeypatch, step) -> None:
    old = batch(5)
    rows = store.append("a", old)
    store.seal("a", 1)
    before = store.state("a")
    _fail_replace_at(store, monkeypatch, step)

    def where(row) -> bool:
        if step == "judge":
            raise OSError("simulated failure: judge")
        return True

    with pytest.raises(OSError, match=step):
        store.replace("a", batch(2, start=10, tag="n"), [rows[1].id, rows[2].id], where=where)
    monkeypatch.undo()
    assert store.state("a") == before
    assert_same(store.load("a"), old)
    assert store.changes("a", before.version, before.stamp) == []


# -- sealing and merging ------------------------------------------------------------------------------------------
def test_seal_moves_the_tail_into_chunks_and_reads_stay_identical(store) -> None:
    msgs = batch(4)
    store.append("a", msgs)
    total = sum(m.tokens.size for m in msgs)
    assert store.seal("a", total + 1) == 0  # below the threshold: the tail stays
    assert store.sizes()["chunks"] == 0
    assert store.seal("a", total) == total
    sizes = store.sizes()
    assert sizes["chunks"] == 1 and sizes["tail_token_bytes"] == 0
    assert_same(store.load("a"), msgs)


def test_chunks_merge_geometrically(store) -> None:
    msgs = []
    for k in range(24):
        part = batch(2, start=2 * k)
        msgs += part
        store.append("a", part)
        store.seal("a", 1)
    chunks = store_chunks(store, "a")
    # sizes at least double from newest to oldest, so there are O(log n) chunks
    for older, newer in zip(chunks, chunks[1:]):
        assert older[1] > 2 * newer[1], chunks
    assert len(chunks) <= math.log2(sum(m.tokens.size for m in msgs)) + 1
    assert_same(store.load("a"), msgs)


def store_chunks(store, namespace: str) -> list[tuple[int, int]]:
    """(first_seq, n_tokens) of each chunk, oldest first, through the store's own verification path."""
    raw = [(r.id, r.seq, r.n_tokens) for r in store.scan(namespace)]
    out = []
    if hasattr(store, "_db"):
        rows = store._db.execute("SELECT first_seq, n_tokens FROM chunks WHERE namespace = ? ORDER BY first_seq",
                                 (namespace,)).fetchall()
    else:
        rows = store._query("SELECT first_seq, n_tokens FROM {s}.chunks WHERE namespace = %s ORDER BY first_seq",
                            (namespace,))
    out = [(int(a), int(b)) for a, b in rows]
    assert sum(b for _, b in out) <= sum(n for _, _, n in raw)
    return out


def test_load_ranges_equal_slices_of_the_full_load(store) -> None:
    msgs = []
    for k, n in enumerate((3, 1, 4, 2, 5)):
        part = batch(n, start=len(msgs))
        msgs += part
        store.append("a", part)
        if k < 4:
            store.seal("a", 1)  # chunks of several sizes, merged, then an unsealed tail
    full = store.load("a")
    assert_same(full, msgs)
    n = len(msgs)
    for after in range(-1, n):
        got = store.load("a", after_seq=after)
        assert [r.seq for r in got] == list(range(after + 1, n))
        assert_same(got, msgs[after + 1:])
    if _has_feed(store):
        for after in range(-1, n):
            for upto in range(after, n + 1):
                got = store.load("a", after_seq=after, upto_seq=upto)
                assert_same(got, msgs[after + 1:upto + 1])
        expected = np.concatenate([m.tokens for m in msgs])
        assert np.array_equal(store.load_tokens("a"), expected)


# -- deletions and metadata ---------------------------------------------------------------------------------------
def test_delete_rewrites_chunks_and_keeps_every_other_message(store) -> None:
    msgs = batch(12)
    store.append("a", msgs[:8])
    store.seal("a", 1)
    store.append("a", msgs[8:])
    rows = store.load("a")
    dead = {rows[0].id, rows[3].id, rows[7].id, rows[9].id}  # in the chunk, at its ends, and in the tail
    assert store.delete("a", sorted(dead) + [10 ** 9]) == sorted(dead)
    kept = [(r, m) for r, m in zip(rows, msgs) if r.id not in dead]
    assert_same(store.load("a"), [m for _, m in kept])
    assert [r.id for r in store.scan("a")] == [r.id for r, _ in kept]
    assert store.rows("a", dead) == {}
    store.seal("a", 1)  # the rewritten chunk and the rest of the tail merge cleanly
    assert_same(store.load("a"), [m for _, m in kept])


def test_delete_with_choose_decides_on_the_rows_as_they_are_when_deleted(store) -> None:
    """``choose`` is given the rows of the ids found (those ``where`` admits), in seq order, read in the deleting
    transaction (an update made after the caller read them included), and only the ids it returns are deleted;
    when it returns none, nothing is deleted and no change is recorded."""
    msgs = batch(6)
    store.append("a", msgs[:4])
    store.seal("a", 1)
    store.append("a", msgs[4:])
    rows = store.load("a")
    assert store.update_metadata("a", rows[2].id, {"k": 2, "tag": "kept"})
    seen: list[list[tuple[int, str]]] = []

    def whole_tag_if_all_m(given):
        seen.append([(r.id, r.metadata["tag"]) for r in given])
        return [r.id for r in given] if all(r.metadata["tag"] == "m" for r in given) else [given[-1].id, 10 ** 9]

    ids = [r.id for r in reversed(rows)] + [10 ** 9]
    assert store.delete("a", ids, where=lambda r: r.metadata["k"] != 0, choose=whole_tag_if_all_m) == [rows[5].id]
    assert seen == [[(r.id, "kept" if r.id == rows[2].id else "m") for r in rows[1:]]]
    version = store.state("a").version
    assert store.delete("a", ids, choose=lambda given: []) == [] and store.state("a").version == version
    assert [r.id for r in store.scan("a")] == [r.id for r in rows[:5]]
    assert [text_of(r) for r in store.load("a")] == [text_of(r) for r in rows[:5]]


def test_chunks_stay_within_the_bound_and_a_delete_rewrites_only_its_chunk(store, monkeypatch) -> None:
    """A seal of a long tail and the merges after it make chunks of at most ``CHUNK_TOKENS`` tokens (a longer
    message alone); a deletion re-encodes the chunk of its message only (fewer tokens than the bound), and a chunk
    larger than the bound (written before there was one) is split when a deletion rewrites it. The reference: the
    messages themselves."""
    bound = 120
    encoded: list[int] = []
    encode = codec_mod.ChunkCodec.encode
    monkeypatch.setattr(codec_mod.ChunkCodec, "encode", lambda self, tokens: encoded.append(len(tokens)) or
                        encode(self, tokens))
    msgs = batch(40)
    store.append("a", msgs[:30])
    store.seal("a", 1)  # one seal of a tail several times the bound, made before the bound existed
    assert store_chunks(store, "a") == [(0, sum(m.tokens.size for m in msgs[:30]))]
    monkeypatch.setattr(common, "CHUNK_TOKENS", bound, raising=False)
    store.append("a", msgs[30:])
    store.seal("a", 1)
    rows = store.load("a")
    dead = {rows[4].id}
    encoded.clear()
    assert store.delete("a", sorted(dead)) == sorted(dead)  # the old chunk is rewritten in parts within the bound
    chunks = store_chunks(store, "a")
    sizes = {r.id: r.tokens.size for r in rows}
    longest = max(sizes.values())
    assert all(n <= max(bound, longest) for _, n in chunks[:-1]) and len(chunks) > 2
    kept = [m for r, m in zip(rows, msgs) if r.id not in dead]
    assert_same(store.load("a"), kept)
    for k in (17, 33):
        dead.add(rows[k].id)
        encoded.clear()
        assert store.delete("a", [rows[k].id]) == [rows[k].id]
        assert sum(encoded) <= max(bound, longest)  # one chunk within the bound, whatever the namespace holds
    kept = [m for r, m in zip(rows, msgs) if r.id not in dead]
    assert_same(store.load("a"), kept)
    assert [r.id for r in store.scan("a")] == [r.id for r in rows if r.id not in dead]
    more = batch(30, start=40)
    store.append("a", more)
    store.seal("a", 1)
    assert all(n <= max(bound, longest) for _, n in store_chunks(store, "a"))
    assert_same(store.load("a"), kept + more)


def test_deleting_every_sealed_message_leaves_no_chunk(store) -> None:
    store.append("a", batch(3))
    store.seal("a", 1)
    ids = [r.id for r in store.load("a")]
    assert store.delete("a", ids) == ids
    assert store.sizes()["chunks"] == 0 and store.load("a") == []
    assert store.namespaces() == []


def test_update_metadata(store) -> None:
    rows = store.append("a", batch(2))
    assert store.update_metadata("a", rows[0].id, {"new": [1, "ü"]}) is True
    assert store.rows("a", [rows[0].id])[rows[0].id].metadata == {"new": [1, "ü"]}
    assert store.update_metadata("a", 10 ** 9, {"x": 1}) is False
    assert store.update_metadata("b", rows[1].id, {"x": 1}) is False  # not a message of namespace b
    assert store.rows("a", [rows[1].id])[rows[1].id].metadata == rows[1].metadata


def test_rows_mentioning_are_the_rows_whose_stored_metadata_holds_a_needle(store) -> None:
    """Every row of the namespace whose metadata text holds one of the needles, in seq order, without tokens; a
    needle in a nested value or a longer key is found too (the caller decides on the metadata), and other
    namespaces' rows, case variants and rows without the text are not."""
    metas = [{"bot": True}, {"Bot": True}, {"type": "tool_result"}, {"k": 1}, {"x": {"bot": False}},
             {"robot": 1}, {"note": "the \"bot\" said ü"}, {}]
    rows = store.append("a", [msg(f"m{k}", metadata=m) for k, m in enumerate(metas)])
    store.seal("a", 1)
    other = store.append("b", [msg("b0", metadata={"bot": True})])
    found = store.rows_mentioning("a", ['"bot"', '"tool_result"'])
    assert [r.id for r in found] == [rows[k].id for k in (0, 2, 4)]
    assert [r.metadata for r in found] == [metas[k] for k in (0, 2, 4)]
    assert all(r.tokens is None or len(r.tokens) == 0 for r in found)
    assert [r.id for r in store.rows_mentioning("b", ['"bot"'])] == [other[0].id]
    assert store.rows_mentioning("a", []) == [] and store.rows_mentioning("c", ['"bot"']) == []
    assert [r.id for r in store.rows_mentioning("a", ["ü"])] == [rows[6].id]
    # the default of a store that does not ask its database (every row read, its metadata written as JSON) agrees
    for needles in (['"bot"', '"tool_result"'], ["ü"], []):
        assert [r.id for r in Store.rows_mentioning(store, "a", needles)] == \
            [r.id for r in store.rows_mentioning("a", needles)]


# -- namespaces ---------------------------------------------------------------------------------------------------
def test_namespaces_never_leak_into_each_other(store) -> None:
    a, b = batch(5, tag="alpha"), batch(4, tag="beta")
    ra, rb = [], []
    for k in range(5):  # interleaved, so ids and seqs of both namespaces interleave too
        ra += store.append("alpha", a[k:k + 1])
        if k < 4:
            rb += store.append("beta", b[k:k + 1])
        if k == 2:
            store.seal("alpha", 1)
    store.put_units("alpha", "hierarchy", b"A")
    store.put_codes("alpha", [r.id for r in ra], np.ones((5, 8), np.uint8))
    assert_same(store.load("alpha"), a) and assert_same(store.load("beta"), b)
    assert store.rows("alpha", [r.id for r in rb]) == {}
    assert store.delete("alpha", [r.id for r in rb]) == []
    assert store.update_metadata("alpha", rb[0].id, {}) is False
    assert store.get_units("beta", "hierarchy") is None and store.get_codes("beta") == {}
    assert store.namespaces() == ["alpha", "beta"]
    assert store.delete_namespace("alpha") == 5
    assert store.namespaces() == ["beta"]
    assert store.load("alpha") == [] and store.get_units("alpha", "hierarchy") is None
    assert store.get_codes("alpha") == {}
    assert_same(store.load("beta"), b)


def test_a_deleted_namespace_reused_by_name_gets_a_new_fingerprint(store) -> None:
    store.append("a", batch(3))
    before = store.state("a")
    assert store.delete_namespace("a") == 3
    assert store.delete_namespace("a") == 0
    store.append("a", batch(3))
    after = store.state("a")
    # same next_seq, so only the generation tells a process holding the old namespace to reload
    assert after.next_seq == before.next_seq and after.generation > before.generation


# -- derived data -------------------------------------------------------------------------------------------------
def test_codes_and_units(store) -> None:
    rows = store.append("a", batch(3), codes=np.arange(24, dtype=np.uint8).reshape(3, 8))
    codes = store.get_codes("a")
    assert codes == {r.id: bytes(range(8 * k, 8 * k + 8)) for k, r in enumerate(rows)}
    store.put_codes("a", [rows[0].id], np.full((1, 8), 255, np.uint8))
    assert store.get_codes("a")[rows[0].id] == b"\xff" * 8
    store.drop_codes("a", [rows[1].id])
    assert sorted(store.get_codes("a")) == [rows[0].id, rows[2].id]
    other = store.append("b", batch(1), codes=np.zeros((1, 8), np.uint8))
    # by id, within the namespace: the default of the contract (every code, filtered) gives the same
    wanted = [rows[2].id, rows[1].id, other[0].id, 10**9]
    assert store.codes_of("a", wanted) == {rows[2].id: bytes(range(16, 24))}
    assert Store.codes_of(store, "a", wanted) == store.codes_of("a", wanted)
    assert store.codes_of("a", []) == {}
    store.delete("a", [rows[2].id])
    assert sorted(store.get_codes("a")) == [rows[0].id]  # codes go with their message
    payload = bytes(range(256)) * 100
    assert not store.has_units("a", "hierarchy")
    store.put_units("a", "hierarchy", payload)
    assert store.get_units("a", "hierarchy") == payload
    assert store.has_units("a", "hierarchy") and not store.has_units("b", "hierarchy")
    assert not store.has_units("a", "decay")
    store.put_units("a", "hierarchy", b"v2")
    assert store.get_units("a", "hierarchy") == b"v2"
    store.drop_units("a", "hierarchy")
    assert store.get_units("a", "hierarchy") is None and not store.has_units("a", "hierarchy")


def test_codes_of_deleted_messages_are_not_stored(store) -> None:
    rows = store.append("a", batch(3))
    store.delete("a", [rows[1].id])
    codes = np.arange(3 * 8, dtype=np.uint8).reshape(3, 8)
    store.put_codes("a", [r.id for r in rows], codes)  # computed before the deletion, saved after it
    assert store.get_codes("a") == {rows[0].id: bytes(codes[0]), rows[2].id: bytes(codes[2])}
    store.put_codes("b", [rows[0].id], codes[:1])  # nor under another namespace's name
    assert store.get_codes("b") == {}


def test_put_units_many_is_one_transaction(store) -> None:
    if not hasattr(store, "put_units_many"):
        pytest.skip(f"{type(store).__name__} on this branch has no put_units_many yet (it comes with the change feed)")
    store.put_units("a", "x", b"old")
    store.put_units_many("a", {"x": None, "y": b"Y", "z": b"Z"})
    assert (store.get_units("a", "x"), store.get_units("a", "y"), store.get_units("a", "z")) == (None, b"Y", b"Z")


def test_put_units_many_at_a_generation_writes_nothing_after_a_deletion(store) -> None:
    rows = store.append("a", batch(3))
    before = store.state("a").generation
    assert store.put_units_many("a", {"x": b"X1"}, generation=before) is True
    store.append("a", batch(1, 3))  # appends keep the generation
    assert store.put_units_many("a", {"x": b"X2"}, generation=before) is True
    store.delete("a", [rows[0].id])
    assert store.put_units_many("a", {"x": b"stale", "y": b"Y"}, generation=before) is False
    assert (store.get_units("a", "x"), store.get_units("a", "y")) == (b"X2", None)
    now = store.state("a").generation
    store.delete_namespace("a")
    assert store.put_units_many("a", {"x": b"stale"}, generation=now) is False
    assert store.get_units("a", "x") is None


def test_put_units_many_at_a_version_writes_nothing_after_any_change(store) -> None:
    rows = store.append("a", batch(3))
    seen = store.state("a").version
    assert store.put_units_many("a", {"x": b"X1"}, version=seen) is True
    store.append("a", batch(1, 3))  # another handle's append: blobs derived before it replace nothing
    assert store.put_units_many("a", {"x": b"older", "y": b"Y"}, version=seen) is False
    assert (store.get_units("a", "x"), store.get_units("a", "y")) == (b"X1", None)
    now = store.state("a")
    assert store.put_units_many("a", {"x": b"X2"}, generation=now.generation, version=now.version) is True
    store.update_metadata("a", rows[0].id, {"k": 1})
    assert store.put_units_many("a", {"x": b"older"}, generation=now.generation, version=now.version) is False
    assert store.get_units("a", "x") == b"X2"


def test_put_units_many_expecting_blobs_writes_only_over_them(store) -> None:
    """``expect`` names the first bytes of the blob each kind must still hold (None: none stored); a handle that
    merged another handle's saved blobs replaces them only if nobody saved again in between."""
    store.append("a", batch(2))
    assert store.put_units_many("a", {"x": b"HEAD-1 body", "y": b"Y1"}, expect={"x": None}) is True
    assert store.put_units_many("a", {"x": b"HEAD-2 other"}, expect={"x": None}) is False  # one is stored now
    assert store.put_units_many("a", {"x": b"HEAD-2 other"}, expect={"x": b"HEAD-2"}) is False  # not that one
    assert store.put_units_many("a", {"x": b"HEAD-2 other"}, expect={"x": b"HEAD-1 body and more"}) is False
    assert store.get_units("a", "x") == b"HEAD-1 body"
    state = store.state("a")
    assert store.put_units_many("a", {"x": b"HEAD-2 other", "y": None}, generation=state.generation,
                                version=state.version, expect={"x": b"HEAD-1", "y": b"Y1"}) is True
    assert (store.get_units("a", "x"), store.get_units("a", "y")) == (b"HEAD-2 other", None)
    assert store.put_units_many("a", {"x": b"HEAD-3"}, expect={"x": b"HEAD-2", "y": b"Y1"}) is False  # y is gone
    assert store.put_units_many("a", {"x": b"HEAD-3"}, expect={"x": b"HEAD-2", "y": None}) is True
    assert store.put_units_many("b", {"x": b"HEAD-9"}, expect={"x": b"HEAD-3"}) is False  # per namespace
    assert store.get_units("a", "x") == b"HEAD-3" and store.get_units("b", "x") is None


# -- the change feed ----------------------------------------------------------------------------------------------
def _has_feed(store) -> bool:
    return callable(getattr(store, "changes", None))


def test_change_feed_records_every_change_in_order(store) -> None:
    if not _has_feed(store):
        pytest.skip(f"{type(store).__name__} on this branch has no change feed yet")
    assert store.changes("a", 0) == []  # never written: nothing to catch up on
    rows = store.append("a", batch(3))
    store.append("a", batch(2, start=3))
    store.seal("a", 1)  # moves tokens only: no change
    store.update_metadata("a", rows[1].id, {"u": 1})
    store.delete("a", [rows[0].id, rows[2].id])
    head = store.state("a").version
    feed = store.changes("a", head - 4)
    assert [(c.kind, c.first_seq, c.last_seq, c.ids) for c in feed] == [
        ("append", 0, 2, ()), ("append", 3, 4, ()), ("update", -1, -1, (rows[1].id,)),
        ("delete", -1, -1, (rows[0].id, rows[2].id))]
    assert [c.version for c in feed] == list(range(head - 3, head + 1))
    assert store.changes("a", head) == []
    assert store.changes("a", head + 1) is None  # from the future: the reader must rebuild
    assert store.trim_changes("a", head - 2) == 2
    assert store.changes("a", head - 3) is None  # trimmed: no longer reaches back
    assert store.changes("a", head - 2) == feed[2:]
    assert all(isinstance(c, Change) for c in feed)


def test_change_feed_of_a_deleted_namespace_does_not_reach_back(store) -> None:
    if not _has_feed(store):
        pytest.skip(f"{type(store).__name__} on this branch has no change feed yet")
    store.append("a", batch(2))
    seen = store.state("a").version
    store.delete_namespace("a")
    store.append("a", batch(2))
    assert store.changes("a", seen) is None
    assert store.state("a").version > seen


def test_reading_block_sees_one_state(backend) -> None:
    st, other = backend.open(), backend.open()
    try:
        if not callable(getattr(st, "reading", None)):
            pytest.skip(f"{type(st).__name__} on this branch has no reading() block yet")
        st.append("a", batch(2))
        with st.reading():
            before = st.state("a")
            other.append("a", batch(2, start=2))  # another process writes meanwhile
            assert st.state("a") == before
            assert len(st.load("a")) == 2
        assert st.state("a").next_seq == 4 and len(st.load("a")) == 4
    finally:
        st.close()
        other.close()


# -- crash safety: a call that raised stored nothing ---------------------------------------------------------------
def test_a_failing_append_stores_nothing(store, monkeypatch) -> None:
    store.append("a", batch(2))
    before, loaded = store.state("a"), store.load("a")
    calls = {"n": 0}
    real = common.tail_checksum

    def fail_on_third(*args):
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError("simulated failure inside the transaction")
        return real(*args)

    monkeypatch.setattr(common, "tail_checksum", fail_on_third)
    for mod in ("hippo.store.sqlite", "hippo.store.postgres"):
        try:
            monkeypatch.setattr(f"{mod}.tail_checksum", fail_on_third, raising=False)
        except ImportError:
            pass
    with pytest.raises(OSError, match="simulated"):
        store.append("a", batch(4, start=2))
    monkeypatch.undo()
    assert store.state("a") == before
    assert_same(store.load("a"), loaded_as_messages(loaded))


def loaded_as_messages(rows) -> list[NewMessage]:
    return [NewMessage(tokens=r.tokens, speaker=r.speaker, role=r.role, ts=r.ts, session_id=r.session_id,
                       metadata=r.metadata, created_at=r.created_at) for r in rows]


def test_a_failing_seal_or_delete_changes_nothing(store, monkeypatch) -> None:
    msgs = batch(6)
    store.append("a", msgs[:4])
    store.seal("a", 1)
    store.append("a", msgs[4:])
    before = store.state("a")
    monkeypatch.setattr(store.codec, "encode", lambda tokens: (_ for _ in ()).throw(OSError("simulated")))
    with pytest.raises(OSError):
        store.seal("a", 1)
    ids = [r.id for r in store.load("a")]
    with pytest.raises(OSError):
        store.delete("a", [ids[1]])  # its chunk must be rewritten: the encoder fails inside the transaction
    monkeypatch.undo()
    assert store.state("a") == before
    assert_same(store.load("a"), msgs)
    assert store.sizes()["chunks"] == 1


# -- checksums ----------------------------------------------------------------------------------------------------
def test_a_damaged_tail_row_is_corrupt_data(backend) -> None:
    st = backend.open()
    try:
        rows = st.append("a", batch(3))
        blob = backend.sql("SELECT tokens FROM tail WHERE id = ?", (rows[1].id,))[0][0]
        flipped = bytes([blob[0] ^ 1]) + bytes(blob[1:])
        backend.sql("UPDATE tail SET tokens = ? WHERE id = ?", (flipped, rows[1].id))
        with pytest.raises(CorruptData, match=f"message {rows[1].id}.*checksum"):
            st.load("a")
        report = st.verify_namespace("a", lambda i, t: None, None)
        assert [d["id"] for d in report["tail"]["damaged"]] == [rows[1].id]
        with pytest.raises(CorruptData):
            st.seal("a", 1)  # never sealed into a chunk with a fresh checksum
    finally:
        st.close()


def test_moved_message_boundaries_in_a_chunk_are_corrupt_data(backend) -> None:
    st = backend.open()
    try:
        rows = st.append("a", batch(4))
        st.seal("a", 1)
        # two messages trade their n_tokens: every byte of the chunk is intact, the texts would not be
        n1, n2 = rows[1].n_tokens, rows[2].n_tokens
        assert n1 != n2
        backend.sql("UPDATE messages SET n_tokens = ? WHERE id = ?", (n2, rows[1].id))
        backend.sql("UPDATE messages SET n_tokens = ? WHERE id = ?", (n1, rows[2].id))
        with pytest.raises(CorruptData, match="checksum"):
            st.load("a")
        report = st.verify_namespace("a", lambda i, t: None, None)
        assert len(report["chunks"]["damaged"]) == 1
        with pytest.raises(CorruptData):
            st.delete("a", [rows[0].id])
        assert len(list(st.scan("a"))) == 4  # the refused delete removed nothing
    finally:
        st.close()


def test_a_damaged_chunk_blob_is_corrupt_data(backend) -> None:
    st = backend.open()
    try:
        st.append("a", batch(4))
        st.seal("a", 1)
        blob = backend.sql("SELECT blob FROM chunks")[0][0]
        backend.sql("UPDATE chunks SET blob = ?", (bytes(blob[:-3]) + b"\x00\x00\x00",))
        with pytest.raises(CorruptData):
            st.load("a")
        assert st.verify_namespace("a", lambda i, t: None, None)["chunks"]["damaged"]
    finally:
        st.close()


def test_checksums_are_the_same_on_every_backend(backend) -> None:
    """The stored checksums are the functions of hippo.store.common (one definition for every store)."""
    st = backend.open()
    try:
        rows = st.append("ns", batch(3))
        for r in rows:
            stored = backend.sql("SELECT checksum, tokens FROM tail WHERE id = ?", (r.id,))[0]
            assert bytes(stored[0]) == common.tail_checksum("ns", r.id, r.seq, r.n_tokens, bytes(stored[1]))
        st.seal("ns", 1)
        first, last, n_msg, n_tok, blob, checksum = backend.sql(
            "SELECT first_seq, last_seq, n_messages, n_tokens, blob, checksum FROM chunks")[0]
        members = [(r.id, r.seq, r.n_tokens) for r in rows]
        assert bytes(checksum) == common.chunk_checksum("ns", first, last, n_msg, n_tok, members, bytes(blob))
        assert np.array_equal(codec_mod.decode(bytes(blob)), np.concatenate([r.tokens for r in rows]))
    finally:
        st.close()


# -- read-only ----------------------------------------------------------------------------------------------------
def test_read_only_reads_and_refuses_every_write(backend) -> None:
    st = backend.open()
    msgs = batch(3)
    rows = st.append("a", msgs)
    st.close()
    ro = backend.open(read_only=True)
    try:
        assert ro.read_only
        assert_same(ro.load("a"), msgs)
        assert ro.namespaces() == ["a"] and ro.state("a").next_seq == 3
        for call in (lambda: ro.append("a", batch(1)), lambda: ro.seal("a", 1), lambda: ro.delete("a", [rows[0].id]),
                     lambda: ro.update_metadata("a", rows[0].id, {}), lambda: ro.delete_namespace("a"),
                     lambda: ro.put_units("a", "k", b"x"), lambda: ro.vacuum()):
            with pytest.raises(ReadOnlyError):
                call()
        assert_same(ro.load("a"), msgs)
    finally:
        ro.close()


def test_sizes_count_what_is_stored(store) -> None:
    msgs = batch(5)
    store.append("a", msgs)
    sizes = store.sizes()
    assert sizes["messages"] == 5 and sizes["tokens"] == sum(m.tokens.size for m in msgs)
    assert sizes["tail_token_bytes"] == 4 * sum(m.tokens.size for m in msgs)
    assert sizes["file_bytes"] > 0
    store.seal("a", 1)
    sizes = store.sizes()
    assert sizes["tail_token_bytes"] == 0 and sizes["chunks"] == 1 and sizes["chunk_bytes"] > 0
    store.vacuum()
    assert_same(store.load("a"), msgs)


# -- hostile input ------------------------------------------------------------------------------------------------
HOSTILE_NAMESPACES = ["a'b\"c; DROP TABLE messages; --", "ns with spaces/and\\slashes", "名前空間 🐘", "%s %(x)s ?",
                      "x" * 512]


def test_hostile_namespaces_are_data_never_sql(store) -> None:
    for k, ns in enumerate(HOSTILE_NAMESPACES):
        store.append(ns, batch(2, start=2 * k, tag=ns[:8]))
        store.seal(ns, 1)
    assert sorted(store.namespaces()) == sorted(HOSTILE_NAMESPACES)
    for k, ns in enumerate(HOSTILE_NAMESPACES):
        assert_same(store.load(ns), batch(2, start=2 * k, tag=ns[:8]))
    victim = HOSTILE_NAMESPACES[0]
    assert store.delete_namespace(victim) == 2
    assert sorted(store.namespaces()) == sorted(HOSTILE_NAMESPACES[1:])


def test_a_large_repetitive_message_round_trips(store) -> None:
    big = msg("ERROR 504 gateway timeout while calling /v1/orders?page=17\n" * 40_000 + "end of log")
    small = batch(2)
    store.append("logs", [small[0], big, small[1]])
    assert_same(store.load("logs"), [small[0], big, small[1]])
    store.seal("logs", 1)
    assert store.sizes()["chunk_bytes"] < big.tokens.size  # repetitive text deflates far below a byte per token
    assert_same(store.load("logs"), [small[0], big, small[1]])
    assert text_of(store.load("logs", after_seq=0)[0]).endswith("end of log")


def test_rows_compare_by_their_contents(store) -> None:
    """Rows and new messages compare field by field, their tokens by value: a row equals a copy of itself whose
    token array is another object, and differs from one whose tokens differ. Comparing two rows raised
    ``ValueError`` (the dataclass compared the token arrays with ``==``; on Python 3.13 even one array both share)."""
    msgs = batch(3)
    rows = store.append("a", msgs)
    shared = MessageRow(**vars(rows[0]))
    assert shared == rows[0] and rows[0] != rows[1] and rows[0] != "a row"
    copy = MessageRow(**{**vars(rows[0]), "tokens": np.array(rows[0].tokens, copy=True)})
    assert copy == rows[0] and [copy, *rows[1:]] == rows
    copy.tokens = copy.tokens[:-1]
    assert copy != rows[0]
    copy.tokens = None
    assert copy != rows[0] and rows[0] != copy
    assert msgs[0] == NewMessage(**{**vars(msgs[0]), "tokens": np.array(msgs[0].tokens, copy=True)})
    assert msgs[0] != msgs[1]
