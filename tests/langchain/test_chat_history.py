"""HippoChatMessageHistory and the langchain_classic HippoMemory."""

from __future__ import annotations

import asyncio
import importlib
import sys
import warnings
from datetime import datetime, timedelta, timezone

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables.history import RunnableWithMessageHistory

import hippo
from langchain_hippo import HippoChatMessageHistory


def test_round_trip_is_lossless(memory):
    history = HippoChatMessageHistory(memory, session_id="s1")
    messages = [
        SystemMessage("Be brief."),
        HumanMessage("Book a table for two at 8pm.", id="h1", name="ann"),
        AIMessage("", tool_calls=[{"name": "book", "args": {"people": 2, "time": "20:00"}, "id": "call1"}], id="a1"),
        ToolMessage("Booked table 12.", tool_call_id="call1", id="t1"),
        AIMessage([{"type": "text", "text": "Done: table 12 at 8pm."}], id="a2"),
    ]
    history.add_messages(messages)
    assert history.messages == messages
    assert [i.role for i in memory.list()] == ["system", "user", "assistant", "tool", "assistant"]
    assert memory.search("table booked", k=5)  # the text is indexed by hippo


async def test_sessions_are_separate_and_clear_only_one(memory):
    one = HippoChatMessageHistory(memory, session_id="one")
    two = HippoChatMessageHistory(memory, session_id="two")
    one.add_user_message("hello from one")
    await two.aadd_messages([HumanMessage("hello from two"), AIMessage("hi two")])
    assert [m.text for m in await one.aget_messages()] == ["hello from one"]
    assert [m.text for m in two.messages] == ["hello from two", "hi two"]
    await two.aclear()
    assert two.messages == [] and [m.text for m in one.messages] == ["hello from one"]
    one.clear()
    assert memory.count() == 0


@pytest.mark.filterwarnings("ignore:The class `InMemoryChatMessageHistory` was deprecated")
async def test_concurrent_async_adds_keep_the_order_they_were_called_in(memory):
    """200 ``aadd_messages`` tasks of one ``asyncio.gather`` read back in call order, every message once, as from
    ``InMemoryChatMessageHistory``."""
    from langchain_core.chat_history import InMemoryChatMessageHistory

    ours, reference = HippoChatMessageHistory(memory, session_id="s"), InMemoryChatMessageHistory()
    for history in (ours, reference):
        await asyncio.gather(*(history.aadd_messages([HumanMessage(f"message {i}", id=f"m{i}")]) for i in range(200)))
    assert await ours.aget_messages() == await reference.aget_messages()


@pytest.mark.filterwarnings("ignore:The class `InMemoryChatMessageHistory` was deprecated")
async def test_a_read_gathered_after_a_write_sees_it(memory):
    """``gather(aadd_messages([m]), aget_messages())`` reads ``[m]`` from ``InMemoryChatMessageHistory``; hippo's
    read ran beside the write and often answered ``[]``."""
    from langchain_core.chat_history import InMemoryChatMessageHistory

    for i in range(20):
        ours = HippoChatMessageHistory(memory, session_id=f"s{i}")
        reference = InMemoryChatMessageHistory()
        got, want = [(await asyncio.gather(h.aadd_messages([HumanMessage("hi", id="m")]), h.aget_messages(),
                                           h.aclear(), h.aget_messages()))[1::2] for h in (ours, reference)]
        assert got == want == [[HumanMessage("hi", id="m")], []]


@pytest.mark.parametrize("messages", [None, 5, "hello", HumanMessage("hello")])
async def test_messages_that_are_no_sequence_raise_invalid_input(memory, messages):
    """``add_messages(None)`` and ``aadd_messages(5)`` raised ``TypeError`` from iterating them; a lone message was
    iterated as its fields. Each raises ``InvalidInput`` naming ``messages``, and nothing is stored."""
    history = HippoChatMessageHistory(memory, session_id="s")
    with pytest.raises(hippo.InvalidInput, match="^messages must be a sequence"):
        history.add_messages(messages)
    with pytest.raises(hippo.InvalidInput, match="^messages must be a sequence"):
        await history.aadd_messages(messages)
    assert memory.count() == 0
    history.add_messages(m for m in [HumanMessage("a generator is fine")])
    assert [m.text for m in await history.aget_messages()] == ["a generator is fine"]


def test_namespace(memory):
    HippoChatMessageHistory(memory, session_id="s", namespace="chats").add_ai_message("stored elsewhere")
    assert memory.count() == 0 and memory.using("chats").count() == 1


@pytest.mark.filterwarnings("ignore:RunnableWithMessageHistory is deprecated")
def test_runnable_with_message_history(memory):
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    prompt = ChatPromptTemplate.from_messages([MessagesPlaceholder("history"), ("human", "{question}")])
    chain = prompt | FakeListChatModel(responses=["Nice to meet you, Ann.", "Your name is Ann."])
    with_history = RunnableWithMessageHistory(
        chain, lambda sid: HippoChatMessageHistory(memory, session_id=sid),
        input_messages_key="question", history_messages_key="history")
    cfg = {"configurable": {"session_id": "u1"}}
    with_history.invoke({"question": "My name is Ann."}, cfg)
    with_history.invoke({"question": "What is my name?"}, cfg)
    texts = [m.text for m in HippoChatMessageHistory(memory, session_id="u1").messages]
    assert texts == ["My name is Ann.", "Nice to meet you, Ann.", "What is my name?", "Your name is Ann."]


@pytest.mark.parametrize("kwargs, name", [({"session_id": ""}, "session_id"), ({"session_id": 5}, "session_id"),
                                          ({"session_id": "s", "namespace": ""}, "namespace")])
def test_bad_arguments(memory, kwargs, name):
    with pytest.raises(hippo.InvalidInput, match=name):
        HippoChatMessageHistory(memory, **kwargs)
    with pytest.raises(hippo.InvalidInput, match="messages"):
        HippoChatMessageHistory(memory, session_id="s").add_messages(["not a message"])


# -- langchain_classic ---------------------------------------------------------------------------------------

def test_classic_memory_recalls_across_sessions(memory):
    from langchain_hippo import HippoMemory

    first = HippoMemory(memory=memory, session_id="monday")
    first.save_context({"input": "My dentist appointment is on the 14th."}, {"output": "Noted."})
    first.save_context({"input": "I prefer aisle seats on flights."}, {"output": "Got it."})
    later = HippoMemory(memory=memory, session_id="friday")
    assert later.memory_variables == ["history"]
    text = later.load_memory_variables({"input": "When is my dentist appointment?"})["history"]
    assert "14th" in text
    msgs = HippoMemory(memory=memory, return_messages=True).load_memory_variables(
        {"input": "aisle seats on flights"})["history"]
    assert any(isinstance(m, HumanMessage) and "aisle" in m.text for m in msgs)
    later.clear()  # only friday's (none) are removed
    assert memory.count() == 4
    first.clear()
    assert memory.count() == 0


async def test_classic_memory_async_and_keys(memory):
    from langchain_hippo import HippoMemory

    mem = HippoMemory(memory=memory, input_key="q", output_key="a", memory_key="ctx", budget_tokens=200)
    await mem.asave_context({"q": "The spare key is under the blue pot.", "lang": "en"}, {"a": "ok", "x": 1})
    out = await mem.aload_memory_variables({"q": "where is the spare key?", "lang": "en"})
    assert "blue pot" in out["ctx"]
    await mem.aclear()
    assert memory.count() == 0
    with pytest.raises(hippo.InvalidInput, match="input"):
        HippoMemory(memory=memory).load_memory_variables({"a": "1", "b": "2"})
    with pytest.raises(hippo.InvalidInput, match="budget_tokens"):
        HippoMemory(memory=memory, budget_tokens=0)
    with pytest.raises(hippo.InvalidInput, match="budget_tokens"):
        HippoMemory(memory=memory, budget_tokens="many")


def _replay_errors(messages) -> list[str]:
    """What a chat API (OpenAI's rule, which the others share) refuses in a history: an ``AIMessage`` whose tool
    calls are not each answered by the ``ToolMessage`` run right after it, or a ``ToolMessage`` outside such a run."""
    errors, open_calls = [], None
    for m in messages:
        if isinstance(m, ToolMessage):
            if open_calls is None or m.tool_call_id not in open_calls:
                errors.append(f"tool result {m.tool_call_id!r} answers no call before it")
            else:
                open_calls.discard(m.tool_call_id)
            continue
        if open_calls:
            errors.append(f"tool calls {sorted(open_calls)} unanswered")
        open_calls = {c["id"] for c in m.tool_calls} if isinstance(m, AIMessage) and m.tool_calls else None
    if open_calls:
        errors.append(f"tool calls {sorted(open_calls)} unanswered")
    return errors


def test_a_tool_call_s_arguments_are_indexed_as_written(memory):
    """A message that only calls tools is indexed as its calls in words; arguments outside ASCII were written as
    JSON's ``\\u`` escapes (``"K\\u00f6ln"``), so a search for the city the call named found nothing. They are
    written as given, and the message still reads back as it was."""
    call = AIMessage("", tool_calls=[{"name": "lookup", "args": {"city": "Köln", "note": "東京"}, "id": "c1"}])
    history = HippoChatMessageHistory(memory, session_id="s")
    history.add_messages([HumanMessage("What is the weather?"), call])
    assert [m.text for m in memory.search("Köln")] == ['[tool call lookup({"city": "Köln", "note": "東京"})]']
    assert history.messages[1] == call


def test_classic_memory_returns_no_tool_call_without_its_result(memory):
    """A recall picks messages, not exchanges. With ``return_messages=True`` the tool result that matched the
    question came back alone, a ``ToolMessage`` answering no call (budget 30: ``[ToolMessage('Paris: sunny...',
    tool_call_id='call_1')]``), and a chat model refuses such a history. A part of an exchange comes without its
    link now, its words kept; a whole exchange stays as it is."""
    from langchain_hippo import HippoMemory

    HippoChatMessageHistory(memory, session_id="agent").add_messages([
        HumanMessage("What is the weather in Paris today?"),
        AIMessage("", tool_calls=[{"name": "weather", "args": {"city": "Paris"}, "id": "call_1"}]),
        ToolMessage("Paris: sunny, 24 degrees celsius, light wind from the north", tool_call_id="call_1",
                    name="weather"),
        AIMessage("It is sunny in Paris, 24 degrees."),
        HumanMessage("I need to book a dentist appointment next week"),
        AIMessage("Sure, which day suits you?"),
    ])
    for budget in (30, 60, 2000):
        msgs = HippoMemory(memory=memory, return_messages=True, budget_tokens=budget).load_memory_variables(
            {"input": "wind from the north celsius"})["history"]
        assert _replay_errors(msgs) == [], budget
        assert any("light wind from the north" in m.text for m in msgs), budget
    whole = HippoMemory(memory=memory, return_messages=True, budget_tokens=2000).load_memory_variables(
        {"input": "weather in Paris wind from the north"})["history"]
    calls = [m for m in whole if isinstance(m, AIMessage) and m.tool_calls]
    assert [c.tool_calls[0]["args"] for c in calls] == [{"city": "Paris"}]
    assert [m.tool_call_id for m in whole if isinstance(m, ToolMessage)] == ["call_1"]
    # parallel calls with one result missing: neither part keeps its link
    from langchain_hippo._messages import replayable

    part = replayable([AIMessage("Checking both.", tool_calls=[{"name": "a", "args": {}, "id": "x"},
                                                               {"name": "b", "args": {}, "id": "y"}]),
                       ToolMessage("A is up", tool_call_id="x", name="a")])
    assert _replay_errors(part) == []
    assert [m.text for m in part] == ["Checking both.\n[tool call a({})]; [tool call b({})]", "[tool result a] A is up"]


def test_item1_clear_takes_only_what_the_object_wrote(memory):
    """issue 22 item 1: with no session id given, ``clear()`` used to call ``Memory.clear()`` (4 items -> 0).
    ``ConversationBufferMemory.clear()`` empties its own history only; so does ``HippoMemory`` now: each object
    has its own session id by default."""
    from langchain_hippo import HippoMemory

    thread = HippoChatMessageHistory(memory, session_id="thread-1")
    thread.add_messages([HumanMessage("hello from another thread")])
    memory.add("a note added directly")
    chain_memory = HippoMemory(memory=memory)
    chain_memory.save_context({"input": "remember the blue door"}, {"output": "ok"})
    other = HippoMemory(memory=memory)
    assert other.session_id != chain_memory.session_id
    other.save_context({"input": "and the red window"}, {"output": "fine"})
    assert memory.count() == 6
    chain_memory.clear()
    assert memory.count() == 4
    assert [m.text for m in thread.messages] == ["hello from another thread"]
    assert [m.text for m in other.chat_memory.messages] == ["and the red window", "fine"]
    assert chain_memory.chat_memory.messages == []
    with pytest.raises(hippo.InvalidInput, match="session_id"):
        HippoMemory(memory=memory, session_id="  ")


def test_item6_agent_outputs_fall_back_to_the_output_key(memory):
    """issue 22 item 6: ``AgentExecutor(return_intermediate_steps=True)`` returns ``output`` and
    ``intermediate_steps``; ``BaseChatMemory._get_input_output`` takes ``output`` with a warning, and so does
    ``HippoMemory``."""
    from langchain_hippo import HippoMemory

    mem = HippoMemory(memory=memory)
    with pytest.warns(UserWarning, match="multiple output keys"):
        mem.save_context({"input": "hi"}, {"output": "hello", "intermediate_steps": []})
    assert [(type(m).__name__, m.content) for m in mem.chat_memory.messages] == [
        ("HumanMessage", "hi"), ("AIMessage", "hello")]
    with pytest.raises(hippo.InvalidInput, match="output_key"):
        mem.save_context({"input": "hi"}, {"answer": "a", "sources": "b"})
    keyed = HippoMemory(memory=memory, input_key="q", output_key="a")
    with pytest.raises(KeyError) as info:
        keyed.save_context({"input": "hi"}, {"a": "x"})
    assert isinstance(info.value, hippo.InvalidInput)  # both families catch it
    # hippo recalls for the chain input, so loading needs it (ConversationBufferMemory ignores inputs)
    with pytest.raises(KeyError, match="'q'"):
        keyed.load_memory_variables({"input": "hi"})


def test_what_hippo_cannot_keep_is_refused_whole():
    """docs/compatibility.md: ``InMemoryChatMessageHistory`` keeps any object; hippo refuses lone surrogates, text
    past ``Config.max_message_chars`` and a memory whose encoding gate may drop messages, storing nothing."""
    small = hippo.Memory(None, config={"max_message_chars": 50})
    history = HippoChatMessageHistory(small, session_id="s")
    history.add_messages([HumanMessage("short and fine")])
    for bad in (HumanMessage("x" * 51), HumanMessage("lone \udc80 surrogate")):
        with pytest.raises(hippo.InvalidInput):
            history.add_messages([AIMessage("would be fine"), bad])
    assert [m.text for m in history.messages] == ["short and fine"]
    with pytest.raises(hippo.InvalidInput, match="gate"):
        HippoChatMessageHistory(hippo.Memory(None, config={"gate": {"enabled": True}}), session_id="s")


def test_classic_memory_stores_non_text_values_as_text(memory):
    """``ConversationBufferMemory`` builds ``HumanMessage(content=value)``, which refuses a number (pydantic's
    ValidationError, a ValueError); hippo stores ``str(value)``."""
    from langchain_classic.memory import ConversationBufferMemory

    from langchain_hippo import HippoMemory

    mem = HippoMemory(memory=memory)
    mem.save_context({"input": 42}, {"output": 3.5})
    assert [m.content for m in mem.chat_memory.messages] == ["42", "3.5"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated upstream; warned once per process
        ref = ConversationBufferMemory()
    with pytest.raises(ValueError):
        ref.save_context({"input": 42}, {"output": 3.5})


def test_classic_import_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "langchain_classic", None)
    monkeypatch.setitem(sys.modules, "langchain_classic.base_memory", None)
    monkeypatch.delitem(sys.modules, "langchain_hippo.classic", raising=False)
    with pytest.raises(ImportError, match=r"pip install 'hippo-memory\[classic\]'"):
        importlib.import_module("langchain_hippo.classic")
    monkeypatch.delitem(sys.modules, "langchain_hippo.classic", raising=False)


def test_values_json_cannot_keep_are_refused_whole():
    """docs/compatibility.md: read back, a message equals the one added, or the call stores none of its messages.
    NaN in tool-call arguments and bytes in ``additional_kwargs`` have no exact JSON form; a tuple in a tool's
    artifact and a dict key that is not a string have one that reads back as another value (``(1, 2)`` came back
    as ``[1, 2]``, ``{1: "a"}`` as ``{"1": "a"}``, the message no longer equal to the one added)."""
    history = HippoChatMessageHistory(hippo.Memory(None), session_id="s")
    kept = AIMessage(content="", tool_calls=[{"name": "set", "args": {"value": 0.5, "when": None}, "id": "c0"}])
    history.add_messages([kept])
    for bad in (AIMessage(content="", tool_calls=[{"name": "set", "args": {"value": float("nan")}, "id": "c1"}]),
                HumanMessage("file attached", additional_kwargs={"attachment": b"\x89PNG"}),
                ToolMessage("2 rows", tool_call_id="c2", artifact={"rows": [(1, "a"), (2, "b")]}),
                AIMessage("ok", additional_kwargs={"by_id": {7: "seven"}})):
        with pytest.raises(hippo.InvalidInput, match="JSON cannot keep exactly"):
            history.add_messages([HumanMessage("would be fine"), bad])
    assert history.messages == [kept]


def test_classic_memory_asks_and_stores_text_with_escape_codes(memory):
    """``ConversationBufferMemory`` takes any text; hippo asks with control characters as spaces and stores the turn
    whole (the message keeps them, its indexed text has spaces)."""
    from langchain_hippo import HippoMemory

    mem = HippoMemory(memory=memory)
    text = "\x1b[1mNote:\x1b[0m my passport is in the blue drawer"
    mem.save_context({"input": text}, {"output": "noted"})
    assert [m.content for m in mem.chat_memory.messages] == [text, "noted"]
    assert "blue drawer" in mem.load_memory_variables({"input": "where is my \x07passport?"})[mem.memory_key]


# -- a message's own time ------------------------------------------------------------------------------------------

NEW_YORK = timezone(timedelta(hours=-5))
DATED = [
    HumanMessage("I went to a support group yesterday.", id="h1",
                 additional_kwargs={"hippo_timestamp": "2023-05-08T23:30:00-05:00"}),
    AIMessage("How did it go?", id="a1", additional_kwargs={"hippo_timestamp": 1683606660}),
    HumanMessage("It went well.", additional_kwargs={"hippo_timestamp": "2023-05-09T04:32:00"}),
]


@pytest.mark.parametrize("aio", [False, True])
def test_a_message_s_own_time_dates_it(memory, aio):
    """Last month's chat added through the history kept the day it was added on: its "yesterday" was the day before
    the import, and a search of the days it was said in found nothing."""
    history = HippoChatMessageHistory(memory, session_id="s1")
    if aio:
        asyncio.run(history.aadd_messages(DATED))
    else:
        history.add_messages(DATED)
    assert history.messages == DATED  # the field rides along: the messages read back as given
    stored = memory.list()
    assert [i.timestamp for i in stored] == [datetime(2023, 5, 8, 23, 30, tzinfo=NEW_YORK),
                                             datetime(2023, 5, 9, 4, 31, tzinfo=timezone.utc),
                                             datetime(2023, 5, 9, 4, 32, tzinfo=timezone.utc)]
    assert stored[0].timestamp.utcoffset() == timedelta(hours=-5)  # the speaker's calendar is kept
    # "yesterday" said at 23:30 on 8 May in New York is 7 May
    hits = memory.search("support group", since="2023-05-07", until="2023-05-08")
    assert [h.text for h in hits] == [DATED[0].text]
    assert hits[0].event_time == datetime(2023, 5, 7, 12, tzinfo=timezone.utc)


def test_messages_without_a_time_are_dated_when_stored(memory):
    history = HippoChatMessageHistory(memory, session_id="s1")
    before = datetime.now(timezone.utc)
    history.add_messages([HumanMessage("one"), DATED[1], AIMessage("two")])
    after = datetime.now(timezone.utc)
    one, dated, two = memory.list()
    assert before <= one.timestamp <= two.timestamp <= after
    assert dated.timestamp == datetime(2023, 5, 9, 4, 31, tzinfo=timezone.utc)


@pytest.mark.parametrize("value", ["yesterday", "2023-13-01", float("nan"), float("inf"), True, [2023], {"t": 1},
                                   1683606660000, "1683606660", datetime(2023, 5, 9, tzinfo=timezone.utc),
                                   "0999-01-01T00:00:00Z"])
def test_a_time_hippo_cannot_read_is_refused_by_name(memory, value):
    """A message's time that is no time (or one in milliseconds, the year 55000) was dropped for the day the message
    was added on; now the call raises InvalidInput naming the message and its field, and stores none."""
    history = HippoChatMessageHistory(memory, session_id="s1")
    with pytest.raises(hippo.InvalidInput, match=r"messages\[1\]\.additional_kwargs\['hippo_timestamp'\]"):
        history.add_messages([HumanMessage("kept back"),
                              HumanMessage("bad", additional_kwargs={"hippo_timestamp": value})])
    with pytest.raises(hippo.InvalidInput, match=r"messages\[1\]\.additional_kwargs\['hippo_timestamp'\]"):
        asyncio.run(history.aadd_messages([HumanMessage("kept back"),
                                           HumanMessage("bad", additional_kwargs={"hippo_timestamp": value})]))
    assert memory.list() == []


def test_a_time_in_the_future_is_kept_as_given(memory):
    history = HippoChatMessageHistory(memory, session_id="s1")
    history.add_messages([HumanMessage("See you then.",
                                       additional_kwargs={"hippo_timestamp": "2199-01-01T09:00+01:00"})])
    assert memory.list()[0].timestamp == datetime(2199, 1, 1, 8, tzinfo=timezone.utc)


def test_settings_changed_on_a_made_history_or_memory_are_checked_and_used(memory):
    """``timezone`` and ``namespace`` set on a made ``HippoChatMessageHistory`` (and ``timezone`` on a made
    ``HippoMemory``) were kept as attributes and not read: messages went on being dated in UTC and stored in the first
    namespace. The next call uses them; a bad value raises ``InvalidInput`` naming it and leaves the setting."""
    from langchain_hippo import HippoMemory

    history = HippoChatMessageHistory(memory, session_id="t")
    history.timezone = "America/New_York"
    history.namespace = "other"
    history.add_messages([HumanMessage("Tonight I'm going out.")])
    assert memory.list() == []
    stored, = memory.using("other").list()
    assert stored.timestamp.utcoffset() in (timedelta(hours=-5), timedelta(hours=-4))
    assert history.messages == [HumanMessage("Tonight I'm going out.")]
    classic = HippoMemory(memory=memory)
    classic.timezone = "+05:30"
    classic.save_context({"input": "Tonight I'm going out."}, {"output": "Have fun."})
    assert {m.timestamp.utcoffset() for m in memory.list()} == {timedelta(hours=5, minutes=30)}
    for target, name, value in [(history, "timezone", "Mars/Olympus"), (history, "namespace", ""),
                                (classic, "timezone", "Mars/Olympus"), (classic, "budget_tokens", 0),
                                (classic, "namespace", ""), (classic, "session_id", " ")]:
        before = getattr(target, name)
        with pytest.raises(hippo.InvalidInput, match=name):
            setattr(target, name, value)
        assert getattr(target, name) == before


def _block_messages() -> list:
    """Messages of each content block kind an agent on Anthropic's or OpenAI's Responses API hands LangChain, with
    the words each one says (hand-written)."""
    call = {"name": "weather", "args": {"city": "Paris"}, "id": "toolu_1", "type": "tool_call"}
    return [
        (HumanMessage([{"type": "input_text", "text": "Is it warm in Trondheim today?"}], id="h1"),
         "Is it warm in Trondheim today?"),
        (AIMessage([{"type": "reasoning", "summary": [{"type": "summary_text", "text": "weigh the forecast"}]},
                    {"type": "output_text", "text": "Trondheim is mild, around 14 degrees.", "annotations": []}],
                   id="a1"), "Trondheim is mild, around 14 degrees."),
        (AIMessage([{"type": "refusal", "refusal": "I cannot share the alarm code."}], id="a2"),
         "I cannot share the alarm code."),
        (AIMessage([{"type": "thinking", "thinking": "call the tool", "signature": "sig"},
                    {"type": "text", "text": "Let me check Paris."},
                    {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris"}}],
                   tool_calls=[call], id="a3"), 'Let me check Paris.\n[tool call weather({"city": "Paris"})]'),
        (HumanMessage([{"type": "tool_result", "tool_use_id": "toolu_1",
                        "content": [{"type": "text", "text": "Drizzle over Paris, 11 degrees."}]}], id="h2"),
         "Drizzle over Paris, 11 degrees."),
        (ToolMessage([{"type": "tool_result", "tool_use_id": "toolu_1", "content": "Fog in Valparaiso all day."}],
                     tool_call_id="toolu_1", name="weather", id="t1"), "Fog in Valparaiso all day."),
        (ToolMessage([{"type": "text", "text": "Snow in Innsbruck."}, {"type": "image", "url": "https://x/map.png"}],
                     tool_call_id="toolu_1", id="t2"), "Snow in Innsbruck."),
        (AIMessage(content_blocks=[{"type": "reasoning", "reasoning": "think"},
                                   {"type": "text", "text": "Standard blocks about Ljubljana."}], id="a4"),
         "Standard blocks about Ljubljana."),
    ]


@pytest.mark.filterwarnings("ignore:The class `InMemoryChatMessageHistory` was deprecated")
def test_messages_in_content_blocks_round_trip_and_are_found_by_their_words(memory):
    """``BaseMessage.text`` reads only ``text`` blocks: a user's message and an answer in OpenAI Responses' blocks
    (``input_text``, ``output_text``, ``refusal``) and a tool's output in Anthropic's ``tool_result`` block were
    indexed as ``[human message without text]`` and the like, found by none of their words. Each is indexed as its
    words, and reads back as ``InMemoryChatMessageHistory`` gives it."""
    from langchain_core.chat_history import InMemoryChatMessageHistory

    cases = _block_messages()
    ours, reference = HippoChatMessageHistory(memory, session_id="s"), InMemoryChatMessageHistory()
    for history in (ours, reference):
        history.add_messages([m for m, _ in cases])
    assert ours.messages == reference.messages
    assert [i.text for i in memory.list()] == [words for _, words in cases]
    for message, words in cases:
        assert words in [h.text for h in memory.search(words, k=3)], message.id


def test_middleware_stores_the_words_of_messages_in_content_blocks():
    """A user's message in OpenAI Responses' ``input_text`` block and an answer in ``output_text`` had no text for
    the middleware (``BaseMessage.text``): neither was stored, and no recall was made for the question. Both are
    stored as their words, and the question recalls."""
    from langchain.agents import create_agent

    from langchain_hippo import HippoMemoryMiddleware
    from tests.langchain.conftest import recording_model

    memory = hippo.Memory(None)
    memory.using("user.ann").add("Trondheim had snow in May last year.", session_id="old")
    model = recording_model([AIMessage([{"type": "output_text", "text": "Mild, around 14 degrees.",
                                         "annotations": []}])])
    agent = create_agent(model, middleware=[HippoMemoryMiddleware(memory)])
    agent.invoke({"messages": [HumanMessage([{"type": "input_text", "text": "Is Trondheim warm in May?"}])]},
                 {"configurable": {"user_id": "ann", "thread_id": "t"}})
    assert [(m.role, m.text) for m in memory.using("user.ann").list(filter={"session_id": "t"})] == [
        ("user", "Is Trondheim warm in May?"), ("assistant", "Mild, around 14 degrees.")]
    assert "Trondheim had snow in May last year." in "\n".join(m.text for m in model.calls[0])
    memory.close()


def test_an_answer_that_says_something_and_calls_tools_is_found_by_its_calls(memory):
    """An answer that says something before its call (Anthropic's text and ``tool_use`` blocks) was indexed as its
    words alone: a search for what it asked the tool found only the tool's result, though an answer that only calls
    tools is found by its calls. Its calls in words follow its words, as the middleware stores it; it reads back as
    ``InMemoryChatMessageHistory`` gives it."""
    call = {"name": "lookup", "args": {"city": "Valparaiso"}, "id": "toolu_1", "type": "tool_call"}
    answer = AIMessage([{"type": "text", "text": "Let me check."},
                        {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"city": "Valparaiso"}}],
                       tool_calls=[call], id="a1")
    history = HippoChatMessageHistory(memory, session_id="s")
    history.add_messages([HumanMessage("Is it foggy there?"), answer])
    assert [m.text for m in memory.search("lookup Valparaiso")] == [
        'Let me check.\n[tool call lookup({"city": "Valparaiso"})]']
    assert history.messages[1] == answer


@pytest.mark.filterwarnings("ignore:.*RunnableWithMessageHistory is deprecated")
def test_a_streamed_answer_is_the_assistant_s(memory):
    """A streamed answer reaches the history as an ``AIMessageChunk``, whose ``type`` names its class: it was stored
    with the role and speaker ``user``, the assistant's answer read back as the user's words (in recall, speakers
    and profiles), where the same answer invoked is the assistant's. A message's role is its class's, a chunk's
    too; a ``FunctionMessage`` is a tool's, and a ``ChatMessage`` says its role."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.messages import AIMessageChunk, ChatMessage, FunctionMessage, ToolMessageChunk

    prompt = ChatPromptTemplate.from_messages([MessagesPlaceholder("history"), ("human", "{question}")])
    chain = prompt | FakeListChatModel(responses=["Your dentist is on Monday at ten."])
    with_history = RunnableWithMessageHistory(
        chain, lambda sid: HippoChatMessageHistory(memory, session_id=sid),
        input_messages_key="question", history_messages_key="history")
    streamed = list(with_history.stream({"question": "When is my dentist?"}, {"configurable": {"session_id": "s"}}))
    assert streamed
    history = HippoChatMessageHistory(memory, session_id="s")
    assert [type(m) for m in history.messages] == [HumanMessage, AIMessageChunk]
    history.add_messages([ChatMessage("The plan is sound.", role="assistant"), ChatMessage("Too vague.", role="critic"),
                          FunctionMessage("Sunny.", name="weather"),
                          ToolMessageChunk("Rain.", tool_call_id="c1", name="forecast")])
    assert [(i.role, i.speaker, i.text) for i in memory.list()] == [
        ("user", "user", "When is my dentist?"), ("assistant", "assistant", "Your dentist is on Monday at ten."),
        ("assistant", "assistant", "The plan is sound."), ("user", "critic", "Too vague."),
        ("tool", "weather", "Sunny."), ("tool", "forecast", "Rain.")]
    assert [m.type for m in history.messages] == ["human", "AIMessageChunk", "chat", "chat", "function",
                                                  "ToolMessageChunk"]


def test_classic_memory_keeps_content_blocks_as_conversation_buffer_memory_does(memory):
    """A chain's input or output given as content blocks (a photo and its question) was stored as the list's
    ``str``: its turn read back as the repr, indexed and recalled with the image's base64 data. The blocks are the
    message's content, as ``ConversationBufferMemory`` keeps them, and their words are what is indexed and asked."""
    from langchain_classic.memory import ConversationBufferMemory

    from langchain_hippo import HippoMemory

    photo = [{"type": "text", "text": "What breed is the cat in this photo?"},
             {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "iVBORw0KGgo" * 8}}]
    answer = [{"type": "text", "text": "A Maine Coon, by the ear tufts."}]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated upstream
        ref = ConversationBufferMemory()
    ours = HippoMemory(memory=memory)
    for mem in (ours, ref):
        mem.save_context({"input": photo}, {"output": answer})
    assert ours.chat_memory.messages == ref.chat_memory.messages
    assert [i.text for i in memory.list()] == ["What breed is the cat in this photo?", "A Maine Coon, by the ear tufts."]
    recalled = ours.load_memory_variables({"input": [{"type": "text", "text": "Which breed was the cat?"}]})["history"]
    assert "user: What breed is the cat in this photo?" in recalled and "base64" not in recalled


def test_a_tool_call_argument_hippo_does_not_index_is_kept(memory):
    """JSON writes U+007F as it is: a call whose arguments held one was indexed with it, and hippo refused the
    message (``InvalidInput``), though control characters in a message are kept. The message is stored whole, the
    character indexed as a space."""
    calls = [{"name": "alpha", "args": {"q": "a\x7fb c"}, "id": "x", "type": "tool_call"}]
    messages = [AIMessage("", tool_calls=calls, id="a1"), AIMessage("Checking.", tool_calls=calls, id="a2")]
    history = HippoChatMessageHistory(memory, session_id="s")
    history.add_messages(messages)
    assert history.messages == messages
    assert [i.text for i in memory.list()] == ['[tool call alpha({"q": "a b c"})]',
                                               'Checking.\n[tool call alpha({"q": "a b c"})]']


def test_a_tool_s_output_sent_as_a_user_s_message_is_indexed_as_the_tool_s(memory):
    """A user's message of Anthropic ``tool_result`` blocks (a tool's output, in the API's form) is indexed as a
    tool's, not as the user's words; it reads back as it was given."""
    result = HumanMessage([{"type": "tool_result", "tool_use_id": "toolu_1", "content": "Rain in Paris."}], id="h1")
    history = HippoChatMessageHistory(memory, session_id="s")
    history.add_messages([HumanMessage("Will it rain in Paris?"), result])
    assert [(i.role, i.speaker, i.text) for i in memory.list()] == [
        ("user", "user", "Will it rain in Paris?"), ("tool", "tool", "Rain in Paris.")]
    assert history.messages[1] == result


def test_an_answer_whose_calls_are_only_content_blocks_is_found_by_them(memory):
    """An answer whose call is only an Anthropic ``tool_use`` block (a history kept in the API's form: no
    ``tool_calls``) was indexed as its words alone, or as ``[ai message without text]``. Its calls are words too."""
    answers = [AIMessage([{"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"city": "Trondheim"}}]),
               AIMessage([{"type": "text", "text": "Checking."},
                          {"type": "tool_use", "id": "toolu_2", "name": "lookup", "input": {"city": "Bergen"}}])]
    history = HippoChatMessageHistory(memory, session_id="s")
    history.add_messages(answers)
    assert [i.text for i in memory.list()] == ['[tool call lookup({"city": "Trondheim"})]',
                                               'Checking.\n[tool call lookup({"city": "Bergen"})]']
    assert history.messages == answers


def test_a_tool_result_stored_elsewhere_is_recalled_as_its_tool_s(memory):
    """A tool's result the middleware, the LlamaIndex block or an import stored (no LangChain message kept) is said
    by its tool: ``HippoMemory(return_messages=True)`` gave it back as ``[tool result tool] ...``, the tool's name
    lost. It is ``[tool result lookup] ...``, as the same result kept by the chat history is."""
    from langchain_hippo import HippoMemory

    memory.add_many([{"text": "What is the weather in Köln?", "role": "user", "speaker": "ann", "session_id": "k"},
                     {"text": "Sunny in Köln, 24 degrees.", "role": "tool", "speaker": "lookup", "session_id": "k",
                      "metadata": {"tool_call_id": "c1"}}])
    HippoChatMessageHistory(memory, session_id="h").add_messages([
        ToolMessage("Rain in Bonn, 11 degrees.", tool_call_id="c2", name="lookup")])
    recalled = HippoMemory(memory=memory, return_messages=True).load_memory_variables(
        {"input": "weather degrees Köln Bonn"})["history"]
    assert sorted(m.text for m in recalled if "[tool result" in m.text) == [
        "[tool result lookup] Rain in Bonn, 11 degrees.", "[tool result lookup] Sunny in Köln, 24 degrees."]
