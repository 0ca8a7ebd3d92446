"""LangChain 1.x create_agent with HippoStore and HippoMemoryMiddleware: a fact told in one thread is
recalled in another thread of the same user, and never in another user's."""

from __future__ import annotations

import re
import sys
import warnings
from dataclasses import dataclass

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain.agents.structured_output import ToolStrategy
from langchain.tools import ToolRuntime, tool
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage, add_notification_metadata
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel

import hippo
from langchain_hippo import HippoMemoryMiddleware, HippoStore

from .conftest import recording_model


@dataclass
class Context:
    user_id: str


@tool
def save_preference(topic: str, value: str, runtime: ToolRuntime[Context]) -> str:
    """Save a user preference in long-term storage."""
    runtime.store.put(("prefs", runtime.context.user_id), topic, {"value": value})
    return f"saved {topic}={value}"


def _system_text(call) -> str:
    return "\n".join(m.text for m in call if isinstance(m, SystemMessage))


def _script():
    return [
        AIMessage(content="", tool_calls=[{"name": "save_preference", "id": "c1",
                                           "args": {"topic": "colour", "value": "teal"}}]),
        AIMessage(content="Noted: your favourite colour is teal."),
        AIMessage(content="You told me your favourite colour is teal."),
        AIMessage(content="I do not know your favourite colour yet."),
    ]


def _agent(memory, model, **kw):
    return create_agent(
        model, tools=[save_preference], system_prompt="You are a helpful assistant.",
        middleware=[HippoMemoryMiddleware(memory, budget_tokens=300)], store=HippoStore(memory),
        context_schema=Context, checkpointer=InMemorySaver(), **kw)


def _check(memory, model):
    store = HippoStore(memory)
    assert store.get(("prefs", "ann"), "colour").value == {"value": "teal"}
    ann = memory.using("user.ann").list()
    assert [(m.role, m.session_id) for m in ann][:2] == [("user", "t1"), ("assistant", "t1")]
    assert ann[0].text == "My favourite colour is teal, please remember it."
    # thread 2 starts empty: the colour reaches the model only through hippo's recall
    t2_call = model.calls[2]
    assert [m.text for m in t2_call if isinstance(m, HumanMessage)] == ["What is my favourite colour?"]
    assert "teal" in _system_text(t2_call) and "You are a helpful assistant." in _system_text(t2_call)
    # another user never sees it
    assert "teal" not in _system_text(model.calls[3])
    assert memory.using("user.bob").list()[0].text == "What is my favourite colour?"


def test_agent_remembers_across_threads(memory):
    model = recording_model(_script())
    agent = _agent(memory, model)
    agent.invoke({"messages": [{"role": "user", "content": "My favourite colour is teal, please remember it."}]},
                 {"configurable": {"thread_id": "t1"}}, context=Context(user_id="ann"))
    out = agent.invoke({"messages": [{"role": "user", "content": "What is my favourite colour?"}]},
                       {"configurable": {"thread_id": "t2"}}, context=Context(user_id="ann"))
    assert out["messages"][-1].text == "You told me your favourite colour is teal."
    agent.invoke({"messages": [{"role": "user", "content": "What is my favourite colour?"}]},
                 {"configurable": {"thread_id": "t3"}}, context=Context(user_id="bob"))
    assert len(model.calls) == 4
    assert "teal" not in _system_text(model.calls[0])  # nothing remembered before the first turn
    _check(memory, model)


async def test_agent_remembers_across_threads_async(memory):
    model = recording_model(_script())
    agent = _agent(memory, model)
    await agent.ainvoke({"messages": [HumanMessage("My favourite colour is teal, please remember it.")]},
                        {"configurable": {"thread_id": "t1"}}, context=Context(user_id="ann"))
    await agent.ainvoke({"messages": [HumanMessage("What is my favourite colour?")]},
                        {"configurable": {"thread_id": "t2"}}, context=Context(user_id="ann"))
    await agent.ainvoke({"messages": [HumanMessage("What is my favourite colour?")]},
                        {"configurable": {"thread_id": "t3"}}, context=Context(user_id="bob"))
    _check(memory, model)


def test_user_and_thread_from_configurable(memory):
    model = recording_model([AIMessage(content="Hello Cleo."), AIMessage(content="You live in Lisbon.")])
    agent = create_agent(model, middleware=[HippoMemoryMiddleware(memory)])
    agent.invoke({"messages": [HumanMessage("Hi, I live in Lisbon near the river.")]},
                 {"configurable": {"user_id": "cleo", "thread_id": "a"}})
    agent.invoke({"messages": [HumanMessage("Where do I live?")]},
                 {"configurable": {"user_id": "cleo", "thread_id": "b"}})
    assert "Lisbon" in _system_text(model.calls[1])
    stored = memory.using("user.cleo").list()
    assert [m.session_id for m in stored] == ["a", "a", "b", "b"]
    assert [m.type for m in model.calls[0]] == ["human"]  # nothing recalled, no system message added


def test_thread_scope_without_user(memory):
    model = recording_model([AIMessage(content="ok"), AIMessage(content="ok")])
    agent = create_agent(model, middleware=[HippoMemoryMiddleware(memory)], checkpointer=InMemorySaver())
    agent.invoke({"messages": [HumanMessage("The wifi password is kumquat.")]}, {"configurable": {"thread_id": "x"}})
    assert [m.text for m in memory.using("thread.x").list()] == ["The wifi password is kumquat.", "ok"]
    agent.invoke({"messages": [HumanMessage("What is the wifi password?")]}, {"configurable": {"thread_id": "y"}})
    assert "kumquat" not in _system_text(model.calls[1])


def test_tool_results_stored_on_request(memory):
    model = recording_model(_script())
    agent = create_agent(model, tools=[save_preference],
                         middleware=[HippoMemoryMiddleware(memory, store_tool_results=True)],
                         store=HippoStore(memory), context_schema=Context)
    agent.invoke({"messages": [HumanMessage("My favourite colour is teal, please remember it.")]},
                 context=Context(user_id="ann"))
    roles = [m.role for m in memory.using("user.ann").list()]
    assert roles == ["user", "assistant", "tool", "assistant"]  # the call that asked for the result, in words


def test_custom_namespace_fn_and_template(memory):
    model = recording_model([AIMessage(content="one"), AIMessage(content="two")])
    mw = HippoMemoryMiddleware(memory, namespace_fn=lambda user, thread: f"team.{user}",
                               template="MEMORY:\n{context}")
    agent = create_agent(model, middleware=[mw])
    agent.invoke({"messages": [HumanMessage("Our sprint ends on Friday.")]}, {"configurable": {"user_id": "dev"}})
    agent.invoke({"messages": [HumanMessage("When does the sprint end?")]}, {"configurable": {"user_id": "dev"}})
    assert model.calls[1][0].text.startswith("MEMORY:\n") and "Friday" in model.calls[1][0].text
    assert memory.using("team.dev").count() == 4


@pytest.mark.parametrize(
    "kwargs, name",
    [({"budget_tokens": 0}, "budget_tokens"), ({"template": "no placeholder"}, "template"),
     ({"template": 'Answer as {"answer": ...}\n{context}'}, "template"), ({"template": "{}{context}"}, "template"),
     ({"namespace_fn": 3}, "namespace_fn"), ({"user_id_key": ""}, "user_id_key")],
)
def test_middleware_bad_arguments(memory, kwargs, name):
    with pytest.raises(hippo.InvalidInput, match=name):
        HippoMemoryMiddleware(memory, **kwargs)
    with pytest.raises(hippo.InvalidInput, match="memory"):
        HippoMemoryMiddleware(None)


@pytest.mark.parametrize("name, bad, good", [
    ("template", "Memories: {ctx}", "Memories:\n{context}"), ("template", 5, "{context}"),
    ("budget_tokens", "many", 50), ("store_tool_results", "yes", True), ("namespace_fn", 5, None),
    ("user_id_key", "", "uid"), ("thread_id_key", 7, "tid"), ("timezone_key", None, "tz"),
])
def test_every_setting_of_a_made_middleware_is_checked_when_set(memory, name, bad, good):
    """A setting set on a made middleware was taken as it was, and the next run failed inside the agent with
    the wrong error (a template with another field: KeyError; a namespace_fn that is no function: TypeError):
    it is refused by name, the setting left as it was, and a value the constructor takes is kept."""
    middleware = HippoMemoryMiddleware(memory)
    before = getattr(middleware, name)
    with pytest.raises(hippo.InvalidInput, match=f"^{name}"):
        setattr(middleware, name, bad)
    assert getattr(middleware, name) == before
    setattr(middleware, name, good)
    assert getattr(middleware, name) == good


def test_memory_tools_read_the_current_users_namespace(memory):
    memory.using("user.ann").add("Ann's passport number ends in 4471.", speaker="ann")
    memory.using("user.bob").add("Bob's passport number ends in 9012.", speaker="bob")
    script = [AIMessage(content="", tool_calls=[{"name": "memory_search", "id": "s",
                                                  "args": {"query": "passport number"}}]),
              AIMessage(content="done")]
    for user, mine, theirs in (("ann", "4471", "9012"), ("bob", "9012", "4471")):
        model = recording_model(list(script))
        agent = create_agent(model, middleware=[HippoMemoryMiddleware(memory, memory_tools=True)])
        out = agent.invoke({"messages": [HumanMessage("What is my passport number?")]},
                           {"configurable": {"user_id": user}})
        result = next(m for m in out["messages"] if isinstance(m, ToolMessage)).text
        assert mine in result and theirs not in result


async def test_memory_tools_async(memory):
    memory.using("user.ann").add("The garage code is 5521.", speaker="ann")
    model = recording_model([AIMessage(content="", tool_calls=[{"name": "memory_search", "id": "s",
                                                                 "args": {"query": "garage code", "k": 1}}]),
                             AIMessage(content="done")])
    agent = create_agent(model, middleware=[HippoMemoryMiddleware(memory, memory_tools=True)],
                         context_schema=Context)
    out = await agent.ainvoke({"messages": [HumanMessage("garage?")]}, context=Context(user_id="ann"))
    assert "5521" in next(m for m in out["messages"] if isinstance(m, ToolMessage)).text


def test_text_hippo_cannot_take_as_is_does_not_stop_the_agent(memory):
    """A pasted escape code, a NUL or a paste past hippo's question length, in the user's message or the model's
    answer: the agent answers, the turn is stored with such characters as spaces, and the next recall finds it."""
    model = recording_model([AIMessage(content="\x1b[1mNoted.\x1b[0m"), AIMessage(content="ok"),
                             AIMessage(content="ok")])
    agent = create_agent(model, middleware=[HippoMemoryMiddleware(memory)])
    cfg = {"configurable": {"user_id": "dee", "thread_id": "a"}}
    agent.invoke({"messages": [HumanMessage("My locker code is \x1b[31m4417\x1b[0m\x00.")]}, cfg)
    stored = [m.text for m in memory.using("user.dee").list()]
    assert stored == ["My locker code is  [31m4417 [0m .", " [1mNoted. [0m"]
    paste = "log line\n" * 20_000 + "What is my locker code?"  # 180,000 characters: asked by its end
    assert len(paste) > hippo.MAX_QUERY_CHARS
    agent.invoke({"messages": [HumanMessage(paste)]}, cfg)
    assert "4417" in _system_text(model.calls[1])
    assert memory.using("user.dee").count() == 4


def test_an_empty_user_id_names_no_one(memory):
    model = recording_model([AIMessage(content="ok")])
    agent = create_agent(model, middleware=[HippoMemoryMiddleware(memory)])
    agent.invoke({"messages": [HumanMessage("The wifi password is kumquat.")]},
                 {"configurable": {"user_id": "", "thread_id": "t9"}})
    assert memory.namespaces() == ["thread.t9"]


def _summarizing_agent(memory, model):
    summarizer = GenericFakeChatModel(messages=iter([AIMessage(content="Ann likes tea.")] * 10))
    return create_agent(model, checkpointer=InMemorySaver(), middleware=[
        SummarizationMiddleware(summarizer, trigger=("messages", 4), keep=("messages", 1)),
        HippoMemoryMiddleware(memory)])


_TYPED = ["I like tea.", "I like cats.", "What do I like?", "And dogs?"]


def test_a_summary_the_harness_adds_is_not_stored_as_the_users_words(memory):
    """``SummarizationMiddleware`` replaces old turns by a human message marked ``lc_source="summarization"``
    (langchain_core's notification metadata): the user did not type it and the turns it sums up are stored
    already, so long-term memory holds what the user typed and the model answered, each once, as it would
    without the summarizer."""
    model = recording_model([AIMessage(content=f"answer {i}") for i in range(4)])
    agent = _summarizing_agent(memory, model)
    cfg = {"configurable": {"user_id": "ann", "thread_id": "t"}}
    for text in _TYPED:
        agent.invoke({"messages": [HumanMessage(text)]}, cfg)
    assert any(m.additional_kwargs.get("lc_source") == "summarization" for m in model.calls[-1])
    expected = [t for i, text in enumerate(_TYPED) for t in (text, f"answer {i}")]
    assert [m.text for m in memory.using("user.ann").list()] == expected


@pytest.mark.skipif(sys.version_info < (3, 11), reason="an async run hands middleware no config before Python 3.11")
async def test_a_summary_the_harness_adds_is_not_stored_async(memory):
    model = recording_model([AIMessage(content=f"answer {i}") for i in range(4)])
    agent = _summarizing_agent(memory, model)
    cfg = {"configurable": {"user_id": "ann", "thread_id": "t"}}
    for text in _TYPED:
        await agent.ainvoke({"messages": [HumanMessage(text)]}, cfg)
    expected = [t for i, text in enumerate(_TYPED) for t in (text, f"answer {i}")]
    assert [m.text for m in memory.using("user.ann").list()] == expected


def test_recall_is_for_what_the_user_typed_not_a_notification(memory):
    """The latest human message is a background task's update (``add_notification_metadata``): recall asks for
    the user's own latest message, and the update is not stored as the user's words."""
    memory.using("user.bo").add("My sister lives in Porto.", speaker="bo", session_id="old")
    memory.using("user.bo").add("The quarterly report draft is due on Monday.", speaker="bo", session_id="old")
    model = recording_model([AIMessage(content="Your sister lives in Porto.")])
    agent = create_agent(model, middleware=[HippoMemoryMiddleware(memory, budget_tokens=20)])  # room for one
    update = add_notification_metadata(HumanMessage("Background task t_42 finished: quarterly report exported."),
                                       source="async_subagent")
    agent.invoke({"messages": [HumanMessage("Where does my sister live?"), update]},
                 {"configurable": {"user_id": "bo", "thread_id": "new"}})
    assert "Porto" in _system_text(model.calls[0]) and "quarterly" not in _system_text(model.calls[0])
    stored = [(m.session_id, m.text) for m in memory.using("user.bo").list()]
    assert stored[2:] == [("new", "Where does my sister live?"), ("new", "Your sister lives in Porto.")]


class _Reply(BaseModel):
    text: str


def _structured_agent(memory, **kw):
    script = [AIMessage(content="", tool_calls=[{"name": "_Reply", "id": f"r{i}", "args": {"text": f"reply {i}"}}])
              for i in range(2)]
    return create_agent(recording_model(script), middleware=[HippoMemoryMiddleware(memory, **kw)],
                        response_format=ToolStrategy(_Reply), checkpointer=InMemorySaver())


@pytest.mark.skipif(sys.version_info < (3, 11), reason="an async run hands middleware no config before Python 3.11")
@pytest.mark.parametrize("store_tool_results", [False, True])
async def test_turns_of_an_agent_with_a_structured_response_are_stored(memory, store_tool_results):
    """With ``response_format=ToolStrategy(...)`` the model call ends with the ToolMessage acknowledging the
    structured response, not with the model's answer: the turn was never stored ("I live in Lisbon now." and every
    later message lost). Each message the user typed is stored once, sync or async; the acknowledgement, a tool
    result, once with the next turn when tool results are stored, after the call it answers (the structured response
    in words)."""
    cfg = {"configurable": {"user_id": "ann", "thread_id": "t"}}
    agent = _structured_agent(memory, store_tool_results=store_tool_results)
    first = agent.invoke({"messages": [HumanMessage("I live in Lisbon now.")]}, cfg)
    assert first["structured_response"] == _Reply(text="reply 0")
    await agent.ainvoke({"messages": [HumanMessage("My cat is called Miso.")]}, cfg)
    stored = [(m.role, m.text) for m in memory.using("user.ann").list()]
    calls = [("assistant", f'[tool call _Reply({{"text": "reply {i}"}})]') for i in range(2)]
    ack = [calls[0], ("tool", "Returning structured response: text='reply 0'")] if store_tool_results else []
    last = [calls[1]] if store_tool_results else []
    assert stored == [("user", "I live in Lisbon now."), *ack, ("user", "My cat is called Miso."), *last]


def test_a_named_human_message_is_stored_as_its_writer_s_words(memory):
    """In a group chat each ``HumanMessage`` carries its writer's ``name``; the middleware stored every one as the
    user id's (``team-7: I'm allergic to peanuts.``), so recall could not say who is allergic. A named message is its
    writer's, as ``HippoChatMessageHistory`` stores it; an unnamed one stays the user's."""
    from langchain_hippo import HippoChatMessageHistory

    model = recording_model([AIMessage("Noted."), AIMessage("Bob is.")])
    agent = create_agent(model, middleware=[HippoMemoryMiddleware(memory)], checkpointer=InMemorySaver())
    cfg = {"configurable": {"user_id": "team-7", "thread_id": "t1"}}
    said = [HumanMessage("I'm allergic to peanuts.", name="Bob"), HumanMessage("And I'm vegan.", name="Carol"),
            HumanMessage("Book a table for us.")]
    agent.invoke({"messages": said}, cfg)
    reference = HippoChatMessageHistory(hippo.Memory(None), session_id="s")
    reference.add_messages(said)
    expected = [(m.speaker, m.text) for m in reference._target.list()]
    assert [(m.speaker, m.text) for m in memory.using("user.team-7").list()][:3] == \
        [(s if s != "user" else "team-7", t) for s, t in expected]
    # another thread of the group (this one's turns are in the prompt already, and are not recalled again)
    agent.invoke({"messages": [HumanMessage("Who is allergic to peanuts?", name="Carol")]},
                 {"configurable": {"user_id": "team-7", "thread_id": "t2"}})
    assert "Bob: I'm allergic to peanuts." in _system_text(model.calls[-1])


async def test_an_async_run_whose_config_middleware_cannot_see_warns_and_its_context_still_scopes(memory, monkeypatch):
    """On Python 3.10 an async run hands middleware no config (asyncio tasks take no context before 3.11, so
    LangGraph's ``get_config`` fails in async nodes): a user id in ``configurable`` is not seen, and the turns went to
    the memory's own namespace without a word. The middleware warns, once; a user id in the run's context is seen on
    every Python."""
    if sys.version_info >= (3, 11):  # run it as Python 3.10 does
        import langgraph.config

        from langchain_hippo import middleware

        def hidden():
            raise RuntimeError("Called get_config outside of a runnable context")

        monkeypatch.setattr(middleware, "_ASYNC_RUNS_SHOW_CONFIG", False)
        monkeypatch.setattr(langgraph.config, "get_config", hidden)
    model = recording_model([AIMessage(content=f"answer {i}") for i in range(3)])
    agent = create_agent(model, middleware=[HippoMemoryMiddleware(memory)])
    with pytest.warns(RuntimeWarning, match=re.escape("context={'user_id': ...}")):
        await agent.ainvoke({"messages": [HumanMessage("I live in Lisbon now.")]}, {"configurable": {"user_id": "ann"}})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per middleware
        await agent.ainvoke({"messages": [HumanMessage("My cat is Miso.")]}, {"configurable": {"user_id": "ann"}})
        await agent.ainvoke({"messages": [HumanMessage("I play the cello.")]}, context={"user_id": "ann"})
    assert [m.text for m in memory.using("user.ann").list()] == ["I play the cello.", "answer 2"]
    assert [m.text for m in memory.list()][:2] == ["I live in Lisbon now.", "answer 0"]
