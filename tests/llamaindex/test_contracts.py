"""The LlamaIndex base-class contracts hippo's components must keep (issue 19 item 5), and the regressions of
issue 22 items 2 and 8.

* ``BaseRetriever`` (``llama_index/core/base/base_retriever.py``): ``retrieve`` takes a string or a
  ``QueryBundle`` with the same answer, ``aretrieve`` answers as ``retrieve``, results are ``NodeWithScore`` with
  unique node ids, and the callback manager sees one RETRIEVE event pair per call.
* ``BaseNodePostprocessor`` (``llama_index/core/postprocessor/types.py``): ``postprocess_nodes`` with a
  ``QueryBundle`` or ``query_str``, the async twin, foreign nodes and an empty list.
* ``BaseMemoryBlock`` (``llama_index/core/memory/memory.py``): ``aget`` returns the block's content, ``aput``
  tags messages with the session, ``atruncate`` frees at least the tokens asked for or returns None, and
  ``Memory`` keeps its ``token_limit`` by truncating blocks of priority >= 1.
"""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.callbacks import CallbackManager, CBEventType
from llama_index.core.callbacks.base_handler import BaseCallbackHandler
from llama_index.core.llms import ChatMessage
from llama_index.core.memory import Memory as LlamaMemory
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

import hippo
from llamaindex_hippo import (
    HippoContextBlock,
    HippoContextPostprocessor,
    HippoDecayPostprocessor,
    HippoMemoryBlock,
    HippoRetriever,
)
from llamaindex_hippo._common import hippo_ref, node_id, parse_node_id
from tests.concepts import embed_texts
from tests.llamaindex.conftest import seed


class _Events(BaseCallbackHandler):
    def __init__(self) -> None:
        super().__init__(event_starts_to_ignore=[], event_ends_to_ignore=[])
        self.starts: list = []
        self.ends: list = []

    def on_event_start(self, event_type, payload=None, event_id="", parent_id="", **kwargs):
        self.starts.append(event_type)
        return event_id

    def on_event_end(self, event_type, payload=None, event_id="", **kwargs):
        self.ends.append(event_type)

    def start_trace(self, trace_id=None):
        pass

    def end_trace(self, trace_id=None, trace_map=None):
        pass


def _ids(nodes: list[NodeWithScore]) -> list[str]:
    return [n.node.node_id for n in nodes]


@pytest.mark.parametrize("mode", ["search", "recall"])
def test_retriever_contract(seeded, mode):
    events = _Events()
    retriever = HippoRetriever(seeded, mode=mode, callback_manager=CallbackManager([events]))
    by_str = retriever.retrieve("what does Biscuit eat")
    by_bundle = retriever.retrieve(QueryBundle(query_str="what does Biscuit eat"))
    by_async = asyncio.run(retriever.aretrieve("what does Biscuit eat"))
    assert _ids(by_str) == _ids(by_bundle) == _ids(by_async) and by_str
    assert all(isinstance(n, NodeWithScore) and isinstance(n.node, TextNode) for n in by_str)
    assert len(set(_ids(by_str))) == len(by_str)
    assert events.starts.count(CBEventType.RETRIEVE) == events.ends.count(CBEventType.RETRIEVE) == 3
    if mode == "search":
        scores = [n.score for n in by_str]
        assert all(isinstance(s, float) for s in scores) and scores == sorted(scores, reverse=True)


@pytest.mark.parametrize("make", [
    lambda m: HippoContextPostprocessor(memory=m, before=1, after=1),
    lambda m: HippoDecayPostprocessor(memory=m, reinforce=False),
])
def test_postprocessor_contract(seeded, make):
    post = make(seeded)
    nodes = HippoRetriever(seeded, similarity_top_k=3).retrieve("salmon pate")
    foreign = NodeWithScore(node=TextNode(id_="elsewhere", text="not from hippo"), score=0.5)
    by_bundle = post.postprocess_nodes(nodes + [foreign], QueryBundle(query_str="salmon pate"))
    by_str = post.postprocess_nodes(nodes + [foreign], query_str="salmon pate")
    by_async = asyncio.run(post.apostprocess_nodes(nodes + [foreign], QueryBundle(query_str="salmon pate")))
    assert [n.node.get_content() for n in by_bundle] == [n.node.get_content() for n in by_str] \
        == [n.node.get_content() for n in by_async]
    assert "elsewhere" in _ids(by_bundle)  # nodes of other sources pass through
    assert post.postprocess_nodes([], query_str="anything") == []


# -- issue 22 item 2: one node-id format, parsed in one place ----------------------------------------------------


@given(ns=st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=30)
       .filter(str.strip), ident=st.integers(0, 10**9), level=st.sampled_from(["message", "theme", "semantic",
                                                                                  "episode"]))
def test_node_ids_parse_back(ns, ident, level):
    assert parse_node_id(node_id(ns, ident, level)) == (ns, level, ident)


def test_recall_nodes_of_a_consolidated_memory_feed_both_postprocessors(memory):
    """issue 22 item 2: unit ids like ``hippo:default:theme:0`` were parsed as namespace ``default:theme``:
    ``HippoContextPostprocessor`` raised ``NotFound`` and ``HippoDecayPostprocessor`` looked in the wrong namespace."""
    ns = "team:alpha%1"  # the separator and the escape character inside a namespace
    view = memory.using(ns)
    seed(view)
    view.consolidate("deep")
    nodes = HippoRetriever(memory, namespace=ns, mode="recall").retrieve("what does Biscuit eat")
    units = [n for n in nodes if n.node.metadata.get("level") != "message"]
    messages = [n for n in nodes if n.node.metadata.get("level") == "message"]
    assert units and messages
    assert all(hippo_ref(n.node) is None for n in units)
    assert {hippo_ref(n.node) for n in messages} == {(ns, n.node.metadata["id"]) for n in messages}
    expanded = HippoContextPostprocessor(memory=memory, before=1, after=0).postprocess_nodes(
        nodes, query_str="what does Biscuit eat")
    assert [n.node.node_id for n in expanded if n.node.metadata.get("level") != "message"] == _ids(units)
    assert any("message_ids" in n.node.metadata for n in expanded)
    strengths = view.strength([n.node.metadata["id"] for n in messages])
    decayed = HippoDecayPostprocessor(memory=memory, reinforce=False).postprocess_nodes(
        messages, query_str="what does Biscuit eat")
    for n in decayed:
        assert n.score == pytest.approx(strengths[n.node.metadata["id"]])  # recall nodes carry no score: 1 x s


def test_query_engine_over_recall_nodes_with_both_postprocessors(memory):
    from llama_index.core.llms import MockLLM
    from llama_index.core.query_engine import RetrieverQueryEngine

    seed(memory)
    memory.consolidate("deep")
    engine = RetrieverQueryEngine.from_args(
        HippoRetriever(memory, mode="recall", budget_tokens=400), llm=MockLLM(),
        node_postprocessors=[HippoDecayPostprocessor(memory=memory),
                             HippoContextPostprocessor(memory=memory, before=1, after=1)])
    response = engine.query("what does Biscuit eat")
    assert any("salmon pate" in n.node.get_content() for n in response.source_nodes)


# -- issue 22 item 8: the memory block under token pressure ------------------------------------------------------


async def test_atruncate_shrinks_the_recall():
    mem = hippo.Memory(None)
    seed(mem)
    block = HippoMemoryBlock(memory=mem, budget_tokens=400, scope="all")
    content = await block.aget([ChatMessage(role="user", content="Biscuit salmon kitten marathon kitchen")])
    full = hippo.count_tokens(content)
    assert full > 40
    for ask in (5, full // 3, full // 2):
        smaller = await block.atruncate(content, ask)
        assert smaller is not None and hippo.count_tokens(smaller) <= full - ask
    assert await block.atruncate(content, full) is None
    assert await block.atruncate(content, 0) == content
    # content the block did not produce loses lines from the end
    foreign = "line one about cats\nline two about dogs\nline three about cars"
    cut = await block.atruncate(foreign, hippo.count_tokens("\nline three about cars"))
    assert cut == "line one about cats\nline two about dogs"


def _chat(block: HippoMemoryBlock, token_limit: int) -> LlamaMemory:
    return LlamaMemory.from_defaults(session_id="mia", token_limit=token_limit, chat_history_token_ratio=0.3,
                                     memory_blocks=[block])


def _block_text(messages: list[ChatMessage]) -> str:
    system = [m for m in messages if m.role == "system"]
    return system[0].content if system else ""


def test_memory_keeps_its_token_limit_by_shrinking_the_block():
    mem = hippo.Memory(None)
    seed(mem)
    turns = [ChatMessage(role="user", content="Tell me about Biscuit the kitten and her salmon pate."),
             ChatMessage(role="assistant", content="Biscuit eats salmon pate only."),
             ChatMessage(role="user", content="And the kitchen colour?")]
    roomy = _chat(HippoMemoryBlock(memory=mem, budget_tokens=300, scope="all"), 2000)
    roomy.put_messages(turns)
    roomy_got = roomy.get(input="Biscuit salmon kitchen")
    full = _block_text(roomy_got)
    tight = _chat(HippoMemoryBlock(memory=mem, budget_tokens=300, scope="all"), 100)
    tight.put_messages(turns)
    got = tight.get(input="Biscuit salmon kitchen")
    shrunk = _block_text(got)
    assert "hippo_memory" in shrunk and "hippo_memory" in full  # still there: shrunk, not dropped
    assert hippo.count_tokens(shrunk) < hippo.count_tokens(full)
    # LlamaIndex counts the block before its template wraps it in <memory><hippo_memory> tags (12 tokens)
    assert tight._estimate_token_count(got) <= 100 + 12 < roomy._estimate_token_count(roomy_got)


def test_priority_zero_is_never_truncated():
    mem = hippo.Memory(None)
    seed(mem)
    block = HippoMemoryBlock(memory=mem, budget_tokens=300, scope="all", priority=0)
    chat = _chat(block, 60)
    chat.put_messages([ChatMessage(role="user", content="Biscuit salmon kitchen marathon")])
    assert "salmon" in _block_text(chat.get(input="Biscuit salmon kitchen marathon"))
    with pytest.raises(hippo.InvalidInput, match="priority"):
        HippoMemoryBlock(memory=mem, priority=-1)


@pytest.mark.parametrize("make", [lambda mem: HippoMemoryBlock(memory=mem),
                                  lambda mem: HippoContextBlock(memory=mem, priority=1)],
                         ids=["memory_block", "context_block"])
def test_a_block_that_contributed_nothing_under_token_pressure(make):
    """A turn longer than ``token_limit`` makes ``Memory`` truncate every block of priority >= 1, and it hands a
    block that contributed nothing ``[]``: both hippo blocks raised ``InvalidInput`` there, so the agent stopped.
    Now the memory gives what it gives without the block (LlamaIndex's own ``BaseMemoryBlock.atruncate`` returns
    None for any content)."""
    turn = [ChatMessage(role="user", content="word " * 400)]
    plain = LlamaMemory.from_defaults(session_id="s", token_limit=200)
    plain.put_messages([m.model_copy() for m in turn])
    mem = hippo.Memory(None)
    chat = LlamaMemory.from_defaults(session_id="s", token_limit=200, memory_blocks=[make(mem)])
    chat.put_messages([m.model_copy() for m in turn])
    assert [(m.role, m.content) for m in chat.get()] == [(m.role, m.content) for m in plain.get()]
    block = make(mem)
    assert asyncio.run(block.atruncate([], 5)) is None
    with pytest.raises(hippo.InvalidInput, match="^content must be a string or None, got list"):
        asyncio.run(block.atruncate(["text"], 5))
    mem.close()


# -- embed_model: a LlamaIndex BaseEmbedding feeds hippo's embedding channel ------------------------------------


class ConceptEmbedding(BaseEmbedding):
    def _get_text_embedding(self, text: str) -> list[float]:
        return embed_texts([text])[0]

    def _get_query_embedding(self, query: str) -> list[float]:
        return embed_texts([query])[0]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)


def test_retriever_and_block_take_an_embed_model(tmp_path):
    model = ConceptEmbedding(model_name="concepts")
    path = tmp_path / "mem.db"
    mem = hippo.Memory(path)
    seed(mem)
    plain = HippoRetriever(mem, similarity_top_k=1).retrieve("feline pet")
    retriever = HippoRetriever(mem, similarity_top_k=1, embed_model=model)
    semantic = retriever.retrieve("feline pet")
    assert semantic[0].node.get_content() == "We adopted a tabby kitten and named her Biscuit."
    assert not plain or plain[0].node.get_content() != semantic[0].node.get_content() or plain[0].score
    assert retriever.memory is not mem and retriever.memory.embedding is model
    retriever.close()
    block = HippoMemoryBlock(memory=mem, scope="all", budget_tokens=60, embed_model=model)
    text = asyncio.run(block.aget([ChatMessage(role="user", content="feline pet")]))
    assert "tabby kitten" in text
    block.close()
    assert mem.count() == 8
    same = hippo.Memory(None, embed=model)
    assert HippoRetriever(same, embed_model=model).memory is same
    with pytest.raises(hippo.InvalidInput, match="in-memory"):
        HippoRetriever(hippo.Memory(None), embed_model=model)
    with pytest.raises(hippo.InvalidInput, match="embed_model"):
        HippoRetriever(mem, embed_model=lambda texts: texts)
    mem.close()
