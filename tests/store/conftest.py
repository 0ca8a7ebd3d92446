"""One parametrized fixture, ``backend``, runs a test on every store: the SQLite file and the PostgreSQL server.

A :class:`Backend` opens stores at one location (so a test can reopen, or open a second handle as another process
would) and runs raw SQL on it, the way damage from outside hippo would arrive (``?`` placeholders and bare table names
in both dialects)."""

from __future__ import annotations

import contextlib
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from hippo.store.base import Store


class Backend:
    name: str

    def open(self, read_only: bool = False, **kwargs: Any) -> Store:
        raise NotImplementedError

    def sql(self, statement: str, params: tuple = ()) -> list[tuple]:
        """Run one statement on the store's tables outside hippo; returns the rows it selected."""
        raise NotImplementedError

    @property
    def location(self) -> str:
        raise NotImplementedError


class SQLiteBackend(Backend):
    name = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path = path

    def open(self, read_only: bool = False, **kwargs: Any) -> Store:
        from hippo.store.sqlite import SQLiteStore

        return SQLiteStore(self.path, read_only=read_only, **kwargs)

    def sql(self, statement: str, params: tuple = ()) -> list[tuple]:
        with contextlib.closing(sqlite3.connect(self.path, isolation_level=None)) as db:
            return db.execute(statement, params).fetchall()

    @property
    def location(self) -> str:
        return str(self.path)


class PostgresBackend(Backend):
    name = "postgres"

    def __init__(self, url: str) -> None:
        self.url = url
        self.schema = re.search(r"hippo_schema=(\w+)", url).group(1)

    def open(self, read_only: bool = False, **kwargs: Any) -> Store:
        from hippo.store.postgres import PostgresStore

        return PostgresStore(self.url, read_only=read_only, **kwargs)

    def connect(self):
        import psycopg

        from hippo.store.postgres import parse_url

        return psycopg.connect(parse_url(self.url)[0], autocommit=True)

    def sql(self, statement: str, params: tuple = ()) -> list[tuple]:
        with self.connect() as conn:
            conn.execute(f'SET search_path TO "{self.schema}"')
            cur = conn.execute(statement.replace("?", "%s"), params)
            return cur.fetchall() if cur.description else []

    @property
    def location(self) -> str:
        return self.url


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request, tmp_path) -> Backend:
    if request.param == "sqlite":
        return SQLiteBackend(tmp_path / "store.db")
    return PostgresBackend(request.getfixturevalue("pg_url"))


@pytest.fixture
def store(backend):
    st = backend.open()
    yield st
    st.close()
