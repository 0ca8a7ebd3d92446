"""``Memory.import_`` reads its file a record at a time, twice: a first pass checks every record, the second encodes
them for the one transaction that writes them. A bad record anywhere stores nothing; the import never holds the
file's parsed records beside the encoded messages."""

from __future__ import annotations

import json
import random
import tracemalloc

import pytest

from hippo import Memory
from hippo.base.errors import CorruptData
from hippo.engine import namespace as namespace_mod
from hippo.text import tokenizer


def _export(path, records) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps({"format": "hippo-export", "version": 1, "namespace": "default"}) + "\n")
        for r in records:
            f.write((r if isinstance(r, str) else json.dumps(r)) + "\n")


@pytest.mark.parametrize("bad", ['{"text": 5}', '{"text": "ok", "metadata": []}', "[1, 2]", '{"text": "cut',
                                 '{"text": "x", "timestamp": 1e300}'])
def test_a_bad_last_record_stores_nothing(tmp_path, bad) -> None:
    path = tmp_path / "x.jsonl"
    _export(path, [{"text": f"message {k}", "speaker": "Ann"} for k in range(50)] + [bad])
    store = tmp_path / "s.db"
    with Memory(store) as mem:
        mem.add("kept before the import")
        with pytest.raises(CorruptData, match="line 52|x.jsonl"):
            mem.import_(path)
        assert [m.text for m in mem.list()] == ["kept before the import"]
    with Memory(store) as mem:
        assert mem.count() == 1
        _export(path, [{"text": f"message {k}", "speaker": "Ann"} for k in range(50)])
        assert mem.import_(path) == 50
        assert [m.text for m in mem.list()][1:] == [f"message {k}" for k in range(50)]


def test_an_import_holds_the_encoded_messages_only(tmp_path, monkeypatch) -> None:
    rng = random.Random(3)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9))) for _ in range(3000)]
    texts = [" ".join(rng.choice(words) for _ in range(600)) for _ in range(300)]
    path = tmp_path / "long.jsonl"
    _export(path, [{"text": t, "speaker": "Ann"} for t in texts])
    token_bytes = sum(4 * tokenizer.encode(t).size for t in texts)
    text_bytes = sum(len(t) for t in texts)
    held = []
    write = namespace_mod.Namespace.write

    def measured(self, prepared):
        held.append(tracemalloc.get_traced_memory()[0])
        return write(self, prepared)

    monkeypatch.setattr(namespace_mod.Namespace, "write", measured)
    with Memory(None) as mem:
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            assert mem.import_(path) == len(texts)
        finally:
            tracemalloc.stop()
        assert [m.text for m in mem.list()] == texts
    # the messages' token ids and what encoding adds per message (a fraction of its text), not the records' texts
    # as well
    assert held[0] - base < token_bytes + text_bytes / 2
