"""HippoMemoryMiddleware hands the model what it does not have, and stores each message once.

- Recall before a model call leaves out the turns of the current thread that the prompt holds: in a twelve-turn
  thread, recall used to spend a 150-token budget on lines the conversation already showed (all seven recalled
  lines), and an earlier thread's fact did not fit.
- A thread forked from an earlier checkpoint (LangGraph time travel, a regenerated answer) holds turns stored
  already: the user's message was stored again next to each answer."""

from __future__ import annotations

import asyncio
import threading
from datetime import datetime, timedelta, timezone

import pytest
from langchain.agents import create_agent
from langchain.tools import tool
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver

import hippo
from langchain_hippo import HippoMemoryMiddleware
from tests.barrier import calls_wait, first_call_waits

from .conftest import recording_model

TRIP = ["I'm planning a trip to Japan in April with my sister.", "We want to see the cherry blossoms in Kyoto.",
        "My sister is vegetarian, so food matters.", "We also plan a day trip to Nara for the deer.",
        "Our budget for the trip is about 4000 dollars.", "I booked the flight to Osaka already.",
        "Which trains should we take from Osaka to Kyoto?", "Is the Japan rail pass worth it for the trip?",
        "What about a hotel in Kyoto near the station?", "My sister also wants to visit Tokyo for two days.",
        "Can you suggest vegetarian food in Tokyo?", "What should we pack for the Japan trip in April?"]
FACT = "My passport for the trip expires in May, I am allergic to shellfish."


def _cfg(thread: str, user: str = "ann") -> dict:
    return {"configurable": {"user_id": user, "thread_id": thread}}


def _recalled(call) -> list[str]:
    """The texts of the lines the middleware put in the system message of one model call."""
    system = "\n".join(m.text for m in call if isinstance(m, SystemMessage))
    if "<memory>" not in system:
        return []
    block = system.split("<memory>\n", 1)[1].split("\n</memory>", 1)[0]
    return [line.split(": ", 1)[1] for line in block.splitlines() if not line.startswith("[")]


def _answers(n: int) -> list[AIMessage]:
    return [AIMessage(f"Answer {i}: noted the details about your trip to Japan and Kyoto.") for i in range(n)]


def _check_no_repeats(model) -> None:
    for call in model.calls:
        shown = {m.text for m in call if not isinstance(m, SystemMessage)}
        assert not [line for line in _recalled(call) if line in shown]
    assert FACT in _recalled(model.calls[-1])  # the earlier thread's fact gets the budget


def test_recall_leaves_out_what_the_prompt_holds():
    memory = hippo.Memory(None)
    model = recording_model(_answers(20))
    agent = create_agent(model, middleware=[HippoMemoryMiddleware(memory, budget_tokens=150)],
                         checkpointer=InMemorySaver())
    agent.invoke({"messages": [{"role": "user", "content": FACT}]}, _cfg("old"))
    for text in TRIP:
        agent.invoke({"messages": [{"role": "user", "content": text}]}, _cfg("trip"))
    _check_no_repeats(model)
    # nothing was lost: the thread's turns are stored, and recalled from another thread
    assert len(memory.using("user.ann").list()) == 2 * (1 + len(TRIP))
    agent.invoke({"messages": [{"role": "user", "content": "Where do we want to see cherry blossoms?"}]},
                 _cfg("later"))
    assert "We want to see the cherry blossoms in Kyoto." in _recalled(model.calls[-1])
    memory.close()


async def test_recall_leaves_out_what_the_prompt_holds_async():
    memory = hippo.Memory(None)
    model = recording_model(_answers(20))
    agent = create_agent(model, middleware=[HippoMemoryMiddleware(memory, budget_tokens=150)],
                         checkpointer=InMemorySaver())
    await agent.ainvoke({"messages": [{"role": "user", "content": FACT}]}, _cfg("old"))
    for text in TRIP:
        await agent.ainvoke({"messages": [{"role": "user", "content": text}]}, _cfg("trip"))
    _check_no_repeats(model)
    memory.close()


def _stored(memory) -> list[tuple[str, str]]:
    return [(m.role, m.text) for m in memory.using("user.ann").list()]


def _before_model(agent, cfg) -> dict:
    """The config of the thread's latest checkpoint before a model call, with the user id."""
    snap = next(s for s in agent.get_state_history(cfg) if s.next == ("model",))
    return {"configurable": {**snap.config["configurable"], "user_id": "ann"}}


@pytest.mark.parametrize("fresh", [False, True])
def test_time_travel_and_regenerate_store_the_user_message_once(fresh):
    """Replaying from the checkpoint before the model call, and forking it with ``update_state``, run the model
    again on a message stored already. ``fresh``: another middleware (another process) serves the fork."""
    memory = hippo.Memory(None)
    saver = InMemorySaver()
    model = recording_model([AIMessage("First answer."), AIMessage("Second answer."), AIMessage("Third answer."),
                             AIMessage("Fourth answer.")])

    def agent():
        return create_agent(model, middleware=[HippoMemoryMiddleware(memory)], checkpointer=saver)

    first = agent()
    first.invoke({"messages": [{"role": "user", "content": "I am allergic to peanuts."}]}, _cfg("t"))
    again = agent() if fresh else first
    before = _before_model(again, _cfg("t"))
    again.invoke(None, before)  # time travel: the model runs again from that checkpoint
    forked = again.update_state(before, {"messages": []})  # a fork of it, as a "regenerate" button makes
    again.invoke(None, {"configurable": {**forked["configurable"], "user_id": "ann"}})
    assert _stored(memory) == [("user", "I am allergic to peanuts."), ("assistant", "First answer."),
                               ("assistant", "Second answer."), ("assistant", "Third answer.")]
    # the user edits the message in a fork (same message id, new words): the new words are stored, once
    snap = again.get_state(_cfg("t"))
    said = next(m for m in snap.values["messages"] if isinstance(m, HumanMessage))
    edited = again.update_state(before, {"messages": [HumanMessage("I am allergic to tree nuts.", id=said.id)]})
    again.invoke(None, {"configurable": {**edited["configurable"], "user_id": "ann"}})
    assert _stored(memory)[4:] == [("user", "I am allergic to tree nuts."), ("assistant", "Fourth answer.")]
    # no recall repeated a message its prompt held; the edited fork's prompt no longer holds the first words
    for call in model.calls:
        assert not set(_recalled(call)) & {m.text for m in call if not isinstance(m, SystemMessage)}
    assert "I am allergic to peanuts." in _recalled(model.calls[-1])
    memory.close()


def test_time_travel_async():
    memory = hippo.Memory(None)
    model = recording_model([AIMessage("First answer."), AIMessage("Second answer.")])
    agent = create_agent(model, middleware=[HippoMemoryMiddleware(memory)], checkpointer=InMemorySaver())

    async def run():
        await agent.ainvoke({"messages": [{"role": "user", "content": "I am allergic to peanuts."}]}, _cfg("t"))
        before = [s async for s in agent.aget_state_history(_cfg("t")) if s.next == ("model",)][0]
        await agent.ainvoke(None, {"configurable": {**before.config["configurable"], "user_id": "ann"}})

    asyncio.run(run())
    assert _stored(memory) == [("user", "I am allergic to peanuts."), ("assistant", "First answer."),
                               ("assistant", "Second answer.")]
    memory.close()


@tool
def lookup(city: str) -> str:
    """Look up the weather of a city."""
    return f"Sunny in {city}."


def test_the_store_is_read_back_once_per_thread(monkeypatch):
    """What a thread stored is kept by the middleware: the store is not read for it on every model call, even
    with tool calls (an answer without text) and turns the middleware does not store."""
    memory = hippo.Memory(None)
    reads = []
    real = hippo.Memory.list
    monkeypatch.setattr(hippo.Memory, "list", lambda self, *a, **kw: reads.append(kw) or real(self, *a, **kw))
    calls = [AIMessage("", tool_calls=[{"name": "lookup", "id": f"c{i}", "args": {"city": "Kyoto"}}])
             if i % 2 == 0 else AIMessage(f"It is sunny, answer {i}.") for i in range(12)]
    model = recording_model(calls)
    agent = create_agent(model, tools=[lookup], middleware=[HippoMemoryMiddleware(memory)],
                         checkpointer=InMemorySaver())
    for k in range(6):
        agent.invoke({"messages": [{"role": "user", "content": f"Weather in Kyoto, day {k}?"}]}, _cfg("w"))
    assert len(model.calls) == 12
    assert reads == [{"filter": {"session_id": "w"}}]
    assert [t for _, t in _stored(memory)][:2] == ["Weather in Kyoto, day 0?", "It is sunny, answer 1."]
    assert len(_stored(memory)) == 12
    memory.close()


def test_stored_tool_results_come_with_the_calls_that_asked_for_them():
    """With ``store_tool_results`` the results were stored and the answer that called the tools (no text) was not:
    a recall of ``Sunny in Köln.`` said nothing of what had been asked. The call is stored as its calls in words
    (``HippoChatMessageHistory``'s form), once, though the thread's later turns show it again; a memory tool's call,
    whose result is not stored, is left out."""
    memory = hippo.Memory(None)
    model = recording_model([
        AIMessage("", tool_calls=[{"name": "lookup", "id": "c1", "args": {"city": "Köln"}},
                                  {"name": "memory_search", "id": "c2", "args": {"query": "Köln"}}]),
        AIMessage("It is sunny in Köln."), AIMessage("Still sunny.")])
    agent = create_agent(model, tools=[lookup], checkpointer=InMemorySaver(),
                         middleware=[HippoMemoryMiddleware(memory, memory_tools=True, store_tool_results=True)])
    agent.invoke({"messages": [{"role": "user", "content": "What is the weather in Köln?"}]}, _cfg("k"))
    agent.invoke({"messages": [{"role": "user", "content": "And now?"}]}, _cfg("k"))
    assert [(m.role, m.speaker, m.text) for m in memory.using("user.ann").list()] == [
        ("user", "ann", "What is the weather in Köln?"),
        ("assistant", "assistant", '[tool call lookup({"city": "Köln"})]'),
        ("tool", "lookup", "Sunny in Köln."),
        ("assistant", "assistant", "It is sunny in Köln."),
        ("user", "ann", "And now?"),
        ("assistant", "assistant", "Still sunny.")]
    memory.close()
    plain = hippo.Memory(None)  # without store_tool_results neither the calls nor their results are stored
    model = recording_model([AIMessage("", tool_calls=[{"name": "lookup", "id": "c1", "args": {"city": "Köln"}}]),
                             AIMessage("It is sunny in Köln.")])
    agent = create_agent(model, tools=[lookup], middleware=[HippoMemoryMiddleware(plain)])
    agent.invoke({"messages": [{"role": "user", "content": "What is the weather in Köln?"}]}, _cfg("k"))
    assert [m.role for m in plain.using("user.ann").list()] == ["user", "assistant"]
    plain.close()


def test_a_thread_stored_without_its_tool_calls_still_knows_a_regenerated_turn():
    """A thread stored before answers that only call tools were kept (``store_tool_results``) holds their results
    without them. A client sending the whole history regenerates the latest turn: the prompt's earlier turns, the
    call among them, no longer lined up with the stored messages, and the user's message was stored again."""
    memory = hippo.Memory(None)
    memory.using("user.ann").add_many([
        {"text": t, "role": r, "speaker": s, "session_id": "k"} for r, s, t in [
            ("user", "ann", "What is the weather in Köln?"), ("tool", "lookup", "Sunny in Köln."),
            ("assistant", "assistant", "It is sunny in Köln."), ("user", "ann", "And tomorrow?"),
            ("assistant", "assistant", "Rain.")]])
    agent = create_agent(recording_model([AIMessage("Rain again.")]), tools=[lookup],
                         middleware=[HippoMemoryMiddleware(memory, store_tool_results=True)])
    agent.invoke({"messages": [
        {"role": "user", "content": "What is the weather in Köln?"},
        {"role": "assistant", "content": "", "tool_calls": [{"name": "lookup", "id": "c1", "args": {"city": "Köln"}}]},
        {"role": "tool", "content": "Sunny in Köln.", "tool_call_id": "c1", "name": "lookup"},
        {"role": "assistant", "content": "It is sunny in Köln."},
        {"role": "user", "content": "And tomorrow?"}]}, _cfg("k"))
    assert [t for _, t in _stored(memory)] == ["What is the weather in Köln?", "Sunny in Köln.", "It is sunny in Köln.",
                                               "And tomorrow?", "Rain.", "Rain again."]
    memory.close()


def test_an_answer_that_says_something_and_calls_tools_is_stored_with_its_calls():
    """Anthropic's models say something before a call ("Let me check."): with ``store_tool_results`` the answer was
    stored as its words alone, the call left out, and the tool's result after it answered a question no stored
    message asked, as for an answer that only calls tools before it was stored with its calls. Its calls follow its
    words, on a line of their own, as ``HippoMemory`` replays such an answer."""
    memory = hippo.Memory(None)
    call = {"name": "lookup", "id": "toolu_1", "args": {"city": "Köln"}, "type": "tool_call"}
    model = recording_model([
        AIMessage([{"type": "thinking", "thinking": "the weather tool", "signature": "sig"},
                   {"type": "text", "text": "Let me check Köln."},
                   {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"city": "Köln"}}],
                  tool_calls=[call]),
        AIMessage("It is sunny in Köln."), AIMessage("Still sunny.")])
    agent = create_agent(model, tools=[lookup], checkpointer=InMemorySaver(),
                         middleware=[HippoMemoryMiddleware(memory, store_tool_results=True)])
    agent.invoke({"messages": [{"role": "user", "content": "What is the weather in Köln?"}]}, _cfg("k"))
    agent.invoke({"messages": [{"role": "user", "content": "And now?"}]}, _cfg("k"))
    assert [(m.role, m.speaker, m.text) for m in memory.using("user.ann").list()] == [
        ("user", "ann", "What is the weather in Köln?"),
        ("assistant", "assistant", 'Let me check Köln.\n[tool call lookup({"city": "Köln"})]'),
        ("tool", "lookup", "Sunny in Köln."),
        ("assistant", "assistant", "It is sunny in Köln."),
        ("user", "ann", "And now?"),
        ("assistant", "assistant", "Still sunny.")]
    memory.close()


def test_a_thread_stored_without_the_calls_of_an_answer_with_words_still_knows_a_regenerated_turn():
    """A thread stored before the calls of an answer that says something were kept holds its words alone. A client
    sending the whole history regenerates the latest turn: the answer is found by its words, and the user's latest
    message is not stored again."""
    memory = hippo.Memory(None)
    memory.using("user.ann").add_many([
        {"text": t, "role": r, "speaker": s, "session_id": "k"} for r, s, t in [
            ("user", "ann", "What is the weather in Köln?"), ("assistant", "assistant", "Let me check Köln."),
            ("tool", "lookup", "Sunny in Köln."), ("assistant", "assistant", "It is sunny in Köln."),
            ("user", "ann", "And tomorrow?"), ("assistant", "assistant", "Rain.")]])
    agent = create_agent(recording_model([AIMessage("Rain again.")]), tools=[lookup],
                         middleware=[HippoMemoryMiddleware(memory, store_tool_results=True)])
    agent.invoke({"messages": [
        {"role": "user", "content": "What is the weather in Köln?"},
        {"role": "assistant", "content": "Let me check Köln.",
         "tool_calls": [{"name": "lookup", "id": "c1", "args": {"city": "Köln"}}]},
        {"role": "tool", "content": "Sunny in Köln.", "tool_call_id": "c1", "name": "lookup"},
        {"role": "assistant", "content": "It is sunny in Köln."},
        {"role": "user", "content": "And tomorrow?"}]}, _cfg("k"))
    assert [t for _, t in _stored(memory)] == ["What is the weather in Köln?", "Let me check Köln.", "Sunny in Köln.",
                                               "It is sunny in Köln.", "And tomorrow?", "Rain.", "Rain again."]
    memory.close()


def test_a_tool_result_without_a_name_is_stored_as_its_tool_s():
    """A client that runs the tools itself sends their results as role and text, with the call's id and no name: a
    ``memory_search`` result (copies of stored messages) was stored, and other tools' results as said by "tool".
    Each is the tool its call named: the memory tools' results are not stored, the others are under their tool."""
    memory = hippo.Memory(None)
    agent = create_agent(recording_model([AIMessage("Your passport expires in May; sunny in Kyoto.")]),
                         tools=[lookup],
                         middleware=[HippoMemoryMiddleware(memory, memory_tools=True, store_tool_results=True)])
    agent.invoke({"messages": [
        {"role": "user", "content": "When does my passport expire, and the weather in Kyoto?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"name": "memory_search", "id": "c1", "args": {"query": "passport"}},
            {"name": "lookup", "id": "c2", "args": {"city": "Kyoto"}}]},
        {"role": "tool", "content": "[1] ann: My passport expires in May.", "tool_call_id": "c1"},
        {"role": "tool", "content": "Sunny in Kyoto.", "tool_call_id": "c2"}]}, _cfg("r"))
    assert [(m.role, m.speaker, m.text) for m in memory.using("user.ann").list()] == [
        ("tool", "lookup", "Sunny in Kyoto."), ("assistant", "assistant", "Your passport expires in May; sunny in Kyoto.")]
    memory.close()


def test_a_turn_the_prompt_shows_rewritten_is_recalled():
    """A middleware listed before rewrites an earlier turn of the prompt (as a compaction does): the model does not
    have its words, so recall may hand them over; the turns the prompt shows as stored are still left out."""
    from langchain.agents.middleware import AgentMiddleware

    class Shorten(AgentMiddleware):
        def wrap_model_call(self, request, handler):
            messages = [m.model_copy(update={"content": "[compacted]"}) if m.text == FACT else m
                        for m in request.messages]
            return handler(request.override(messages=messages))

    memory = hippo.Memory(None)
    model = recording_model(_answers(4))
    agent = create_agent(model, middleware=[Shorten(), HippoMemoryMiddleware(memory, budget_tokens=150)],
                         checkpointer=InMemorySaver())
    for text in (FACT, "When does my passport for the trip expire?"):
        agent.invoke({"messages": [{"role": "user", "content": text}]}, _cfg("t"))
    last = model.calls[-1]
    assert "[compacted]" in {m.text for m in last} and FACT not in {m.text for m in last}
    assert FACT in _recalled(last)
    assert "Answer 0: noted the details about your trip to Japan and Kyoto." not in _recalled(last)
    memory.close()


def test_the_memory_tools_results_are_not_stored_again():
    """With ``memory_tools`` and ``store_tool_results``, a ``memory_search`` result (copies of stored messages) was
    stored as a tool message, and a later recall handed the model the user's words twice: as they were said, and
    inside the stored search result. Other tools' results are still stored."""
    memory = hippo.Memory(None)
    model = recording_model([
        AIMessage("Noted."),
        AIMessage("", tool_calls=[{"name": "memory_search", "id": "c1", "args": {"query": "passport"}},
                                  {"name": "lookup", "id": "c2", "args": {"city": "Kyoto"}}]),
        AIMessage("Your passport expires in May."), AIMessage("In May.")])
    agent = create_agent(model, tools=[lookup], checkpointer=InMemorySaver(),
                         middleware=[HippoMemoryMiddleware(memory, memory_tools=True, store_tool_results=True)])
    agent.invoke({"messages": [{"role": "user", "content": "My passport expires in May."}]}, _cfg("a"))
    agent.invoke({"messages": [{"role": "user", "content": "When does my passport expire, and the weather?"}]},
                 _cfg("b"))
    searched = next(m for m in model.calls[2] if getattr(m, "name", None) == "memory_search")
    assert "My passport expires in May." in searched.text  # the model did get the memory through the tool
    assert [(m.role, m.speaker) for m in memory.using("user.ann").list() if m.role == "tool"] == [("tool", "lookup")]
    agent.invoke({"messages": [{"role": "user", "content": "When does my passport expire?"}]}, _cfg("c"))
    system = "\n".join(m.text for m in model.calls[-1] if isinstance(m, SystemMessage))
    assert system.count("My passport expires in May.") == 1
    memory.close()


def test_a_client_sending_the_whole_history_gets_no_repeats():
    """Without a checkpointer a client sends the whole conversation each time, as role and text: LangChain gives its
    messages new ids on every call, and recall handed back the turns the prompt held (all eight lines)."""
    memory = hippo.Memory(None)
    model = recording_model(_answers(20))
    agent = create_agent(model, middleware=[HippoMemoryMiddleware(memory, budget_tokens=150)])
    agent.invoke({"messages": [{"role": "user", "content": FACT}]}, _cfg("old"))
    history: list[dict] = []
    for text in TRIP:
        out = agent.invoke({"messages": [*history, {"role": "user", "content": text}]}, _cfg("trip"))
        history = [{"role": "user" if m.type == "human" else "assistant", "content": m.text} for m in out["messages"]]
    _check_no_repeats(model)
    assert len(memory.using("user.ann").list()) == 2 * (1 + len(TRIP))
    memory.close()


def test_a_client_sending_the_same_turn_again_stores_it_once():
    """Without a checkpointer a "regenerate" sends the same history again, with new ids: the user's message was
    stored next to each answer. A message the user types again later is a new turn, and is stored."""
    memory = hippo.Memory(None)
    model = recording_model([AIMessage("First answer."), AIMessage("Second answer."), AIMessage("Third answer.")])
    agent = create_agent(model, middleware=[HippoMemoryMiddleware(memory)])
    said = [{"role": "user", "content": "I am allergic to peanuts."}]
    agent.invoke({"messages": said}, _cfg("t"))
    agent.invoke({"messages": said}, _cfg("t"))  # regenerate
    agent.invoke({"messages": [*said, {"role": "assistant", "content": "Second answer."}, *said]}, _cfg("t"))
    assert _stored(memory) == [("user", "I am allergic to peanuts."), ("assistant", "First answer."),
                               ("assistant", "Second answer."), ("user", "I am allergic to peanuts."),
                               ("assistant", "Third answer.")]
    memory.close()


@pytest.mark.parametrize("async_run", [False, True])
def test_a_client_sending_only_its_latest_message_stores_the_thread_s_first_words_again(async_run):
    """Without a checkpointer a client may send only its latest message (the memory is hippo's): "Hi" said again
    after the thread went on was read as the thread's first turn sent again to regenerate its answer, and not
    stored. A prompt without earlier turns repeats the first turn only while the thread holds nothing but answers
    after it; then it is still a regeneration, stored once."""
    memory = hippo.Memory(None)
    agent = create_agent(recording_model([AIMessage(f"Answer {k}.") for k in range(4)]),
                         middleware=[HippoMemoryMiddleware(memory)])

    def send(text: str) -> None:
        said = {"messages": [{"role": "user", "content": text}]}
        if async_run:
            asyncio.run(agent.ainvoke(said, _cfg("t")))
        else:
            agent.invoke(said, _cfg("t"))

    send("Hi")
    send("Hi")  # the first turn again, nothing said after it: its answer regenerated
    send("I moved to Porto.")
    send("Hi")  # a new turn of a client sending only its latest message
    assert _stored(memory) == [("user", "Hi"), ("assistant", "Answer 0."), ("assistant", "Answer 1."),
                               ("user", "I moved to Porto."), ("assistant", "Answer 2."), ("user", "Hi"),
                               ("assistant", "Answer 3.")]
    memory.close()


def test_a_fork_of_the_first_turn_is_known_by_its_message_ids():
    """With a checkpointer the prompt is the thread's whole state: a fork from before the first model call, after
    the thread went on, holds the first message with its id, and it is stored once; the same words sent as a new
    message are a new turn."""
    memory = hippo.Memory(None)
    agent = create_agent(recording_model([AIMessage(f"Answer {k}.") for k in range(4)]),
                         middleware=[HippoMemoryMiddleware(memory)], checkpointer=InMemorySaver())
    agent.invoke({"messages": [{"role": "user", "content": "Hi"}]}, _cfg("t"))
    agent.invoke({"messages": [{"role": "user", "content": "I moved to Porto."}]}, _cfg("t"))
    first = [s for s in agent.get_state_history(_cfg("t")) if s.next == ("model",)][-1]  # before the first call
    assert first.next == ("model",) and len(first.values["messages"]) == 1
    agent.invoke(None, {"configurable": {**first.config["configurable"], "user_id": "ann"}})
    assert _stored(memory) == [("user", "Hi"), ("assistant", "Answer 0."), ("user", "I moved to Porto."),
                               ("assistant", "Answer 1."), ("assistant", "Answer 2.")]
    agent.invoke({"messages": [{"role": "user", "content": "Hi"}]}, _cfg("t"))
    assert _stored(memory)[5:] == [("user", "Hi"), ("assistant", "Answer 3.")]
    memory.close()


def test_regenerating_again_after_a_regenerated_answer_stores_the_turn_once():
    """The thread holds the answer the user threw away; the next turns regenerated are still known."""
    memory = hippo.Memory(None)
    model = recording_model([AIMessage(f"Answer {k}.") for k in range(6)])
    agent = create_agent(model, middleware=[HippoMemoryMiddleware(memory)])
    first = [{"role": "user", "content": "I am allergic to peanuts."}]
    agent.invoke({"messages": first}, _cfg("t"))
    agent.invoke({"messages": first}, _cfg("t"))  # Answer 1 replaces Answer 0
    second = [*first, {"role": "assistant", "content": "Answer 1."}, {"role": "user", "content": "And to shellfish."}]
    agent.invoke({"messages": second}, _cfg("t"))
    agent.invoke({"messages": second}, _cfg("t"))  # Answer 3 replaces Answer 2
    third = [*second, {"role": "assistant", "content": "Answer 3."}, {"role": "user", "content": "ok"}]
    agent.invoke({"messages": third}, _cfg("t"))
    assert _stored(memory) == [("user", "I am allergic to peanuts."), ("assistant", "Answer 0."),
                               ("assistant", "Answer 1."), ("user", "And to shellfish."), ("assistant", "Answer 2."),
                               ("assistant", "Answer 3."), ("user", "ok"), ("assistant", "Answer 4.")]
    memory.close()


def test_a_message_s_own_time_dates_it():
    """A client replaying a chat of last month (each message with its ``hippo_timestamp``) had every turn stored as
    said today; the answer the model gives now is dated now."""
    memory = hippo.Memory(None)
    agent = create_agent(recording_model([AIMessage("Glad it helped.")]), middleware=[HippoMemoryMiddleware(memory)])
    said = HumanMessage("I went to a support group yesterday.",
                        additional_kwargs={"hippo_timestamp": "2023-05-08T23:30:00-05:00"})
    before = datetime.now(timezone.utc)
    agent.invoke({"messages": [said]}, _cfg("t"))
    user, answer = memory.using("user.ann").list()
    assert user.timestamp == datetime(2023, 5, 8, 23, 30, tzinfo=timezone(timedelta(hours=-5)))
    assert answer.timestamp >= before
    hits = memory.using("user.ann").search("support group", since="2023-05-07", until="2023-05-08")
    assert [h.id for h in hits] == [user.id]
    memory.close()


def test_a_datetime_dates_a_message_the_middleware_stores():
    """The middleware stores a message's words, not the message as JSON: a datetime (naive: UTC) is a time too."""
    memory = hippo.Memory(None)
    agent = create_agent(recording_model([AIMessage("Noted.")]), middleware=[HippoMemoryMiddleware(memory)])
    said = HumanMessage("I moved to Denver.", additional_kwargs={"hippo_timestamp": datetime(2023, 6, 10, 9, 30)})
    agent.invoke({"messages": [said]}, _cfg("t"))
    assert memory.using("user.ann").list()[0].timestamp == datetime(2023, 6, 10, 9, 30, tzinfo=timezone.utc)
    memory.close()


@pytest.mark.parametrize("value", ["last month", 1683606660000, [2023]])
def test_a_time_hippo_cannot_read_is_refused_by_name(value):
    memory = hippo.Memory(None)
    agent = create_agent(recording_model([AIMessage("Noted.")]), middleware=[HippoMemoryMiddleware(memory)])
    said = HumanMessage("I moved to Denver.", additional_kwargs={"hippo_timestamp": value})
    with pytest.raises(hippo.InvalidInput, match=r"messages\[0\]\.additional_kwargs\['hippo_timestamp'\]"):
        agent.invoke({"messages": [said]}, _cfg("t"))
    assert memory.using("user.ann").list() == []
    memory.close()


def _games(memory) -> None:
    view = memory.using("user.ann")
    view.add("I played tennis in the park", timestamp="2026-11-22T18:00:00+00:00")  # Sunday
    view.add("I played chess in the park", timestamp="2026-11-23T18:00:00+00:00")   # Monday


def test_a_turn_s_yesterday_is_the_day_before_the_turn():
    """The turn comes on Tuesday, a day after the last message stored: its "yesterday" is Monday (counted from the
    latest message stored, it was Sunday)."""
    memory = hippo.Memory(None)
    _games(memory)
    model = recording_model([AIMessage("Chess.")])
    agent = create_agent(model, middleware=[HippoMemoryMiddleware(memory, budget_tokens=20)])
    asked = HumanMessage("What did I play in the park yesterday?",
                         additional_kwargs={"hippo_timestamp": "2026-11-24T09:00:00+00:00"})
    assert memory.using("user.ann").recall(asked.text, budget_tokens=20).messages[0].text == \
        "I played tennis in the park"  # the same recall counted from the latest message
    agent.invoke({"messages": [asked]}, _cfg("t"))
    assert _recalled(model.calls[0]) == ["I played chess in the park"]
    memory.close()


def test_a_time_hippo_cannot_read_fails_the_turn_before_the_model_is_called():
    memory = hippo.Memory(None)
    model = recording_model([AIMessage("Noted.")])
    agent = create_agent(model, middleware=[HippoMemoryMiddleware(memory)])
    earlier = HumanMessage("I moved to Denver.", additional_kwargs={"hippo_timestamp": "last month"})
    with pytest.raises(hippo.InvalidInput, match=r"messages\[0\]\.additional_kwargs\['hippo_timestamp'\]"):
        agent.invoke({"messages": [earlier, AIMessage("Nice."), HumanMessage("Where do I live?")]}, _cfg("t"))
    assert model.calls == []
    memory.close()


def test_a_numpy_number_dates_a_message_the_middleware_stores():
    """The middleware stores a message's words, not the message as JSON: a numpy number of epoch seconds is a time
    there, as it is for the LlamaIndex block."""
    import numpy as np

    memory = hippo.Memory(None)
    agent = create_agent(recording_model([AIMessage("Noted.")]), middleware=[HippoMemoryMiddleware(memory)])
    said = HumanMessage("I moved to Denver.", additional_kwargs={"hippo_timestamp": np.int64(1686389400)})
    agent.invoke({"messages": [said]}, _cfg("t"))
    assert memory.using("user.ann").list()[0].timestamp == datetime(2023, 6, 10, 9, 30, tzinfo=timezone.utc)
    memory.close()


_FIRST = [{"role": "user", "content": "I'm planning a trip to Japan in April."}]
_AGAIN = _FIRST + [{"role": "assistant", "content": "Answer 0: noted the details about your trip to Japan and Kyoto."},
                   {"role": "user", "content": "Which trains should we take from Osaka to Kyoto?"}]


def _stored_turns(memory) -> list[tuple[str, str]]:
    return sorted((m.role, m.text) for m in memory.using("user.ann").list())


async def _regenerated(concurrently: bool) -> list[tuple[str, str]]:
    """A client sending the whole history each time asks for the last answer three times over."""
    memory = hippo.Memory(None)
    agent = create_agent(recording_model(_answers(4)), middleware=[HippoMemoryMiddleware(memory)])
    await agent.ainvoke({"messages": list(_FIRST)}, _cfg("t"))
    runs = [agent.ainvoke({"messages": list(_AGAIN)}, _cfg("t")) for _ in range(3)]
    if concurrently:
        await asyncio.gather(*runs)
    else:
        for run in runs:
            await run
    out = _stored_turns(memory)
    memory.close()
    return out


async def test_a_turn_regenerated_by_runs_at_once_is_stored_once():
    """Runs of one thread at once each compared the turn with the thread's stored messages before any stored it:
    the user's question was stored three times, next to each answer, where the same runs one after the other
    store it once."""
    one_by_one = await _regenerated(False)
    assert [t for t in one_by_one if t[0] == "user"] == sorted(("user", m["content"]) for m in _AGAIN
                                                               if m["role"] == "user")
    assert len(one_by_one) == 6  # two questions, the first answer and the three regenerated ones
    assert await _regenerated(True) == one_by_one


def test_a_turn_regenerated_by_threads_at_once_is_stored_once(monkeypatch):
    """The same with the sync agent in threads (LangGraph's parallel branches, a threaded server): three threads
    that all compared before any stored (held at a barrier there) stored the question three times."""
    import threading

    memory = hippo.Memory(None)
    agent = create_agent(recording_model(_answers(4)), middleware=[HippoMemoryMiddleware(memory)])
    agent.invoke({"messages": list(_FIRST)}, _cfg("t"))
    compared = threading.Barrier(3)
    # each waits for the others to have compared too, unless they take turns (the barrier then breaks)
    side_by_side = calls_wait(HippoMemoryMiddleware._unstored, compared, timeout=2)
    monkeypatch.setattr(HippoMemoryMiddleware, "_unstored", staticmethod(side_by_side))
    runs = [threading.Thread(target=agent.invoke, args=({"messages": list(_AGAIN)}, _cfg("t"))) for _ in range(3)]
    for run in runs:
        run.start()
    for run in runs:
        run.join()
    users = [t for t in _stored_turns(memory) if t[0] == "user"]
    assert users == sorted(("user", m["content"]) for m in _AGAIN if m["role"] == "user")
    assert len(_stored_turns(memory)) == 6  # two questions, the first answer and the three regenerated ones
    memory.close()


def test_a_turn_regenerated_whose_answer_repeats_the_one_before_is_stored_once():
    """A client sending the whole history regenerates its second turn; the model said "Noted!" to both turns. The
    earlier turns were aligned with the thread at the latest place of their words, the second turn's "Noted!", so
    the regenerated turn followed nothing stored and was stored again, question and answer; sent once, the same
    history stores each message once."""
    memory = hippo.Memory(None)
    agent = create_agent(recording_model([AIMessage("Noted!") for _ in range(3)]),
                         middleware=[HippoMemoryMiddleware(memory)])
    first = {"role": "user", "content": "I live in Lisbon now."}
    second = [first, {"role": "assistant", "content": "Noted!"}, {"role": "user", "content": "I have a cat, Miso."}]
    agent.invoke({"messages": [first]}, _cfg("t"))
    agent.invoke({"messages": list(second)}, _cfg("t"))
    stored = [(m.role, m.text) for m in memory.using("user.ann").list()]
    assert stored == [("user", "I live in Lisbon now."), ("assistant", "Noted!"), ("user", "I have a cat, Miso."),
                      ("assistant", "Noted!")]
    agent.invoke({"messages": list(second)}, _cfg("t"))  # the answer regenerated
    assert [(m.role, m.text) for m in memory.using("user.ann").list()] == stored
    memory.close()


def test_a_turn_regenerated_by_sync_and_async_runs_on_their_own_loops_at_once_is_stored_once(monkeypatch):
    """A sync run and two async runs, each on an event loop of its own (``asyncio.run`` in a worker thread), of one
    thread: the async runs took turns only with the runs of their own loop, and all three compared before any
    stored, so the question was stored three times, where the same runs one after the other store it once."""
    import threading

    memory = hippo.Memory(None)
    agent = create_agent(recording_model(_answers(4)), middleware=[HippoMemoryMiddleware(memory)])
    agent.invoke({"messages": list(_FIRST)}, _cfg("t"))
    compared = threading.Barrier(3)
    # each waits for the others to have compared too, unless they take turns (the barrier then breaks)
    side_by_side = calls_wait(HippoMemoryMiddleware._unstored, compared, timeout=2)
    monkeypatch.setattr(HippoMemoryMiddleware, "_unstored", staticmethod(side_by_side))

    def sync_run() -> None:
        agent.invoke({"messages": list(_AGAIN)}, _cfg("t"))

    def async_run() -> None:
        asyncio.run(agent.ainvoke({"messages": list(_AGAIN)}, _cfg("t")))

    runs = [threading.Thread(target=run) for run in (sync_run, async_run, async_run)]
    for run in runs:
        run.start()
    for run in runs:
        run.join()
    users = [t for t in _stored_turns(memory) if t[0] == "user"]
    assert users == sorted(("user", m["content"]) for m in _AGAIN if m["role"] == "user")
    assert len(_stored_turns(memory)) == 6  # two questions, the first answer and the three regenerated ones
    memory.close()


def test_a_sync_run_on_an_event_loop_s_thread_waits_for_an_async_run_of_that_loop_without_a_hang(monkeypatch):
    """An async run stores its turn while a sync run of the same thread is called on the loop's own thread (sync
    code inside an ``async def`` handler) and waits for the turn: the async run's turn must end without the loop,
    which the waiting sync run blocks. Both turns are stored, the question once."""
    import threading
    import time

    from langchain_hippo import middleware as middleware_module

    memory = hippo.Memory(None)
    agent = create_agent(recording_model(_answers(4)), middleware=[HippoMemoryMiddleware(memory)])
    agent.invoke({"messages": list(_FIRST)}, _cfg("t"))
    key = ("sync", (memory, "user.ann", "t"))
    real = hippo.Memory.add_many
    first = [True]

    def add_many(self, *args, **kwargs):  # the async run's store, held until the sync run waits for the turn
        if first[0]:
            first[0] = False
            while middleware_module._TURNS._held.get(key, [None, 0])[1] < 2:
                time.sleep(0.001)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(hippo.Memory, "add_many", add_many)

    async def both() -> None:
        task = asyncio.ensure_future(agent.ainvoke({"messages": list(_AGAIN)}, _cfg("t")))
        while key not in middleware_module._TURNS._held:
            await asyncio.sleep(0)
        agent.invoke({"messages": list(_AGAIN)}, _cfg("t"))  # on the loop's thread: the loop waits with it
        await task

    runner = threading.Thread(target=lambda: asyncio.run(both()), daemon=True)
    runner.start()
    runner.join(60)
    assert not runner.is_alive(), "the runs never ended"
    users = [t for t in _stored_turns(memory) if t[0] == "user"]
    assert users == sorted(("user", m["content"]) for m in _AGAIN if m["role"] == "user")
    assert len(_stored_turns(memory)) == 5  # two questions, the first answer and the two regenerated ones
    memory.close()


@pytest.mark.parametrize("handles", ["one", "two"])
def test_two_agents_regenerating_a_turn_of_one_thread_at_once_store_it_once(tmp_path, monkeypatch, handles):
    """Two agents, each with its own middleware, on one memory (one ``hippo.Memory``, or two opened on one file) serve
    the same thread at once. Each read the thread before its model call and kept what it read; the second to store
    compared its turn with that record, which lacked the first one's turn, and stored the question again."""
    import threading

    path = tmp_path / "agents.db"
    with hippo.Memory(path) as memory:
        create_agent(recording_model(_answers(1)), middleware=[HippoMemoryMiddleware(memory)]).invoke(
            {"messages": list(_FIRST)}, _cfg("t"))
    compared = threading.Barrier(2)
    # each waits for the other to have compared too, unless they take turns (the barrier then breaks)
    side_by_side = calls_wait(HippoMemoryMiddleware._unstored, compared, timeout=2)
    monkeypatch.setattr(HippoMemoryMiddleware, "_unstored", staticmethod(side_by_side))
    first = hippo.Memory(path)
    memories = [first, first if handles == "one" else hippo.Memory(path)]
    agents = [create_agent(recording_model([AIMessage(f"Reply {k}: take the Shinkansen.")]),
                           middleware=[HippoMemoryMiddleware(m)]) for k, m in enumerate(memories)]
    runs = [threading.Thread(target=agent.invoke, args=({"messages": list(_AGAIN)}, _cfg("t"))) for agent in agents]
    for run in runs:
        run.start()
    for run in runs:
        run.join()
    users = [t for t in _stored_turns(first) if t[0] == "user"]
    assert users == sorted(("user", m["content"]) for m in _AGAIN if m["role"] == "user")
    assert len(_stored_turns(first)) == 5  # two questions, the first answer and both replies
    for m in {id(m): m for m in memories}.values():
        m.close()


def test_a_run_that_read_the_thread_before_another_stored_its_turn_stores_the_turn_once(monkeypatch):
    """Two runs regenerate the same turn (a client sending the whole history). The second read the thread before
    the model call, while the first had not yet stored the turn, and kept what it read as the thread's record once
    the first had: its own turn then compared with a thread without the first's, and the user's message was stored
    twice. Under load this is what runs side by side do; here the second run's read is held until the first run
    has stored its turn."""
    import threading

    memory = hippo.Memory(None)
    agent = create_agent(recording_model(_answers(4)), middleware=[HippoMemoryMiddleware(memory)])
    agent.invoke({"messages": list(_FIRST)}, _cfg("t"))
    first_done = threading.Event()
    real = hippo.Memory.list

    def held_list(self, *args, **kwargs):
        out = real(self, *args, **kwargs)
        if threading.current_thread().name == "second" and not first_done.is_set():
            first_done.wait(timeout=60)  # what it read is from before the first run stored its turn
        return out

    monkeypatch.setattr(hippo.Memory, "list", held_list)
    second = threading.Thread(target=agent.invoke, args=({"messages": list(_AGAIN)}, _cfg("t")), name="second")
    second.start()
    agent.invoke({"messages": list(_AGAIN)}, _cfg("t"))
    first_done.set()
    second.join()
    users = [t for t in _stored_turns(memory) if t[0] == "user"]
    assert users == sorted(("user", m["content"]) for m in _AGAIN if m["role"] == "user")
    assert len(_stored_turns(memory)) == 5  # two questions, the first answer and the two regenerated ones
    memory.close()



def _compare_side_by_side(compared) -> None:
    """In a worker process: its first comparison of a turn with the thread waits until the other process has
    compared too (when the two do not take turns, the barrier's wait ends them both together)."""
    HippoMemoryMiddleware._unstored = staticmethod(first_call_waits(HippoMemoryMiddleware._unstored, compared))


def _regenerate_in_a_process(path: str, compared, reply: str, mode: str) -> None:
    """A server process (a gunicorn worker) regenerating the turn of ``_AGAIN``, sync or async."""
    from .conftest import recording_model as model_of

    _compare_side_by_side(compared)

    async def run(agent) -> None:
        await agent.ainvoke({"messages": list(_AGAIN)}, _cfg("t"))

    with hippo.Memory(path) as memory:
        agent = create_agent(model_of([AIMessage(reply)]), middleware=[HippoMemoryMiddleware(memory)])
        if mode == "sync":
            agent.invoke({"messages": list(_AGAIN)}, _cfg("t"))
        else:
            asyncio.run(run(agent))


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_two_processes_regenerating_a_turn_at_once_store_it_once(tmp_path, mode):
    """Two processes on one SQLite file serve the same thread at once. Each compared the turn with the thread before
    either stored, and both stored the question: the thread held it twice. The add is made only while the
    namespace is as it was read (``add_many(if_version=...)``): the second reads the thread again and stores only
    its own answer."""
    import multiprocessing

    path = str(tmp_path / "workers.db")
    with hippo.Memory(path) as memory:
        create_agent(recording_model(_answers(1)), middleware=[HippoMemoryMiddleware(memory)]).invoke(
            {"messages": list(_FIRST)}, _cfg("t"))
    ctx = multiprocessing.get_context("spawn")
    compared = ctx.Barrier(2)
    workers = [ctx.Process(target=_regenerate_in_a_process,
                           args=(path, compared, f"Reply {k}: take the Shinkansen.", mode)) for k in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
    assert [w.exitcode for w in workers] == [0, 0]
    with hippo.Memory(path) as memory:
        stored = _stored_turns(memory)
    users = [t for t in stored if t[0] == "user"]
    assert users == sorted(("user", m["content"]) for m in _AGAIN if m["role"] == "user")
    assert sorted(t[1] for t in stored if t[0] == "assistant") == [
        "Answer 0: noted the details about your trip to Japan and Kyoto.", "Reply 0: take the Shinkansen.",
        "Reply 1: take the Shinkansen."]


@pytest.mark.parametrize("async_run", [False, True])
def test_a_dated_turn_that_repeats_the_only_turn_stored_is_a_new_turn(async_run):
    """A client sending only its latest message (no checkpointer, the memory is hippo's) said "Hi" twice: while the
    thread held only the first "Hi" and its answer, the second was read as that turn sent again to regenerate its
    answer, and only the answer was stored. A message that gives its time (``hippo_timestamp``) repeats only a
    stored message of that time: the second "Hi" is stored, and the same dated message sent again (a
    regeneration) is still stored once."""
    memory = hippo.Memory(None)
    agent = create_agent(recording_model([AIMessage(f"Answer {k}.") for k in range(5)]),
                         middleware=[HippoMemoryMiddleware(memory)])

    def send(text: str, at: int) -> None:
        said = {"messages": [{"role": "user", "content": text, "additional_kwargs": {"hippo_timestamp": at}}]}
        if async_run:
            asyncio.run(agent.ainvoke(said, _cfg("t")))
        else:
            agent.invoke(said, _cfg("t"))

    send("Hi", 1_700_000_000)
    send("Hi", 1_700_000_060)  # said again a minute later: a new turn
    send("Hi", 1_700_000_060)  # the same message sent again: its answer regenerated
    send("I moved to Porto.", 1_700_000_120)
    send("Hi", 1_700_000_060)  # sent again after the user said more: still that message
    assert _stored(memory) == [("user", "Hi"), ("assistant", "Answer 0."), ("user", "Hi"), ("assistant", "Answer 1."),
                               ("assistant", "Answer 2."), ("user", "I moved to Porto."), ("assistant", "Answer 3."),
                               ("assistant", "Answer 4.")]
    users = [m.timestamp.timestamp() for m in memory.using("user.ann").list() if m.role == "user"]
    assert users == [1_700_000_000, 1_700_000_060, 1_700_000_120]
    memory.close()


@pytest.mark.parametrize("store_tool_results", [False, True])
def test_a_tool_s_output_sent_as_a_user_s_message_is_the_tool_s(store_tool_results):
    """Anthropic's API sends a tool's output as a user's message of ``tool_result`` blocks, and a client keeping its
    history in that form hands LangChain a ``HumanMessage`` of them. It was the latest user message: the question
    to recall for had no words, and nothing was recalled. The question is the user's latest typed message, and the
    output is the tool's: stored under the tool its call named with ``store_tool_results``, else not at all."""
    memory = hippo.Memory(None)
    memory.using("user.ann").add("My umbrella is the red one in the hall.", session_id="old")
    model = recording_model([AIMessage("Take the red umbrella.")])
    agent = create_agent(model, middleware=[HippoMemoryMiddleware(memory, store_tool_results=store_tool_results)])
    agent.invoke({"messages": [
        {"role": "user", "content": "Will it rain in Paris, should I take my umbrella?"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"city": "Paris"}}],
         "tool_calls": [{"name": "lookup", "id": "toolu_1", "args": {"city": "Paris"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                      "content": [{"type": "text", "text": "Rain in Paris all afternoon."}]}]}]},
        _cfg("t"))
    assert "My umbrella is the red one in the hall." in _recalled(model.calls[0])
    stored = [(m.role, m.speaker, m.text) for m in memory.using("user.ann").list(filter={"session_id": "t"})]
    assert stored == [("tool", "lookup", "Rain in Paris all afternoon.")] * store_tool_results + [
        ("assistant", "assistant", "Take the red umbrella.")]
    memory.close()


def test_a_tool_s_output_answering_a_call_made_in_content_blocks_is_the_tool_s():
    """A history kept in Anthropic's form gives LangChain an answer whose call is only a ``tool_use`` block (no
    ``tool_calls``): the output answering it was said by "tool". It is the tool's the block named."""
    memory = hippo.Memory(None)
    agent = create_agent(recording_model([AIMessage("Take an umbrella.")]),
                         middleware=[HippoMemoryMiddleware(memory, store_tool_results=True)])
    agent.invoke({"messages": [
        {"role": "user", "content": "Will it rain in Paris?"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"city": "Paris"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "Rain."}]}]},
        _cfg("t"))
    assert [(m.role, m.speaker, m.text) for m in memory.using("user.ann").list()] == [
        ("tool", "lookup", "Rain."), ("assistant", "assistant", "Take an umbrella.")]
    memory.close()


def test_an_answer_with_words_stored_without_its_calls_is_not_recalled_beside_the_prompt_that_holds_it():
    """A thread stored before the calls of an answer that says something were kept holds its words alone; the
    prompt holding that answer (a client sending the whole history) did not count it as shown, and recall handed the
    model the answer's words a second time. It is found by its words."""
    memory = hippo.Memory(None)
    memory.using("user.ann").add_many([
        {"text": t, "role": r, "speaker": s, "session_id": "k"} for r, s, t in [
            ("user", "ann", "What is the weather in Köln?"),
            ("assistant", "assistant", "Let me check the weather in Köln."),
            ("tool", "lookup", "Sunny in Köln."), ("assistant", "assistant", "It is sunny in Köln.")]])
    model = recording_model([AIMessage("Rain tomorrow.")])
    agent = create_agent(model, tools=[lookup], middleware=[HippoMemoryMiddleware(memory, store_tool_results=True)])
    agent.invoke({"messages": [
        {"role": "user", "content": "What is the weather in Köln?"},
        {"role": "assistant", "content": "Let me check the weather in Köln.",
         "tool_calls": [{"name": "lookup", "id": "c1", "args": {"city": "Köln"}}]},
        {"role": "tool", "content": "Sunny in Köln.", "tool_call_id": "c1", "name": "lookup"},
        {"role": "assistant", "content": "It is sunny in Köln."},
        {"role": "user", "content": "And the weather in Köln tomorrow?"}]}, _cfg("k"))
    assert _recalled(model.calls[0]) == []
    memory.close()
