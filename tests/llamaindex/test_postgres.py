"""The LlamaIndex adapters on a memory opened on a PostgreSQL URL: retrieval and the memory block answer as they do
on a file, and an ``embed_model`` reopens the URL for the embedding channel."""

from __future__ import annotations

import asyncio

import pytest
from llama_index.core.llms import ChatMessage

import hippo
from llamaindex_hippo import HippoMemoryBlock, HippoRetriever
from tests.llamaindex.conftest import seed
from tests.llamaindex.test_contracts import ConceptEmbedding

pytest.importorskip("psycopg")


def test_retriever_and_block_on_a_url_match_a_file(tmp_path, pg_url):
    model = ConceptEmbedding(model_name="concepts")
    answers = []
    for location in (str(tmp_path / "mem.db"), pg_url):
        with hippo.Memory(location) as mem:
            seed(mem)
            plain = HippoRetriever(mem, similarity_top_k=2).retrieve("Which pate does Biscuit eat?")
            retriever = HippoRetriever(mem, similarity_top_k=1, embed_model=model)
            semantic = retriever.retrieve("feline pet")
            assert retriever.memory is not mem and retriever.memory.path == mem.path
            retriever.close()
            block = HippoMemoryBlock(memory=mem, scope="all", budget_tokens=60)
            text = asyncio.run(block.aget([ChatMessage(role="user", content="marathon in September")]))
            answers.append(([(n.node.node_id, n.node.get_content()) for n in plain],
                            semantic[0].node.get_content(), text))
    assert answers[0] == answers[1]
    assert answers[1][1] == "We adopted a tabby kitten and named her Biscuit."
