"""HippoRetriever: LangChain's standard retriever suite, plus metadata, filters, budgets, recall mode, errors."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document
from langchain_tests.integration_tests import RetrieversIntegrationTests

import hippo
from langchain_hippo import HippoRetriever
from tests.conversation import consolidated_days, remind_five_mornings

from .conftest import seed


class TestHippoRetrieverStandard(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[HippoRetriever]:
        return HippoRetriever

    @property
    def retriever_constructor_params(self) -> dict:
        memory = hippo.Memory(None)
        seed(memory)
        return {"memory": memory}

    @property
    def retriever_query_example(self) -> str:
        return "beagle Pixel ibex cello"


class TestHippoRetrieverRecallStandard(TestHippoRetrieverStandard):
    """The same suite in ``mode="recall"`` over a consolidated memory (units and messages)."""

    @property
    def retriever_constructor_params(self) -> dict:
        memory = hippo.Memory(None)
        seed(memory)
        memory.consolidate("deep")
        return {"memory": memory, "mode": "recall", "budget_tokens": 300}

    # the suite's documented way to declare that the result count is not set by k (recall mode is budgeted by
    # tokens: docs/compatibility.md); strict, so a change of that behaviour shows up here
    @pytest.mark.xfail(reason="k does not apply in mode='recall'; budget_tokens does", strict=True)
    def test_k_constructor_param(self) -> None:
        super().test_k_constructor_param()

    @pytest.mark.xfail(reason="k does not apply in mode='recall'; budget_tokens does", strict=True)
    def test_invoke_with_k_kwarg(self, retriever) -> None:
        super().test_invoke_with_k_kwarg(retriever)


def test_documents_carry_message_and_metadata(seeded):
    docs = HippoRetriever(memory=seeded, k=2).invoke("ibex refuge")
    assert docs and all(isinstance(d, Document) for d in docs)
    top = docs[0]
    assert top.page_content == "Yes, three ibex near the Tre Cime refuge."
    md = top.metadata
    assert md["speaker"] == "Ann" and md["session_id"] == "s1" and md["level"] == "message"
    assert md["timestamp"].startswith("2024-03-01T09:02")
    assert md["turn"] == 2 and isinstance(md["id"], int) and md["score"] > 0
    assert top.id == str(md["id"])
    assert seeded.get(md["id"]).text == top.page_content


async def test_async_matches_sync(seeded):
    retriever = HippoRetriever(memory=seeded, k=3)
    sync = retriever.invoke("cello lessons")
    asyn = await retriever.ainvoke("cello lessons")
    assert [d.metadata["id"] for d in sync] == [d.metadata["id"] for d in asyn]
    batch = await retriever.abatch(["cello lessons", "beagle"])
    assert len(batch) == 2 and batch[0][0].metadata["id"] == sync[0].metadata["id"]


def test_per_call_k_and_filter(seeded):
    retriever = HippoRetriever(memory=seeded, k=5)
    docs = retriever.invoke("beagle Pixel", filter={"session_id": "s3"})
    assert docs and {d.metadata["session_id"] for d in docs} == {"s3"}
    assert len(retriever.invoke("beagle Pixel ibex cello", k=1)) == 1
    assert len(retriever.invoke("beagle Pixel ibex cello", k=1, verbose=True)) == 1
    only_bob = HippoRetriever(memory=seeded, filter={"speaker": "Bob"}).invoke("beagle")
    assert only_bob and all(d.metadata["speaker"] == "Bob" for d in only_bob)


def test_budget_caps_search_results(seeded):
    docs = HippoRetriever(memory=seeded, k=10).invoke("beagle Pixel ibex cello Ann")
    sizes = [seeded.get(d.metadata["id"]).n_tokens for d in docs]
    budget = sizes[0] + sizes[1]
    capped = HippoRetriever(memory=seeded, k=10, budget_tokens=budget).invoke("beagle Pixel ibex cello Ann")
    assert [d.metadata["id"] for d in capped] == [d.metadata["id"] for d in docs[: len(capped)]]
    assert sum(seeded.get(d.metadata["id"]).n_tokens for d in capped) <= budget
    assert len(capped) >= 2


def test_budget_smaller_than_the_best_message_returns_nothing(memory):
    memory.add("the cat " * 500)  # 1001 tokens
    assert HippoRetriever(memory=memory, budget_tokens=5).invoke("cat") == []
    assert len(HippoRetriever(memory=memory, budget_tokens=1001).invoke("cat")) == 1


async def test_recall_mode_returns_context_messages(seeded):
    retriever = HippoRetriever(memory=seeded, mode="recall", budget_tokens=200)
    docs = retriever.invoke("What did the beagle Pixel chew?")
    recall = seeded.recall("What did the beagle Pixel chew?", budget_tokens=200)
    assert [d.page_content for d in docs if d.metadata["level"] == "message"] == [m.text for m in recall.messages]
    units = [d for d in docs if d.metadata["level"] != "message"]  # episodes / semantics / themes, when built
    assert [d.page_content for d in units] == [u["text"] for u in hippo.fitting_units(recall)]
    assert len(docs) == len(hippo.fitting_units(recall)) + len(recall.messages)
    assert sum(hippo.count_tokens(d.page_content) for d in docs) <= 200
    assert any("slippers" in d.page_content for d in docs)
    adocs = await retriever.ainvoke("What did the beagle Pixel chew?")
    assert [d.page_content for d in adocs] == [d.page_content for d in docs]


def test_namespace_view(memory):
    memory.using("other").add("The lighthouse keeper fed the gulls.")
    assert HippoRetriever(memory=memory).invoke("lighthouse gulls") == []
    docs = HippoRetriever(memory=memory, namespace="other").invoke("lighthouse gulls")
    assert docs and docs[0].metadata["namespace"] == "other"


@pytest.mark.parametrize(
    "kwargs, name",
    [({"k": 0}, "k"), ({"k": "3"}, "k"), ({"budget_tokens": -1}, "budget_tokens"),
     ({"filter": "speaker"}, "filter"), ({"mode": "dream"}, "mode"), ({"memory": object()}, "memory"),
     ({"namespace": "  "}, "namespace")],
)
def test_bad_constructor_arguments(memory, kwargs, name):
    with pytest.raises(hippo.InvalidInput, match=name):
        HippoRetriever(**{"memory": memory, **kwargs})


@pytest.mark.parametrize(
    "kwargs, name",
    [({"k": -2}, "k"), ({"budget_tokens": 0}, "budget_tokens"), ({"filter": [1]}, "filter"),
     ({"mode": 3}, "mode"), ({"top_k": 3}, "top_k")],
)
def test_bad_call_arguments(seeded, kwargs, name):
    with pytest.raises(hippo.InvalidInput, match=name):
        HippoRetriever(memory=seeded).invoke("beagle", **kwargs)


@pytest.mark.parametrize("mode", ["search", "recall"])
async def test_any_text_is_a_query_as_for_the_reference_retrievers(memory, mode):
    """A vector store's retriever takes any string; hippo's raised ``InvalidInput`` for a blank query, a pasted
    escape code, a lone surrogate or a paste past hippo's question length, and a model sending ``query=""`` to
    ``create_retriever_tool`` stopped the whole agent. Text is asked as hippo can ask it (``hippo.storable``, the end
    of an over-long paste); nothing left to ask finds nothing. A query that is no string still raises."""
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage
    from langchain_core.tools import create_retriever_tool

    from .conftest import recording_model

    memory.add("Biscuit eats salmon pate, nothing else.", speaker="Mia")
    memory.add("We moved to Porto in April.", speaker="Mia")
    retriever = HippoRetriever(memory=memory, mode=mode, k=1)
    asked = retriever.invoke("salmon")
    assert [d.page_content for d in asked] == ["Biscuit eats salmon pate, nothing else."]
    for query in ("salmon\x1b[0m", "\ud800 salmon", "." * 150_000 + " salmon"):
        assert [d.page_content for d in retriever.invoke(query)] == [asked[0].page_content], query[:10]
        assert [d.page_content for d in await retriever.ainvoke(query)] == [asked[0].page_content]
    for query in ("", "   ", "\x00\x07"):
        assert retriever.invoke(query) == [] and await retriever.ainvoke(query) == []
    with pytest.raises(hippo.InvalidInput, match="^query must be a string"):
        retriever.invoke(None)
    model = recording_model([AIMessage("", tool_calls=[{"name": "recall", "id": "c1", "args": {"query": ""}}]),
                             AIMessage("Nothing found.")])
    agent = create_agent(model, tools=[create_retriever_tool(retriever, "recall", "Search the memory.")])
    out = agent.invoke({"messages": [{"role": "user", "content": "what does Biscuit eat?"}]})
    assert [m.type for m in out["messages"]] == ["human", "ai", "tool", "ai"]


def test_recall_mode_counts_the_copies_a_document_stands_for(memory):
    remind_five_mornings(memory)
    docs = HippoRetriever(memory=memory, mode="recall", budget_tokens=300).invoke("When is my dentist appointment?")
    asked = [d for d in docs if d.page_content.startswith("Can you remind me")]
    assert len(asked) == 1 and asked[0].metadata["times"] == 5
    moved = [d for d in docs if d.page_content.startswith("I moved")]
    assert len(moved) == 1 and "times" not in moved[0].metadata


def test_recall_mode_documents_stay_within_the_budget_units_included():
    """Units' texts are no part of a recall's context, which its messages fill: the units handed over beside the
    messages are those that fit in what the context leaves (hippo.fitting_units), so the documents together stay
    within budget_tokens. Units of a consolidated history used to come on top of a full context."""
    memory = hippo.Memory(None)
    consolidated_days(memory)
    question = "How are the cello lessons going?"
    for budget in (60, 150, 300):
        recall = memory.recall(question, budget_tokens=budget)
        docs = HippoRetriever(memory=memory, mode="recall", budget_tokens=budget).invoke(question)
        assert [d.page_content for d in docs if d.metadata["level"] == "message"] == [m.text for m in recall.messages]
        assert sum(hippo.count_tokens(d.page_content) for d in docs) <= budget
    assert recall.units and sum(hippo.count_tokens(u["text"]) for u in recall.units) > budget - recall.tokens


def test_a_search_returns_what_hippo_retrieves_not_the_k_nearest():
    """docs/compatibility.md: a vector store's retriever returns the ``k`` nearest documents whatever they say (and
    none for ``k=0``); hippo's returns at most ``k`` of the messages its channels retrieve, and ``k`` below 1 is
    refused (``test_bad_constructor_arguments``)."""
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.vectorstores import InMemoryVectorStore

    texts = ["My cat is called Biscuit.", "I moved to Porto in April."]
    reference = InMemoryVectorStore.from_texts(texts, DeterministicFakeEmbedding(size=8))
    memory = hippo.Memory(None)
    memory.add_many([{"text": t} for t in texts])
    assert sorted(d.page_content for d in reference.as_retriever(search_kwargs={"k": 5}).invoke("cat")) == sorted(texts)
    assert reference.as_retriever(search_kwargs={"k": 0}).invoke("cat") == []
    assert [d.page_content for d in HippoRetriever(memory=memory, k=5).invoke("cat")] == [texts[0]]
    memory.close()
