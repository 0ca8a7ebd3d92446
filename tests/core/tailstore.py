"""A store with sealed chunks and an unsealed tail row, for tests that damage one or the other on disk."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path


def tail_store(tmp_path: Path) -> tuple[Path, int]:
    """``(path, id of the tail message)``: 40 sealed messages and one unsealed tail row, written by a process that
    exits without closing (its log checkpointed into the file)."""
    path = tmp_path / "tail.db"
    code = ("import os, sys; from hippo import Memory; m = Memory(sys.argv[1]); "
            "m.add_many([{'text': f'sealed message {i} about the garden'} for i in range(40)]); m.flush(); "
            "m.add('the unsealed tail message'); m._rt.store.checkpoint(); os._exit(0)")
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, timeout=120)
    db = sqlite3.connect(path)
    (mid,) = db.execute("SELECT id FROM tail").fetchone()
    db.close()
    return path, mid
