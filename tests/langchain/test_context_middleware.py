"""HippoContextMiddleware inside LangChain 1.x create_agent: what the model is sent shrinks, the graph state does
not; memory_expand completes entries; instructions reach long-term memory at the end of a thread."""

from __future__ import annotations

import asyncio
import itertools
import json

import numpy as np
import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

import hippo
from hippo import InvalidInput
from hippo.text.tokenizer import count_tokens
from langchain_hippo import HippoContextMiddleware
from tests.readme_examples import examples, run

from .conftest import recording_model

INVENTORY = json.dumps({"status": "ok", "request_id": "req-77aa01", "warehouse": "Leipzig",
                        "items": [{"sku": f"SKU-{i:04d}", "name": f"widget {i}", "stock": (i * 37) % 101}
                                  for i in range(150)]}, indent=2)


@tool
def get_inventory(warehouse: str) -> str:
    """Inventory of a warehouse as JSON."""
    return INVENTORY


@tool
def ping(host: str) -> str:
    """Ping a host."""
    return f"{host} is up (12 ms)"


def _agent(memory, model, **kw):
    mw = HippoContextMiddleware(memory, **kw)
    agent = create_agent(model, tools=[get_inventory, ping], system_prompt="You are a warehouse assistant.",
                         middleware=[mw], checkpointer=InMemorySaver())
    return agent, mw


CFG = {"configurable": {"thread_id": "t1"}}


def _script():
    return [
        AIMessage(content="", tool_calls=[{"name": "get_inventory", "id": "c1", "args": {"warehouse": "Leipzig"}}]),
        AIMessage(content="The inventory is loaded."),
        AIMessage(content="", tool_calls=[{"name": "ping", "id": "c2", "args": {"host": "db1"}}]),
        AIMessage(content="db1 is up."),
        AIMessage(content="", tool_calls=[{"name": "memory_expand", "id": "c3",
                                           "args": {"entry_id": "ctx_1", "query": "SKU-0123"}}]),
        AIMessage(content="SKU-0123 has 6 in stock."),
    ]


def _tool_text(call, call_id):
    return next(m.text for m in call if isinstance(m, ToolMessage) and m.tool_call_id == call_id)


def test_large_tool_output_is_sent_as_an_entry_and_expanded_on_demand(memory):
    model = recording_model(_script())
    agent, mw = _agent(memory, model)
    agent.invoke({"messages": [{"role": "user", "content": "Load the Leipzig inventory."}]}, CFG)
    agent.invoke({"messages": [{"role": "user", "content": "Is db1 up?"}]}, CFG)
    out = agent.invoke({"messages": [{"role": "user", "content": "How many SKU-0123 are in stock?"}]}, CFG)
    calls = model.calls
    assert len(calls) == 6
    # the turn that fetched the output sees it verbatim
    assert _tool_text(calls[1], "c1") == INVENTORY
    # later turns see the entry instead: summary and key data, the tool call pairing intact
    view = memory.using("context.t1")
    (entry,) = view.entries()
    sent = _tool_text(calls[2], "c1")
    assert sent.startswith(f"[context_index: {entry.id}] tool_result · get_inventory ref=c1 @ turn 1")
    assert "request_id=req-77aa01" in sent and "warehouse=Leipzig" in sent and "items.count=150" in sent
    assert count_tokens(sent) * 10 < count_tokens(INVENTORY)
    # small outputs stay verbatim
    assert _tool_text(calls[4], "c2") == "db1 is up (12 ms)"
    # memory_expand returns exactly what pattern completion returns, and reinforced the entry
    expanded = _tool_text(calls[5], "c3")
    reference = view.complete(entry.id, "SKU-0123", max_tokens=mw.expand_tokens, context_lines=3).text
    assert expanded == reference and '"sku": "SKU-0123"' in expanded and f'"stock": {(123 * 37) % 101}' in expanded
    assert view.entry(entry.id).accesses >= 1
    # the conversation in the graph state is unchanged
    state_tool = next(m for m in out["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == "c1")
    assert state_tool.text == INVENTORY
    assert out["messages"][-1].text == "SKU-0123 has 6 in stock."
    assert "memory_expand" in [t.name for t in mw.tools]


def test_async_agent_path(memory):
    model = recording_model(_script()[:4])
    agent, _ = _agent(memory, model)

    async def go():
        await agent.ainvoke({"messages": [{"role": "user", "content": "Load the Leipzig inventory."}]}, CFG)
        await agent.ainvoke({"messages": [{"role": "user", "content": "Is db1 up?"}]}, CFG)

    asyncio.run(go())
    assert _tool_text(model.calls[2], "c1").startswith("[context_index: ctx_1]")


def _history(n_turns: int, long_answer: str) -> list:
    msgs = [SystemMessage("sys", id="s")]
    for t in range(n_turns):
        msgs += [HumanMessage(f"question {t}", id=f"h{t}"), AIMessage(long_answer if t == 0 else f"ok {t}",
                                                                      id=f"a{t}")]
    return msgs


def test_decayed_old_turns_are_replaced_recent_ones_kept(memory):
    answer = "The migration plan, step by step. " + " ".join(f"Step {i}: move shard {i} to node {i % 7}."
                                                             for i in range(60))
    mw = HippoContextMiddleware(memory, turn_threshold=0.95)
    view = memory.using("context.x")
    # message rate 0.05 (seed 004 §8.1): strength < 0.95 once (1 + 0.05 age)^-0.5 < 0.95, i.e. age >= 3
    young = mw.compact(_history(3, answer), view)   # the long answer is 2 turns old
    assert young[2].text == answer
    old = mw.compact(_history(4, answer), view)     # 3 turns old
    assert old[2].text.startswith("[context_index: ctx_") and "migration plan" in old[2].text
    assert isinstance(old[2], AIMessage) and old[2].id == "a0"
    assert [m.text for m in old[3:]] == [m.text for m in _history(4, answer)[3:]]
    assert old[0].text == "sys"


def test_critical_entries_and_recent_turns_stay_verbatim(memory):
    rules = [{"match": {"type": "tool_result"}, "action": {"priority": "critical"}}]
    mw = HippoContextMiddleware(memory, policies=rules)
    view = memory.using("context.c")
    msgs = [HumanMessage("load", id="h0"),
            AIMessage("", tool_calls=[{"name": "get_inventory", "id": "k1", "args": {}}], id="a0"),
            ToolMessage(INVENTORY, tool_call_id="k1", name="get_inventory", id="t0"),
            HumanMessage("next", id="h1")]
    out = mw.compact(msgs, view)
    assert out[2].text == INVENTORY and view.entries()[0].priority == "critical"
    mw2 = HippoContextMiddleware(memory, keep_recent_turns=2)
    assert mw2.compact(msgs, memory.using("context.r"))[2].text == INVENTORY


def test_expand_results_of_earlier_turns_are_dropped(memory):
    mw = HippoContextMiddleware(memory)
    msgs = [HumanMessage("q", id="h0"),
            AIMessage("", tool_calls=[{"name": "memory_expand", "id": "e1", "args": {"entry_id": "ctx_1",
                                                                                   "query": "SKU"}}], id="a0"),
            ToolMessage("L1: lots of lines", tool_call_id="e1", name="memory_expand", id="t0"),
            HumanMessage("next", id="h1")]
    out = mw.compact(msgs, memory.using("context.e"))
    assert out[2].text == ("[memory_expand result of an earlier turn for 'SKU' removed from context; "
                           "call memory_expand again to re-read it]")
    assert out[2].tool_call_id == "e1"


def test_a_tool_result_without_a_name_is_known_by_its_call(memory):
    """A history a client sends as role and text gives a tool result its call's id but no name: an earlier
    ``memory_expand`` result was not known as one and was indexed as a new entry (the stored content a second time),
    and other results were indexed as said by no tool. Each is the tool its call named."""
    mw = HippoContextMiddleware(memory)
    expanded = "\n".join(f"L{i}: SKU-{i:04d} stock {i}" for i in range(400))
    msgs = [HumanMessage("q", id="h0"),
            AIMessage("", tool_calls=[{"name": "memory_expand", "id": "e1", "args": {"entry_id": "ctx_1"}},
                                      {"name": "get_inventory", "id": "g1", "args": {"warehouse": "Leipzig"}}],
                      id="a0"),
            ToolMessage(expanded, tool_call_id="e1", id="t0"),
            ToolMessage(INVENTORY, tool_call_id="g1", id="t1"),
            HumanMessage("next", id="h1")]
    out = mw.compact(msgs, memory.using("context.n"))
    assert out[2].text == ("[memory_expand result of an earlier turn removed from context; call memory_expand again "
                           "to re-read it]")
    (entry,) = memory.using("context.n").entries()
    assert out[3].text.startswith(f"[context_index: {entry.id}] tool_result · get_inventory ref=g1 ")


def test_content_hippo_cannot_store_stays_verbatim(memory):
    ansi = "\x1b[31mFAILED\x1b[0m " + "test output line\n" * 600  # terminal colours: control characters
    msgs = [HumanMessage("run", id="h0"),
            AIMessage("", tool_calls=[{"name": "sh", "id": "k1", "args": {}}], id="a0"),
            ToolMessage(ansi, tool_call_id="k1", name="sh", id="t0"),
            HumanMessage("next", id="h1")]
    out = HippoContextMiddleware(memory).compact(msgs, memory.using("context.a"))
    assert out[2].text == ansi and memory.using("context.a").entries() == []


def test_a_new_middleware_does_not_index_twice(memory):
    msgs = [HumanMessage("load", id="h0"),
            AIMessage("", tool_calls=[{"name": "get_inventory", "id": "k1", "args": {}}], id="a0"),
            ToolMessage(INVENTORY, tool_call_id="k1", name="get_inventory", id="t0"),
            HumanMessage("next", id="h1")]
    first = HippoContextMiddleware(memory).compact(msgs, memory.using("context.d"))
    second = HippoContextMiddleware(memory).compact(msgs, memory.using("context.d"))
    assert first[2].text == second[2].text
    assert len(memory.using("context.d").entries()) == 1


def test_end_of_thread_moves_instructions_to_long_term_memory(memory):
    model = recording_model([AIMessage(content="Understood."), AIMessage(content="Noted.")])
    mw = HippoContextMiddleware(memory, consolidate_on_end=True)
    agent = create_agent(model, tools=[ping], middleware=[mw], checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t9", "user_id": "ann"}}
    agent.invoke({"messages": [{"role": "user", "content": "Please always reply in British English."}]}, cfg)
    long_term = memory.using("user.ann").list()
    assert len(long_term) == 1 and "always reply in British English" in long_term[0].text
    assert long_term[0].metadata["type"] == "memory" and long_term[0].metadata.get("priority") == "high"
    agent.invoke({"messages": [{"role": "user", "content": "What is the capital of France?"}]}, cfg)
    assert len(memory.using("user.ann").list()) == 1  # promoted once; a plain question is not indexed
    report = mw.end_thread(thread_id="t9", user_id="ann")
    assert report["promoted"] == [] and report["into"] == "user.ann"


def test_a_summary_the_harness_adds_is_no_user_instruction(memory):
    """``SummarizationMiddleware`` puts its summary in place of the turns as a ``HumanMessage`` marked ``lc_source``.
    Compaction read it as the user's words: a summary saying "important" or "always" became a persist-worthy user
    instruction, and ``consolidate_on_end`` wrote the summarizer's text into the user's long-term memory. It is the
    harness's message: sent as it is, never indexed, and what the user typed is still promoted."""
    summarizer = GenericFakeChatModel(messages=itertools.repeat(AIMessage(
        "The assistant said it is important to always book trains early.")))
    model = recording_model([AIMessage(content=f"Answer {i}.") for i in range(5)])
    agent = create_agent(model, middleware=[SummarizationMiddleware(summarizer, trigger=("messages", 6),
                                                                    keep=("messages", 2)),
                                            HippoContextMiddleware(memory, consolidate_on_end=True)],
                         checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t1", "user_id": "ann"}}
    asks = ["Tell me about Porto.", "Tell me about Lisbon.", "Tell me about Faro.",
            "Remember: always answer in metric units.", "Tell me about Braga."]
    for ask in asks:
        agent.invoke({"messages": [HumanMessage(ask)]}, cfg)
    summaries = [m for call in model.calls for m in call if "summary of the conversation" in m.text]
    assert summaries and all("book trains early" in m.text for m in summaries)  # sent to the model as it is
    (promoted,) = memory.using("user.ann").list()
    assert "Remember: always answer in metric units." in promoted.text and "trains" not in promoted.text
    assert [e.source["type"] for e in memory.using("context.t1").entries()] == ["turn.user"]


def test_invalid_arguments(memory):
    for kw, name in (({"keep_recent_turns": 0}, "keep_recent_turns"), ({"turn_threshold": 2}, "turn_threshold"),
                     ({"expand_tokens": 0}, "expand_tokens"), ({"policies": {"match": {}}}, "policies"),
                     ({"namespace_fn": 3}, "namespace_fn")):
        with pytest.raises(InvalidInput, match=name):
            HippoContextMiddleware(memory, **kw)
    with pytest.raises(InvalidInput, match="memory"):
        HippoContextMiddleware(object())
    with pytest.raises(InvalidInput, match="policies"):
        HippoContextMiddleware(memory, policies=[{"match": {}, "action": {"index": "yes"}}])
    with pytest.raises(InvalidInput, match="^expand_context_lines must be an int >= 0"):  # it said context_lines
        HippoContextMiddleware(memory, expand_context_lines=-1)


def test_expand_tool_reports_unknown_entries_to_the_model(memory):
    mw = HippoContextMiddleware(memory)
    (expand,) = mw.tools
    msg = expand.invoke({"type": "tool_call", "id": "z", "name": "memory_expand",
                         "args": {"entry_id": "ctx_42", "query": "x"}})
    assert msg.status == "error" and "ctx_42" in msg.text


@pytest.fixture
def memory():
    mem = hippo.Memory(None)
    yield mem
    mem.close()


def test_readme_context_example(capsys):
    (where, code), = examples("context")
    run(code, where)
    out = capsys.readouterr().out
    assert out.startswith("[context_index: ctx_1] tool_result · list_users ref=c1 @ turn 1")
    assert "key_data: request_id=req-42; users.count=400" in out
    assert '"id": "u123"' in out and '"plan": "pro"' in out


@pytest.mark.parametrize("messages, name", [("hello", "messages"), (5, "messages"), (["hello"], r"messages\[0\]")])
async def test_end_thread_and_compact_refuse_what_is_no_list_of_messages(messages, name):
    """``end_thread("hello")`` raised ``AttributeError`` (each character taken for a message), ``end_thread(5)``
    ``TypeError``; sync and async, and ``compact``, raise ``InvalidInput`` naming the argument or its element, before
    anything is indexed or consolidated."""
    memory = hippo.Memory(None)
    middleware = HippoContextMiddleware(memory)
    with pytest.raises(InvalidInput, match=f"^{name} must be"):
        middleware.end_thread(messages, thread_id="t", user_id="u")
    with pytest.raises(InvalidInput, match=f"^{name} must be"):
        await middleware.aend_thread(messages, thread_id="t", user_id="u")
    with pytest.raises(InvalidInput, match=f"^{name} must be"):
        middleware.compact(messages, memory.using("context.t"))
    assert all(memory.using(n).count() == 0 for n in memory.namespaces())
    assert middleware.end_thread(None, thread_id="t", user_id="u")["entries"] == 0


@pytest.mark.parametrize("ids, name", [({"user_id": ""}, "user_id"), ({"user_id": " "}, "user_id"),
                                       ({"user_id": ["ann"]}, "user_id"), ({"thread_id": ""}, "thread_id"),
                                       ({"thread_id": True}, "thread_id")])
async def test_end_thread_refuses_ids_that_name_no_one(ids, name):
    """``end_thread(user_id="")`` promoted the thread's instructions into the namespace ``"user."``, which no
    ``HippoMemoryMiddleware`` reads (an empty id names no one there), and ``user_id=["ann"]`` into ``"user.['ann']"``;
    sync and async raise ``InvalidInput`` naming the id, before anything is indexed or promoted."""
    memory = hippo.Memory(None)
    middleware = HippoContextMiddleware(memory)
    messages = [HumanMessage("Please always reply in British English.", id="h"), AIMessage("Noted.", id="a")]
    given = {"thread_id": "t", "user_id": "ann", **ids}
    with pytest.raises(InvalidInput, match=f"^{name} must be a non-empty string or None"):
        middleware.end_thread(messages, **given)
    with pytest.raises(InvalidInput, match=f"^{name} must be a non-empty string or None"):
        await middleware.aend_thread(messages, **given)
    assert memory.namespaces() == []
    assert middleware.end_thread(messages, thread_id=7, user_id=8)["into"] == "user.8"  # ids as identify reads them
    assert [n for n in memory.namespaces() if memory.using(n).count()] == ["context.7", "user.8"]


def test_end_thread_that_raises_has_stored_nothing(memory):
    """``end_thread`` indexed the thread's messages first and only then found that the user's long-term namespace
    could not be named (a user id of 600 characters): it raised ``InvalidInput`` naming ``into``, an argument the
    caller never gave, with the thread's instruction stored. It refuses the id, by name, before anything is written."""
    middleware = HippoContextMiddleware(memory)
    messages = [HumanMessage("Please always reply in British English.", id="h"), AIMessage("Noted.", id="a")]
    with pytest.raises(InvalidInput, match="^user_id 'uuu.* names no namespace hippo can hold"):
        middleware.end_thread(messages, thread_id="t", user_id="u" * 600)
    assert all(memory.using(n).count() == 0 for n in memory.namespaces())
    assert middleware.end_thread(messages, thread_id="t", user_id="u" * 60)["into"] == "user." + "u" * 60


def test_compacted_messages_are_the_same_objects_again_and_their_cache_is_bounded(memory, monkeypatch):
    """A message compacted as before is sent as the object sent last time (a stable prompt prefix); the objects kept
    for that are the most recently sent ones, at most ``_COPIES_KEPT`` of them: a long-running server's threads
    each left their copies behind for ever."""
    from langchain_hippo import context as context_mod

    monkeypatch.setattr(context_mod, "_COPIES_KEPT", 3)
    answer = "The migration plan, step by step. " + " ".join(f"Step {i}: move shard {i} to node {i % 7}."
                                                             for i in range(60))
    mw = HippoContextMiddleware(memory, turn_threshold=0.95)
    sent = {}
    for t in range(5):  # five threads, one compacted answer each
        view = memory.using(f"context.t{t}")
        sent[t] = mw.compact(_history(4, answer), view)[2]
        assert sent[t].text.startswith("[context_index: ctx_")
        again = mw.compact(_history(4, answer), view)[2]
        assert again is sent[t] and len(mw._copies) == min(t + 1, 3)
    assert mw.compact(_history(4, answer), memory.using("context.t4"))[2] is sent[4]
    first = mw.compact(_history(4, answer), memory.using("context.t0"))[2]  # dropped: an equal copy, sent anew
    assert first is not sent[0] and first.text == sent[0].text and len(mw._copies) == 3


def test_what_the_compactor_remembers_of_threads_is_bounded(memory, monkeypatch):
    """The compactor kept its decisions (entry ids, verbatim messages, token counts) for every thread it ever
    compacted: about 6 KB per 50-message thread, for ever, in a server running for months. It keeps the most
    recently compacted ``MAX_CONVERSATIONS``; a thread it forgot finds its entries again in the store and is sent as
    before, without indexing anything twice."""
    from hippo import compaction

    monkeypatch.setattr(compaction, "MAX_CONVERSATIONS", 2, raising=False)
    mw = HippoContextMiddleware(memory)
    history = [HumanMessage("load it", id="h0"),
               AIMessage("", id="a0", tool_calls=[{"name": "get_inventory", "id": "c1", "args": {"warehouse": "L"}}]),
               ToolMessage(INVENTORY, tool_call_id="c1", name="get_inventory", id="t0"),
               AIMessage("Loaded.", id="a1"), HumanMessage("thanks", id="h1")]
    first = {}
    for t in range(5):
        first[t] = mw.compact(history, memory.using(f"context.t{t}"))[2].text
        assert first[t].startswith("[context_index: ctx_") and len(mw.compactor._conversations) <= 2
    for t in range(5):  # threads 0-2 were forgotten: the same entry, no second one
        assert mw.compact(history, memory.using(f"context.t{t}"))[2].text == first[t]
        assert len(memory.using(f"context.t{t}").entries()) == 1


def test_tool_outputs_without_ids_that_share_a_call_id_keep_their_own_entries(memory):
    """``compact`` and ``end_thread`` take messages without ids (the agent's state always gives them one). A tool
    output without an id was known by its tool call id alone, and some models give every call of a tool the same id:
    the second inventory was sent as the first one's entry and never stored. Each output is its own entry now."""
    mw = HippoContextMiddleware(memory)
    outputs = [INVENTORY, INVENTORY.replace("Leipzig", "Dresden").replace("req-77aa01", "req-88bb02")]
    history = []
    for text in outputs:
        history += [HumanMessage("Load the inventory."),
                    AIMessage("", tool_calls=[{"name": "get_inventory", "id": "call_0", "args": {"warehouse": "x"}}]),
                    ToolMessage(text, tool_call_id="call_0", name="get_inventory"), AIMessage("Loaded.")]
    history.append(HumanMessage("Compare them."))
    view = memory.using("context.same-ids")
    sent = mw.compact(history, view)
    ids = [sent[i].text.split("]", 1)[0].split(": ")[1] for i in (2, 6)]
    assert ids[0] != ids[1] and [view.complete(i).text for i in ids] == outputs
    assert "warehouse=Dresden" in sent[6].text and len(view.entries()) == 2


def test_a_blank_expand_query_reads_the_whole_content(memory):
    """A model fills an optional argument with ``""`` as often as it leaves it out; ``memory_expand(entry_id,
    query="")`` answered ``query must not be empty`` and cost the agent a round trip. A blank query is no query."""
    mw = HippoContextMiddleware(memory)
    entry = memory.using("context.default").index_entry(INVENTORY)
    (expand,) = mw.tools
    whole = expand.invoke({"entry_id": entry.id})
    assert whole.startswith(INVENTORY[:200])
    for blank in ("", "  \n"):
        assert expand.invoke({"entry_id": entry.id, "query": blank}) == whole
    assert asyncio.run(expand.ainvoke({"entry_id": entry.id, "query": ""})) == whole
    assert expand.invoke({"entry_id": entry.id, "query": "SKU-0042"}).startswith("L")


@pytest.mark.parametrize("kw, name", [
    ({"consolidate_on_end": "no"}, "consolidate_on_end"), ({"consolidate_on_end": 1}, "consolidate_on_end"),
    ({"consolidate_on_end": np.array([1, 2])}, "consolidate_on_end"), ({"policies": np.array(5)}, "policies"),
    ({"expand_context_lines": 2**63}, "expand_context_lines"), ({"keep_recent_turns": 2**63}, "keep_recent_turns"),
])
def test_switches_and_counts_are_refused_by_their_own_name(memory, kw, name):
    """A switch is True or False ("no" was read as True, an array raised ValueError), a 0-d array is no list of
    policies (TypeError), and a count past hippo's ints is refused naming the middleware's argument (it named the
    compactor's context_lines)."""
    with pytest.raises(InvalidInput, match=f"^{name} "):
        HippoContextMiddleware(memory, **kw)


@pytest.mark.parametrize("kw, name", [({"store_tool_results": "no"}, "store_tool_results"),
                                      ({"memory_tools": np.array([1, 2])}, "memory_tools"),
                                      ({"memory_tools": 1}, "memory_tools")])
def test_memory_middleware_switches_are_true_or_false(memory, kw, name):
    from langchain_hippo import HippoMemoryMiddleware

    with pytest.raises(InvalidInput, match=f"^{name} "):
        HippoMemoryMiddleware(memory, **kw)
    assert HippoMemoryMiddleware(memory, store_tool_results=True, memory_tools=True).tools
