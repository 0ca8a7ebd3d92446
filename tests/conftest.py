"""Fixtures shared by every test folder: one throwaway PostgreSQL server for the whole session.

The server (``hippo_bench.pgserver``: initdb + pg_ctl on a unix socket in a temporary folder, as the ``postgres``
user when the tests run as root) starts the first time a test asks for it and stops at the end of the session. Each
test gets its own PostgreSQL schema in one database, so tests never see each other's rows.

Without server binaries (or psycopg) the PostgreSQL tests are skipped with the reason, unless
``HIPPO_REQUIRE_POSTGRES=1`` (set by ``.ci/run``), where they fail instead.
"""

from __future__ import annotations

import os
import uuid

import pytest

REQUIRE_POSTGRES = os.environ.get("HIPPO_REQUIRE_POSTGRES") == "1"


def _unavailable() -> str | None:
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as exc:
        return f"psycopg 3 / psycopg_pool are not installed (pip install 'hippo-memory[postgres]'): {exc}"
    try:
        from hippo_bench.pgserver import unavailable_reason
    except ImportError as exc:
        return f"hippo_bench (pip install -e bench) is needed to start a throwaway server: {exc}"
    return unavailable_reason()


@pytest.fixture(scope="session")
def pg_server():
    """The session's throwaway PostgreSQL server (``hippo_bench.pgserver.PgServer``) with a database ``hippo``."""
    reason = _unavailable()
    if reason:
        if REQUIRE_POSTGRES:
            pytest.fail(f"HIPPO_REQUIRE_POSTGRES=1 but no PostgreSQL server can be started: {reason}")
        pytest.skip(f"no PostgreSQL server for these tests: {reason}")
    from hippo_bench.pgserver import PgServer

    server = PgServer()
    try:
        server.create_database("hippo")
        yield server
    finally:
        server.close()


@pytest.fixture(params=["sqlite", "postgres"])
def location(request, tmp_path) -> str:
    """Where a test's store lives, once per backend: a SQLite file in the test's folder, then a schema of its own on
    the session's PostgreSQL server (skipped without psycopg or a server)."""
    if request.param == "sqlite":
        return str(tmp_path / "memory.db")
    pytest.importorskip("psycopg")
    return request.getfixturevalue("pg_url")


@pytest.fixture
def pg_url(pg_server) -> str:
    """A URL of the session's server whose store lives in a schema of its own (created on first open)."""
    return pg_server.url("hippo", hippo_schema="t_" + uuid.uuid4().hex[:16])
