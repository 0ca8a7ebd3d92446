"""Writes ``store_v2.db``: a store in schema version 2 (hippo before the change feed), for the migration test.

It was run once with the code of commit 438693e (the last one writing schema 2):

    git archive 438693e packages | tar -x -C /tmp/v2 && cp packages/hippo/_hippo_c*.so /tmp/v2/packages/hippo/
    PYTHONPATH=/tmp/v2/packages python tests/core/data/make_store_v2.py tests/core/data/store_v2.db

The messages come from :func:`messages` so the test knows what the file holds without reading it first.
"""

from __future__ import annotations

import sys


def messages(namespace: str) -> list[dict]:
    """The messages written to ``namespace`` (two sessions, one speaker pair per namespace)."""
    pets = ("beagle", "parrot", "tortoise", "ferret", "goldfish", "hamster")
    out = []
    for i in range(90):
        pet = pets[i % len(pets)]
        who = ("Ann", "Bob") if namespace == "alpha" else ("Cy", "Di")
        out.append({"text": f"{namespace} note {i}: the {pet} needs a vet visit on day {i % 28 + 1}, "
                            f"and the café bill was {i * 7} euros ✓",
                    "speaker": who[i % 2], "session_id": f"s{i // 45}", "timestamp": 1_700_000_000 + 600 * i,
                    "metadata": {"turn": i, "tag": pet}})
    return out


DELETED = {"alpha": (3, 40), "beta": (7,)}   # positions in messages() deleted after writing


def main(path: str) -> None:
    from hippo import Memory

    for ns in ("alpha", "beta"):
        with Memory(path, namespace=ns, config={"seal_tokens": 512}) as mem:
            items = mem.add_many(messages(ns))
            mem.delete([items[k].id for k in DELETED[ns]])
            mem.update(items[10].id, metadata={"turn": 10, "tag": "updated"})
            mem.recall("which pet needs a vet visit?", budget_tokens=200)


if __name__ == "__main__":
    main(sys.argv[1])
