"""Memory tools: LangChain's standard tool suites for each tool, then their behaviour inside an agent."""

from __future__ import annotations

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langchain_tests.integration_tests import ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests

import hippo
from langchain_hippo.tools import make_memory_tools

from .conftest import recording_model, seed


def _tools() -> dict[str, BaseTool]:
    memory = hippo.Memory(None)
    seed(memory)
    return {t.name: t for t in make_memory_tools(memory)}


class _Standard:
    name = ""
    example: dict = {}

    @property
    def tool_constructor(self) -> BaseTool:
        return _tools()[self.name]

    @property
    def tool_invoke_params_example(self) -> dict:
        return self.example


class TestSearchToolUnit(_Standard, ToolsUnitTests):
    name, example = "memory_search", {"query": "beagle", "k": 2}


class TestSearchToolIntegration(_Standard, ToolsIntegrationTests):
    name, example = "memory_search", {"query": "beagle", "k": 2}


class TestReadToolUnit(_Standard, ToolsUnitTests):
    name, example = "memory_read", {"message_id": 1, "before": 1, "after": 1}


class TestReadToolIntegration(_Standard, ToolsIntegrationTests):
    name = "memory_read"

    @property
    def tool_constructor(self) -> BaseTool:
        memory = hippo.Memory(None)
        self.example = {"message_id": seed(memory)[2].id, "before": 1, "after": 1}
        return {t.name: t for t in make_memory_tools(memory)}[self.name]

    @property
    def tool_invoke_params_example(self) -> dict:
        return self.example


class TestTopicsToolUnit(_Standard, ToolsUnitTests):
    name, example = "memory_topics", {}


class TestTopicToolUnit(_Standard, ToolsUnitTests):
    name, example = "memory_topic", {"topic_id": "1"}


def _consolidated_tools() -> dict[str, BaseTool]:
    memory = hippo.Memory(None)
    seed(memory)
    memory.consolidate("deep")  # topics exist once the hierarchy has themes
    return {t.name: t for t in make_memory_tools(memory)}


class TestTopicsToolIntegration(_Standard, ToolsIntegrationTests):
    name, example = "memory_topics", {}

    @property
    def tool_constructor(self) -> BaseTool:
        return _consolidated_tools()[self.name]


class TestTopicToolIntegration(_Standard, ToolsIntegrationTests):
    name = "memory_topic"

    @property
    def tool_constructor(self) -> BaseTool:
        tools = _consolidated_tools()
        first = tools["memory_topics"].invoke({}).splitlines()[0]
        self.example = {"topic_id": first[1: first.index("]")]}
        return tools[self.name]

    @property
    def tool_invoke_params_example(self) -> dict:
        return self.example


def test_four_tools_with_schemas(seeded):
    tools = make_memory_tools(seeded)
    assert [t.name for t in tools] == ["memory_search", "memory_read", "memory_topics", "memory_topic"]
    assert all(isinstance(t, BaseTool) and t.description for t in tools)
    assert set(tools[0].args) == {"query", "k", "asked_at"} and set(tools[1].args) == {"message_id", "before", "after"}


async def test_search_and_read(seeded):
    search, read, _, _ = make_memory_tools(seeded)
    out = search.invoke({"query": "ibex refuge", "k": 1})
    target = seeded.search("ibex refuge", k=1)[0]
    assert out.startswith(f"[{target.id}] 2024-03-01 09:02 Ann: Yes, three ibex")
    assert await search.ainvoke({"query": "ibex refuge", "k": 1}) == out
    window = read.invoke({"message_id": target.id, "before": 1, "after": 1}).splitlines()
    assert len(window) == 3 and window[1].startswith(f"> [{target.id}]")
    assert "ibex up there" in window[0] and "beagle named Pixel" in window[2]
    assert await read.ainvoke({"message_id": target.id, "before": 1, "after": 1}) == "\n".join(window)
    assert search.invoke({"query": "xylophone"}) == "No matching memories."
    assert len(make_memory_tools(seeded, k=2)[0].invoke({"query": "beagle Pixel ibex cello Ann"}).splitlines()) == 2


def test_errors_come_back_to_the_model(seeded):
    search, read, _, _ = make_memory_tools(seeded)
    assert "999999" in read.invoke({"message_id": 999999})  # NotFound -> readable tool error
    assert "query" in search.invoke({"query": "   "})
    bad = read.invoke({"message_id": "seven"})
    assert "message_id" in bad


def test_topics_tools(seeded):
    _, _, topics, topic = make_memory_tools(seeded)
    if not callable(getattr(seeded, "topics", None)):
        assert "topics are unavailable" in topics.invoke({})
        assert "topics are unavailable" in topic.invoke({"topic_id": "1"})
        pytest.skip("this hippo has no Memory.topics(); hierarchy not built yet")
    listing = topics.invoke({})
    assert listing.startswith("[")
    first_id = listing.split("]")[0].lstrip("[")
    doc = topic.invoke({"topic_id": first_id})
    assert "seq=" in doc


def test_namespace_and_bad_arguments(memory):
    memory.using("proj").add("The launch date moved to October.")
    search = make_memory_tools(memory, namespace="proj")[0]
    assert "October" in search.invoke({"query": "launch date"})
    assert make_memory_tools(memory)[0].invoke({"query": "launch date"}) == "No matching memories."
    with pytest.raises(hippo.InvalidInput, match="memory"):
        make_memory_tools("not a memory")
    with pytest.raises(hippo.InvalidInput, match="k"):
        make_memory_tools(memory, k=0)


def test_agent_uses_search_then_read(seeded):
    target = seeded.search("beagle slippers", k=1)[0]
    model = recording_model([
        AIMessage(content="", tool_calls=[{"name": "memory_search", "id": "s", "args": {"query": "beagle slippers"}}]),
        AIMessage(content="", tool_calls=[{"name": "memory_read", "id": "r", "args": {"message_id": target.id}}]),
        AIMessage(content="Pixel chewed the slippers."),
    ])
    agent = create_agent(model, tools=make_memory_tools(seeded))
    out = agent.invoke({"messages": [HumanMessage("What did Pixel chew?")]})
    tool_msgs = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert f"[{target.id}]" in tool_msgs[0].text and "slippers" in tool_msgs[0].text
    assert f"> [{target.id}]" in tool_msgs[1].text


def test_a_date_shows_its_year_in_four_digits():
    """The year 64 showed as "64-07-18", which a model reads as 1964 or 2064; each line shows the speaker's wall
    clock as ISO-8601 writes it."""
    memory = hippo.Memory(None, config={"timestamp_min_year": 1})
    memory.add("The fire of Rome began near the Circus Maximus.", speaker="Tacitus",
               timestamp="0064-07-18T23:00:00+01:00")
    tools = {t.name: t for t in make_memory_tools(memory)}
    assert tools["memory_search"].invoke({"query": "fire of Rome"}) == \
        "[1] 0064-07-18 23:00 Tacitus: The fire of Rome began near the Circus Maximus."
    memory.close()
