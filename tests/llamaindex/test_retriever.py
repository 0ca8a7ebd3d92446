"""llamaindex_hippo.HippoRetriever: nodes, metadata, filters, recall mode, async, and a RetrieverQueryEngine."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode
from llama_index.core.vector_stores.types import FilterCondition, FilterOperator, MetadataFilter, MetadataFilters

import hippo
from llamaindex_hippo import HippoRetriever, to_hippo_filter
from tests.conversation import consolidated_days, remind_five_mornings


def test_nodes_with_scores_and_metadata(seeded):
    nodes = HippoRetriever(seeded, similarity_top_k=2).retrieve("Which pate does Biscuit eat?")
    assert 1 <= len(nodes) <= 2 and all(isinstance(n, NodeWithScore) for n in nodes)
    top = next(n for n in nodes if "salmon" in n.node.get_content())
    assert isinstance(top.node, TextNode) and top.score > 0
    md = top.node.metadata
    assert md["speaker"] == "Mia" and md["session_id"] == "s1" and md["turn"] == 2
    assert top.node.node_id == f"hippo:default:{md['id']}"
    llm_view = top.node.get_content(metadata_mode=MetadataMode.LLM)
    assert "speaker: Mia" in llm_view and "namespace" not in llm_view and "seq" not in llm_view


async def test_async_matches_sync(seeded):
    retriever = HippoRetriever(seeded, similarity_top_k=3)
    sync = retriever.retrieve("marathon September")
    asyn = await retriever.aretrieve(QueryBundle("marathon September"))
    assert [n.node.node_id for n in asyn] == [n.node.node_id for n in sync] and sync



@pytest.mark.parametrize("query", [None, 5, ["marathon"], {"query_str": "marathon"}])
async def test_a_query_that_is_no_string_or_bundle_raises_invalid_input(seeded, query):
    """``BaseRetriever.retrieve`` builds a pydantic event from the query first: ``retrieve(None)`` raised pydantic's
    ``ValidationError`` before the retriever saw it. Sync and async raise ``InvalidInput`` naming the argument."""
    retriever = HippoRetriever(seeded)
    with pytest.raises(hippo.InvalidInput, match="^str_or_query_bundle must be a string or a QueryBundle"):
        retriever.retrieve(query)
    with pytest.raises(hippo.InvalidInput, match="^str_or_query_bundle must be a string or a QueryBundle"):
        await retriever.aretrieve(query)


@pytest.mark.parametrize("mode", ["search", "recall"])
async def test_any_text_is_a_query_as_for_llamaindex_retrievers(memory, mode):
    """LlamaIndex's retrievers take any ``query_str``; hippo's raised ``InvalidInput`` for a blank one, a pasted
    escape code, a lone surrogate or a paste past hippo's question length (a ``FunctionAgent``'s retriever tool
    answered the model with the error). Text is asked as hippo can ask it; nothing left to ask finds nothing."""
    memory.add("Biscuit eats salmon pate, nothing else.", speaker="Mia")
    memory.add("We moved to Porto in April.", speaker="Mia")
    retriever = HippoRetriever(memory, mode=mode, similarity_top_k=1)
    asked = [n.node.get_content() for n in retriever.retrieve("salmon")]
    assert asked == ["Biscuit eats salmon pate, nothing else."]
    for query in ("salmon\x1b[0m", "\ud800 salmon", "." * 150_000 + " salmon", QueryBundle("salmon\x00")):
        assert [n.node.get_content() for n in retriever.retrieve(query)] == asked
        assert [n.node.get_content() for n in await retriever.aretrieve(query)] == asked
    for query in ("", "   ", "\x00\x07", QueryBundle("")):
        assert retriever.retrieve(query) == [] and await retriever.aretrieve(query) == []


def test_budget_bounds_search_results_from_the_first(memory):
    memory.add("the cat " * 500)  # 1001 tokens
    assert HippoRetriever(memory, budget_tokens=5).retrieve("cat") == []
    memory.add("a cat")
    for budget in (5, 1001):
        nodes = HippoRetriever(memory, budget_tokens=budget).retrieve("cat")
        assert sum(hippo.count_tokens(n.node.text) for n in nodes) <= budget
    assert len(HippoRetriever(memory, budget_tokens=1001).retrieve("cat")) >= 1


def test_metadata_filters_translate(seeded):
    filters = MetadataFilters(filters=[
        MetadataFilter(key="speaker", value="Leo"),
        MetadataFilter(key="turn", value=4, operator=FilterOperator.GTE),
    ])
    assert to_hippo_filter(filters) == {"speaker": {"$eq": "Leo"}, "turn": {"$gte": 4}}
    nodes = HippoRetriever(seeded, filters=filters).retrieve("marathon brother September")
    assert nodes and all(n.node.metadata["speaker"] == "Leo" and n.node.metadata["turn"] >= 4 for n in nodes)
    by_dict = HippoRetriever(seeded, filters={"session_id": "s2"}).retrieve("green kitchen cabinets")
    assert by_dict and {n.node.metadata["session_id"] for n in by_dict} == {"s2"}


_F = FilterOperator


@pytest.mark.parametrize("conditions", [
    [(_F.GT, 5), (_F.GT, 1)],
    [(_F.GT, 1), (_F.GT, 5), (_F.LT, 8)],
    [(_F.EQ, 2), (_F.EQ, 3)],
    [(_F.IN, [1, 2, 3]), (_F.IN, [3, 4])],
    [(_F.NIN, [1, 2]), (_F.NIN, [3, 4]), (_F.LT, 7)],
    [(_F.NE, 4), (_F.NE, 5), (_F.LTE, 6)],
    [(_F.GTE, 2), (_F.LTE, 6), (_F.GTE, 4), (_F.LTE, 8)],
])
def test_every_condition_on_one_key_holds_as_in_llamaindex(memory, conditions):
    """An AND of conditions on one key, one operator repeated (``n > 5 AND n > 1``): the messages kept are the
    ones LlamaIndex's own filter function (``build_metadata_filter_fn``, which its SimpleVectorStore applies)
    keeps. The operator given last replaced the earlier ones (``n > 1`` alone kept 2..9, not 6..9)."""
    from llama_index.core.vector_stores.utils import build_metadata_filter_fn

    items = memory.add_many([{"text": f"a note about the garden, number {i}", "metadata": {"n": i}}
                             for i in range(10)])
    filters = MetadataFilters(filters=[MetadataFilter(key="n", value=v, operator=op) for op, v in conditions])
    keep = build_metadata_filter_fn(lambda i: items[int(i)].metadata, filters)
    want = sorted(item.metadata["n"] for i, item in enumerate(items) if keep(str(i)))
    nodes = HippoRetriever(memory, similarity_top_k=10, filters=filters).retrieve("garden note")
    assert sorted(n.node.metadata["n"] for n in nodes) == want
    assert sorted(i.metadata["n"] for i in memory.list(filter=to_hippo_filter(filters))) == want


def test_none_in_filters_is_json_null_not_llamaindex_s_python_comparison(memory):
    """``== None`` / ``!= None`` as docs/compatibility.md writes them: hippo compares JSON values (a stored ``null``
    equals None; a missing key is not equal to it), where LlamaIndex's ``build_metadata_filter_fn`` keeps nothing
    for ``== None`` and everything for ``!= None``. Hand-computed over a stored None, a number and a missing key."""
    items = memory.add_many([{"text": "note one", "metadata": {"x": None}}, {"text": "note two", "metadata": {"x": 3}},
                             {"text": "note three", "metadata": {}}])
    ids = [i.id for i in items]

    def kept(op):
        flt = MetadataFilters(filters=[MetadataFilter(key="x", value=None, operator=op)])
        return sorted(i.id for i in memory.list(filter=to_hippo_filter(flt)))

    assert kept(FilterOperator.EQ) == [ids[0]]
    assert kept(FilterOperator.NE) == [ids[1], ids[2]]


def test_unsupported_filters_are_rejected(seeded):
    for op in (_F.TEXT_MATCH, _F.TEXT_MATCH_INSENSITIVE, _F.CONTAINS, _F.ANY, _F.ALL):
        with pytest.raises(hippo.InvalidInput, match=op.value):
            HippoRetriever(seeded, filters=MetadataFilters(filters=[
                MetadataFilter(key="a", value=["x"] if op in (_F.ANY, _F.ALL) else "x", operator=op)],
                condition=FilterCondition.OR))


def test_filters_on_the_fields_hippo_writes_into_nodes_are_rejected(seeded):
    """``namespace``, ``seq`` and ``level`` are in every node's metadata (hippo writes them), but no message field a
    filter can test: ``namespace == <the retriever's own>`` silently kept nothing, ``!=`` everything. They raise
    InvalidInput naming the key, nested or not, while a node field that is a message field (``speaker``) filters as
    it reads in the nodes (reference: the nodes of an unfiltered retrieval, filtered by hand)."""
    node = HippoRetriever(seeded).retrieve("Biscuit")[0]
    for key in ("namespace", "seq", "level"):
        assert key in node.metadata
        flt = MetadataFilter(key=key, value=node.metadata[key])
        for filters in (MetadataFilters(filters=[flt]),
                        MetadataFilters(filters=[MetadataFilters(filters=[flt], condition=FilterCondition.NOT)])):
            with pytest.raises(hippo.InvalidInput, match=key):
                HippoRetriever(seeded, filters=filters)
    everyone = HippoRetriever(seeded, similarity_top_k=50).retrieve("Biscuit")
    mia = HippoRetriever(seeded, similarity_top_k=50, filters=MetadataFilters(filters=[
        MetadataFilter(key="speaker", value="Mia")])).retrieve("Biscuit")
    assert [n.node.node_id for n in mia] == [n.node.node_id for n in everyone if n.metadata["speaker"] == "Mia"]
    assert 0 < len(mia) < len(everyone)


_TAGS = ["a", "b", "", None, "a", "c", "b", "a"]
_LEAVES = st.one_of(
    st.builds(lambda op, v: MetadataFilter(key="n", value=v, operator=op),
              st.sampled_from([_F.EQ, _F.NE, _F.GT, _F.GTE, _F.LT, _F.LTE]), st.integers(-1, 8)),
    st.builds(lambda op, v: MetadataFilter(key="tag", value=v, operator=op),
              st.sampled_from([_F.IN, _F.NIN]), st.lists(st.sampled_from(["a", "b", "c", ""]), max_size=3)),
    st.builds(lambda op, v: MetadataFilter(key="tag", value=v, operator=op),
              st.sampled_from([_F.EQ, _F.NE]), st.sampled_from(["a", "b", ""])),
    st.builds(lambda k: MetadataFilter(key=k, value=None, operator=_F.IS_EMPTY), st.sampled_from(["tag", "n", "zz"])),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(leaves=st.lists(_LEAVES, max_size=4), condition=st.sampled_from(list(FilterCondition)))
def test_and_or_not_and_is_empty_keep_what_llamaindex_keeps(memory, leaves, condition):
    """``MetadataFilters`` with the ``AND``, ``OR`` and ``NOT`` conditions and the ``is_empty`` operator (missing
    keys, null, "" and [] among the messages' values) keep the messages LlamaIndex's own filter function
    (``build_metadata_filter_fn``) keeps. ``OR`` and ``NOT`` raised InvalidInput, ``is_empty`` too."""
    from llama_index.core.vector_stores.utils import build_metadata_filter_fn

    if not memory.count():
        memory.add_many([{"text": f"a garden note {i}", "metadata": md} for i, md in enumerate(
            [{"n": i, "tag": t} for i, t in enumerate(_TAGS)] + [{}, {"tag": []}])])
    items = memory.list()
    filters = MetadataFilters(filters=leaves, condition=condition)
    keep = build_metadata_filter_fn(lambda i: items[int(i)].metadata, filters)
    want = [item.id for i, item in enumerate(items) if keep(str(i))]
    assert [i.id for i in memory.list(filter=to_hippo_filter(filters))] == want
    nodes = HippoRetriever(memory, similarity_top_k=len(items), filters=filters).retrieve("garden note")
    assert sorted(n.node.metadata["id"] for n in nodes) == want


def test_nested_filters_hand_computed(memory):
    """Nested ``MetadataFilters`` (which ``build_metadata_filter_fn`` refuses, and vector stores such as Qdrant and
    pgvector apply recursively), by hand over n = 0..7: ``n == 1 OR NOT (n > 2 AND n < 6)`` keeps 0, 1, 2, 6, 7;
    within an ``AND``, ``NOT (n in [0, 7])`` leaves 1, 2, 6; an empty nested list holds for every message."""
    items = memory.add_many([{"text": f"a garden note {i}", "metadata": {"n": i}} for i in range(8)])
    middle = MetadataFilters(filters=[MetadataFilter(key="n", value=2, operator=_F.GT),
                                      MetadataFilter(key="n", value=6, operator=_F.LT)])
    either = MetadataFilters(filters=[MetadataFilter(key="n", value=1),
                                      MetadataFilters(filters=[middle], condition=FilterCondition.NOT)],
                             condition=FilterCondition.OR)
    ends = MetadataFilters(filters=[MetadataFilter(key="n", value=[0, 7], operator=_F.IN)],
                           condition=FilterCondition.NOT)
    empty = MetadataFilters(filters=[])

    def kept(filters):
        return [i.metadata["n"] for i in memory.list(filter=to_hippo_filter(filters))]

    assert kept(either) == [0, 1, 2, 6, 7]
    assert kept(MetadataFilters(filters=[either, ends, empty])) == [1, 2, 6]
    assert kept(MetadataFilters(filters=[ends, empty], condition=FilterCondition.OR)) == list(range(8))
    assert kept(MetadataFilters(filters=[empty], condition=FilterCondition.NOT)) == []
    assert len(items) == 8


async def test_recall_mode(seeded):
    retriever = HippoRetriever(seeded, mode="recall", budget_tokens=150)
    nodes = retriever.retrieve("What colour is the kitchen?")
    recall = seeded.recall("What colour is the kitchen?", budget_tokens=150)
    assert [n.node.get_content() for n in nodes if n.node.metadata["level"] == "message"] == \
        [m.text for m in recall.messages]
    units = [n for n in nodes if n.node.metadata["level"] != "message"]  # episodes / semantics / themes
    assert [n.node.get_content() for n in units] == [u["text"] for u in hippo.fitting_units(recall)]
    assert sum(hippo.count_tokens(n.node.get_content()) for n in nodes) <= 150
    assert any("sage green" in n.node.get_content() for n in nodes)
    assert [n.node.node_id for n in await retriever.aretrieve("What colour is the kitchen?")] == \
        [n.node.node_id for n in nodes]


def test_query_engine_with_mock_llm(seeded):
    engine = RetrieverQueryEngine.from_args(HippoRetriever(seeded, similarity_top_k=2), llm=MockLLM())
    response = engine.query("Which pate does Biscuit eat?")
    assert any("salmon" in n.node.get_content() for n in response.source_nodes)
    assert "salmon pate" in str(response)  # MockLLM echoes its prompt: the memory reached the LLM


async def test_query_engine_async(seeded):
    engine = RetrieverQueryEngine.from_args(HippoRetriever(seeded, similarity_top_k=2), llm=MockLLM())
    response = await engine.aquery("Which marathon is the brother training for?")
    assert "Berlin" in str(response)


@pytest.mark.parametrize(
    "kwargs, name",
    [({"similarity_top_k": 0}, "similarity_top_k"), ({"budget_tokens": -5}, "budget_tokens"),
     ({"mode": "dream"}, "mode"), ({"filters": "speaker"}, "filters"), ({"namespace": ""}, "namespace")],
)
def test_bad_arguments(memory, kwargs, name):
    with pytest.raises(hippo.InvalidInput, match=name):
        HippoRetriever(memory, **kwargs)
    with pytest.raises(hippo.InvalidInput, match="memory"):
        HippoRetriever({"not": "memory"})


def test_settings_changed_between_queries_are_read_by_the_next(memory):
    """A server reusing one retriever per request sets its filters between queries, as it sets
    ``VectorIndexRetriever.similarity_top_k``: the filters, translated once when the retriever was made, stayed the
    first ones, and another user's locker code came back. Every setting is checked as the constructor checks it and
    read by the next query; a bad one raises ``InvalidInput`` naming it and leaves the setting as it was."""
    memory.add_many([{"text": "My locker code is 4417.", "speaker": "ann"},
                     {"text": "My locker code is 9902.", "speaker": "bob"}])
    retriever = HippoRetriever(memory)
    assert sorted(n.node.metadata["speaker"] for n in retriever.retrieve("locker code")) == ["ann", "bob"]
    retriever.filters = MetadataFilters(filters=[MetadataFilter(key="speaker", value="ann")])
    assert [n.node.get_content() for n in retriever.retrieve("locker code")] == ["My locker code is 4417."]
    retriever.filters = {"speaker": "bob"}  # a hippo filter
    assert [n.node.get_content() for n in retriever.retrieve("locker code")] == ["My locker code is 9902."]
    retriever.filters = None
    retriever.similarity_top_k = 1
    assert len(retriever.retrieve("locker code")) == 1
    retriever.mode = "recall"
    assert retriever.retrieve("locker code")[0].node.metadata["level"] == "message"
    for name, value in [("similarity_top_k", 0), ("budget_tokens", -5), ("mode", "dream"), ("filters", "speaker"),
                        ("timezone", "Mars/Olympus")]:
        before = getattr(retriever, name)
        with pytest.raises(hippo.InvalidInput, match=name):
            setattr(retriever, name, value)
        assert getattr(retriever, name) == before


def test_a_time_zone_set_between_queries_dates_the_next_question(memory):
    """``timezone`` set on a made retriever was kept as the attribute and not read: questions were still asked as
    of the latest message stored. "yesterday" counts from now on the zone's calendar once it is set."""
    from datetime import datetime, timedelta, timezone

    now = datetime.now(timezone.utc)
    memory.add_many([{"text": "I baked bread today.", "timestamp": now - timedelta(days=1)},
                     {"text": "I painted the fence today.", "timestamp": now - timedelta(days=30)}])
    retriever = HippoRetriever(memory, similarity_top_k=1)
    assert "I baked bread today." not in [n.node.get_content() for n in retriever.retrieve("What did I do yesterday?")]
    retriever.timezone = "UTC"
    assert [n.node.get_content() for n in retriever.retrieve("What did I do yesterday?")] == ["I baked bread today."]


def test_recall_mode_counts_the_copies_a_node_stands_for(memory):
    remind_five_mornings(memory)
    nodes = HippoRetriever(memory, mode="recall", budget_tokens=300).retrieve("When is my dentist appointment?")
    asked = [n for n in nodes if n.node.get_content().startswith("Can you remind me")]
    assert len(asked) == 1 and asked[0].node.metadata["times"] == 5
    moved = [n for n in nodes if n.node.get_content().startswith("I moved")]
    assert len(moved) == 1 and "times" not in moved[0].node.metadata


def _query_bundles(model):
    """HyDE-like bundles: the question stays in ``query_str`` (its words match no message) while the text to embed
    (``custom_embedding_strs``) or the embedding itself (``embedding``) points at one message."""
    question = "Tell me more about it"
    for strs in (["automobile vehicle"], ["cat kitten"], ["violin melody"], ["dog", "cat kitten"]):
        yield QueryBundle(query_str=question, custom_embedding_strs=strs)
        yield QueryBundle(query_str=question, embedding=model.get_agg_embedding_from_queries(strs))


async def test_the_embedding_channel_embeds_what_llamaindex_s_vector_retriever_embeds():
    """``QueryBundle.custom_embedding_strs`` / ``embedding`` feed hippo's embedding channel as they feed
    ``VectorIndexRetriever`` (the aggregate of the strings' query embeddings, or the given embedding), while the
    words searched stay ``query_str``'s. Oracle: a ``VectorStoreIndex`` over the same texts and embedding model.
    The retriever embedded ``query_str`` and returned the sedan for every bundle."""
    from llama_index.core import VectorStoreIndex

    from tests.llamaindex.test_contracts import ConceptEmbedding

    class Recording(ConceptEmbedding):
        asked: list = []

        def _get_query_embedding(self, query: str) -> list[float]:
            self.asked.append(query)
            return super()._get_query_embedding(query)

    model = Recording(model_name="concepts")
    texts = ["Our tabby kitten, a feline.", "The sedan, our automobile.", "The cello and the violin."]
    memory = hippo.Memory(None, embed=model)
    memory.add_many([{"text": t} for t in texts])
    reference = VectorStoreIndex([TextNode(text=t) for t in texts], embed_model=model).as_retriever(
        similarity_top_k=1)
    retriever = HippoRetriever(memory, similarity_top_k=1)
    recall = HippoRetriever(memory, mode="recall", budget_tokens=20)  # room for one message
    for bundle in _query_bundles(model):
        fresh = functools.partial(dataclasses.replace, bundle)  # VectorIndexRetriever stores its embedding in it
        model.asked.clear()
        want = [n.node.get_content() for n in reference.retrieve(fresh())]
        embedded = list(model.asked)
        model.asked.clear()
        assert [n.node.get_content() for n in retriever.retrieve(fresh())] == want
        assert model.asked == embedded  # the texts LlamaIndex embeds, and only those
        assert [n.node.get_content() for n in await retriever.aretrieve(fresh())] == want
        assert [n.node.get_content() for n in recall.retrieve(fresh())] == want
    memory.close()


def test_recall_mode_nodes_stay_within_the_budget_units_included():
    """Units' texts are no part of a recall's context, which its messages fill: the unit nodes are those that fit in
    what the context leaves (hippo.fitting_units), so the nodes together stay within budget_tokens."""
    memory = hippo.Memory(None)
    consolidated_days(memory)
    question = "How are the cello lessons going?"
    for budget in (60, 150, 300):
        recall = memory.recall(question, budget_tokens=budget)
        nodes = HippoRetriever(memory, mode="recall", budget_tokens=budget).retrieve(question)
        assert [n.node.get_content() for n in nodes if n.node.metadata["level"] == "message"] == \
            [m.text for m in recall.messages]
        assert sum(hippo.count_tokens(n.node.get_content()) for n in nodes) <= budget
    assert recall.units and sum(hippo.count_tokens(u["text"]) for u in recall.units) > budget - recall.tokens


@pytest.mark.parametrize("key", ["timestamp", "created_at"])
def test_is_empty_on_a_time_field_keeps_what_llamaindex_keeps(memory, key):
    """``is_empty`` on ``timestamp`` (a node shows None for a message added without one) raised InvalidInput ("''
    is not an ISO-8601 date/time": the empty values it tested include "" and []) instead of keeping the undated
    messages, as LlamaIndex's ``build_metadata_filter_fn`` keeps them over the nodes' metadata."""
    from llama_index.core.vector_stores.utils import build_metadata_filter_fn

    dated = memory.add("dinner at the harbour with Ann", timestamp="2023-05-08T23:30:00-05:00")
    undated = memory.add("lunch at the harbour with Bob")
    for condition, want in ((FilterCondition.AND, [undated.id]), (FilterCondition.NOT, [dated.id])):
        filters = MetadataFilters(filters=[MetadataFilter(key=key, value=None, operator=FilterOperator.IS_EMPTY)],
                                  condition=condition)
        if key == "timestamp":  # a field the nodes show: the reference applies
            nodes = HippoRetriever(memory, similarity_top_k=5).retrieve("harbour")
            keep = build_metadata_filter_fn(lambda i: nodes[int(i)].node.metadata, filters)
            assert sorted(n.node.metadata["id"] for i, n in enumerate(nodes) if keep(str(i))) == want
            got = HippoRetriever(memory, similarity_top_k=5, filters=filters).retrieve("harbour")
            assert sorted(n.node.metadata["id"] for n in got) == want
        else:  # every message has its ingestion time
            want = [] if condition == FilterCondition.AND else [dated.id, undated.id]
        assert sorted(i.id for i in memory.list(filter=to_hippo_filter(filters))) == want


def test_timestamp_filters_compare_instants_not_text(memory):
    """As docs/compatibility.md writes it: a ``timestamp`` filter compares instants (hand-computed in UTC), where
    LlamaIndex's ``build_metadata_filter_fn`` compares the nodes' ISO-8601 text as strings."""
    from llama_index.core.vector_stores.utils import build_metadata_filter_fn

    ann = memory.add("dinner at the harbour with Ann", timestamp="2023-05-08T23:30:00-05:00")  # 04:30 UTC, 9 May
    bob = memory.add("dinner at the harbour with Bob", timestamp="2023-05-09T01:00:00+00:00")
    nodes = HippoRetriever(memory, similarity_top_k=5).retrieve("harbour dinner")
    cases = [(">=", "2023-05-09", [ann.id, bob.id], [bob.id]),
             (">=", "2023-05-09T03:00:00+02:00", [ann.id, bob.id], []),  # 01:00 UTC: both at or after it
             ("<", "2023-05-09T02:00:00Z", [bob.id], [ann.id, bob.id]),
             ("==", "2023-05-09T04:30:00Z", [ann.id], [])]
    for op, value, instants, text in cases:
        filters = MetadataFilters(filters=[MetadataFilter(key="timestamp", value=value, operator=op)])
        got = HippoRetriever(memory, similarity_top_k=5, filters=filters).retrieve("harbour dinner")
        assert sorted(n.node.metadata["id"] for n in got) == instants, (op, value)
        keep = build_metadata_filter_fn(lambda i: nodes[int(i)].node.metadata, filters)
        assert sorted(n.node.metadata["id"] for i, n in enumerate(nodes) if keep(str(i))) == text, (op, value)
    with pytest.raises(hippo.InvalidInput, match="timestamp"):
        HippoRetriever(memory, filters=MetadataFilters(filters=[MetadataFilter(key="timestamp", value="May")])
                       ).retrieve("harbour")


@pytest.mark.parametrize("mode", [np.array(["search", "recall"]), ["search"], "Search", None])
def test_a_mode_that_is_no_mode_name_is_refused_by_name(mode):
    """An array as mode raised numpy's ValueError ("the truth value of an array ... is ambiguous")."""
    with hippo.Memory(None) as mem, pytest.raises(hippo.InvalidInput, match="^mode must be 'search' or 'recall'"):
        HippoRetriever(mem, mode=mode)


def test_a_search_returns_what_hippo_retrieves_not_the_top_k_nearest():
    """docs/compatibility.md: ``VectorIndexRetriever`` returns the ``similarity_top_k`` nearest nodes whatever they
    say (and every node for ``similarity_top_k=0``); hippo's returns at most ``similarity_top_k`` of the messages its
    channels retrieve, and a value below 1 is refused (``test_bad_arguments``)."""
    from llama_index.core import Document, VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding

    texts = ["My cat is called Biscuit.", "I moved to Porto in April."]
    index = VectorStoreIndex.from_documents([Document(text=t) for t in texts], embed_model=MockEmbedding(embed_dim=8))
    memory = hippo.Memory(None)
    memory.add_many([{"text": t} for t in texts])
    for top_k in (0, 5):
        found = index.as_retriever(similarity_top_k=top_k).retrieve("cat")
        assert sorted(n.node.get_content() for n in found) == sorted(texts)
    assert [n.node.get_content() for n in HippoRetriever(memory, similarity_top_k=5).retrieve("cat")] == [texts[0]]
    memory.close()
