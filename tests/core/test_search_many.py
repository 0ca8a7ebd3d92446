"""``Memory.search_many``: several namespaces ranked on one scale. The oracle is ``Memory.search`` over one
namespace holding the same messages in the same order: union statistics and union ranks must give exactly the
ranking (and the scores) that the merged namespace gives."""

from __future__ import annotations

import random

import numpy as np
import pytest

import hippo
from hippo import InvalidInput

WORDS = ("colour favourite ultramarine chess sunday garden tomato weather forecast note catalogue item blue "
         "river hiking boots pizza basil cello lesson beagle pixel lighthouse keeper").split()


def _texts(rng: random.Random, n: int) -> list[str]:
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))) for _ in range(n)]


def _pair(parts: dict[str, list[str]], **kwargs):
    """The same messages split over namespaces (``split``) and in one namespace in namespace order (``one``)."""
    split = hippo.Memory(None, **kwargs)
    one = hippo.Memory(None, **kwargs).using("all")
    for ns, texts in parts.items():
        split.using(ns).add_many([{"text": t, "metadata": {"part": ns}} for t in texts])
        one.add_many([{"text": t, "metadata": {"part": ns}} for t in texts])
    return split, one


def _ranking(hits) -> list[tuple[str, float]]:
    return [(h.text, round(h.score, 9)) for h in hits]


def test_small_namespace_is_not_drowned_by_a_large_one():
    # issue 22 item 7: per-namespace fusion gives the best message of every namespace the same top score
    parts = {"users.a": ["my favourite colour is ultramarine", "I play chess on sundays"],
             "users.b": [f"note {i}: the favourite colour of item {i} is listed in the catalogue" for i in range(20)]}
    split, one = _pair(parts)
    query = "favourite colour ultramarine"
    got = split.search_many(list(parts), query, k=25)
    assert got[0].text == "my favourite colour is ultramarine" and got[0].namespace == "users.a"
    assert _ranking(got) == _ranking(one.search(query, k=25))
    assert {h.namespace for h in got} == set(parts)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_union_ranking_equals_one_namespace(seed):
    rng = random.Random(seed)
    parts = {f"ns{j}": _texts(rng, rng.randint(1, 30)) for j in range(rng.randint(2, 4))}
    split, one = _pair(parts)
    for _ in range(6):
        query = " ".join(rng.sample(WORDS, rng.randint(1, 3)))
        k = rng.randint(1, 15)
        assert _ranking(split.search_many(list(parts), query, k=k)) == _ranking(one.search(query, k=k)), query
        flt = {"part": {"$ne": "ns0"}}
        assert (_ranking(split.search_many(list(parts), query, k=k, filter=flt))
                == _ranking(one.search(query, k=k, filter=flt)))


def test_a_filtered_search_reads_the_texts_of_its_hits_only(monkeypatch):
    """A filtered search over several namespaces made up to ``k`` hits in each namespace (every text read from the
    Content DWM) and kept ``k`` of them all: 6 namespaces, ``k=40``, 240 texts read for 40 hits. The ranking is
    the merged namespace's, and the texts read are the hits' own."""
    from hippo.index.coindex import NamespaceIndex

    rng = random.Random(5)
    parts = {f"ns{j}": _texts(rng, 60) for j in range(6)}
    split, one = _pair(parts)
    read: list[int] = []
    texts_of = NamespaceIndex.texts_of
    monkeypatch.setattr(NamespaceIndex, "texts_of", lambda self, rows: read.extend(rows) or texts_of(self, rows))
    flt = {"part": {"$ne": "ns0"}}
    for query in ("blue river", "chess", "pizza basil"):  # shorter than rank.exact_first's verbatim check
        for k in (1, 40, 200):
            read.clear()
            got = split.search_many(list(parts), query, k=k, filter=flt)
            assert len(read) == len(got), (query, k)
            assert _ranking(got) == _ranking(one.search(query, k=k, filter=flt)), (query, k)


def _embed(texts):
    # deterministic bag-of-words vectors: the embedding channel sees the same vectors in both layouts
    out = []
    for t in texts:
        v = np.zeros(len(WORDS) + 1)
        for w in t.split():
            v[WORDS.index(w) if w in WORDS else -1] += 1.0
        out.append((v + 0.01).tolist())
    return out


def test_union_ranking_with_the_embedding_channel():
    rng = random.Random(9)
    parts = {"x": _texts(rng, 12), "y": _texts(rng, 25)}
    split, one = _pair(parts, embed=_embed)
    for query in ("river hiking boots", "cello lesson", "pizza basil beagle"):
        got = split.search_many(["x", "y"], query, k=10)
        assert any("embedding" in h.channels for h in got)
        assert _ranking(got) == _ranking(one.search(query, k=10))


def test_one_namespace_is_plain_search():
    rng = random.Random(4)
    mem = hippo.Memory(None)
    mem.using("solo").add_many([{"text": t} for t in _texts(rng, 40)])
    for query in ("chess sunday", "blue river", "lighthouse keeper beagle"):
        assert _ranking(mem.search_many(["solo"], query, k=8)) == _ranking(mem.using("solo").search(query, k=8))


async def test_async_twin_and_argument_checks():
    mem = hippo.Memory(None)
    mem.using("a").add("the lighthouse keeper keeps a beagle")
    hits = await mem.asearch_many(["a", "empty"], "beagle")
    assert [h.text for h in hits] == ["the lighthouse keeper keeps a beagle"]
    assert mem.search_many([], "beagle") == []
    assert mem.search_many(["a", "a"], "beagle", k=5)[0].namespace == "a"
    for bad in ("a", None, 3, ["a", ""], ["a", 5]):
        with pytest.raises(InvalidInput, match="namespaces"):
            mem.search_many(bad, "beagle")
    with pytest.raises(InvalidInput, match="query"):
        mem.search_many(["a"], "  ")
    with pytest.raises(InvalidInput, match="k"):
        mem.search_many(["a"], "beagle", k=0)


class _TwoSidedEmbeddings:
    """An embeddings object whose query vectors differ from its document vectors, as asymmetric models do."""

    def __init__(self):
        self.queries: list[str] = []

    def embed_documents(self, texts):
        return _embed(texts)

    def embed_query(self, text):
        self.queries.append(text)
        return _embed([text])[0]


def test_queries_are_embedded_with_embed_query():
    emb = _TwoSidedEmbeddings()
    mem = hippo.Memory(None, embed=emb)
    assert mem.embedding is emb and hippo.Memory(None).embedding is None
    mem.add_many([{"text": t} for t in ("river hiking boots", "pizza basil")])
    mem.search("hiking", k=1)
    mem.search_many(["default"], "basil", k=1)
    assert emb.queries == ["hiking", "basil"]


def test_without_priors_the_score_is_the_fused_channels():
    """``priors=False``: no time-and-truth, surprise, salience or profile factor; a hit's score is the sum of its
    channels' reciprocal-rank contributions (``Hit.channels``), and the order follows it."""
    rng = random.Random(11)
    mem = hippo.Memory(None)
    mem.using("p").add_many([{"text": t + (" yesterday at 5pm, Ann said" if i % 3 == 0 else "")}
                             for i, t in enumerate(_texts(rng, 30))])
    for query in ("chess garden", "what did Ann say yesterday about the river", "blue cello"):
        plain = mem.search_many(["p"], query, k=10, priors=False)
        assert plain
        for h in plain:
            assert h.score == pytest.approx(sum(h.channels.values()))
        assert [h.score for h in plain] == sorted((h.score for h in plain), reverse=True)
    with pytest.raises(InvalidInput, match="priors"):
        mem.search_many(["p"], "chess", priors="no")


@pytest.mark.parametrize("query", ["?", "deploy timeout"])
def test_without_the_signature_channel_the_signature_matrix_is_not_built(query):
    # building it reads every token of every namespace (seconds for a history of millions of tokens)
    mem = hippo.Memory()
    mem.add_many([{"text": t} for t in _texts(random.Random(3), 50)])
    mem.using("b").add("The deploy script failed on Tuesday with a timeout.")
    assert mem.config.retrieval.weight_signature == 0
    mem.search_many(["default", "b"], query, k=5)
    assert mem.engine.state().index.signature_bytes == 0
    assert mem.using("b").engine.state().index.signature_bytes == 0
