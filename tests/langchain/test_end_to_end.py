"""One LangGraph agent that uses every LangChain / LangGraph adapter on one consolidated hippo memory (issue 22):
``HippoMemoryMiddleware`` with its memory tools, ``HippoContextMiddleware``, ``HippoStore`` (with an embedding
index), ``HippoRetriever`` in recall mode inside a tool, and, on the same file afterwards,
``HippoChatMessageHistory`` and ``HippoMemory``. The model is a scripted fake; nothing leaves the machine."""

from __future__ import annotations

import json
from dataclasses import dataclass

from langchain.agents import create_agent
from langchain.tools import ToolRuntime, tool
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

import hippo
from langchain_hippo import (
    HippoChatMessageHistory,
    HippoContextMiddleware,
    HippoMemory,
    HippoMemoryMiddleware,
    HippoRetriever,
    HippoStore,
)
from tests.concepts import DIMS, embed_texts

from .conftest import CONVERSATION, recording_model

REPORT = json.dumps({"trip": "Dolomites", "days": [{"day": d, "summit": f"peak-{d}", "metres": 2000 + 37 * d}
                                                   for d in range(120)]}, indent=1)


@dataclass
class Context:
    user_id: str


def _build(path):
    memory = hippo.Memory(path)
    ann = memory.using("user.ann")
    ann.add_many({"text": text, "speaker": who, "session_id": sid} for sid, who, text in CONVERSATION)
    ann.consolidate("deep")  # themes and topics exist before the agent starts
    retriever = HippoRetriever(memory=memory, namespace="user.ann", mode="recall", budget_tokens=250)

    @tool
    def save_note(key: str, text: str, runtime: ToolRuntime[Context]) -> str:
        """Keep a note for the user in the long-term store."""
        runtime.store.put(("notes", runtime.context.user_id), key, {"text": text})
        return f"saved {key}"

    @tool
    def find_notes(query: str, runtime: ToolRuntime[Context]) -> str:
        """Search the user's notes by meaning."""
        hits = runtime.store.search(("notes", runtime.context.user_id), query=query, limit=1)
        return "\n".join(h.value["text"] for h in hits)

    @tool
    def recall_units(query: str) -> str:
        """Recall themes and messages about a subject."""
        return "\n".join(f"{d.metadata['level']}: {d.page_content}" for d in retriever.invoke(query))

    @tool
    def trip_report(trip: str) -> str:
        """The full day-by-day report of a trip."""
        return REPORT

    script = [
        AIMessage(content="", tool_calls=[{"name": "memory_search", "id": "c1", "args": {"query": "ibex refuge"}}]),
        AIMessage(content="", tool_calls=[{"name": "recall_units", "id": "c2", "args": {"query": "beagle Pixel"}}]),
        AIMessage(content="", tool_calls=[{"name": "save_note", "id": "c3",
                                           "args": {"key": "pet", "text": "Pixel the beagle chews slippers"}}]),
        AIMessage(content="", tool_calls=[{"name": "find_notes", "id": "c4", "args": {"query": "canine"}}]),
        AIMessage(content="", tool_calls=[{"name": "trip_report", "id": "c5", "args": {"trip": "Dolomites"}}]),
        AIMessage(content="You saw three ibex near the Tre Cime refuge; Pixel is your sister's beagle."),
        AIMessage(content="peak-101 was 5737 metres."),
    ]
    model = recording_model(script)
    store = HippoStore(memory, index={"dims": DIMS, "embed": embed_texts, "fields": ["text"]})
    agent = create_agent(
        model, tools=[save_note, find_notes, recall_units, trip_report], system_prompt="You are Ann's assistant.",
        middleware=[HippoMemoryMiddleware(memory, budget_tokens=300, memory_tools=True),
                    HippoContextMiddleware(memory, min_turn_tokens=50)],
        store=store, context_schema=Context, checkpointer=InMemorySaver())
    return memory, store, agent, model


def test_one_agent_every_adapter_one_consolidated_memory(tmp_path):
    memory, store, agent, model = _build(tmp_path / "agent.db")
    cfg = {"configurable": {"thread_id": "t9"}}
    out = agent.invoke({"messages": [HumanMessage("What did I see in the Dolomites, and who is Pixel?")]}, cfg,
                       context=Context(user_id="ann"))
    tools = {m.name: m.text for m in out["messages"] if isinstance(m, ToolMessage)}
    # HippoMemoryMiddleware's scoped memory tools read the user's consolidated namespace
    assert "three ibex near the Tre Cime refuge" in tools["memory_search"]
    # HippoRetriever in recall mode returns hierarchy units and messages of that namespace
    assert "message: " in tools["recall_units"] and any(
        line.split(":", 1)[0] in ("theme", "semantic", "episode") for line in tools["recall_units"].splitlines())
    # HippoStore: written by one tool, found by meaning by another (the embedding channel: no shared word)
    assert tools["save_note"] == "saved pet" and tools["find_notes"] == "Pixel the beagle chews slippers"
    assert store.get(("notes", "ann"), "pet").value == {"text": "Pixel the beagle chews slippers"}
    # the middleware recalled before the first model call: the consolidated conversation reached the model
    first_system = "\n".join(m.text for m in model.calls[0] if isinstance(m, SystemMessage))
    assert "Dolomites" in first_system and "You are Ann's assistant." in first_system
    # and stored the new turns in the user's namespace, tagged with the thread
    turns = memory.using("user.ann").list(filter={"session_id": "t9"})
    assert [m.role for m in turns][:1] == ["user"] and turns[-1].text.startswith("You saw three ibex")

    # a second turn: the large report of the first turn reaches the model as an index entry, not verbatim
    out = agent.invoke({"messages": [HumanMessage("How high was peak-101?")]}, cfg, context=Context(user_id="ann"))
    sent = "\n".join(m.text for m in model.calls[-1] if isinstance(m, ToolMessage))
    assert REPORT not in sent and "context_index" in sent
    assert any(m.text == REPORT for m in out["messages"] if isinstance(m, ToolMessage))  # the state keeps it all
    assert memory.using("context.t9").entries()

    # the same memory, read through the conversation adapters
    history = HippoChatMessageHistory(memory, session_id="t9", namespace="user.ann")
    assert [type(m) for m in history.messages[:2]] == [HumanMessage, AIMessage]
    assert history.messages[0].text == "What did I see in the Dolomites, and who is Pixel?"
    chain_memory = HippoMemory(memory=memory, namespace="user.ann", budget_tokens=200)
    assert "ibex" in chain_memory.load_memory_variables({"input": "ibex refuge"})["history"]
    chain_memory.save_context({"input": "remember the red tent"}, {"output": "noted"})
    chain_memory.clear()  # takes its own turn only
    assert len(memory.using("user.ann").list(filter={"session_id": "t9"})) == len(turns) + 2
    assert memory.using("user.ann").count() >= len(CONVERSATION)
    store.close()
    memory.close()
