"""Every LlamaIndex adapter on one consolidated hippo memory (issue 22): a ``RetrieverQueryEngine`` over
``HippoRetriever`` in recall mode (with an ``embed_model``) and both postprocessors, then a chat memory
(``HippoContextMemory``) with ``HippoMemoryBlock`` and ``HippoContextBlock``, and the ``memory_expand`` tool, all on
the same file. ``MockLLM`` and a deterministic embedding: nothing leaves the machine."""

from __future__ import annotations

import asyncio
import json

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine

import hippo
from llamaindex_hippo import (
    HippoContextBlock,
    HippoContextMemory,
    HippoContextPostprocessor,
    HippoDecayPostprocessor,
    HippoMemoryBlock,
    HippoRetriever,
    make_expand_tool,
)
from tests.llamaindex.conftest import seed
from tests.llamaindex.test_contracts import ConceptEmbedding

ORDERS = json.dumps({"request_id": "req-9f1", "orders": [{"id": f"ORD-{i:04d}", "item": f"cat food {i}",
                                                          "qty": (i * 7) % 13} for i in range(160)]}, indent=1)


def test_query_engine_and_chat_memory_on_one_consolidated_memory(tmp_path):
    memory = hippo.Memory(tmp_path / "mem.db")
    seed(memory)
    memory.consolidate("deep")
    model = ConceptEmbedding(model_name="concepts")
    retriever = HippoRetriever(memory, mode="recall", budget_tokens=300, embed_model=model)
    decay = HippoDecayPostprocessor(memory=memory)
    before = memory.strength([m.id for m in memory.list()])
    engine = RetrieverQueryEngine.from_args(
        retriever, llm=MockLLM(),
        node_postprocessors=[decay, HippoContextPostprocessor(memory=memory, before=1, after=1, budget_tokens=400)])
    response = engine.query("what does the feline eat")
    nodes = response.source_nodes
    levels = {n.node.metadata.get("level") for n in nodes}
    assert "message" in levels and levels - {"message"}  # hierarchy units pass through both postprocessors
    text = "\n".join(n.node.get_content() for n in nodes)
    assert "salmon pate" in text and "tabby kitten" in text  # the hit, widened to its neighbours
    reinforced = {mid for n in nodes if n.node.metadata.get("level") == "message" for mid in [n.node.metadata["id"]]}
    after = memory.strength(sorted(reinforced))
    assert all(after[i] >= before[i] for i in reinforced)
    retriever.close()

    # a chat on the same file: long-term recall, flushed tool output as an index entry, and memory_expand
    chat = HippoContextMemory.from_defaults(
        hippo_memory=memory, session_id="mia", token_limit=2500, chat_history_token_ratio=0.5,
        memory_blocks=[HippoMemoryBlock(memory=memory, scope="all", budget_tokens=150),
                       HippoContextBlock(memory=memory, budget_tokens=300)])

    async def go():
        await chat.aput_messages([
            ChatMessage(role="user", content="Order more food for Biscuit."),
            ChatMessage(role="assistant", content="Looking up the orders."),
            ChatMessage(role="tool", content=ORDERS, additional_kwargs={"tool_call_id": "o1", "name": "orders"}),
            ChatMessage(role="assistant", content="Found the orders."),
            ChatMessage(role="user", content="What does Biscuit eat, and how many ORD-0042?")])
        return await chat.aget()

    sent = asyncio.run(go())
    text = "\n".join(str(m.content) for m in sent)
    assert ORDERS not in text  # the large output reaches the model as an entry
    assert "salmon pate" in text  # recalled from the consolidated conversation by HippoMemoryBlock
    (entry,) = memory.using("context.mia").entries()
    assert f"[context_index: {entry.id}]" in text
    expand = make_expand_tool(memory, namespace="context.mia")
    assert '"id": "ORD-0042"' in expand.call(entry_id=entry.id, query="ORD-0042").content
    # HippoMemoryBlock stored what the short-term window flushed, tagged with the chat's session
    flushed = memory.list(filter={"session_id": "mia"})
    assert flushed and {m.text for m in flushed} <= {"Order more food for Biscuit.", "Looking up the orders.",
                                                     ORDERS, "Found the orders."}
    memory.close()
