"""Index entries in llama_index.core.memory.Memory: the context block for flushed content, the chat-history hook
that sends older large tool outputs as entries, and the memory_expand tool."""

from __future__ import annotations

import asyncio
import json

import pytest
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import Memory as LlamaMemory

import hippo
from hippo import InvalidInput
from hippo.text.tokenizer import count_tokens
from llamaindex_hippo import HippoContextBlock, HippoContextMemory, compact_chat_history, make_expand_tool

INVENTORY = json.dumps({"status": "ok", "request_id": "req-5c3d", "items": [{"sku": f"SKU-{i:04d}", "stock": i * 2}
                                                                          for i in range(200)]}, indent=2)


def _turns(tool_text: str) -> list[ChatMessage]:
    return [ChatMessage(role="user", content="Load the inventory."),
            ChatMessage(role="assistant", content="Calling the inventory tool."),
            ChatMessage(role="tool", content=tool_text, additional_kwargs={"tool_call_id": "c1", "name": "inventory"}),
            ChatMessage(role="assistant", content="Loaded."),
            ChatMessage(role="user", content="How many SKU-0042 are there?")]


def test_chat_history_hook_sends_older_tool_outputs_as_entries(memory):
    chat = HippoContextMemory.from_defaults(hippo_memory=memory, session_id="s1", token_limit=50_000)

    async def go():
        await chat.aput_messages(_turns(INVENTORY))
        return await chat.aget(), await chat.aget_all()

    sent, stored = asyncio.run(go())
    assert [m.content for i, m in enumerate(sent) if i != 2] == [m.content for i, m in enumerate(_turns("")) if i != 2]
    (entry,) = memory.using("context.s1").entries()
    block = memory.using("context.s1").entry_blocks([entry.id])[entry.id]
    # the user names SKU-0042, which the entry's block does not show: the lines around it come along (seed 004
    # §7.1, direct reference), so the model can answer without an expand call
    head, recalled = sent[2].content.split("\nrecalled for this question:\n")
    assert head == block and "SKU-0042" not in block
    assert '"sku": "SKU-0042"' in recalled and '"stock": 84' in recalled
    assert sent[2].content.startswith(f"[context_index: {entry.id}] tool_result · inventory ref=c1 @ turn 1")
    assert "request_id=req-5c3d" in sent[2].content and "items.count=200" in sent[2].content
    assert sent[2].additional_kwargs["tool_call_id"] == "c1"
    assert stored[2].content == INVENTORY  # the stored chat history is unchanged


def test_recent_turn_and_small_outputs_stay_verbatim(memory):
    msgs = _turns(INVENTORY)[:3]  # the tool output belongs to the latest user turn
    assert compact_chat_history(msgs, memory, namespace="n") == msgs
    small = _turns("SKU-0042: 84 in stock")
    assert [m.content for m in compact_chat_history(small, memory, namespace="n")] == [m.content for m in small]
    assert memory.using("n").entries() == []
    again = compact_chat_history(_turns(INVENTORY), memory, namespace="n")
    assert compact_chat_history(_turns(INVENTORY), memory, namespace="n")[2].content == again[2].content
    assert len(memory.using("n").entries()) == 1  # indexed once, found again by its message key


def test_context_block_indexes_flushed_content(memory):
    block = HippoContextBlock(memory=memory, budget_tokens=800)
    chat = LlamaMemory.from_defaults(session_id="s2", token_limit=3000, memory_blocks=[block])

    async def go():
        await chat.aput_messages(_turns(INVENTORY))
        await chat.aput_messages([ChatMessage(role="assistant", content="There are 84."),
                                  ChatMessage(role="user", content="Thanks!")])
        return await chat.aget()

    sent = asyncio.run(go())
    assert count_tokens(INVENTORY) > 3000 * 0.7  # the FIFO had to flush it
    text = "\n".join(str(m.content) for m in sent)
    assert INVENTORY not in text
    (entry,) = memory.using("context.s2").entries()
    assert entry.source["ref"] == "c1" and entry.n_tokens == count_tokens(INVENTORY)
    assert f"[context_index: {entry.id}]" in text and "request_id=req-5c3d" in text
    assert memory.using("context.s2").complete(entry.id).text == INVENTORY


def test_block_budget_and_truncation(memory):
    block = HippoContextBlock(memory=memory, budget_tokens=60)
    view = block.view("s3")
    for k in range(3):
        view.index_entry(INVENTORY.replace("req-5c3d", f"req-{k}"), turn=k)
    out = asyncio.run(block.aget([ChatMessage(role="user", content="hi")], session_id="s3"))
    assert out == "" or count_tokens(out) <= 60
    wide = HippoContextBlock(memory=memory, budget_tokens=5000)
    full = asyncio.run(wide.aget([ChatMessage(role="user", content="hi")], session_id="s3"))
    assert full.count("[context_index:") == 3
    cut = asyncio.run(wide.atruncate(full, 1))
    weakest = min(view.entries(), key=lambda e: e.strength)
    assert cut.count("[context_index:") == 2 and f"[context_index: {weakest.id}]" not in cut


def test_truncation_drops_the_weakest_entries_first(memory):
    """``aget`` fills the budget strongest first but lays the blocks out oldest first, and ``atruncate`` dropped
    blocks from the end: under token pressure the newest entries went first, and an entry the agent kept reading
    (reinforced) went before one it never looked at again. It drops the weakest now; unknown content still loses
    blocks from the end."""
    block = HippoContextBlock(memory=memory, budget_tokens=5000)
    view = block.view("s5")
    ids = [view.index_entry(INVENTORY.replace("req-5c3d", f"req-{k}"), turn=5 * k).id for k in range(3)]
    view.complete(ids[0], "SKU-0001", turn=12)  # the oldest entry, read again: the strongest
    full = asyncio.run(block.aget([ChatMessage(role="user", content="hi")], session_id="s5"))
    strength = {e.id: e.strength for e in view.entries()}
    by_strength = sorted(ids, key=lambda i: -strength[i])
    assert by_strength[0] == ids[0] and by_strength[-1] == ids[1]  # hand-checked: read again > newest > middle
    blocks = {i: next(b for b in full.split("\n\n") if b.startswith(f"[context_index: {i}]")) for i in ids}

    def kept(text: str) -> list[str]:
        return [i for i in ids if f"[context_index: {i}]" in (text or "")]

    assert kept(full) == ids
    assert kept(asyncio.run(block.atruncate(full, 1))) == sorted(by_strength[:2], key=ids.index)
    two = count_tokens(blocks[by_strength[-1]]) + 1 + count_tokens(blocks[by_strength[1]]) + 1
    assert kept(asyncio.run(block.atruncate(full, two))) == [by_strength[0]]
    assert asyncio.run(block.atruncate(full, count_tokens(full) + 10)) is None
    foreign = full + "\n\n[context_index: ctx_999] tool_result · a block this block did not give"
    assert kept(asyncio.run(block.atruncate(foreign, 1))) == ids  # content it does not know: from the end


def test_expand_tool(memory):
    view = memory.using("context.s4")
    e = view.index_entry(INVENTORY)
    tool = make_expand_tool(memory, namespace="context.s4")
    got = tool.call(entry_id=e.id, query="SKU-0042")
    assert got.content == view.complete(e.id, "SKU-0042", max_tokens=1500, context_lines=3).text
    assert '"stock": 84' in got.content
    assert tool.call(entry_id="ctx_999").content.startswith("Error: entry_id 'ctx_999'")


def test_invalid_arguments(memory):
    with pytest.raises(InvalidInput, match="budget_tokens"):
        HippoContextBlock(memory=memory, budget_tokens=0)
    with pytest.raises(InvalidInput, match="memory"):
        HippoContextBlock(memory=object())
    with pytest.raises(InvalidInput, match="keep_recent_turns"):
        compact_chat_history([], memory, namespace="n", keep_recent_turns=0)
    with pytest.raises(InvalidInput, match="hippo_memory"):
        HippoContextMemory.from_defaults(hippo_memory=None, token_limit=100)


def test_arguments_every_later_call_would_refuse_are_refused_when_built(memory):
    """``make_expand_tool(context_lines=-1)`` was built, then answered every call of the model with
    ``Error: context_lines must be >= 0``; ``HippoContextMemory.from_defaults(index_policies="x")`` was built, then
    raised at every ``get``. Both raise ``InvalidInput`` naming the argument when built, and nothing is stored."""
    with pytest.raises(InvalidInput, match="^context_lines must be an int >= 0, got -1"):
        make_expand_tool(memory, namespace="context.s", context_lines=-1)
    for policies in ("x", [{"match": {}, "action": {"index": "yes"}}]):
        with pytest.raises(InvalidInput, match="^index_policies: policies"):
            HippoContextMemory.from_defaults(hippo_memory=memory, index_policies=policies, token_limit=100)
    assert memory.namespaces() == []
    chat = HippoContextMemory.from_defaults(hippo_memory=memory, token_limit=100, session_id="ok",
                                            index_policies=[{"match": {"type": "tool_result"},
                                                             "action": {"index": True}}])
    chat.put_messages([ChatMessage(role="user", content="hi")])
    assert [m.content for m in chat.get()] == ["hi"]


@pytest.mark.parametrize("messages, name", [(None, "messages"), ("hello", "messages"), (["hello"], r"messages\[0\]")])
async def test_messages_that_are_no_list_of_chat_messages_raise_invalid_input(messages, name):
    """``HippoContextBlock.aput(None)`` and ``compact_chat_history(None, ...)`` raised ``TypeError``, a list of
    strings ``AttributeError``; each raises ``InvalidInput`` naming the argument (or its element), nothing stored."""
    memory = hippo.Memory(None)
    block = HippoContextBlock(memory=memory)
    with pytest.raises(hippo.InvalidInput, match=f"^{name} must be"):
        await block.aput(messages)
    if messages is not None:
        with pytest.raises(hippo.InvalidInput, match=f"^{name} must be"):
            await block.aget(messages, session_id="s")
    with pytest.raises(hippo.InvalidInput, match=f"^{name} must be"):
        compact_chat_history(messages, memory, namespace="context.s")
    with pytest.raises(hippo.InvalidInput, match="^tokens_to_truncate must be an int"):
        await block.atruncate("[context_index: ctx_1] a block", "3")
    assert memory.namespaces() == [] or all(memory.using(n).count() == 0 for n in memory.namespaces())


def test_the_turn_clocks_a_block_keeps_are_bounded(memory, monkeypatch):
    """The block kept the latest user message of every session it was ever read for (its turn clock): a
    long-running server's sessions each left a message behind. It keeps the most recent ``_KNOWN_SESSIONS``; a
    session it still knows does not move on a turn for the same message."""
    from llamaindex_hippo import context as context_mod

    monkeypatch.setattr(context_mod, "_KNOWN_SESSIONS", 2, raising=False)
    block = HippoContextBlock(memory=memory)
    ask = [ChatMessage(role="user", content="What is in stock?")]
    for s in range(5):
        block.view(f"k{s}").index_entry(INVENTORY, turn=0)
        asyncio.run(block.aget(ask, session_id=f"k{s}"))
        assert len(block._last_user) <= 2
    clock = block.view("k4").entries()[0].turn
    asyncio.run(block.aget(ask, session_id="k4"))
    assert block.view("k4").entries()[0].turn == clock
    asyncio.run(block.aget([*ask, ChatMessage(role="user", content="And SKU-0042?")], session_id="k4"))
    assert block.view("k4").entries()[0].turn == clock + 1


def test_tool_outputs_that_share_a_call_id_keep_their_own_entries(memory):
    """Some models give every call of a tool the same id, turn after turn. Outputs were known by their tool call id
    alone, so the second and third weather reports were sent as the first one's entry (Porto's key data for Oslo and
    Rome) and never stored. Each output is its own entry now, and expands to its own content."""
    def report(city: str) -> str:
        return json.dumps({"city": city, "forecast": [{"day": d, "temp": 10 + d % 7, "note": f"{city} day {d}"}
                                                      for d in range(120)]})

    messages = []
    for city in ("Porto", "Oslo", "Rome"):
        messages += [ChatMessage(role="user", content=f"Weather in {city}?"),
                     ChatMessage(role="tool", content=report(city),
                                 additional_kwargs={"tool_call_id": "get_weather", "name": "get_weather"}),
                     ChatMessage(role="assistant", content=f"{city} done.")]
    messages.append(ChatMessage(role="user", content="Compare them."))
    sent = compact_chat_history(messages, memory, namespace="context.w")
    view = memory.using("context.w")
    for city, i in (("Porto", 1), ("Oslo", 4), ("Rome", 7)):
        block = str(sent[i].content)
        assert block.startswith("[context_index: ") and f"city={city}" in block
        entry_id = block.split("]", 1)[0].split(": ")[1]
        assert view.complete(entry_id).text == report(city)
    assert len(view.entries()) == 3
    again = compact_chat_history(messages, memory, namespace="context.w")
    assert [str(again[i].content).split("]", 1)[0] for i in (1, 4, 7)] == \
        [str(sent[i].content).split("]", 1)[0] for i in (1, 4, 7)]  # the same entries again, nothing indexed twice
    assert len(view.entries()) == 3


def test_a_blank_expand_query_reads_the_whole_content(memory):
    """``memory_expand(entry_id, query="")``, as a model fills an optional argument, answered ``Error: query must not
    be empty``; a blank query is no query."""
    entry = memory.using("context.s9").index_entry(INVENTORY)
    tool = make_expand_tool(memory, namespace="context.s9")
    whole = tool.call(entry_id=entry.id).content
    assert whole.startswith(INVENTORY[:200])
    assert tool.call(entry_id=entry.id, query="").content == whole
    assert asyncio.run(tool.acall(entry_id=entry.id, query=" ")).content == whole


def _agent_turns(memory, namespace: str, query: str | None = "SKU-0042") -> list[ChatMessage]:
    """The inventory turns, then a ``memory_expand`` exchange as LlamaIndex's agents write it: the call a
    ``ToolCallBlock``, its result a ``tool`` message with the call's id and no name."""
    from llama_index.core.base.llms.types import ToolCallBlock

    compact_chat_history(_turns(INVENTORY), memory, namespace=namespace)
    (entry,) = memory.using(namespace).entries()
    expanded = make_expand_tool(memory, namespace=namespace).call(entry_id=entry.id, query=query).content
    return _turns(INVENTORY) + [
        ChatMessage(role="assistant", blocks=[ToolCallBlock(tool_call_id="c2", tool_name="memory_expand",
                                                            tool_kwargs={"entry_id": entry.id, "query": query})]),
        ChatMessage(role="tool", content=expanded, additional_kwargs={"tool_call_id": "c2"}),
        ChatMessage(role="assistant", content="There are 84."),
        ChatMessage(role="user", content="Thanks. Now the orders."),
    ]


def test_an_agent_s_earlier_expand_result_is_dropped_not_indexed(memory):
    """A ``memory_expand`` result of an earlier turn is dropped from what the LLM is sent (it can expand again).
    LlamaIndex's agents give a tool result only its call's id, so the result was not known as one: it was indexed
    as a new entry holding the stored content a second time, and sent as that entry. The result is named by the call
    it answers, as the LangChain middleware names it."""
    msgs = _agent_turns(memory, "n")
    sent = compact_chat_history(msgs, memory, namespace="n")
    assert sent[6].content == ("[memory_expand result of an earlier turn for 'SKU-0042' removed from context; call "
                               "memory_expand again to re-read it]")
    assert sent[6].additional_kwargs["tool_call_id"] == "c2"
    assert len(memory.using("n").entries()) == 1


def test_a_tool_result_is_indexed_under_the_tool_its_call_named(memory):
    """A tool result with only its call's id was indexed as said by "tool" (the entry's header and its source's
    type, which index policies select by); it is the tool the call named. The context block indexes a flushed
    expand result not at all."""
    from llama_index.core.base.llms.types import ToolCallBlock

    msgs = [ChatMessage(role="user", content="Load the inventory."),
            ChatMessage(role="assistant", blocks=[ToolCallBlock(tool_call_id="c1", tool_name="inventory")]),
            ChatMessage(role="tool", content=INVENTORY, additional_kwargs={"tool_call_id": "c1"}),
            ChatMessage(role="assistant", content="Loaded."),
            ChatMessage(role="user", content="How many SKU-0042 are there?")]
    sent = compact_chat_history(msgs, memory, namespace="n")
    assert sent[2].content.startswith("[context_index: ") and " tool_result · inventory ref=c1 " in sent[2].content
    block = HippoContextBlock(memory=memory)
    # the expand call and its result, the whole stored content (as large as the tool output it expands)
    asyncio.run(block.aput(_agent_turns(memory, "m", query=None)[5:7], session_id="s"))
    assert memory.using("context.s").entries() == []


def test_a_large_tool_output_given_as_citable_content_is_sent_as_its_entry(memory):
    """A tool output given with its source (a ``CitableBlock``, as ``FunctionAgent`` puts a tool's output blocks in
    its message) had no text for compaction (``ChatMessage.content`` reads only ``TextBlock``s): the whole inventory
    was sent on every later turn, and none of it indexed. It is sent as its entry, as the same output as text is."""
    from llama_index.core.base.llms.types import CitableBlock, TextBlock

    turns = _turns("")
    turns[2] = ChatMessage(role="tool", blocks=[CitableBlock(title="inventory", source="erp://inventory",
                                                             content=[TextBlock(text=INVENTORY)])],
                           additional_kwargs={"tool_call_id": "c1", "name": "inventory"})
    sent = compact_chat_history(turns, memory, namespace="cited")
    as_text = compact_chat_history(_turns(INVENTORY), hippo.Memory(None), namespace="plain")
    (entry,) = memory.using("cited").entries()
    assert sent[2].content.startswith(f"[context_index: {entry.id}] tool_result · inventory ref=c1 @ turn 1")
    assert sent[2].content == as_text[2].content
    assert [m.content for i, m in enumerate(sent) if i != 2] == [m.content for i, m in enumerate(turns) if i != 2]
