"""``HippoStore(index={"embed": ...})`` (issue 19 item 2): the embedding feeds hippo's embedding channel. The
same semantic operations run on LangGraph's ``InMemoryStore`` with the same deterministic embedding function
(``store_reference.embed_texts``: words of one concept share a dimension, so queries find items they share no
word with) and the answers are compared; ``embed`` in each form LangGraph accepts (``ensure_embeddings`` in
``langgraph/store/base/embed.py``: an ``Embeddings``, a sync or async function, a ``"provider:model"`` string)."""

from __future__ import annotations

import math

import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.memory import InMemoryStore

import hippo
from langchain_hippo import HippoStore
from tests.langchain.store_reference import DIMS, embed_texts

ITEMS = {
    "cat": {"title": "weekend", "text": "a tabby cat sleeps on the sofa"},
    "dog": {"title": "walks", "text": "my puppy barks at the postman"},
    "car": {"title": "errands", "text": "the sedan needs an oil change"},
    "pizza": {"title": "dinner", "text": "margherita with extra basil tonight"},
    "sea": {"title": "holiday", "text": "low tide at the harbour this morning"},
    "music": {"title": "practice", "text": "cello scales for an hour"},
}
# each query shares no word with its item: only the embedding can connect them
QUERIES = {"feline": "cat", "canine": "dog", "automobile": "car", "calzone": "pizza", "marine": "sea",
           "violin melody": "music"}


class ConceptEmbeddings(Embeddings):
    def __init__(self) -> None:
        self.documents = 0
        self.queries = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.documents += len(texts)
        return embed_texts(texts)

    def embed_query(self, text: str) -> list[float]:
        self.queries += 1
        return embed_texts([text])[0]


def _filled(index: dict) -> tuple[HippoStore, InMemoryStore]:
    store, ref = HippoStore(None, index=index), InMemoryStore(index=index)
    for key, value in ITEMS.items():
        for s in (store, ref):
            s.put(("docs",), key, value)
    return store, ref


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


@pytest.mark.parametrize("fields", [None, ["text"], ["title", "text"]])
def test_same_best_match_as_inmemorystore(fields):
    index = {"dims": DIMS, "embed": embed_texts, **({"fields": fields} if fields else {})}
    store, ref = _filled(index)
    for query, key in QUERIES.items():
        want = ref.search(("docs",), query=query, limit=len(ITEMS))
        got = store.search(("docs",), query=query, limit=len(ITEMS))
        assert want[0].key == key, query  # the reference itself answers by meaning
        assert got[0].key == key, query
        assert {i.key for i in got} == {i.key for i in want} == set(ITEMS)


def test_fields_are_embedded_one_by_one_and_max_pooled():
    """``InMemoryStore`` embeds each text of each field path separately and scores an item by its best vector;
    hippo keeps one message per text and scores an item by its best message."""
    index = {"dims": DIMS, "embed": embed_texts, "fields": ["title", "notes[*]"]}
    store, ref = HippoStore(None, index=index), InMemoryStore(index=index)
    values = {
        "mixed": {"title": "groceries and errands list", "notes": ["buy oat milk", "the kitten needs food"]},
        "cars": {"title": "sedan maintenance", "notes": ["oil change", "tyre pressure"]},
        "plain": {"title": "quarterly report", "notes": ["numbers", "charts"]},
    }
    for key, value in values.items():
        for s in (store, ref):
            s.put(("n",), key, value)
    for query, key in (("feline", "mixed"), ("automobile", "cars")):
        assert ref.search(("n",), query=query)[0].key == key
        assert store.search(("n",), query=query)[0].key == key
    parts = store.memory.using("lg.n").list(filter={"store_key": "mixed"})
    assert [p.text for p in parts] == ["groceries and errands list", "buy oat milk", "the kitten needs food"]
    assert [p.metadata.get("store_field") for p in parts] == ["title", "notes[*].0", "notes[*].1"]


def test_per_put_index_overrides_the_store_fields():
    index = {"dims": DIMS, "embed": embed_texts, "fields": ["title"]}
    store, ref = HippoStore(None, index=index), InMemoryStore(index=index)
    for s in (store, ref):
        s.put(("o",), "by-title", {"title": "kitten photos", "body": "sedan"})
        s.put(("o",), "by-body", {"title": "misc", "body": "a sedan for sale"}, index=["body"])
        s.put(("o",), "none", {"title": "kitten", "body": "sedan"}, index=False)
    for query, key in (("feline", "by-title"), ("automobile", "by-body")):
        got, want = store.search(("o",), query=query), ref.search(("o",), query=query)
        assert got[0].key == want[0].key == key
        assert [(i.key, i.score) for i in got if i.key == "none"] == [("none", None)]
        assert [(i.key, i.score) for i in want if i.key == "none"] == [("none", None)]


def test_scores_follow_the_reference_on_clear_matches():
    """Where the reference's cosine similarity separates matches clearly, hippo ranks them in the same order."""
    index = {"dims": DIMS, "embed": embed_texts, "fields": ["text"]}
    store, ref = HippoStore(None, index=index), InMemoryStore(index=index)
    texts = {"three": "cat kitten feline tabby", "two": "cat kitten report", "one": "kitten report garden river",
             "zero": "report garden river lake"}
    for key, text in texts.items():
        for s in (store, ref):
            s.put(("r",), key, {"text": text})
    want = ref.search(("r",), query="feline")
    q = embed_texts(["feline"])[0]
    cos = {k: _cosine(q, embed_texts([t])[0]) for k, t in texts.items()}
    assert [i.key for i in want] == sorted(texts, key=lambda k: -cos[k])
    assert [i.key for i in store.search(("r",), query="feline")][:3] == [i.key for i in want][:3]


@pytest.fixture
def fresh_init_embeddings():
    """LangGraph looks ``init_embeddings`` up once (``_get_init_embeddings`` is an lru_cache): a test that
    replaces it starts and ends with a fresh lookup."""
    from langgraph.store.base import embed as lg_embed

    lg_embed._get_init_embeddings.cache_clear()
    yield
    lg_embed._get_init_embeddings.cache_clear()


@pytest.mark.parametrize("form", ["embeddings", "function", "async function", "provider string"])
def test_every_form_of_embed_langgraph_accepts(form, monkeypatch, fresh_init_embeddings):
    emb = ConceptEmbeddings()
    resolved: list[str] = []
    if form == "embeddings":
        embed = emb
    elif form == "function":
        embed = embed_texts
    elif form == "async function":
        async def embed(texts: list[str]) -> list[list[float]]:
            return embed_texts(texts)
    else:
        import langchain.embeddings

        def init_embeddings(name: str, **kwargs) -> Embeddings:
            resolved.append(name)
            return emb

        monkeypatch.setattr(langchain.embeddings, "init_embeddings", init_embeddings)
        embed = "concepts:v1"
    store = HippoStore(None, index={"dims": DIMS, "embed": embed, "fields": ["text"]})
    for key, value in ITEMS.items():
        store.put(("docs",), key, value)
    assert store.search(("docs",), query="feline")[0].key == "cat"
    assert "embedding" in store.memory.search_many(["lg.docs"], "feline", k=1)[0].channels
    if form == "provider string":
        assert resolved == ["concepts:v1"]
    if form in ("embeddings", "provider string"):
        assert emb.documents >= len(ITEMS) and emb.queries >= 1  # queries go through embed_query


async def test_async_api_with_an_async_embedding_function():
    async def embed(texts: list[str]) -> list[list[float]]:
        return embed_texts(texts)

    store = HippoStore(None, index={"dims": DIMS, "embed": embed})
    for key, value in ITEMS.items():
        await store.aput(("docs",), key, value)
    assert (await store.asearch(("docs",), query="canine"))[0].key == "dog"


def test_unresolvable_provider_string_raises_invalid_input():
    with pytest.raises(hippo.InvalidInput, match="langchain-openai"):
        HippoStore(None, index={"dims": 8, "embed": "openai:text-embedding-3-small"})


@pytest.mark.parametrize("index, match", [
    ({"dims": 0, "embed": embed_texts}, "dims"),
    ({"dims": 4, "embed": 42}, "embed"),
    ({"fields": "text"}, "fields"),
    ({"fields": ["text"], "weights": 1}, "unknown"),
])
def test_bad_index_configs(index, match):
    with pytest.raises(hippo.InvalidInput, match=match):
        HippoStore(None, index=index)


def test_embedding_with_a_memory_given(tmp_path):
    emb = ConceptEmbeddings()
    # the memory already embeds with the same object: used as it is
    same = hippo.Memory(None, embed=emb)
    store = HippoStore(same, index={"dims": DIMS, "embed": emb})
    assert store.memory is same
    # a file-backed memory without an embedding: the store opens the file a second time with it
    path = tmp_path / "agent.db"
    conversation = hippo.Memory(path)
    conversation.add("the user said hello")
    store = HippoStore(conversation, index={"dims": DIMS, "embed": emb})
    assert store.memory is not conversation and store.memory.embedding is emb and conversation.embedding is None
    store.put(("docs",), "cat", ITEMS["cat"])
    store.put(("docs",), "car", ITEMS["car"])
    assert store.search(("docs",), query="feline")[0].key == "cat"
    conversation.add("and then goodbye")  # both handles keep writing the same file
    assert [m.text for m in conversation.list()] == ["the user said hello", "and then goodbye"]
    assert len(conversation.using("lg.docs").list()) == 2
    store.close()
    assert conversation.count() == 2  # closing the store leaves the caller's memory open
    conversation.close()
    with pytest.raises(hippo.InvalidInput, match="in-memory"):
        HippoStore(hippo.Memory(None), index={"dims": DIMS, "embed": emb})
    with pytest.raises(hippo.InvalidInput, match="differs"):
        HippoStore(hippo.Memory(None, embed=embed_texts), index={"dims": DIMS, "embed": emb})
