"""HippoContextPostprocessor (neighbour / episode expansion under a budget) and HippoDecayPostprocessor."""

from __future__ import annotations

import functools

import pytest
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import NodeWithScore, TextNode

import hippo
from llamaindex_hippo import HippoContextPostprocessor, HippoDecayPostprocessor, HippoRetriever
from tests.llamaindex.conftest import CONVERSATION, seed


def test_context_expands_to_neighbours(seeded):
    nodes = HippoRetriever(seeded, similarity_top_k=1).retrieve("salmon pate")
    center = nodes[0].node.metadata["id"]
    out = HippoContextPostprocessor(memory=seeded, before=1, after=1).postprocess_nodes(nodes)
    assert len(out) == 1 and out[0].node.node_id == nodes[0].node.node_id and out[0].score == nodes[0].score
    window = [i.id for i in seeded.read(center, before=1, after=1)]
    assert out[0].node.metadata["message_ids"] == window
    lines = out[0].node.get_content().splitlines()
    assert len(lines) == 3 and "Biscuit like to eat" in lines[0] and "salmon pate" in lines[1]


async def test_context_budget_and_overlap(seeded):
    nodes = HippoRetriever(seeded, similarity_top_k=3).retrieve("Biscuit kitten salmon")
    big = await HippoContextPostprocessor(memory=seeded, before=5, after=5, budget_tokens=10_000) \
        .apostprocess_nodes(nodes)
    shown = [mid for n in big for mid in n.node.metadata["message_ids"]]
    assert len(shown) == len(set(shown))  # no message appears twice
    tiny = HippoContextPostprocessor(memory=seeded, before=5, after=5, budget_tokens=15).postprocess_nodes(nodes)
    assert sum(seeded.get(mid).n_tokens for n in tiny for mid in n.node.metadata["message_ids"]) <= 15


def test_foreign_nodes_pass_through(seeded):
    foreign = NodeWithScore(node=TextNode(text="from a vector index", id_="doc-1"), score=0.5)
    out = HippoContextPostprocessor(memory=seeded).postprocess_nodes([foreign])
    assert out == [foreign]


def test_context_in_query_engine(seeded):
    engine = RetrieverQueryEngine.from_args(
        HippoRetriever(seeded, similarity_top_k=1), llm=MockLLM(),
        node_postprocessors=[HippoContextPostprocessor(memory=seeded, before=1, after=0)])
    response = engine.query("salmon pate")
    assert "Biscuit like to eat" in str(response)  # the neighbour reached the prompt


def test_context_bad_arguments(memory):
    with pytest.raises(hippo.InvalidInput, match="before"):
        HippoContextPostprocessor(memory=memory, before=-1)
    with pytest.raises(hippo.InvalidInput, match="budget_tokens"):
        HippoContextPostprocessor(memory=memory, budget_tokens=0)
    with pytest.raises(hippo.InvalidInput, match="after"):
        HippoContextPostprocessor(memory=memory, after="two")


def test_episode_expansion_is_refused_without_the_hierarchy():
    """``expand="episode"`` on a memory without the hierarchy: every ``Memory.episode`` call raises NotFound, which
    the postprocessor read as a message deleted since retrieval, so it returned no node (1 node in, 0 out).
    Refused when built, naming ``expand``; neighbours still expand."""
    memory = hippo.Memory(None, config={"hierarchy": {"enabled": False}})
    seed(memory)
    with pytest.raises(hippo.InvalidInput, match="expand"):
        HippoContextPostprocessor(memory=memory, expand="episode")
    nodes = HippoRetriever(memory, similarity_top_k=1).retrieve("salmon pate")
    out = HippoContextPostprocessor(memory=memory, expand="neighbours", before=1, after=0).postprocess_nodes(nodes)
    assert [n.node.node_id for n in out] == [n.node.node_id for n in nodes]
    memory.close()


def test_context_episode_expansion(seeded):
    nodes = HippoRetriever(seeded, similarity_top_k=1).retrieve("salmon pate")
    out = HippoContextPostprocessor(memory=seeded, expand="episode").postprocess_nodes(nodes)
    mid = nodes[0].node.metadata["id"]
    episode = seeded.episode(mid)
    assert out[0].node.metadata["message_ids"] == [i.id for i in episode]
    # by hand: nothing is consolidated yet, and a change of session ends a flush unit, so the open episode of the
    # salmon message is session s1's four messages
    assert [i.text for i in episode] == [text for sid, _, text in CONVERSATION if sid == "s1"]


def test_decay_reweights_and_reinforces(seeded):
    if not callable(getattr(seeded, "strength", None)):
        with pytest.raises(hippo.InvalidInput, match="strength"):
            HippoDecayPostprocessor(memory=seeded)
        pytest.skip("this hippo has no Memory.strength(); decay not built yet")
    nodes = HippoRetriever(seeded, similarity_top_k=4).retrieve("Biscuit salmon marathon green")
    ids = [n.node.metadata["id"] for n in nodes]
    before = seeded.strength(ids)
    out = HippoDecayPostprocessor(memory=seeded, top_n=2).postprocess_nodes(nodes)
    assert len(out) == 2
    expected = sorted(((n.score or 1.0) * before[n.node.metadata["id"]] for n in nodes), reverse=True)[:2]
    assert [n.score for n in out] == pytest.approx(expected)
    after = seeded.strength([n.node.metadata["id"] for n in out])
    assert all(after[n.node.metadata["id"]] >= before[n.node.metadata["id"]] for n in out)


def test_nodes_of_other_sources_pass_through_whatever_their_metadata(seeded):
    """A node is hippo's by its node id alone: a document store's node with an "id" and a "namespace" of its own
    is neither expanded, nor reweighted, nor looked up."""
    doc = NodeWithScore(node=TextNode(text="Cat care handbook, chapter 2", metadata={"id": 2, "namespace": "default"}),
                        score=0.9)
    other = NodeWithScore(node=TextNode(text="Handbook", metadata={"id": 7, "namespace": "manuals"}), score=0.5)
    out = HippoContextPostprocessor(memory=seeded).postprocess_nodes([doc, other], query_str="cats")
    assert [(n.node.get_content(), n.score) for n in out] == [("Cat care handbook, chapter 2", 0.9), ("Handbook", 0.5)]
    out = HippoDecayPostprocessor(memory=seeded).postprocess_nodes([doc], query_str="cats")
    assert [(n.node.get_content(), n.score) for n in out] == [("Cat care handbook, chapter 2", 0.9)]


async def test_nodes_of_messages_deleted_since_retrieval_are_dropped(seeded):
    """A message deleted between retrieval and postprocessing: both postprocessors drop its node, the others are
    processed as without it. The decay postprocessor gave it weight 1 (no strength found), above every live
    message, and the context postprocessor raised ``NotFound``."""
    foreign = NodeWithScore(node=TextNode(text="from a vector index", id_="doc-1"), score=0.5)
    nodes = HippoRetriever(seeded, similarity_top_k=3).retrieve("Biscuit salmon kitten")
    gone, kept = nodes[0], nodes[1:]
    seeded.delete(gone.node.metadata["id"])
    decay = HippoDecayPostprocessor(memory=seeded, reinforce=False)
    strengths = seeded.strength([n.node.metadata["id"] for n in kept])
    for out in (decay.postprocess_nodes([*nodes, foreign]), await decay.apostprocess_nodes([*nodes, foreign])):
        assert {n.node.node_id: n.score for n in out} == {
            **{n.node.node_id: pytest.approx(n.score * strengths[n.node.metadata["id"]]) for n in kept},
            "doc-1": 0.5}
    context = HippoContextPostprocessor(memory=seeded, before=0, after=0)
    want = [n.node.node_id for n in context.postprocess_nodes([*kept, foreign])]
    assert [n.node.node_id for n in context.postprocess_nodes([*nodes, foreign])] == want
    assert [n.node.node_id for n in await context.apostprocess_nodes([*nodes, foreign])] == want
    assert gone.node.node_id not in want and "doc-1" in want


@pytest.mark.parametrize("expand", ["neighbours", "episode"])
async def test_context_budget_counts_the_text_the_nodes_carry(seeded, expand):
    """The budget bounds the tokens of what the LLM is sent, ``hippo.count_tokens`` of every node's text (headers
    and line breaks included), not the messages' own tokens: at a budget of 15 a 27-token node came back. At
    exactly the size of the best node's whole window, that window is what comes back; one token less, and it is
    cut to its message."""
    nodes = HippoRetriever(seeded, similarity_top_k=3).retrieve("Biscuit kitten salmon")
    make = functools.partial(HippoContextPostprocessor, memory=seeded, before=5, after=5, expand=expand)
    whole = make(budget_tokens=10_000).postprocess_nodes(nodes[:1])[0]
    assert len(whole.node.metadata["message_ids"]) > 1
    size = hippo.count_tokens(whole.node.get_content())
    for budget in (*range(1, 80, 3), size - 1, size, size + 1, 10_000):
        processor = make(budget_tokens=budget)
        for out in (processor.postprocess_nodes(nodes), await processor.apostprocess_nodes(nodes)):
            assert sum(hippo.count_tokens(n.node.get_content()) for n in out) <= budget
    assert make(budget_tokens=size).postprocess_nodes(nodes[:1])[0].node.get_content() == whole.node.get_content()
    cut = make(budget_tokens=size - 1).postprocess_nodes(nodes[:1])
    assert [n.node.metadata["message_ids"] for n in cut] == [[nodes[0].node.metadata["id"]]]


@pytest.mark.parametrize("nodes, name", [(None, "nodes"), ("text", "nodes"), ([1], r"nodes\[0\]"),
                                         ([TextNode(text="a node without a score")], r"nodes\[0\]")])
async def test_nodes_that_are_no_list_of_scored_nodes_raise_invalid_input(seeded, nodes, name):
    """``postprocess_nodes(None)`` raised ``TypeError`` and a list holding something else than a ``NodeWithScore``
    raised ``AttributeError``, sync and async, in both postprocessors. Each raises ``InvalidInput`` naming the
    argument (or its element)."""
    for post in (HippoContextPostprocessor(memory=seeded), HippoDecayPostprocessor(memory=seeded)):
        with pytest.raises(hippo.InvalidInput, match=f"^{name} must be"):
            post.postprocess_nodes(nodes)
        with pytest.raises(hippo.InvalidInput, match=f"^{name} must be"):
            await post.apostprocess_nodes(nodes)


def test_a_date_shows_its_year_in_four_digits():
    """The year 64 showed as "64-07-18", which a model reads as 1964 or 2064."""
    memory = hippo.Memory(None, config={"timestamp_min_year": 1})
    memory.add("The fire of Rome began near the Circus Maximus.", speaker="Tacitus",
               timestamp="0064-07-18T23:00:00+01:00")
    memory.add("It burned for six days.", speaker="Tacitus", timestamp="0064-07-19T09:00:00+01:00")
    nodes = HippoRetriever(memory, similarity_top_k=1).retrieve("fire of Rome Circus")
    out = HippoContextPostprocessor(memory=memory, before=0, after=1).postprocess_nodes(nodes)
    assert out[0].node.get_content().splitlines() == [
        "[0064-07-18 23:00] Tacitus: The fire of Rome began near the Circus Maximus.",
        "[0064-07-19 09:00] Tacitus: It burned for six days."]
    memory.close()
