"""Failures injected into a store's write transaction while it writes one namespace (the other namespaces of the
transaction go through): what a write of several namespaces must take back whole."""

from __future__ import annotations

import hippo
from hippo.store import common

STEPS = ("judge", "append", "chunk", "record")


def fail_at(monkeypatch, store, step: str, namespace: str) -> None:
    """Make the store's transaction fail at ``step`` while it writes ``namespace`` (the other namespace's part goes
    through)."""
    st = type(store)

    def fail():
        raise hippo.StoreError(f"simulated failure: {step} of {namespace}")

    if step == "judge":  # reading the messages the write replaces
        real_doomed = st._doomed

        def doomed(self, db, ns, *args, **kwargs):
            if ns == namespace:
                fail()
            return real_doomed(self, db, ns, *args, **kwargs)

        monkeypatch.setattr(st, "_doomed", doomed)
    elif step == "append":  # storing the new message's tokens
        real_sum = common.tail_checksum

        def tail_checksum(ns, *args):
            if ns == namespace:
                fail()
            return real_sum(ns, *args)

        monkeypatch.setattr(common, "tail_checksum", tail_checksum)
        from hippo.store import sqlite
        monkeypatch.setattr(sqlite, "tail_checksum", tail_checksum)
    elif step == "chunk":  # rewriting the chunk that held the replaced message
        real_without = common.chunk_without

        def chunk_without(codec, ns, *args, **kwargs):
            if ns == namespace:
                fail()
            return real_without(codec, ns, *args, **kwargs)

        monkeypatch.setattr(common, "chunk_without", chunk_without)
    else:  # recording the deletion in the change feed
        assert step == "record"
        real_record = st._record

        def record(self, cur, ns, kind, *args, **kwargs):
            if ns == namespace and kind == "delete":
                fail()
            return real_record(self, cur, ns, kind, *args, **kwargs)

        monkeypatch.setattr(st, "_record", record)


def fail_dropping(monkeypatch, store, namespace: str) -> None:
    """Make the store's transaction fail when it drops ``namespace`` (the other namespaces of a deletion go through
    until then): what a deletion of several namespaces must take back whole."""
    st = type(store)
    real = st._drop_in

    def drop_in(self, db, ns):
        if ns == namespace:
            raise hippo.StoreError(f"simulated failure: dropping {ns}")
        return real(self, db, ns)

    monkeypatch.setattr(st, "_drop_in", drop_in)
