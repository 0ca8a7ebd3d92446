"""Counting the rows a store reads: a proxy around a SQLiteStore's connection that counts every row fetched.

Costs that must not grow with the store are checked by this count (never by wall-clock time): a store twice as
large must make an operation read exactly as many rows.
"""

from __future__ import annotations

from typing import Any


class _Cursor:
    def __init__(self, owner: "CountingConnection", cur: Any) -> None:
        self._owner = owner
        self._cur = cur

    def fetchall(self) -> list:
        rows = self._cur.fetchall()
        self._owner.rows += len(rows)
        return rows

    def fetchone(self) -> Any:
        row = self._cur.fetchone()
        self._owner.rows += row is not None
        return row

    def __iter__(self):
        for row in self._cur:
            self._owner.rows += 1
            yield row

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cur, name)


class CountingConnection:
    """Stands in for ``sqlite3.Connection``; ``rows`` is the number of result rows fetched so far."""

    def __init__(self, db: Any) -> None:
        self._db = db
        self.rows = 0

    def execute(self, *args: Any) -> _Cursor:
        return _Cursor(self, self._db.execute(*args))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)


def count_rows(store: Any) -> CountingConnection:
    """Wrap ``store``'s connection (a :class:`hippo.store.sqlite.SQLiteStore`) and return the counter."""
    counter = store._db if isinstance(store._db, CountingConnection) else CountingConnection(store._db)
    store._db = counter
    return counter
