"""HippoStore on a PostgreSQL URL: the LangGraph store opens ``hippo.Memory(url)`` itself, behaves as
LangGraph's ``InMemoryStore`` on the same operations, and reopens the URL (password included) when an ``index``
embedding is given."""

from __future__ import annotations

import pytest
from langgraph.store.memory import InMemoryStore

import hippo
from langchain_hippo import HippoStore
from tests.langchain.store_reference import DIMS
from tests.langchain.test_store_semantic import ITEMS, QUERIES, ConceptEmbeddings

pytest.importorskip("psycopg")


def test_hippostore_on_a_url_answers_like_inmemorystore(pg_url) -> None:
    store, ref = HippoStore(pg_url), InMemoryStore()
    try:
        for key, value in ITEMS.items():
            for s in (store, ref):
                s.put(("docs", "u1"), key, value)
        for s in (store, ref):
            s.delete(("docs", "u1"), "car")
        assert {i.key: i.value for i in store.search(("docs",), limit=10)} == \
            {i.key: i.value for i in ref.search(("docs",), limit=10)}
        assert store.get(("docs", "u1"), "cat").value == ref.get(("docs", "u1"), "cat").value
        assert store.list_namespaces() == ref.list_namespaces()
    finally:
        store.close()
    with hippo.Memory(pg_url) as mem:  # what the store wrote is in the server, under the store's prefix
        assert "lg.docs.u1" in mem.namespaces()


def test_hippostore_with_an_embedding_reopens_the_url(pg_url) -> None:
    emb = ConceptEmbeddings()
    with_password = pg_url.replace("postgres@", "postgres:secret@", 1)
    conversation = hippo.Memory(with_password)
    conversation.add("the user said hello")
    store = HippoStore(conversation, index={"dims": DIMS, "embed": emb})
    try:
        assert store.memory is not conversation and store.memory.embedding is emb
        assert "secret" not in store.memory.path
        for key, value in ITEMS.items():
            store.put(("docs",), key, value)
        for query, key in QUERIES.items():
            assert store.search(("docs",), query=query)[0].key == key
    finally:
        store.close()
        conversation.close()


def test_a_sweep_stopped_half_way_leaves_nothing_behind_on_a_url(pg_url) -> None:
    from tests.langchain.store_reference import Clock
    from tests.langchain.test_store import check_a_sweep_stopped_half_way_leaves_nothing_behind

    clock = Clock().install()
    try:
        check_a_sweep_stopped_half_way_leaves_nothing_behind(pg_url, clock)
    finally:
        clock.restore()
