"""The command line on a PostgreSQL store: ``--path`` / ``HIPPO_PATH`` take a ``postgresql://`` URL and every command
answers as it does on a file (compared with the API on the same store); a password in the URL is never printed."""

from __future__ import annotations

import json

import pytest

import hippo
from hippo.records import jsonable
from tests.cli.conftest import assert_one_line_error, cli, conversation_items, hippo_cmd

pytest.importorskip("psycopg")


@pytest.fixture()
def url(pg_url) -> str:
    """The conversation in namespace 'ann' of a PostgreSQL store; the URL carries a password (the throwaway server
    trusts local connections, so it is sent and ignored)."""
    with hippo.Memory(pg_url, namespace="ann") as mem:
        mem.add_many(conversation_items())
    return pg_url.replace("postgres@", "postgres:hunter2@", 1)


def test_read_commands_on_a_url_match_the_api(url, capsys) -> None:
    with hippo.Memory(url, namespace="ann") as mem:
        hits = mem.search("beagle Pixel", k=3)
        ctx = mem.recall("Where did Ann move?", budget_tokens=60)
    run = cli(capsys, "search", "beagle Pixel", "-k", "3", "--path", url, "-n", "ann", "--json")
    assert run.code == 0, run.err
    assert json.loads(run.out) == json.loads(json.dumps(jsonable(hits)))
    env_run = hippo_cmd("recall", "Where did Ann move?", "--budget", "60", "-n", "ann", "--json",
                        env={"HIPPO_PATH": url})
    assert env_run.code == 0, env_run.err
    assert json.loads(env_run.out)["text"] == ctx.text


def test_check_and_forget_on_a_url_never_print_the_password(url, capsys) -> None:
    run = cli(capsys, "check", "--path", url, "--json")
    assert run.code == 0, run.err
    report = json.loads(run.out)
    assert report["ok"] and report["wal"]["verified"] is None and "hunter2" not in run.out
    refused = hippo_cmd("forget", "--speaker", "Bob", "--path", url, "-n", "ann")
    assert_one_line_error(refused, "--yes", "6 messages")
    assert "hunter2" not in refused.err
    run = cli(capsys, "forget", "--speaker", "Bob", "--path", url, "-n", "ann", "--yes")
    assert run.code == 0 and "forgot 6 messages" in run.out
    with hippo.Memory(url, namespace="ann") as mem:
        assert all(it.speaker == "Ann" for it in mem.list()) and mem.count() == 6


def test_a_read_command_on_a_url_without_a_store_creates_nothing(pg_server, pg_url) -> None:
    run = hippo_cmd("search", "anything", "--path", pg_url)
    assert_one_line_error(run, "holds no hippo store")
    import psycopg

    schema = pg_url.rsplit("hippo_schema=", 1)[1]
    with psycopg.connect(pg_server.url("hippo"), autocommit=True) as conn:
        assert conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone() is None
