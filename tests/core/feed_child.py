"""A second process on a store, driven line by line (JSON on stdin, one JSON answer per line on stdout).

    python feed_child.py STORE_PATH NAMESPACE

Each command: ``{"op": "add", "items": [...]}``, ``{"op": "delete", "ids": [...]}``, ``{"op": "update", "id": ...,
"metadata": {...}}``, ``{"op": "forget", "filter": {...}}``, ``{"op": "delete_namespace"}``, ``{"op": "view"}``
(every message as ``[id, text, metadata]``) or ``{"op": "quit"}``. Every answer carries ``rows``: the store rows
this process read to catch up with the other writers before it acted (what ``count()`` cost).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from rowcount import count_rows  # noqa: E402

from hippo import Memory  # noqa: E402


def main(path: str, namespace: str) -> None:
    mem = Memory(path, namespace=namespace, config={"seal_tokens": 10**9})
    counter = count_rows(mem.engine.rt.store)
    for line in sys.stdin:
        cmd = json.loads(line)
        op = cmd["op"]
        before = counter.rows
        mem.count()  # catch up with the other process: the cost under test
        out = {"rows": counter.rows - before}
        if op == "add":
            out["ids"] = [it.id for it in mem.add_many(cmd["items"])]
        elif op == "delete":
            out["n"] = mem.delete(cmd["ids"])
        elif op == "update":
            mem.update(cmd["id"], metadata=cmd["metadata"])
        elif op == "forget":
            out["n"] = mem.forget(cmd["filter"])
        elif op == "delete_namespace":
            out["n"] = mem.delete_namespace(namespace)
        elif op == "view":
            out["view"] = [[it.id, it.text, it.metadata] for it in mem.list()]
        elif op == "quit":
            break
        print(json.dumps(out), flush=True)
    mem.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
