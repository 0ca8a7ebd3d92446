"""HippoContextMiddleware with the tool outputs it exists for: large, highly repetitive ones (a JSON list of identical
records, log lines) that deflate hundreds of times. They are indexed, the store is closed and reopened, and the
entries expand back to the exact output."""

from __future__ import annotations

import json

from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

import hippo
from langchain_hippo import HippoContextMiddleware

from .conftest import recording_model

ROWS = json.dumps([{"sku": "SKU-0001", "stock": 0, "ok": True}] * 3000, indent=2)
LOGS = "2024-05-01T12:00:00Z INFO worker-3 request served in 12 ms (status=200)\n" * 3000


@tool
def list_rows(table: str) -> str:
    """Every row of a table as JSON."""
    return ROWS


@tool
def tail_log(service: str) -> str:
    """The service's recent log."""
    return LOGS


def test_repetitive_tool_outputs_survive_a_restart(tmp_path) -> None:
    path = tmp_path / "ctx.db"
    script = [
        AIMessage(content="", tool_calls=[{"name": "list_rows", "id": "c1", "args": {"table": "stock"}}]),
        AIMessage(content="Loaded."),
        AIMessage(content="", tool_calls=[{"name": "tail_log", "id": "c2", "args": {"service": "api"}}]),
        AIMessage(content="Read."),
        AIMessage(content="Done."),
    ]
    memory = hippo.Memory(path)
    agent = create_agent(recording_model(script), tools=[list_rows, tail_log], middleware=[
        HippoContextMiddleware(memory)], checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t1"}}
    agent.invoke({"messages": [{"role": "user", "content": "Load the stock table."}]}, cfg)
    agent.invoke({"messages": [{"role": "user", "content": "Show the api log."}]}, cfg)
    agent.invoke({"messages": [{"role": "user", "content": "Thanks."}]}, cfg)  # older outputs are indexed by now
    memory.close()
    with hippo.Memory(path, namespace="context.t1") as mem:
        entries = mem.entries()
        assert len(entries) == 2
        full = {mem.complete(e.id, max_tokens=10**6).text for e in entries}
        assert full == {ROWS, LOGS}
        assert mem.check()["ok"]
