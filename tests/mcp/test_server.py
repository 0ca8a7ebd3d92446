"""``hippo mcp`` through the MCP SDK's own client: the real server process over stdio (and one streamable-HTTP
round trip on 127.0.0.1), every tool checked against ``hippo.Memory`` on the same store."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, AsyncIterator

import numpy as np
import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

import hippo  # noqa: E402
from hippo.records import jsonable  # noqa: E402
from tests.conversation import CONVERSATION as ALL  # noqa: E402
from tests.conversation import T0  # noqa: E402
from tests.unwritable import unwritable_store  # noqa: E402

TOOLS = {"add", "search", "recall", "read", "forget", "topics", "timeline"}
CONVERSATION = [ALL[k] for k in (0, 1, 2, 3, 4, 5, 6, 8, 10, 11)]


@pytest.fixture()
def store(tmp_path) -> Path:
    path = tmp_path / "mcp.db"
    with hippo.Memory(path, namespace="ann") as mem:
        mem.add_many([{"text": text, "speaker": speaker, "session_id": session,
                       "timestamp": T0 + timedelta(days=7 * k)} for k, (session, speaker, text) in
                      enumerate(CONVERSATION)])
        mem.using("bob").add("My cellos are in the attic; only Bob knows.", speaker="Bob")
    return path


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("HIPPO_")}


@asynccontextmanager
async def stdio_session(path: Path, *extra: str, env: dict[str, str] | None = None) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "hippo.cli", "mcp", "--path", str(path), *extra],
                                   env=env if env is not None else _env())
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


async def call(session: ClientSession, tool: str, **arguments: Any) -> Any:
    """A successful call's structured content."""
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


async def error_text(session: ClientSession, tool: str, **arguments: Any) -> str:
    result = await session.call_tool(tool, arguments)
    assert result.is_error, result
    return result.content[0].text


async def test_tools_and_their_typed_schemas(store) -> None:
    async with stdio_session(store, "--user", "ann") as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
    assert set(tools) == TOOLS
    schema = {name: t.input_schema for name, t in tools.items()}
    assert schema["search"]["required"] == ["query"]
    assert schema["search"]["properties"]["query"]["type"] == "string"
    assert schema["search"]["properties"]["k"]["type"] == "integer"
    assert schema["search"]["properties"]["k"]["minimum"] == 1
    assert schema["recall"]["properties"]["budget_tokens"]["type"] == "integer"
    assert schema["read"]["required"] == ["message_id"]
    assert schema["add"]["required"] == ["text"]
    role = schema["add"]["properties"]["role"]
    assert set(role.get("enum") or role["anyOf"][0]["enum"]) == {"user", "assistant", "system", "tool"}
    assert schema["forget"]["properties"]["ids"]["anyOf"][0] == {"items": {"type": "integer"}, "type": "array"}
    assert schema["timeline"]["required"] == ["query_or_entity"]
    assert schema["topics"].get("properties", {}) == {}
    for name, tool in tools.items():
        assert tool.output_schema and tool.output_schema["type"] == "object", name
        assert tool.description, name
    assert tools["forget"].annotations.destructive_hint is True
    assert tools["search"].annotations.read_only_hint is True
    # namespaces are chosen by the server's configuration, never by a tool argument
    assert not any("namespace" in s.get("properties", {}) for s in schema.values())


async def test_recall_counts_the_copies_a_message_stands_for(tmp_path) -> None:
    path = tmp_path / "copies.db"
    with hippo.Memory(path, namespace="ann") as mem:
        for k in range(3):
            mem.add("status: degraded", role="tool", timestamp=T0 + timedelta(days=k))
        ctx = mem.recall("status", budget_tokens=100)
    async with stdio_session(path, "--user", "ann") as session:
        got = await call(session, "recall", query="status", budget_tokens=100)
    assert got["text"] == ctx.text and "tool (3 times, " in got["text"]
    assert got["repeats"] == {str(ctx.messages[0].id): 3} == jsonable(ctx.repeats)


async def test_an_empty_recall_neither_denies_what_is_stored_nor_exceeds_the_budget(tmp_path) -> None:
    # A relevant message longer than the budget is left out whole, so an empty context is no evidence that memory
    # holds nothing relevant; the tool said "(nothing relevant in memory)" (6 tokens, over budgets of 1..5) anyway.
    path = tmp_path / "long.db"
    text = ("My passport is in the blue folder in the second drawer of the oak desk in the study, next to the old "
            "tax returns from 2019 and the car insurance papers.")
    with hippo.Memory(path, namespace="ann") as mem:
        mem.add(text, speaker="Ann")
        assert mem.recall("Where is my passport?", budget_tokens=500).text  # relevant: recalled with room for it
        assert mem.recall("Where is my passport?", budget_tokens=30).text == ""  # longer than 30 tokens
    async with stdio_session(path, "--user", "ann") as session:
        for budget in (30, 8, 5, 1):
            result = await session.call_tool("recall", {"query": "Where is my passport?", "budget_tokens": budget})
            assert not result.is_error and result.structured_content["text"] == ""
            shown = result.content[0].text
            assert hippo.count_tokens(shown) <= budget, (budget, shown)
            assert "nothing relevant" not in shown
            assert shown in ("", f"(nothing recalled within {budget} tokens)")
        assert (await session.call_tool("recall", {"query": "Where is my passport?", "budget_tokens": 30})
                ).content[0].text == "(nothing recalled within 30 tokens)"


async def test_read_tools_match_the_library(store) -> None:
    with hippo.Memory(store, namespace="ann") as mem:
        hits = mem.search("beagle Pixel", k=3)
        ctx = mem.recall("Where did Ann move?", budget_tokens=60)
        around = mem.read(hits[0].id, before=1, after=1)
        topics = mem.topics()
        timeline = mem.timeline("Ann", limit=4)
        in_s2 = mem.search("cello", k=5, filter={"session_id": "s2"})
        since = mem.search("ibex", k=5, since="2024-03-05")
    async with stdio_session(store, "--user", "ann") as session:
        got = await call(session, "search", query="beagle Pixel", k=3)
        assert got == {"hits": jsonable(hits)}
        result = await session.call_tool("recall", {"query": "Where did Ann move?", "budget_tokens": 60})
        assert not result.is_error
        assert result.content[0].text == ctx.text  # the model reads the context itself
        assert result.structured_content["text"] == ctx.text
        assert result.structured_content["tokens"] == ctx.tokens <= 60
        assert result.structured_content["messages"] == jsonable(ctx.messages)
        assert result.structured_content["repeats"] == jsonable(ctx.repeats)
        assert await call(session, "read", message_id=hits[0].id, before=1, after=1) == {"messages": jsonable(around)}
        got = (await call(session, "topics"))["topics"]
        # strengths decay with wall-clock time (seed 004 §5), so two processes agree on them only approximately
        assert [{k: v for k, v in t.items() if k != "strength"} for t in got] == \
            [{k: v for k, v in t.items() if k != "strength"} for t in jsonable(topics)]
        assert [t.get("strength") for t in got] == pytest.approx([t.get("strength") for t in topics], abs=0.01)
        assert await call(session, "timeline", query_or_entity="Ann", limit=4) == {"entries": jsonable(timeline)}
        assert await call(session, "search", query="cello", k=5, filter={"session_id": "s2"}) == \
            {"hits": jsonable(in_s2)}
        assert await call(session, "search", query="ibex", k=5, since="2024-03-05") == {"hits": jsonable(since)}
        # another user's namespace is out of reach: "cellos" / "attic" exist only in namespace 'bob'
        attic = await call(session, "search", query="attic cellos", k=10)
        assert all(h["namespace"] == "ann" for h in attic["hits"])
        assert "attic" not in " ".join(h["text"] for h in attic["hits"])


async def test_add_and_forget_change_the_store_the_library_sees(store) -> None:
    async with stdio_session(store, "--user", "ann") as session:
        added = await call(session, "add", text="My new phone number ends in 4471.", speaker="Ann",
                           role="user", timestamp="2024-06-01T08:00:00Z", session_id="s4", metadata={"src": "mcp"})
        with hippo.Memory(store, namespace="ann") as mem:
            item = mem.get(added["id"])
            assert jsonable(item) == added
            assert (item.text, item.session_id, item.metadata) == ("My new phone number ends in 4471.", "s4",
                                                                   {"src": "mcp"})
            assert item.timestamp == datetime(2024, 6, 1, 8, tzinfo=timezone.utc)
            lisbon = mem.search("Lisbon", k=5)
            bob_before = mem.using("bob").count()
        assert added["namespace"] == "ann"
        assert await call(session, "forget", ids=[added["id"]]) == {"forgotten": 1}
        n_bob = sum(1 for _, speaker, _ in CONVERSATION if speaker == "Bob")
        assert await call(session, "forget", filter={"speaker": "Bob"}) == {"forgotten": n_bob}
        assert "exactly one of ids or filter" in await error_text(session, "forget")
        assert "exactly one of ids or filter" in await error_text(session, "forget", ids=[1], filter={"a": 1})
        assert "valid integer" in await error_text(session, "forget", ids=[True])  # JSON true is no message 1
        assert "valid integer" in await error_text(session, "read", message_id=True)
    with hippo.Memory(store, namespace="ann") as mem:
        with pytest.raises(hippo.NotFound):
            mem.get(added["id"])
        assert mem.count() == len(CONVERSATION) - n_bob
        assert {m.speaker for m in mem.list()} == {"Ann"}
        assert mem.using("bob").count() == bob_before == 1
        assert [h.id for h in mem.search("Lisbon", k=5) if h.speaker == "Ann"] == \
            [h.id for h in lisbon if h.speaker == "Ann"]


async def test_read_only_serves_the_reads_and_refuses_the_writes(store) -> None:
    """`hippo mcp --read-only`: a store served without writing to it (`serve(read_only=True)`). The read tools
    answer as the library does; add and forget answer a tool error naming the read-only store and change nothing."""
    with hippo.Memory(store, namespace="ann", read_only=True) as mem:
        hits = mem.search("beagle Pixel", k=3)
        ctx = mem.recall("Where did Ann move?", budget_tokens=60)
        around = mem.read(hits[0].id, before=1, after=1)
        stored = jsonable(mem.list())
    async with stdio_session(store, "--user", "ann", "--read-only") as session:
        assert await call(session, "search", query="beagle Pixel", k=3) == {"hits": jsonable(hits)}
        assert (await call(session, "recall", query="Where did Ann move?", budget_tokens=60))["text"] == ctx.text
        assert await call(session, "read", message_id=hits[0].id, before=1, after=1) == {"messages": jsonable(around)}
        for tool, arguments in (("add", {"text": "I moved to Oslo."}), ("forget", {"ids": [hits[0].id]}),
                                ("forget", {"filter": {"speaker": "Ann"}})):
            text = await error_text(session, tool, **arguments)
            assert "read-only" in text and str(store) in text, text
    with hippo.Memory(store, namespace="ann", read_only=True) as mem:
        assert jsonable(mem.list()) == stored
    missing = store.parent / "missing.db"
    proc = subprocess.run([sys.executable, "-m", "hippo.cli", "mcp", "--path", str(missing), "--read-only"],
                          capture_output=True, text=True, timeout=120, env=_env(), stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and proc.stderr == f"hippo: error: no store at --path {str(missing)!r} (--read-only " \
        "serves an existing store; `hippo mcp` without it creates one)\n"
    assert not missing.exists()


_SERVE_AS_ANOTHER_USER = """
import os, sys
from hippo.cli import main
main(["mcp", "--path", sys.argv[2], "--user", "warm"])  # every module serving imports, loaded while readable
{drop}
sys.exit(main(["mcp", "--path", sys.argv[1], "--user", "ann", *sys.argv[3:]]))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="permissions as on Linux")
def test_a_store_this_user_cannot_write_is_served_with_read_only(tmp_path) -> None:
    """`hippo mcp` on a store this user may read but not write failed advising read_only=True, which the command
    does not take: the error names --read-only, and with it the server starts (and ends with its client)."""
    def build(path: Path) -> None:
        with hippo.Memory(path, namespace="ann") as mem:
            mem.add("I moved to Porto in April.", speaker="Ann")

    with unwritable_store("hippo-ro-mcp-", build) as (path, drop):
        before = path.read_bytes()
        script = _SERVE_AS_ANOTHER_USER.format(drop=drop)
        refused = subprocess.run([sys.executable, "-c", script, str(path), tmp_path / "warm1.db"], capture_output=True,
                                 text=True, timeout=300, env=_env(), stdin=subprocess.DEVNULL)
        assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
        assert refused.stderr.startswith("hippo: error: ") and "pass --read-only" in refused.stderr
        assert "read_only=True" not in refused.stderr
        served = subprocess.run([sys.executable, "-c", script, str(path), tmp_path / "warm2.db", "--read-only"],
                                capture_output=True, text=True, timeout=300, env=_env(), stdin=subprocess.DEVNULL)
        assert served.returncode == 0 and served.stderr == "", served.stderr
        assert path.read_bytes() == before and sorted(os.listdir(path.parent)) == ["store.db"]


async def test_errors_are_tool_errors_carrying_the_hippo_message(store) -> None:
    with hippo.Memory(store, namespace="ann") as mem:
        expected = {}
        for name, fn in (("query", lambda: mem.search("   ")), ("read", lambda: mem.read(424242)),
                         ("timestamp", lambda: mem.add("x", timestamp="next tuesday")),
                         ("metadata", lambda: mem.add("x", metadata={"bad": float("nan")}))):
            with pytest.raises(hippo.HippoError) as info:
                fn()
            expected[name] = str(info.value)
    async with stdio_session(store, "--user", "ann") as session:
        assert expected["query"] in await error_text(session, "search", query="   ")
        assert expected["read"] in await error_text(session, "read", message_id=424242)
        assert expected["timestamp"] in await error_text(session, "add", text="x", timestamp="next tuesday")
        assert "k" in await error_text(session, "search", query="x", k=0)  # the schema's own bound
        assert "budget_tokens" in await error_text(session, "recall", query="x", budget_tokens=0)
        # the session survives errors
        assert (await call(session, "search", query="Lisbon", k=1))["hits"]
    with hippo.Memory(store, namespace="ann") as mem:
        assert mem.count() == len(CONVERSATION)  # nothing was stored by the failed adds


async def test_integer_arguments_are_json_integers(store) -> None:
    # Every integer argument advertises {"type": "integer"}, and the MCP spec (server/tools, "Security
    # considerations") says servers MUST validate tool inputs; hippo.Memory itself refuses a bool or a str for each.
    # JSON true and "5" are not integers: they were read as 1 and 5 (recall answered within a budget of 1 token).
    with hippo.Memory(store, namespace="ann") as mem:
        for call_it in (lambda: mem.search("Lisbon", k=True), lambda: mem.recall("Lisbon", budget_tokens=True),
                        lambda: mem.read(3, before=True), lambda: mem.timeline("Ann", limit="5")):
            with pytest.raises(hippo.InvalidInput):
                call_it()
    async with stdio_session(store, "--user", "ann") as session:
        tools = {t.name: t.input_schema for t in (await session.list_tools()).tools}
        for tool, arguments, name in (("search", {"query": "Lisbon"}, "k"),
                                      ("recall", {"query": "Lisbon"}, "budget_tokens"),
                                      ("read", {"message_id": 3}, "before"), ("read", {"message_id": 3}, "after"),
                                      ("timeline", {"query_or_entity": "Ann"}, "limit")):
            assert tools[tool]["properties"][name]["type"] == "integer"
            for bad in (True, "5"):
                assert name in await error_text(session, tool, **arguments, **{name: bad}), (tool, name, bad)
            assert not (await session.call_tool(tool, {**arguments, name: 3})).is_error  # a JSON integer is fine


async def test_an_argument_a_tool_does_not_take_is_refused_and_nothing_is_stored(store) -> None:
    # The SDK drops an argument its tool does not take and runs the call: `add` with `tags` stored the message
    # without them, `recall` with `max_tokens` recalled 2000 tokens, and the model was told nothing.
    async with stdio_session(store, "--user", "ann") as session:
        tools = {t.name: t.input_schema for t in (await session.list_tools()).tools}
        assert all(schema.get("additionalProperties") is False for schema in tools.values())
        text = await error_text(session, "add", text="Pick up the dry cleaning.", tags=["errand"])
        assert "'tags'" in text and "text, speaker, role, timestamp, session_id, metadata" in text
        assert "'max_tokens'" in await error_text(session, "recall", query="Lisbon", max_tokens=50)
        assert "'namespace'" in await error_text(session, "search", query="cellos", namespace="bob")
        assert "no arguments" in await error_text(session, "topics", verbose=True)
        assert (await call(session, "search", query="Lisbon", k=1))["hits"]  # the session goes on
    with hippo.Memory(store, namespace="ann") as mem:
        assert mem.count() == len(CONVERSATION)


async def test_user_from_the_environment(store) -> None:
    async with stdio_session(store, env={**_env(), "HIPPO_USER": "bob"}) as session:
        hits = (await call(session, "search", query="attic", k=5))["hits"]
    assert [h["text"] for h in hits] == ["My cellos are in the attic; only Bob knows."]
    assert hits[0]["namespace"] == "bob"


def test_a_client_that_stops_reading_ends_the_session_quietly(store) -> None:
    # A client that closes its end of the server's standard output has left, as one closing standard input has:
    # the server ends with status 0 and the store closed. The write of the next response met a broken pipe inside
    # the SDK's task group: "hippo: error: unexpected ExceptionGroup: unhandled errors in a TaskGroup", status 1.
    import json

    server = subprocess.Popen([sys.executable, "-m", "hippo.cli", "mcp", "--path", str(store), "--user", "ann"],
                              env=_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        def send(message: dict) -> None:
            server.stdin.write(json.dumps(message).encode() + b"\n")
            server.stdin.flush()

        send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "t", "version": "1"}}})
        assert json.loads(server.stdout.readline())["id"] == 0
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        server.stdout.close()
        send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
              "params": {"name": "add", "arguments": {"text": "Written as the client stopped reading."}}})
        deadline = time.monotonic() + 120
        while True:  # the call ran (its answer then met the broken pipe)
            with hippo.Memory(store, namespace="ann") as mem:
                if mem.list()[-1].text == "Written as the client stopped reading.":
                    break
            assert time.monotonic() < deadline and server.poll() is None
            time.sleep(0.2)
        # the SDK reads standard input in a thread that only a line or its end releases
        send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        server.stdin.close()
        code = server.wait(timeout=120)
        err = server.stderr.read().decode()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert code == 0 and err == "", err
    with hippo.Memory(store, namespace="ann") as mem:
        assert mem.check()["ok"]


def test_import_hippo_never_imports_the_sdk() -> None:
    code = "import sys, hippo, hippo.cli, hippo.records; print(sorted(m for m in sys.modules if m.split('.')[0] == 'mcp'))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "[]", proc.stderr


def _free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


@asynccontextmanager
async def http_server(store: Path, tmp_path: Path, host: str = "127.0.0.1") -> AsyncIterator[str]:
    """``hippo mcp --transport streamable-http`` on ``host``, listening: yields its URL; stopped by SIGTERM, which
    must end it with status 0."""
    port = _free_port(host)
    log = open(tmp_path / "server.log", "w")
    server = subprocess.Popen([sys.executable, "-m", "hippo.cli", "mcp", "--path", str(store), "--user", "ann",
                               "--transport", "streamable-http", "--host", host, "--port", str(port)],
                              env=_env(), stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, (tmp_path / "server.log").read_text()
            try:
                socket.create_connection((host, port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the HTTP server did not start listening"
                time.sleep(0.1)
        yield f"http://[{host}]:{port}/mcp" if ":" in host else f"http://{host}:{port}/mcp"
    finally:
        server.send_signal(signal.SIGTERM)
        code = server.wait(timeout=60)
        log.close()
    assert code == 0, (tmp_path / "server.log").read_text()


async def test_streamable_http_round_trip(store, tmp_path) -> None:
    import httpx2

    with hippo.Memory(store, namespace="ann") as mem:
        hits = mem.search("ibex refuge", k=2)
    async with http_server(store, tmp_path) as url:
        client = httpx2.AsyncClient(trust_env=False, timeout=httpx2.Timeout(30, read=120))
        async with streamable_http_client(url, http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                assert {t.name for t in (await session.list_tools()).tools} == TOOLS
                assert await call(session, "search", query="ibex refuge", k=2) == {"hits": jsonable(hits)}
                added = await call(session, "add", text="Sent over HTTP.", speaker="Ann")
        await client.aclose()
    with hippo.Memory(store, namespace="ann") as mem:
        assert mem.get(added["id"]).text == "Sent over HTTP."


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback on this host")
async def test_streamable_http_on_an_ipv6_host(store, tmp_path) -> None:
    # uvicorn listens on whatever address family the host names (asyncio's create_server resolves it); the
    # start-up check of the port was IPv4 only and refused --host ::1 ("Address family for hostname not
    # supported"), exit 2, though the server serves it
    import httpx2

    async with http_server(store, tmp_path, host="::1") as url:
        client = httpx2.AsyncClient(trust_env=False, timeout=httpx2.Timeout(30, read=120))
        async with streamable_http_client(url, http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                assert (await call(session, "search", query="ibex refuge", k=1))["hits"]
        await client.aclose()


@pytest.mark.parametrize("user", ["", "   ", "a\tb", "x" * 513])
def test_a_bad_user_is_refused_naming_user(store, user) -> None:
    # --user names the namespace; the error named "namespace", an argument `hippo mcp` and serve() do not have (and
    # the command line's error names the option, --user)
    from hippo import mcp_server

    with pytest.raises(hippo.InvalidInput, match=r"^user "):
        mcp_server.serve(path=str(store), user=user)
    proc = subprocess.run([sys.executable, "-m", "hippo.cli", "mcp", "--path", str(store), "--user", user],
                          capture_output=True, text=True, timeout=120, env=_env(), stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and proc.stderr.startswith("hippo: error: --user ") and proc.stderr.count("\n") == 1


def test_a_port_in_use_is_a_one_line_error(store) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = subprocess.run([sys.executable, "-m", "hippo.cli", "mcp", "--path", str(store), "--transport",
                               "streamable-http", "--port", str(port)], capture_output=True, text=True, timeout=120,
                              env=_env())
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert f"port {port}" in proc.stderr


def test_the_documented_setup_starts_a_server_on_a_new_machine(tmp_path) -> None:
    """docs/mcp.md's first commands, run as written in a home without ~/.hippo (``hippo`` as this interpreter's
    ``-m hippo.cli``, pip left out): the stdio server starts, creates the store with mode 0600 and ends when its
    client closes standard input."""
    import re
    import shlex

    block = re.search(r"```\n(pip install .*?)```", (Path(__file__).resolve().parents[2] / "docs" / "mcp.md")
                      .read_text(encoding="utf-8"), re.S).group(1)
    commands = [line.split("  #")[0].strip() for line in block.splitlines()]
    stdio = next(c for c in commands if c.startswith("hippo mcp") and not c.endswith("\\"))
    env = {**_env(), "HOME": str(tmp_path)}
    for command in commands[:commands.index(stdio) + 1]:
        if command.startswith("pip "):
            continue
        argv = [str(tmp_path) + a[1:] if a.startswith("~/") else a for a in shlex.split(command)]  # as the shell does
        if argv[0] == "hippo":
            argv = [sys.executable, "-m", "hippo.cli", *argv[1:]]
        proc = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, (command, proc.stderr)
    store = tmp_path / ".hippo" / "memory.db"
    assert store.is_file() and (store.stat().st_mode & 0o777) == 0o600


async def test_a_client_s_yesterday_is_the_day_before_it_asks(tmp_path) -> None:
    # Sunday's tennis and Monday's chess; the client asks on Tuesday, a day after the last message stored
    path = tmp_path / "games.db"
    question = "What did I play in the park yesterday?"
    with hippo.Memory(path, namespace="ann") as mem:
        mem.add("I played tennis in the park", timestamp="2026-11-22T18:00:00+00:00")
        mem.add("I played chess in the park", timestamp="2026-11-23T18:00:00+00:00")
        assert mem.recall(question, budget_tokens=20).messages[0].text == "I played tennis in the park"
    async with stdio_session(path, "--user", "ann") as session:
        got = await call(session, "recall", query=question, budget_tokens=20, asked_at="2026-11-24T09:00:00Z")
        hits = await call(session, "search", query=question, k=1, asked_at="2026-11-24T09:00:00Z")
        bad = await error_text(session, "search", query=question, asked_at="tomorrow")
    assert [m["text"] for m in got["messages"]] == ["I played chess in the park"]
    assert hits["hits"][0]["text"] == "I played chess in the park"
    assert "asked_at" in bad


@pytest.mark.parametrize("kw, name", [
    ({"log_level": "verbose"}, "log_level"), ({"log_level": None}, "log_level"), ({"name": np.array([1, 2])}, "name"),
    ({"name": ""}, "name"), ({"name": "a\ud800"}, "name"), ({"mem": None}, "mem"),
])
def test_build_server_refuses_bad_arguments_by_name(kw, name):
    """A log level the SDK does not know escaped as pydantic's ValidationError, an array as the name as numpy's
    ValueError; a mem that is no Memory was taken and failed at the first tool call."""
    from hippo import mcp_server

    with hippo.Memory(None) as mem:
        kw = {"mem": mem, **kw}
        with pytest.raises(hippo.InvalidInput, match=f"^{name} "):
            mcp_server.build_server(kw.pop("mem"), **kw)


@pytest.mark.parametrize("kw, name", [
    ({"host": 5}, "host"), ({"host": ""}, "host"), ({"host": "a\ud800"}, "host"), ({"host": "x" * 300}, "host"),
    ({"transport": np.array([1, 2])}, "transport"), ({"log_level": np.array([1, 2])}, "log_level"),
])
def test_serve_refuses_bad_arguments_by_name_before_opening_the_store(tmp_path, kw, name):
    """A host that is no string escaped as TypeError from getaddrinfo, one IDNA cannot encode as UnicodeError, an
    array as transport or log level as numpy's ValueError."""
    from hippo import mcp_server

    path = tmp_path / "never.db"
    with pytest.raises(hippo.InvalidInput, match=name):
        mcp_server.serve(**{"path": str(path), "user": "ann", "transport": "streamable-http", "port": 18765, **kw})
    assert not path.exists()
