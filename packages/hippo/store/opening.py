"""Which store a location names: a PostgreSQL URL opens :class:`~hippo.store.postgres.PostgresStore`, anything else
(a file path, or None or ``":memory:"`` for a private in-memory database) :class:`~hippo.store.sqlite.SQLiteStore`."""

from __future__ import annotations

import os
from typing import Any

from hippo.base.config import Config
from hippo.store.base import Store

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
#: the name SQLite gives a private in-memory database; as a path it means what None means, not a file of that name
IN_MEMORY = ":memory:"


def is_postgres_url(path: Any) -> bool:
    """Whether ``path`` is a PostgreSQL URL (``postgresql://...`` or ``postgres://...``, any case)."""
    return isinstance(path, str) and path[:13].lower().startswith(POSTGRES_SCHEMES)


def open_store(path: str | os.PathLike | None, *, read_only: bool, config: Config) -> Store:
    """The store at ``path``, opened with the settings of ``config`` that concern it."""
    if isinstance(path, str) and path == IN_MEMORY:
        path = None
    if is_postgres_url(path):
        from hippo.store.postgres import PostgresStore  # psycopg is an optional extra: imported only for a URL

        return PostgresStore(path, read_only=read_only, busy_timeout_s=config.busy_timeout_s)
    from hippo.store.sqlite import SQLiteStore

    return SQLiteStore(path, busy_timeout_s=config.busy_timeout_s, read_only=read_only,
                       synchronous=config.synchronous)
