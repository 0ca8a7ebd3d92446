"""Hostile and bad input: the brief's catalogue through every public entry point, a stateful model test, and
byte-level fuzzing of every deserializer.

Every bad input must raise the documented ``HippoError`` subclass with a message that names the argument, and
leave the store exactly as it was. Corrupt bytes must give a ``HippoError`` (``CorruptData`` for stored data),
never a crash, a hang or another exception type.
"""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, initialize, invariant, precondition, rule

import hippo
from hippo import (
    BinaryIndex,
    CorruptData,
    DynamicWaveletMatrix,
    HippoError,
    InvalidInput,
    Memory,
    NotFound,
    OutOfRange,
    WaveletMatrix,
)
from hippo.cli import main as cli_main

# ------------------------------------------------------------------- corrupt store files: regressions


def _tail_store(tmp_path: Path) -> tuple[Path, int]:
    """A store whose last message is still an unsealed tail row (written by a process that never closed)."""
    import subprocess
    import sys

    path = tmp_path / "tail.db"
    code = ("import os, sys; from hippo import Memory; m = Memory(sys.argv[1]); "
            "m.add_many([{'text': f'sealed message {i} about the garden'} for i in range(40)]); m.flush(); "
            "m.add('the unsealed tail message'); os._exit(0)")
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, timeout=120)
    db = sqlite3.connect(path)
    (mid,) = db.execute("SELECT id FROM messages WHERE tokens IS NOT NULL").fetchone()
    db.close()
    return path, mid


@pytest.mark.parametrize("tokens", [[0xFFFFFFFF], [1 << 17], [100_300], [94, 94], [55, 2**31]],
                         ids=["u32max", "wider than 17 bits", "past the vocabulary", "invalid utf-8", "mixed"])
def test_corrupt_tail_tokens_raise_corrupt_data(tmp_path, tokens) -> None:
    path, mid = _tail_store(tmp_path)
    db = sqlite3.connect(path)
    db.execute("UPDATE messages SET tokens = ?, n_tokens = ? WHERE id = ?",
               (np.asarray(tokens, "<u4").tobytes(), len(tokens), mid))
    db.commit()
    db.close()
    with Memory(path) as mem:
        with pytest.raises(CorruptData):
            mem.count()
            mem.get(mid)
            mem.list()
            mem.search("unsealed tail message garden", k=50)


# ------------------------------------------------------------- file-system errors name the path argument


def test_store_path_os_errors_are_store_errors(tmp_path) -> None:
    with pytest.raises(hippo.StoreError, match="path"):
        Memory(tmp_path / "missing" / "dir" / "x.db")
    with pytest.raises(InvalidInput, match="directory"):
        Memory(tmp_path)


def test_export_and_import_file_errors(tmp_path) -> None:
    path = tmp_path / "s.db"
    with Memory(path) as mem:
        mem.add("one message worth keeping")
        with pytest.raises(hippo.StoreError, match="path"):
            mem.export(tmp_path / "missing" / "x.jsonl")
        for target in (path, str(path) + "-wal"):
            with pytest.raises(InvalidInput, match="store file itself"):
                mem.export(target)
        with pytest.raises(InvalidInput, match="directory"):
            mem.import_(tmp_path)
        deep = tmp_path / "deep.jsonl"
        deep.write_bytes(b'{"format": "hippo-export", "version": 1}\n' + b"[" * 200_000 + b"\n")
        with pytest.raises(CorruptData, match="path"):
            mem.import_(deep)
        wrong = tmp_path / "wrong.jsonl"
        wrong.write_text('{"format": "csv"}\n', encoding="utf-8")
        with pytest.raises(CorruptData, match="path"):
            mem.import_(wrong)
        assert [it.text for it in mem.list()] == ["one message worth keeping"]
    with Memory(path) as mem:
        assert mem.count() == 1


def test_export_file_is_private_even_over_a_planted_file(tmp_path) -> None:
    import os

    out = tmp_path / "x.jsonl"
    planted = tmp_path / "x.jsonl.tmp"
    planted.write_text("", encoding="utf-8")
    planted.chmod(0o666)
    with Memory(None) as mem:
        mem.add("a private note")
        mem.export(out)
    assert out.stat().st_mode & 0o777 == 0o600
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("untouched", encoding="utf-8")
    os.unlink(planted) if planted.exists() else None
    os.symlink(elsewhere, planted)
    with Memory(None) as mem:
        mem.add("a private note")
        with pytest.raises(hippo.StoreError):
            mem.export(out)
    assert elsewhere.read_text(encoding="utf-8") == "untouched"


def test_words_next_to_emoji_and_cjk_are_found() -> None:
    """A word followed by a space and a multi-byte character (emoji, CJK, Hebrew) is still a whole word."""
    texts = ["What a party 🎉 that was", "We met in Kyoto 東京 last spring", "the lesson עברית went well",
             "a quiet harbor Ελληνικά view"]
    with Memory(None) as mem:
        got = mem.add_many([{"text": t} for t in texts])
        mem.add_many([{"text": f"unrelated filler message {i}"} for i in range(20)])
        for word, item in zip(("party", "Kyoto", "lesson", "harbor"), got):
            hits = mem.search(word, k=3)
            assert hits and hits[0].id == item.id, (word, [h.text for h in hits])
