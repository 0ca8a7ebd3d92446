"""Writes ``store_v3_feed.db``: a store numbered schema 3 that has the change feed and no checksums, for the
migration test.

Schema 3 (checksums) and the change feed were developed apart and both first numbered 3; they became schema 3 and 4
when merged. Until then (commits dae4a3a to 82b5fc7) hippo wrote stores numbered 3 with the feed's columns and
table and without checksum columns. This file was written once with the code of commit 82b5fc7:

    git worktree add --detach /tmp/v3f 82b5fc7 && cd /tmp/v3f && python setup.py -q build_ext --inplace
    PYTHONPATH=/tmp/v3f/packages python tests/core/data/make_store_v3_feed.py tests/core/data/store_v3_feed.db

The messages come from :func:`messages` so the test knows what the file holds without reading it first.
"""

from __future__ import annotations

import sys


def messages(namespace: str) -> list[dict]:
    """The messages written to ``namespace`` (two sessions, one speaker pair per namespace)."""
    birds = ("heron", "kestrel", "wren", "puffin", "curlew")
    out = []
    for i in range(60):
        bird = birds[i % len(birds)]
        who = ("Ann", "Bob") if namespace == "alpha" else ("Cy", "Di")
        out.append({"text": f"{namespace} log {i}: a {bird} was ringed at pond {i % 9 + 1}, "
                            f"weight {i * 3} g, naïve count ✓",
                    "speaker": who[i % 2], "session_id": f"s{i // 30}", "timestamp": 1_720_000_000 + 900 * i,
                    "metadata": {"turn": i, "bird": bird}})
    return out


DELETED = {"alpha": (2, 33), "beta": (5,)}   # positions in messages() deleted after writing
UPDATED = 8                                  # position whose metadata became {"turn": 8, "bird": "updated"}


def main(path: str) -> None:
    from hippo import Memory

    for ns in ("alpha", "beta"):
        with Memory(path, namespace=ns, config={"seal_tokens": 512}) as mem:
            items = mem.add_many(messages(ns))
            mem.delete([items[k].id for k in DELETED[ns]])
            mem.update(items[UPDATED].id, metadata={"turn": UPDATED, "bird": "updated"})
            mem.recall("where was the heron ringed?", budget_tokens=200)
    import sqlite3

    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
    db.close()


if __name__ == "__main__":
    main(sys.argv[1])
