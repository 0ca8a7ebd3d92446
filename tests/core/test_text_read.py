"""Reading stored messages back as text: the C byte-table gather (``ByteTable``), the many-range read of a wavelet
matrix (``access_ranges``) and the index's ``text_of`` / ``texts_of`` / ``texts`` built on them, each checked
against an independent reference: tiktoken's own decoder, range-by-range reads, and the texts that were added."""

from __future__ import annotations

import random

import numpy as np
import pytest

from hippo import CorruptData, DynamicWaveletMatrix, InvalidInput, Memory, OutOfRange, WaveletMatrix
from hippo.index import coindex
from hippo.native import ByteTable
from hippo.text import tokenizer

TEXTS = [
    "Plain English, with a comma; and a semicolon.",
    "naïve café — “quoted” ‘text’ … ellipsis",
    "東京で会いましょう。寿司が好きです。",
    "Привет, как дела? Всё хорошо.",
    "مرحبا بالعالم",
    "emoji 🦛🙂👩‍👩‍👧 and flags 🇵🇹",
    "code:\n```python\ndef f(x):\n\treturn x ** 2  # square\n```\n",
    "नमस्ते दुनिया",
    "x",
]


def test_byte_table_join_equals_tiktoken() -> None:
    enc = tokenizer.encoding()
    table = ByteTable(tokenizer.token_bytes())
    assert len(table) == enc.n_vocab
    rng = random.Random(7)
    for text in TEXTS + ["".join(rng.choice(TEXTS) for _ in range(20))]:
        ids = np.asarray(enc.encode_ordinary(text), dtype=np.uint32)
        assert table.join(ids) == enc.decode_bytes(ids.tolist()) == text.encode("utf-8")
        assert table.lengths(ids).tolist() == [len(enc.decode_single_token_bytes(t)) for t in ids.tolist()]
    # random ids, many of them partial UTF-8 pieces: still byte for byte tiktoken's
    defined = [i for i, b in enumerate(tokenizer.token_bytes()) if b]
    ids = np.asarray(rng.sample(defined, 5000), dtype=np.uint32)
    assert table.join(ids) == enc.decode_bytes(ids.tolist())
    assert table.join(np.zeros(0, np.uint32)) == b""
    assert table.join([0, 1, 2]) == enc.decode_bytes([0, 1, 2])  # a list of ints


def test_byte_table_grows_its_buffer_and_refuses_what_it_cannot_map() -> None:
    long_piece = b"y" * 100  # far more than the first guess of 8 bytes an id
    table = ByteTable([b"a", b"", long_piece])
    assert table.join(np.array([2, 0, 2], np.uint32)) == long_piece + b"a" + long_piece
    with pytest.raises(OutOfRange, match=r"ids\[1\]"):
        table.join(np.array([0, 1], np.uint32))  # no entry
    with pytest.raises(OutOfRange, match=r"ids\[2\]"):
        table.join(np.array([0, 2, 3], np.uint32))  # past the table
    with pytest.raises(OutOfRange, match=r"ids\[0\]"):
        table.lengths([3])
    with pytest.raises(InvalidInput, match="ids"):
        table.join(np.array([0.5]))
    with pytest.raises(InvalidInput, match="pieces"):
        ByteTable(b"abc")
    with pytest.raises(InvalidInput, match=r"pieces\[1\]"):
        ByteTable([b"a", "b"])
    for zero_d in (np.array(b"ab"), np.array(3)):  # a 0-d array has a __len__ that raises
        with pytest.raises(InvalidInput, match="pieces"):
            ByteTable(zero_d)


@pytest.mark.parametrize("kind", ["static", "dynamic"])
def test_access_ranges_equals_range_by_range(kind: str) -> None:
    rng = np.random.default_rng(3)
    data = rng.integers(0, 100_000, size=20_000).astype(np.uint32)
    if kind == "static":
        seq = WaveletMatrix(data, 17)
    else:
        seq = DynamicWaveletMatrix(17)
        for part in np.array_split(data, 7):  # several segments and a tail
            seq.extend(part)
    starts = rng.integers(0, data.size, size=50)
    ends = np.minimum(starts + rng.integers(0, 900, size=50), data.size)
    starts[5] = ends[5]  # an empty range among them
    got = seq.access_ranges(starts, ends)
    assert np.array_equal(got, np.concatenate([data[a:b] for a, b in zip(starts, ends)]))
    assert seq.access_ranges([], []).size == 0
    with pytest.raises(OutOfRange, match="ends"):
        seq.access_ranges([0], [data.size + 1])
    with pytest.raises(OutOfRange, match="starts"):
        seq.access_ranges([5], [4])
    with pytest.raises(InvalidInput, match="same length"):
        seq.access_ranges([0, 1], [2])


def test_index_reads_back_every_text_it_was_given(tmp_path) -> None:
    rng = random.Random(11)
    texts = [rng.choice(TEXTS) + f" #{k}" for k in range(300)]
    path = tmp_path / "m.db"
    with Memory(path) as mem:
        for t in texts:
            mem.add(t, role="user")
    with Memory(path) as mem:  # also after a restart: the stream was rebuilt from the store
        idx = mem.engine.state().index
        assert [idx.text_of(r) for r in range(len(idx))] == texts
        order = rng.sample(range(len(idx)), 120)
        assert idx.texts_of(order) == [texts[r] for r in order]
        assert idx.texts_of([]) == []
        assert [t for _, t in idx.texts(0, len(idx), chunk=7)] == texts


def test_damaged_token_ids_are_corrupt_data() -> None:
    enc = tokenizer.encoding()
    half = enc.encode_ordinary("東")[:1]  # the first token of a character cut in two by the tokenizer
    assert len(enc.encode_ordinary("東")) > 1
    with pytest.raises(CorruptData):
        coindex._split_text(np.asarray(half, dtype=np.uint32), np.array([1]))
    with pytest.raises(CorruptData):
        coindex._split_text(np.array([100256], dtype=np.uint32), np.array([1]))  # an id cl100k does not define
    with pytest.raises(CorruptData):
        coindex._split_text(np.asarray(enc.encode_ordinary("東京"), dtype=np.uint32), np.array([1, 3]))


def test_kept_texts_follow_appends_and_deletions(monkeypatch) -> None:
    """Texts read back are kept (bounded by characters) and stay right through appends and a deletion that renumbers
    the rows: every read equals the texts that were added and still exist."""
    monkeypatch.setattr(coindex, "_TEXT_CACHE_CHARS", 2000)  # small: entries are dropped while reading
    rng = random.Random(13)
    mem = Memory(None)
    live: dict[int, str] = {}
    for step in range(6):
        for k in range(40):
            text = rng.choice(TEXTS) + f" ({step}.{k})"
            live[mem.add(text, role="user").id] = text
        if step == 3:
            gone = rng.sample(sorted(live), 30)
            mem.delete(gone)
            for i in gone:
                del live[i]
        idx = mem.engine.state().index
        want = [live[int(i)] for i in idx.ids.view]
        for _ in range(3):
            order = rng.sample(range(len(idx)), min(50, len(idx)))
            assert idx.texts_of(order) == [want[r] for r in order]
            assert all(idx.text_of(r) == want[r] for r in order[:10])
        assert idx._text_cache.held <= 2000 and idx._text_cache.held == sum(map(len, idx._text_cache.values()))
    with pytest.raises(IndexError):
        idx.texts_of([len(idx)])
