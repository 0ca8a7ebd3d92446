"""The LangChain adapters on the user's calendar: ``timezone`` dates the messages an adapter stamps and the questions
it asks on the user's days, not UTC's. The days, worked out by hand, are those of
tests/time_zone_days.py."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage

import hippo
import langchain_hippo._messages as lc_messages
from langchain_hippo import HippoChatMessageHistory, HippoMemoryMiddleware, HippoRetriever
from langchain_hippo.tools import make_memory_tools

from tests.time_zone_days import (BOWLING, CHESS, PARK_QUESTION, QUESTION, SWIMMING, TENNIS, TUESDAY_9_UTC,
                                  WEDNESDAY_2_UTC, add_days, add_park_days, clock_setter, new_york)

from .conftest import recording_model
from .test_middleware_turns import _recalled

NEW_YORK = new_york()


@pytest.fixture
def clock(monkeypatch):
    """The adapters' clock, set to an instant: ``clock(instant)``."""
    return clock_setter(monkeypatch, lc_messages)


def _cfg(**configurable) -> dict:
    return {"configurable": {"user_id": "ann", "thread_id": "t", **configurable}}


@pytest.mark.parametrize("zone, recalled", [(None, SWIMMING), ("America/New_York", BOWLING), ("-05:00", BOWLING)])
def test_the_middleware_asks_on_the_user_s_calendar(clock, zone, recalled):
    clock(WEDNESDAY_2_UTC)
    memory = hippo.Memory(None)
    add_days(memory.using("user.ann"))
    model = recording_model([AIMessage("Bowling.")])
    agent = create_agent(model, middleware=[HippoMemoryMiddleware(memory, budget_tokens=20, timezone=zone)])
    agent.invoke({"messages": [HumanMessage(QUESTION)]}, _cfg())
    assert _recalled(model.calls[0]) == [recalled]
    asked = [m for m in memory.using("user.ann").list() if m.text == QUESTION][0]
    assert asked.timestamp == WEDNESDAY_2_UTC
    assert asked.timestamp.utcoffset() == (timedelta(0) if zone is None else timedelta(hours=-5))
    memory.close()


@pytest.mark.parametrize("where", ["config", "context"])
def test_a_run_s_time_zone_takes_precedence(clock, where):
    clock(WEDNESDAY_2_UTC)
    memory = hippo.Memory(None)
    add_days(memory.using("user.ann"))
    model = recording_model([AIMessage("Bowling.")])
    agent = create_agent(model, middleware=[HippoMemoryMiddleware(memory, budget_tokens=20, timezone="+09:00")])
    if where == "config":
        agent.invoke({"messages": [HumanMessage(QUESTION)]}, _cfg(timezone="America/New_York"))
    else:
        agent.invoke({"messages": [HumanMessage(QUESTION)]}, _cfg(), context={"timezone": "America/New_York"})
    assert _recalled(model.calls[0]) == [BOWLING]
    memory.close()


async def test_the_middleware_asks_on_the_user_s_calendar_async(clock):
    clock(WEDNESDAY_2_UTC)
    memory = hippo.Memory(None)
    add_days(memory.using("user.ann"))
    model = recording_model([AIMessage("Bowling.")])
    agent = create_agent(model, middleware=[HippoMemoryMiddleware(memory, budget_tokens=20)])
    await agent.ainvoke({"messages": [HumanMessage(QUESTION)]}, _cfg(), context={"timezone": "America/New_York"})
    assert _recalled(model.calls[0]) == [BOWLING]
    assert memory.using("user.ann").list()[-1].timestamp.utcoffset() == timedelta(hours=-5)
    memory.close()


def test_a_question_dated_in_utc_is_asked_on_the_user_s_calendar():
    """A client stamping its messages with ``datetime.now(timezone.utc)``: the instant is the user's, the calendar is
    the configured zone's."""
    memory = hippo.Memory(None)
    add_days(memory.using("user.ann"))
    model = recording_model([AIMessage("Bowling.")])
    agent = create_agent(model, middleware=[HippoMemoryMiddleware(memory, budget_tokens=20,
                                                                  timezone="America/New_York")])
    asked = HumanMessage(QUESTION, additional_kwargs={"hippo_timestamp": WEDNESDAY_2_UTC})
    agent.invoke({"messages": [asked]}, _cfg())
    assert _recalled(model.calls[0]) == [BOWLING]
    stored = [m for m in memory.using("user.ann").list() if m.text == QUESTION][0].timestamp
    assert stored == WEDNESDAY_2_UTC and stored.utcoffset() == timedelta(hours=-5)
    memory.close()


def test_a_bad_time_zone_is_refused_by_name():
    memory = hippo.Memory(None)
    for bad in ("Mars/Olympus_Mons", "+25:00", "", 5, "America"):
        with pytest.raises(hippo.InvalidInput, match="timezone"):
            HippoMemoryMiddleware(memory, timezone=bad)
        with pytest.raises(hippo.InvalidInput, match="timezone"):
            HippoChatMessageHistory(memory, session_id="s", timezone=bad)
    with pytest.raises(hippo.InvalidInput, match="timezone_key"):
        HippoMemoryMiddleware(memory, timezone_key="")
    model = recording_model([AIMessage("Noted.")])
    agent = create_agent(model, middleware=[HippoMemoryMiddleware(memory)])
    with pytest.raises(hippo.InvalidInput, match=r"config\['configurable'\]\['timezone'\]"):
        agent.invoke({"messages": [HumanMessage("Where do I live?")]}, _cfg(timezone="Mars/Olympus_Mons"))
    assert model.calls == [] and memory.using("user.ann").list() == []
    # a run with no question to recall for (a notification the harness added) fails before the model too
    note = HumanMessage("Summary of the earlier turns.", additional_kwargs={"lc_source": "summarization"})
    with pytest.raises(hippo.InvalidInput, match=r"context\['timezone'\]"):
        agent.invoke({"messages": [note]}, _cfg(), context={"timezone": "+99:00"})
    assert model.calls == []
    memory.close()


def test_a_time_zone_set_on_a_made_middleware_is_checked_and_read_by_the_next_run_and_its_tools(clock):
    """One middleware, its zone set after it was made: a value that names no zone is refused by name and the
    setting left as it was; the next run recalls (the clock at 02:00 UTC on Wednesday: Tuesday 21:00 in New York,
    "yesterday" Monday's bowling) and its memory tools ask (the model's ``asked_at`` in UTC put on the zone's
    calendar, bowling again, not Tuesday's swimming of +09:00) on the zone set."""
    clock(WEDNESDAY_2_UTC)
    memory = hippo.Memory(None)
    add_days(memory.using("user.ann"))
    middleware = HippoMemoryMiddleware(memory, budget_tokens=20, memory_tools=True, timezone="+09:00")
    for bad in ("Mars/Olympus_Mons", 5):
        with pytest.raises(hippo.InvalidInput, match=r"^timezone"):
            middleware.timezone = bad
        assert middleware.timezone == "+09:00"
    middleware.timezone = "America/New_York"
    assert middleware.timezone == "America/New_York"
    model = recording_model([
        AIMessage("", tool_calls=[{"name": "memory_search", "id": "s",
                                   "args": {"query": QUESTION, "k": 3, "asked_at": "2024-03-06T02:00:00Z"}}]),
        AIMessage("Bowling."),
    ])
    out = create_agent(model, middleware=[middleware]).invoke({"messages": [HumanMessage(QUESTION)]}, _cfg())
    assert _recalled(model.calls[0]) == [BOWLING]
    found = [m for m in out["messages"] if m.type == "tool"][0]  # the question itself, stored by then, and the days
    assert [line.split(": ", 1)[1] for line in found.text.splitlines() if "went" in line][0] == BOWLING
    asked = [m for m in memory.using("user.ann").list() if m.text == QUESTION][0]
    assert asked.timestamp == WEDNESDAY_2_UTC and asked.timestamp.utcoffset() == timedelta(hours=-5)
    memory.close()


@pytest.mark.parametrize("instant, local, offset", [
    (datetime(2024, 7, 10, 2, 0, tzinfo=timezone.utc), datetime(2024, 7, 9, 22, 0), -4),   # EDT
    (datetime(2024, 1, 10, 2, 0, tzinfo=timezone.utc), datetime(2024, 1, 9, 21, 0), -5),   # EST
])
def test_the_chat_history_dates_on_the_user_s_calendar_summer_and_winter(clock, instant, local, offset):
    clock(instant)
    memory = hippo.Memory(None)
    history = HippoChatMessageHistory(memory, session_id="s", timezone="America/New_York")
    utc = instant.strftime("%Y-%m-%dT%H:%M:%S")
    history.add_messages([HumanMessage("Tonight I'm going out to the jazz club."),
                          AIMessage("Enjoy it!", additional_kwargs={"hippo_timestamp": instant.timestamp()}),
                          HumanMessage("Thanks.", additional_kwargs={"hippo_timestamp": utc + "Z"}),  # toISOString
                          AIMessage("Bye.", additional_kwargs={"hippo_timestamp": utc}),  # naive: UTC
                          HumanMessage("Paris!", additional_kwargs={"hippo_timestamp": utc + "+01:00"})])
    *here, paris = memory.list()
    assert len(here) == 4
    for item in here:
        assert item.timestamp == instant
        assert item.timestamp.utcoffset() == timedelta(hours=offset)
        assert item.timestamp.replace(tzinfo=None) == local  # the New York wall clock: the evening before
    assert paris.timestamp.utcoffset() == timedelta(hours=1)  # said with its own offset: kept
    # the day its "tonight" names is the user's, as an ISO-8601 time with the offset would make it
    same = hippo.Memory(None)
    same.add("Tonight I'm going out to the jazz club.", timestamp=instant.astimezone(timezone(timedelta(hours=offset))))
    got = memory.search("jazz club", k=1)[0]
    assert got.event_time == same.search("jazz club", k=1)[0].event_time
    assert got.event_time.date() == local.date()
    assert history.messages[1].additional_kwargs["hippo_timestamp"] == instant.timestamp()  # kept as it was given
    memory.close()
    same.close()


def test_without_a_time_zone_the_chat_history_dates_in_utc(clock):
    clock(WEDNESDAY_2_UTC)
    memory = hippo.Memory(None)
    HippoChatMessageHistory(memory, session_id="s").add_messages([HumanMessage("Tonight I'm going out.")])
    assert memory.list()[0].timestamp == WEDNESDAY_2_UTC
    assert memory.list()[0].timestamp.utcoffset() == timedelta(0)
    memory.close()


def test_the_classic_memory_asks_and_dates_on_the_user_s_calendar(clock):
    pytest.importorskip("langchain_classic")
    from langchain_hippo import HippoMemory

    clock(WEDNESDAY_2_UTC)
    memory = hippo.Memory(None)
    add_days(memory)
    plain = HippoMemory(memory=memory, budget_tokens=20)
    zoned = HippoMemory(memory=memory, budget_tokens=20, timezone="America/New_York")
    assert zoned.load_memory_variables({"input": QUESTION})["history"].splitlines()[-1] == f"user: {BOWLING}"
    zoned.save_context({"input": "Tonight I'm going out."}, {"output": "Have fun."})
    turn = zoned.chat_memory.messages
    assert [m.text for m in turn] == ["Tonight I'm going out.", "Have fun."]
    stored = memory.list(filter={"session_id": zoned.session_id})
    assert [i.timestamp.utcoffset() for i in stored] == [timedelta(hours=-5)] * 2
    assert all(i.timestamp == WEDNESDAY_2_UTC for i in stored)
    with pytest.raises(hippo.InvalidInput, match="timezone"):
        HippoMemory(memory=memory, timezone="Nowhere/Land")
    # without one, the turns are dated in UTC and the question asked as of the latest message, as before
    plain.save_context({"input": "Noted?"}, {"output": "Noted."})
    assert [i.timestamp.utcoffset() for i in memory.list(filter={"session_id": plain.session_id})] == \
        [timedelta(0)] * 2
    memory.close()


class TestRetrieverAsks:
    """``HippoRetriever``: a call's ``asked_at``, else now on ``timezone``'s calendar, else as of the latest message."""

    @pytest.mark.parametrize("mode", ["search", "recall"])
    async def test_a_call_s_asked_at_counts_its_days(self, mode):
        memory = hippo.Memory(None)
        add_park_days(memory)
        retriever = HippoRetriever(memory=memory, k=1, budget_tokens=20, mode=mode)
        assert [d.page_content for d in retriever.invoke(PARK_QUESTION)] == [TENNIS]  # as of Monday's message
        for asked in ("2026-11-24T09:00:00Z", TUESDAY_9_UTC, TUESDAY_9_UTC.timestamp()):
            assert [d.page_content for d in retriever.invoke(PARK_QUESTION, asked_at=asked)] == [CHESS]
            assert [d.page_content for d in await retriever.ainvoke(PARK_QUESTION, asked_at=asked)] == [CHESS]
        memory.close()

    @pytest.mark.parametrize("zone, recalled", [("America/New_York", BOWLING), ("+09:00", SWIMMING)])
    async def test_with_a_time_zone_a_question_is_asked_now_on_its_calendar(self, clock, zone, recalled):
        clock(WEDNESDAY_2_UTC)  # Tuesday 21:00 in New York, Wednesday 11:00 at +09:00
        memory = hippo.Memory(None)
        add_days(memory)
        retriever = HippoRetriever(memory=memory, k=1, timezone=zone)
        assert [d.page_content for d in retriever.invoke(QUESTION)] == [recalled]
        assert [d.page_content for d in await retriever.ainvoke(QUESTION)] == [recalled]
        other = "+09:00" if zone == "America/New_York" else "America/New_York"  # a call's own zone takes precedence
        assert [d.page_content for d in retriever.invoke(QUESTION, timezone=other)] != [recalled]
        # a time given in UTC is put on the zone's calendar: 02:00 UTC on Wednesday is Tuesday evening in New York
        got = retriever.invoke(QUESTION, asked_at="2024-03-06T02:00:00Z", timezone="America/New_York")
        assert [d.page_content for d in got] == [BOWLING]
        memory.close()

    def test_the_clock_is_read_only_with_a_time_zone(self, clock):
        clock(TUESDAY_9_UTC)
        memory = hippo.Memory(None)
        add_park_days(memory)
        assert [d.page_content for d in HippoRetriever(memory=memory, k=1).invoke(PARK_QUESTION)] == [TENNIS]
        assert [d.page_content for d in HippoRetriever(memory=memory, k=1, timezone="Z").invoke(PARK_QUESTION)] == \
            [CHESS]
        memory.close()

    async def test_a_run_s_own_zone_is_read_from_its_config_and_context(self, clock):
        """One retriever serving users in several zones (a chain, a retriever tool, a graph node): a run's zone under
        ``timezone_key`` in its ``configurable`` or LangGraph runtime context takes precedence over the retriever's,
        as the middleware reads it. At 02:00 UTC on Wednesday a New Yorker's "yesterday" is Monday (bowling), a
        Tokyoite's (11:00 on Wednesday) Tuesday (swimming)."""
        from langchain_core.runnables import RunnableLambda
        from langchain_core.tools import create_retriever_tool
        from langgraph.graph import END, START, StateGraph
        from typing_extensions import TypedDict

        clock(WEDNESDAY_2_UTC)
        memory = hippo.Memory(None)
        add_days(memory)
        retriever = HippoRetriever(memory=memory, k=1, timezone="+09:00")

        def texts(docs):
            return [d.page_content for d in docs]

        ny = {"configurable": {"timezone": "America/New_York"}}
        assert texts(retriever.invoke(QUESTION)) == [SWIMMING]
        assert texts(retriever.invoke(QUESTION, ny)) == [BOWLING]
        assert texts(await retriever.ainvoke(QUESTION, ny)) == [BOWLING]
        assert texts(retriever.invoke(QUESTION, ny, timezone="+09:00")) == [SWIMMING]  # the call's own comes first
        chain = RunnableLambda(lambda q: q) | retriever
        assert texts(chain.invoke(QUESTION, ny)) == [BOWLING]
        assert texts(await chain.ainvoke(QUESTION, ny)) == [BOWLING]
        assert texts(chain.invoke(QUESTION)) == [SWIMMING]
        tool = create_retriever_tool(retriever, "memory", "Search the memory.")
        assert tool.invoke({"query": QUESTION}, ny) == BOWLING
        renamed = HippoRetriever(memory=memory, k=1, timezone_key="tz")
        assert texts(renamed.invoke(QUESTION, {"configurable": {"tz": "America/New_York"}})) == [BOWLING]
        assert texts(renamed.invoke(QUESTION, {"configurable": {"tz": "+09:00"}})) == [SWIMMING]

        class State(TypedDict):
            found: list[str]

        def node(state: State) -> State:
            return {"found": texts(retriever.invoke(QUESTION))}

        graph = StateGraph(State, context_schema=dict).add_node(node).add_edge(START, "node").add_edge("node", END)
        graph = graph.compile()
        assert graph.invoke({"found": []}, context={"timezone": "America/New_York"})["found"] == [BOWLING]
        assert graph.invoke({"found": []}, ny)["found"] == [BOWLING]
        assert graph.invoke({"found": []})["found"] == [SWIMMING]
        with pytest.raises(hippo.InvalidInput, match=r"config\['configurable'\]\['timezone'\]"):
            retriever.invoke(QUESTION, {"configurable": {"timezone": "Mars/Olympus_Mons"}})
        with pytest.raises(hippo.InvalidInput, match=r"context\['timezone'\]"):
            graph.invoke({"found": []}, context={"timezone": "+99:00"})
        with pytest.raises(hippo.InvalidInput, match="timezone_key"):
            HippoRetriever(memory=memory, timezone_key="")
        memory.close()

    def test_a_bad_time_is_refused_by_name(self):
        memory = hippo.Memory(None)
        add_park_days(memory)
        retriever = HippoRetriever(memory=memory)
        for bad in ("tomorrow", True, float("nan"), 1e13, ["2026-11-24"]):
            with pytest.raises(hippo.InvalidInput, match=r"^asked_at"):
                retriever.invoke(PARK_QUESTION, asked_at=bad)
        with pytest.raises(hippo.InvalidInput, match=r"^asked_at"):
            retriever.invoke("", asked_at="tomorrow")  # refused even when nothing is left to ask
        for bad in ("Mars/Olympus_Mons", "+25:00", 5):
            with pytest.raises(hippo.InvalidInput, match=r"^timezone"):
                retriever.invoke(PARK_QUESTION, timezone=bad)
            with pytest.raises(hippo.InvalidInput, match="timezone"):
                HippoRetriever(memory=memory, timezone=bad)
        memory.close()


def _first_line(out: str) -> str:
    """The text of a search tool's first result line (``[id] date speaker: text``)."""
    return out.splitlines()[0].split(": ", 1)[1]


class TestToolsAsk:
    """``memory_search``: the model's ``asked_at``, else now on the tools' ``timezone`` calendar (UTC's), else, under
    the middleware, when the turn's question was asked."""

    async def test_the_model_s_asked_at_counts_its_days(self):
        memory = hippo.Memory(None)
        add_park_days(memory)
        search = make_memory_tools(memory, k=1)[0]
        for asked in ("2026-11-24T09:00:00Z", "2026-11-24T04:00:00-05:00"):
            assert _first_line(search.invoke({"query": PARK_QUESTION, "asked_at": asked})) == CHESS
            assert _first_line(await search.ainvoke({"query": PARK_QUESTION, "asked_at": asked})) == CHESS
        # as the model gives it: the error names the argument, and the model can correct its call
        for bad in ("tomorrow", "2026-13-01"):
            out = search.invoke({"query": PARK_QUESTION, "asked_at": bad})
            assert out.startswith("asked_at") and "played" not in out
        memory.close()

    @pytest.mark.parametrize("zone, recalled", [(None, SWIMMING), ("America/New_York", BOWLING), ("+09:00", SWIMMING)])
    async def test_without_it_the_search_is_asked_now(self, clock, zone, recalled):
        clock(WEDNESDAY_2_UTC)  # Tuesday 21:00 in New York; Wednesday in UTC and at +09:00
        memory = hippo.Memory(None)
        add_days(memory)
        search = make_memory_tools(memory, k=1, timezone=zone)[0]
        assert _first_line(search.invoke({"query": QUESTION})) == recalled
        assert _first_line(await search.ainvoke({"query": QUESTION})) == recalled
        memory.close()

    async def test_a_run_s_own_zone_is_read_from_its_config_and_context(self, clock):
        """The tools of one server's agent, serving users in several zones: a run's zone under ``timezone_key`` in
        its ``configurable`` or LangGraph runtime context takes precedence over the tools' ``timezone``, as the
        middleware reads it. At 02:00 UTC on Wednesday a New Yorker's "yesterday" is Monday, a Tokyoite's Tuesday."""
        from langgraph.graph import END, START, StateGraph
        from typing_extensions import TypedDict

        clock(WEDNESDAY_2_UTC)
        memory = hippo.Memory(None)
        add_days(memory)
        search = make_memory_tools(memory, k=1, timezone="+09:00")[0]
        ny = {"configurable": {"timezone": "America/New_York"}}
        assert _first_line(search.invoke({"query": QUESTION})) == SWIMMING
        assert _first_line(search.invoke({"query": QUESTION}, ny)) == BOWLING
        assert _first_line(await search.ainvoke({"query": QUESTION}, ny)) == BOWLING
        renamed = make_memory_tools(memory, k=1, timezone_key="tz")[0]
        assert _first_line(renamed.invoke({"query": QUESTION}, {"configurable": {"tz": "America/New_York"}})) == BOWLING

        class State(TypedDict):
            found: str

        def node(state: State) -> State:
            return {"found": _first_line(search.invoke({"query": QUESTION}))}

        graph = StateGraph(State, context_schema=dict).add_node(node).add_edge(START, "node").add_edge("node", END)
        graph = graph.compile()
        assert graph.invoke({"found": ""}, context={"timezone": "America/New_York"})["found"] == BOWLING
        assert graph.invoke({"found": ""})["found"] == SWIMMING
        out = search.invoke({"query": QUESTION}, {"configurable": {"timezone": "Mars/Olympus_Mons"}})
        assert out.startswith("config['configurable']['timezone']") and "Sam" not in out
        with pytest.raises(hippo.InvalidInput, match="timezone_key"):
            make_memory_tools(memory, timezone_key="")
        memory.close()

    async def test_the_model_s_asked_at_in_utc_is_put_on_the_user_s_calendar(self):
        """A model writes the time it asks at in UTC ("Z", as it reads the clock): 02:00 UTC on Wednesday is Tuesday
        21:00 in New York, so the New Yorker's "yesterday" is Monday (bowling), not UTC's Tuesday (swimming), as the
        retriever puts a call's ``asked_at`` in UTC on the zone; a time with its own offset keeps it."""
        memory = hippo.Memory(None)
        add_days(memory)
        for search, config in ((make_memory_tools(memory, k=1, timezone="America/New_York")[0], None),
                               (make_memory_tools(memory, k=1)[0], {"configurable": {"timezone": "America/New_York"}})):
            args = {"query": QUESTION, "asked_at": "2024-03-06T02:00:00Z"}
            assert _first_line(search.invoke(args, config)) == BOWLING
            assert _first_line(await search.ainvoke(args, config)) == BOWLING
            args = {"query": QUESTION, "asked_at": "2024-03-06T11:00:00+09:00"}  # the user said where they were
            assert _first_line(search.invoke(args, config)) == SWIMMING
        retriever = HippoRetriever(memory=memory, k=1, timezone="America/New_York")
        assert [d.page_content for d in retriever.invoke(QUESTION, asked_at="2024-03-06T02:00:00Z")] == [BOWLING]
        memory.close()

    def test_under_the_middleware_the_model_s_asked_at_in_utc_is_on_the_run_s_calendar(self):
        memory = hippo.Memory(None)
        add_days(memory.using("user.ann"))
        model = recording_model([
            AIMessage("", tool_calls=[{"name": "memory_search", "id": "s",
                                       "args": {"query": QUESTION, "k": 3, "asked_at": "2024-03-06T02:00:00Z"}}]),
            AIMessage("Bowling."),
        ])
        agent = create_agent(model, middleware=[HippoMemoryMiddleware(memory, budget_tokens=1, memory_tools=True)])
        question = HumanMessage(QUESTION, additional_kwargs={"hippo_timestamp": "2024-03-05T21:00:00-05:00"})
        out = agent.invoke({"messages": [question]}, _cfg(), context={"timezone": "America/New_York"})
        found = [m for m in out["messages"] if m.type == "tool"][0]  # the question itself, stored by then, and the days
        assert [line.split(": ", 1)[1] for line in found.text.splitlines() if "went" in line][0] == BOWLING
        memory.close()

    def test_a_bad_time_zone_or_clock_is_refused_by_name(self):
        memory = hippo.Memory(None)
        for bad in ("Mars/Olympus_Mons", "+25:00", 5):
            with pytest.raises(hippo.InvalidInput, match=r"^timezone"):
                make_memory_tools(memory, timezone=bad)
        with pytest.raises(hippo.InvalidInput, match=r"^asked"):
            make_memory_tools(memory, asked="2026-11-24")
        memory.close()

    @pytest.mark.parametrize("asked", ["message", "context"])
    def test_the_middleware_s_tools_ask_when_the_turn_is(self, clock, asked):
        """A Tuesday question, about "yesterday" after Sunday's and Monday's messages, gets Monday's: the turn's
        question is dated Tuesday (its ``hippo_timestamp``), or the run's zone reads the clock as Tuesday."""
        clock(TUESDAY_9_UTC + timedelta(hours=18))  # 03:00 on Wednesday in UTC, 22:00 on Tuesday in New York
        memory = hippo.Memory(None)
        add_park_days(memory.using("user.ann"))
        model = recording_model([
            AIMessage("", tool_calls=[{"name": "memory_search", "id": "s", "args": {"query": PARK_QUESTION, "k": 3}}]),
            AIMessage("Chess."),
        ])
        agent = create_agent(model, middleware=[HippoMemoryMiddleware(memory, budget_tokens=1, memory_tools=True)])
        if asked == "message":
            question = HumanMessage(PARK_QUESTION, additional_kwargs={"hippo_timestamp": "2026-11-24T09:00:00Z"})
            out = agent.invoke({"messages": [question]}, _cfg())
        else:
            out = agent.invoke({"messages": [HumanMessage(PARK_QUESTION)]}, _cfg(),
                               context={"timezone": "America/New_York"})
        found = [m for m in out["messages"] if m.type == "tool"][0]  # the question itself, stored by then, and the days
        assert [line.split(": ", 1)[1] for line in found.text.splitlines() if "played" in line] == [CHESS, TENNIS]
        memory.close()
