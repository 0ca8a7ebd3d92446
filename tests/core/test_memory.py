"""Behaviour of hippo.Memory: lossless storage, retrieval, persistence, deletion, export, filters."""

from __future__ import annotations

import asyncio
import os
import stat
from datetime import datetime, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hippo
from hippo import Config, Memory
from hippo.base.errors import ClosedError, CorruptData, HippoError, InvalidInput, NotFound
from hippo.engine.rank import rank
from hippo.engine.scope import scope_of
from hippo.index import channels as retrieval
from hippo.text import textnorm, tokenizer
from hippo.text.query import analyze

from bm25ref import bm25

CONVO = [
    ("Ann", "s1", "2024-01-05T10:00:00", "I adopted a border collie named Pixel last weekend."),
    ("Bob", "s1", "2024-01-05T10:01:00", "Congrats! My cat Mochi hates dogs though."),
    ("Ann", "s1", "2024-01-05T10:02:00", "Pixel loves frisbees and long hikes in the hills."),
    ("Bob", "s2", "2024-02-11T18:00:00", "I started a pottery class at the community center."),
    ("Ann", "s2", "2024-02-11T18:01:00", "Pottery sounds fun, what are you making?"),
    ("Bob", "s2", "2024-02-11T18:02:00", "A blue glazed teapot for my grandmother's birthday."),
    ("Ann", "s3", "2024-03-20T09:30:00", "We hiked the Cascade ridge trail with Pixel yesterday."),
    ("Bob", "s3", "2024-03-20T09:31:00", "The teapot cracked in the kiln, so I'm making another one."),
]


def _fill(mem: Memory) -> list[hippo.MemoryItem]:
    return mem.add_many(
        {"text": t, "speaker": s, "session_id": sid, "timestamp": ts, "metadata": {"n": k}}
        for k, (s, sid, ts, t) in enumerate(CONVO)
    )


@pytest.fixture
def mem():
    m = Memory(None)
    _fill(m)
    yield m
    m.close()


def test_add_returns_item_and_get_reconstructs_text(mem):
    item = mem.add("Remember: the wifi password is hunter2.", speaker="Ann", role="user")
    assert item.text == "Remember: the wifi password is hunter2."
    got = mem.get(item.id)
    assert got.text == item.text and got.speaker == "Ann" and got.role == "user"
    assert got.n_tokens == len(tokenizer.encode(item.text))


texts = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\x01\x02\x03\x04\x05\x06\x07\x08"
                           "\x0b\x0c\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f"),
    min_size=1, max_size=200,
).filter(lambda s: s.strip())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(texts, min_size=1, max_size=8))
def test_lossless_round_trip_any_unicode(batch):
    with Memory(None) as m:
        items = m.add_many({"text": t} for t in batch)
        for it, t in zip(items, batch):
            assert m.get(it.id).text == t


def test_exact_quote_is_top_hit(mem):
    for s, sid, ts, t in CONVO:
        hits = mem.search(t, k=3)
        assert hits and hits[0].text == t


def test_search_ranks_by_rare_keyword(mem):
    hits = mem.search("What did Bob glaze?", k=3)
    assert "teapot" in hits[0].text or "glazed" in hits[0].text
    hits = mem.search("kiln", k=1)
    assert hits[0].text.startswith("The teapot cracked")


def _naive_bm25(mem: Memory, stems: list[str], word_stem, rows: set[int] | None = None) -> dict[int, float]:
    """Reference BM25 over the reconstructed texts (words stemmed by ``word_stem``), with the store's k1 / b;
    with ``rows``, only those messages are scored (document frequencies stay the whole namespace's)."""
    idx = mem.engine.state().index
    docs = [idx.text_of(r) for r in range(len(idx))]
    doc_stems = [[word_stem(w) for w in textnorm.words(d)] for d in docs]
    return bm25([[ds.count(st_) for ds in doc_stems] for st_ in stems], [len(tokenizer.encode(d)) for d in docs],
                mem.config.retrieval.bm25_k1, mem.config.retrieval.bm25_b, rows)


def test_lexical_channel_matches_bm25_reference():
    """BM25 from Content-DWM counts equals a naive BM25 over the reconstructed texts with the same term rules."""
    mem = Memory(None, config={"retrieval": {"neighbor_weight": 0.0}})
    _fill(mem)
    idx = mem.engine.state().index
    query = "Pixel pottery teapot kiln frisbees"
    q = analyze(query)
    got = retrieval.lexical(idx, q, mem.config)
    got_scores = dict(zip(got.rows.tolist(), got.scores.tolist()))
    speakers = {textnorm.stem(s.lower()) for s, *_ in CONVO}
    assert not set(q.stems) & speakers
    expected = _naive_bm25(mem, q.stems, textnorm.stem)
    assert set(got_scores) == set(expected)
    for r in expected:
        assert got_scores[r] == pytest.approx(expected[r], rel=1e-9)


def test_question_keeps_the_askers_first_person_words():
    # hand-computed: content words in order, then the first-person words the question uses
    assert analyze("Can you remind me what I said about my dog?").keywords == ["remind", "said", "dog", "me", "i", "my"]
    assert analyze("What did Caroline paint?").keywords == ["Caroline", "paint"]
    assert analyze("What did I say about my dog?", self_reference=False).keywords == ["say", "dog"]
    assert analyze("How am I?").keywords == ["How", "am", "I"]          # only stopwords: every word, as before
    assert analyze("my dog", ["dog"]).keywords == ["dog"]               # explicit keywords are taken as given


def test_first_person_words_add_to_the_messages_the_question_found():
    """'I' / 'my' in a question are BM25 terms counted only in messages the question's other words found (a
    naive BM25 over the reconstructed texts is the reference); alone they find nothing."""
    mem = Memory(None, config={"retrieval": {"neighbor_weight": 0.0}})
    _fill(mem)
    idx = mem.engine.state().index
    q = analyze("What did I say about my teapot or the kiln?")
    assert q.stems[-2:] == ["i", "my"] and q.supporting == 2
    got = retrieval.lexical(idx, q, mem.config)
    got_scores = dict(zip(got.rows.tolist(), got.scores.tolist()))

    # "I'm" holds the word "I" (tokens "I", "'m"; the apostrophe ends the word), "Mochi" does not (" M", "och", "i")
    def word_stem(w: str) -> str:
        return textnorm.stem(w.lower().split("'")[0])

    content = _naive_bm25(mem, q.stems[:-2], word_stem)
    expected = dict(content)
    for r, v in _naive_bm25(mem, q.stems[-2:], word_stem, set(content)).items():
        expected[r] += v
    everyone = _naive_bm25(mem, q.stems[-2:], word_stem)
    assert set(everyone) - set(content)   # some messages say only "I" / "my"
    assert set(got_scores) == set(content)
    for r in expected:
        assert got_scores[r] == pytest.approx(expected[r], rel=1e-9)
    assert any(expected[r] > content[r] for r in content)   # the first person lifted at least one of them
    # a question of first-person words alone keeps them as its (only) terms
    assert analyze("How am I?").supporting == 0


def test_recall_fits_budget_and_groups_by_session(mem):
    r = mem.recall("Pixel hikes", budget_tokens=80)
    assert r.tokens == tokenizer.count_tokens(r.text) <= 80
    assert any("Pixel" in m.text for m in r.messages)
    for m in r.messages:
        assert m.text in r.text
    # sessions appear in time order, each under its date header
    assert "[5 January 2024]" in r.text and "[20 March 2024]" in r.text
    assert r.text.index("[5 January 2024]") < r.text.index("[20 March 2024]")
    assert r.text.index("[20 March 2024]") < r.text.index("We hiked the Cascade")


@pytest.mark.parametrize("budget", [1, 5, 30, 2000])
def test_recall_budget_never_exceeded(mem, budget):
    r = mem.recall("teapot kiln grandmother pottery Pixel", budget_tokens=budget)
    assert tokenizer.count_tokens(r.text) <= budget
    assert r.tokens <= budget


def test_filters(mem):
    hits = mem.search("Pixel teapot", k=10, filter={"speaker": "Bob"})
    assert hits and all(h.speaker == "Bob" for h in hits)
    hits = mem.search("Pixel teapot", k=10, filter={"n": {"$gte": 5}})
    assert hits and all(h.metadata["n"] >= 5 for h in hits)
    items = mem.list(filter={"timestamp": {"$lt": datetime(2024, 2, 1, tzinfo=timezone.utc)}})
    assert [i.metadata["n"] for i in items] == [0, 1, 2]
    assert [i.metadata["n"] for i in mem.list(limit=2, offset=3)] == [3, 4]
    with pytest.raises(InvalidInput, match="filter"):
        mem.search("x", filter={"n": {"$regex": "a"}})
    with pytest.raises(InvalidInput, match="filter"):
        mem.search("x", filter=["speaker"])


def test_read_neighbours_stay_in_session(mem):
    items = mem.list()
    around = mem.read(items[1].id, before=5, after=5)
    assert [i.session_id for i in around] == ["s1", "s1", "s1"]
    assert [i.id for i in around] == [items[0].id, items[1].id, items[2].id]


def test_read_neighbours_of_interleaved_sessions():
    # two threads of one user written in turns (and a note without a session among them): a message's neighbours
    # are its session's previous and next messages, whatever was written between them
    m = Memory(None)
    sessions = ["a", "b", "a", None, "b", "a", "a", "b", None, "a", "b"]
    ids = [m.add(f"message {n}", session_id=s).id for n, s in enumerate(sessions)]
    stored = m.list()
    for n, mid in enumerate(ids):
        for before, after in [(0, 0), (1, 1), (2, 1), (0, 3), (10, 10)]:
            same = [i.id for i in stored if i.session_id == sessions[n]]  # the reference: the session in order
            at = same.index(mid)
            want = same[max(0, at - before): at + after + 1]
            assert [i.id for i in m.read(mid, before=before, after=after)] == want, (n, before, after)
    m.close()


def test_delete_leaves_no_ghost_hits(mem):
    victim = mem.search("kiln", k=1)[0]
    assert mem.delete(victim.id) == 1
    assert all(h.id != victim.id for h in mem.search("teapot cracked kiln", k=10))
    with pytest.raises(NotFound):
        mem.get(victim.id)
    assert mem.delete(victim.id) == 0
    # everything else still reconstructs exactly
    remaining = {t for *_, t in CONVO} - {victim.text}
    assert {i.text for i in mem.list()} == remaining


def test_forget_and_clear(mem):
    assert mem.forget({"speaker": "Bob"}) == 4
    assert {i.speaker for i in mem.list()} == {"Ann"}
    assert mem.clear() == 4
    assert mem.count() == 0 and mem.search("Pixel") == []


def test_namespaces_are_isolated(mem):
    other = mem.using("other")
    other.add("Pixel is also the name of my phone.", speaker="Cy")
    assert all(h.namespace == "default" for h in mem.search("Pixel", k=20))
    assert [h.speaker for h in other.search("Pixel", k=20)] == ["Cy"]
    first = mem.list()[0]
    with pytest.raises(NotFound):
        other.get(first.id)
    assert set(mem.namespaces()) == {"default", "other"}
    assert mem.delete_namespace("other") == 1
    assert mem.namespaces() == ["default"]


@pytest.mark.parametrize("seal_tokens", [1, 16, 100_000])
def test_reopen_gives_identical_results(tmp_path, seal_tokens):
    path = tmp_path / "m.db"
    cfg = {"seal_tokens": seal_tokens}
    with Memory(path, config=cfg) as m:
        _fill(m)
        m.delete(m.search("kiln", k=1)[0].id)
        before = [(h.id, h.text, round(h.score, 12)) for h in m.search("Pixel teapot pottery", k=10)]
        rec = m.recall("Pixel teapot", budget_tokens=100).text
        listing = [(i.id, i.text, i.timestamp, i.metadata) for i in m.list()]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with Memory(path, config=cfg) as m:
        assert [(h.id, h.text, round(h.score, 12)) for h in m.search("Pixel teapot pottery", k=10)] == before
        assert m.recall("Pixel teapot", budget_tokens=100).text == rec
        assert [(i.id, i.text, i.timestamp, i.metadata) for i in m.list()] == listing


def test_sealed_chunks_and_tail_load_together(tmp_path):
    path = tmp_path / "m.db"
    with Memory(path, config={"seal_tokens": 40}) as m:
        _fill(m)
        sizes = m.engine.rt.store.sizes()
        assert sizes["chunks"] >= 1
        m.add("A late unsealed note about the Cascade ridge.", speaker="Ann")
        m.engine.rt.store.close()  # simulate a crash: no seal on close
        m.engine.rt.closed = True
    with Memory(path) as m:
        assert m.count() == len(CONVO) + 1
        assert m.search("late unsealed note", k=1)[0].text.startswith("A late unsealed")


def test_another_writer_is_seen(tmp_path):
    path = tmp_path / "m.db"
    a, b = Memory(path), Memory(path)
    try:
        first = a.add("first message from a")
        assert b.search("first message", k=1)[0].text == "first message from a"
        b.add("second message from b")
        assert a.search("second message", k=1)[0].text == "second message from b"
        assert a.delete(first.id) == 1
        assert [i.text for i in b.list()] == ["second message from b"]
    finally:
        a.close()
        b.close()


def test_export_import_round_trip(mem, tmp_path):
    out = tmp_path / "export.jsonl"
    assert mem.export(out) == len(CONVO)
    other = mem.using("copy")
    assert other.import_(out) == len(CONVO)
    assert [(i.text, i.speaker, i.timestamp, i.metadata, i.session_id) for i in other.list()] == [
        (i.text, i.speaker, i.timestamp, i.metadata, i.session_id) for i in mem.list()
    ]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "something-else"}\n')
    with pytest.raises(CorruptData):
        other.import_(bad)
    assert other.count() == len(CONVO)


def test_async_twins(mem):
    async def go():
        item = await mem.aadd("async hello from the loop", speaker="Ann")
        hits, rec = await asyncio.gather(mem.asearch("async hello", k=1), mem.arecall("async hello"))
        return item, hits, rec

    item, hits, rec = asyncio.run(go())
    assert hits[0].id == item.id and item.text in rec.text


def test_embedding_channel_uses_simhash_codes():
    vocab = ["dog", "cat", "pottery", "hike"]

    def embed(texts):
        return [[float(w in t.lower()) + 0.01 * k for k, w in enumerate(vocab)] for t in texts]

    with Memory(None, embed=embed) as m:
        _fill(m)
        hits = m.search("pottery", k=3)
        assert any("embedding" in h.channels for h in hits)
        assert m.engine.state().codes.index.bits == m.config.embed_bits


def test_a_given_query_embedding_is_what_the_embedding_channel_searches():
    """``query_embedding``: the embedding channel searches with the caller's vector (the store's embedding is not
    asked for the query), the other channels with the query's words. Oracles: a store whose embedding gives the
    query that very vector answers the same; and, hand-computed, the embedding channel's best message holds the
    word the vector stands for (the messages holding one word have equal vectors, hence equal SimHash codes)."""
    vocab = ["dog", "cat", "pottery", "hike"]
    question = "tell me more"
    asked: list[str] = []

    def vectors(texts):
        out = [[float(w in t.lower()) for w in vocab] for t in texts]
        return [v if any(v) else [-0.5] * len(vocab) for v in out]

    def embed(texts):
        asked.extend(texts)
        return vectors(texts)

    with Memory(None, embed=embed) as m:
        _fill(m)
        asked.clear()
        for k, word in enumerate(vocab):
            vector = [float(j == k) for j in range(len(vocab))]
            hits = m.search(question, k=8, query_embedding=vector)
            best = max(hits, key=lambda h: h.channels.get("embedding", 0.0))
            assert word in best.text.lower()
            rec = m.recall(question, budget_tokens=40, query_embedding=vector)
            with Memory(None, embed=lambda texts, v=vector: [v if t == question else vectors([t])[0]
                                                               for t in texts]) as oracle:
                _fill(oracle)
                assert [(h.id, h.score) for h in hits] == [(h.id, h.score) for h in oracle.search(question, k=8)]
                assert rec.text == oracle.recall(question, budget_tokens=40).text
        assert question not in asked
        for bad in ("1 2", [1.0, float("nan")], [[1.0, 2.0]], [], [True, False], {"a": 1}, 3.0):
            with pytest.raises(InvalidInput, match="query_embedding"):
                m.search(question, query_embedding=bad)
            with pytest.raises(InvalidInput, match="query_embedding"):
                m.recall(question, query_embedding=bad)
        # another model's vector (the stored ones have four dimensions) would rank by noise
        with pytest.raises(InvalidInput, match="query_embedding has 3 dimensions.*\\[4\\]"):
            m.search(question, query_embedding=[1.0, 0.0, 0.0])
        with pytest.raises(InvalidInput, match="query_embedding has 5 dimensions"):
            m.recall(question, query_embedding=[1.0] * 5)
    with Memory(None) as plain, pytest.raises(InvalidInput, match="query_embedding.*no embedding"):
        plain.search(question, query_embedding=[1.0, 0.0])


@pytest.mark.parametrize(
    "call, exc, word",
    [
        (lambda m: m.add(""), InvalidInput, "text"),
        (lambda m: m.add("   \n"), InvalidInput, "text"),
        (lambda m: m.add(123), InvalidInput, "text"),
        (lambda m: m.add("bad \ud800 surrogate"), InvalidInput, "surrogate"),
        (lambda m: m.add("bell \x07 char"), InvalidInput, "control"),
        (lambda m: m.add("ok", role="robot"), InvalidInput, "role"),
        (lambda m: m.add("ok", timestamp=float("nan")), InvalidInput, "timestamp"),
        (lambda m: m.add("ok", timestamp="yesterday-ish"), InvalidInput, "timestamp"),
        (lambda m: m.add("ok", timestamp=1e18), InvalidInput, "timestamp"),
        (lambda m: m.add("ok", metadata={"x": float("nan")}), InvalidInput, "metadata"),
        (lambda m: m.add("ok", metadata={1: 2}), InvalidInput, "metadata"),
        (lambda m: m.add("ok", priority="urgent"), InvalidInput, "priority"),
        (lambda m: m.add_many([{"text": "fine"}, {"text": ""}]), InvalidInput, "items[1]"),
        (lambda m: m.add_many("not a list"), InvalidInput, "items"),
        (lambda m: m.search("x", k=0), InvalidInput, "k"),
        (lambda m: m.search("x", k=-3), InvalidInput, "k"),
        (lambda m: m.search("", k=3), InvalidInput, "query"),
        (lambda m: m.recall("x", budget_tokens=float("nan")), InvalidInput, "budget_tokens"),
        (lambda m: m.recall("x", budget_tokens=-1), InvalidInput, "budget_tokens"),
        (lambda m: m.recall("x", budget_tokens="10"), InvalidInput, "budget_tokens"),
        (lambda m: m.get(10**9), NotFound, "id"),
        (lambda m: m.get("1"), InvalidInput, "id"),
        (lambda m: m.read(10**9), NotFound, "id"),
        (lambda m: m.delete("1"), InvalidInput, "ids"),
        (lambda m: m.using(""), InvalidInput, "namespace"),
        (lambda m: m.forget({}), InvalidInput, "filter"),
    ],
)
def test_bad_input_is_rejected_and_nothing_changes(mem, call, exc, word):
    before = [(i.id, i.text) for i in mem.list()]
    with pytest.raises(exc) as info:
        call(mem)
    assert isinstance(info.value, HippoError)
    assert word in str(info.value)
    assert [(i.id, i.text) for i in mem.list()] == before


@pytest.mark.parametrize("llm", [-1, object(), [1], {"base_url": 5}, {"nope": 1}, ""])
def test_a_bad_llm_is_refused_when_given_and_creates_no_file(tmp_path, llm):
    path = tmp_path / "m.db"
    with pytest.raises(InvalidInput, match="llm"):
        Memory(path, llm=llm)
    assert not path.exists()
    with Memory(None) as m:
        m.add("hello world")
        with pytest.raises(InvalidInput, match="llm"):
            m.agentic_recall("hello", llm=llm)


def test_huge_text_is_stored_or_rejected_cleanly():
    with Memory(None, config={"max_message_chars": 1000}) as m:
        with pytest.raises(InvalidInput, match="too long"):
            m.add("x" * 1001)
        assert m.count() == 0
    big = ("lorem ipsum dolor sit amet " * 40_000)[:1_000_000]
    with Memory(None) as m:
        item = m.add(big)
        assert m.get(item.id).text == big


def test_closed_memory_raises():
    m = Memory(None)
    m.close()
    with pytest.raises(ClosedError):
        m.add("x")


def test_config_validation():
    with pytest.raises(InvalidInput, match="unknown"):
        Memory(None, config={"nope": 1})
    with pytest.raises(InvalidInput, match="bits"):
        Memory(None, config={"signature": {"bits": 40}})
    assert Config.from_value({"retrieval": {"bm25_k1": 1.5}}).retrieval.bm25_k1 == 1.5


def test_config_sections_given_as_dicts_to_the_constructor():
    # docs/api.md writes Config(retrieval={"session_weight": 1.0}) and Config(gate={"enabled": True}): a section
    # given as a dict is read as Config.from_value reads it, not kept as a dict that add / recall then trip over
    cfg = Config(gate={"enabled": True}, retrieval={"standing_share": 0.0}, hierarchy={"recall": "flat"})
    assert cfg.gate.enabled and cfg.retrieval.standing_share == 0.0 and cfg.hierarchy.recall == "flat"
    assert cfg == Config.from_value({"gate": {"enabled": True}, "retrieval": {"standing_share": 0.0},
                                     "hierarchy": {"recall": "flat"}})
    with Memory(None, config=cfg) as mem:
        assert mem.add("ok").id == -1  # the gate is on: a short message is rejected
        assert mem.add("I decided to move to Berlin on March 3rd to work at Siemens.").id > 0
        assert mem.recall("Berlin").tokens > 0


_BAD_SETTINGS = [
    (None, "synchronous", "normal"), (None, "seal_tokens", "x"), (None, "seal_tokens", 0), (None, "seal_tokens", 1.5),
    (None, "busy_timeout_s", float("nan")), (None, "busy_timeout_s", -1.0), (None, "embed_bits", 7),
    (None, "max_loaded_namespaces", True), (None, "max_message_chars", -1), (None, "timestamp_min_year", 0),
    (None, "timestamp_max_year", 10_000), ("retrieval", "bm25_k1", float("nan")), ("retrieval", "candidate_limit", 0),
    ("retrieval", "rrf_k", 1.5), ("retrieval", "misspellings", 1), ("signature", "bits", 99),
    ("signature", "radius", -1), ("temporal", "window_boost", 0.5), ("temporal", "annotate", "no"),
    ("hierarchy", "flush_gap_s", "x"), ("hierarchy", "enabled", "no"), ("decay", "enabled", "no"),
    ("gate", "enabled", 1),
]


@pytest.mark.parametrize("section, key, value", _BAD_SETTINGS)
def test_config_built_directly_refuses_what_a_dict_refuses(section, key, value):
    """Config(seal_tokens=...) and RetrievalConfig(bm25_k1=...) are checked as Config.from_value({...}) checks the
    same setting (they were taken as given: a seal_tokens of "x" made every add raise TypeError after its commit)."""
    from dataclasses import fields

    given = {key: value} if section is None else {section: {key: value}}
    with pytest.raises(InvalidInput) as reference:
        Config.from_value(given)
    where = "config" if section is None else f"config.{section}"
    assert where in str(reference.value) and key in str(reference.value)
    if section is None:
        build = lambda: Config(**given)  # noqa: E731
    else:
        section_type = {f.name: f.default_factory for f in fields(Config)}[section]
        build = lambda: section_type(**{key: value})  # noqa: E731
    with pytest.raises(InvalidInput) as direct:
        build()
    assert where in str(direct.value) and key in str(direct.value)


def test_config_built_directly_keeps_good_settings():
    from hippo import RetrievalConfig

    cfg = Config(busy_timeout_s=5, seal_tokens=64, retrieval=RetrievalConfig(bm25_k1=2, candidate_limit=50))
    assert cfg == Config.from_value({"busy_timeout_s": 5, "seal_tokens": 64,
                                     "retrieval": {"bm25_k1": 2, "candidate_limit": 50}})
    assert type(cfg.busy_timeout_s) is float and type(cfg.retrieval.bm25_k1) is float
    with Memory(None, config=cfg) as mem:
        mem.add("hello world")
        assert [h.text for h in mem.search("hello")] == ["hello world"]
    with pytest.raises(InvalidInput, match="nope"):
        Config(retrieval={"nope": 1})
    with pytest.raises(InvalidInput, match="standing_share"):
        Config(retrieval={"standing_share": 2.0})
    with pytest.raises(InvalidInput, match="config.decay"):
        Config(decay=[1, 2])


@pytest.mark.parametrize("field, value", [
    ("bm25_k1", -0.1), ("bm25_k1", float("nan")), ("bm25_b", 1.5), ("rrf_k", 0), ("weight_lexical", -1.0),
    ("weight_embedding", float("inf")), ("enumerate_limit", 0), ("candidate_limit", 0), ("candidate_limit", -5),
    ("neighbor_weight", -2.0), ("neighbor_span", -1), ("neighbor_span", 100),
])
def test_retrieval_config_refuses_values_out_of_range_and_names_them(field, value):
    with pytest.raises(InvalidInput, match=field):
        Memory(None, config={"retrieval": {field: value}})


def test_retrieval_config_needs_one_channel_with_weight():
    with pytest.raises(InvalidInput, match="weight_lexical"):
        Memory(None, config={"retrieval": {"weight_lexical": 0.0, "weight_signature": 0.0, "weight_embedding": 0.0}})
    # the edges of each range are accepted, and the store answers with them
    with Memory(None, config={"retrieval": {"candidate_limit": 1, "enumerate_limit": 1, "rrf_k": 1,
                                            "neighbor_span": 0, "neighbor_weight": 0.0, "bm25_b": 1.0,
                                            "weight_lexical": 0.0, "weight_embedding": 1.0,
                                            "weight_signature": 1.0}}) as mem:
        mem.add("the greyhound rescue in Portland")
        assert [h.text for h in mem.search("greyhound rescue")] == ["the greyhound rescue in Portland"]


def test_update_metadata_in_place(mem):
    first = mem.list()[0]
    updated = mem.update(first.id, metadata={"tag": "pinned"})
    assert updated.id == first.id and updated.text == first.text and updated.metadata == {"tag": "pinned"}
    assert mem.list(filter={"tag": "pinned"})[0].id == first.id
    with pytest.raises(NotFound):
        mem.update(10**9, metadata={})
    with pytest.raises(InvalidInput, match="metadata"):
        mem.update(first.id, metadata={"x": float("inf")})
    assert mem.get(first.id).metadata == {"tag": "pinned"}
    assert hippo.count_tokens("hello world") == 2


def test_neighbour_smoothing_hand_computed():
    """Each message gains weight * (best same-session neighbour's score), halving per step away."""
    plain = Memory(None, config={"retrieval": {"neighbor_weight": 0.0}})
    smooth = Memory(None, config={"retrieval": {"neighbor_weight": 0.5, "neighbor_span": 2, "neighbor_b": 0.3}})
    for m in (plain, smooth):
        _fill(m)
    q = analyze("kiln")
    base = retrieval.lexical(plain.engine.state().index, q, plain.config)
    got = retrieval.lexical(smooth.engine.state().index, q, smooth.config, smooth=True)
    (kiln_row,) = base.rows.tolist()  # only the last message (s3, row 7) says "kiln"
    s = base.scores[0]
    expected = {kiln_row: s, kiln_row - 1: 0.5 * s}  # row 6 is in s3 too; row 5 is in s2 (no credit)
    assert dict(zip(got.rows.tolist(), got.scores.tolist())) == pytest.approx(expected)


def test_a_neighbour_lends_its_score_as_standard_bm25_normalises_its_length():
    """What a message lends is its BM25 score with ``neighbor_b`` as b (0.75 by default), while its own score keeps
    ``bm25_b``: the lender's length, charged when it is packed, is not passed on to the neighbour for free."""
    plain = Memory(None, config={"retrieval": {"neighbor_weight": 0.0}})
    standard = Memory(None, config={"retrieval": {"neighbor_weight": 0.0, "bm25_b": 0.75}})
    smooth = Memory(None, config={"retrieval": {"neighbor_weight": 0.5, "neighbor_span": 2}})
    assert smooth.config.retrieval.neighbor_b == 0.75 and smooth.config.retrieval.bm25_b == 0.3
    for m in (plain, standard, smooth):
        _fill(m)
    q = analyze("kiln")
    own = retrieval.lexical(plain.engine.state().index, q, plain.config)
    lent = retrieval.lexical(standard.engine.state().index, q, standard.config)
    got = retrieval.lexical(smooth.engine.state().index, q, smooth.config, smooth=True)
    (kiln_row,) = own.rows.tolist()
    assert lent.scores[0] != pytest.approx(own.scores[0])  # the kiln message is not of average length
    expected = {kiln_row: own.scores[0], kiln_row - 1: 0.5 * lent.scores[0]}
    assert dict(zip(got.rows.tolist(), got.scores.tolist())) == pytest.approx(expected)
    with pytest.raises(InvalidInput, match="neighbor_b"):
        Memory(None, config={"retrieval": {"neighbor_b": 1.5}})


def test_exact_quote_moves_first_even_when_bm25_prefers_another():
    with Memory(None) as m:
        decoy = m.add("station car near blue; blue station near car, car blue station near")
        target = m.add("We left the car near the blue station and walked home.")
        query = "car near the blue station"
        state = m.engine.state()
        idx = state.index
        rows, _, _, _ = rank(state, m.engine.ask(state, query, scope_of(m.config, query)), 2)
        assert idx.ids.view[rows[0]] == decoy.id  # BM25 alone prefers the term-stuffed message
        assert [h.id for h in m.search(query, k=2)] == [target.id, decoy.id]


def test_frequent_term_enumeration_is_bounded_to_newest_occurrences():
    with Memory(None, config={"retrieval": {"enumerate_limit": 5}}) as m:
        items = m.add_many({"text": f"note number {i} about the garden"} for i in range(40))
        idx = m.engine.state().index
        got = retrieval.lexical(idx, analyze("garden"), m.config)
        assert sorted(idx.ids.view[got.rows].tolist()) == [it.id for it in items[-5:]]


def test_stopword_only_query_still_matches():
    with Memory(None) as m:
        m.add("hello there, how are you?", speaker="Ann")
        m.add("The garden needs watering.", speaker="Bob")
        assert m.search("hello", k=1)[0].speaker == "Ann"
        assert "hello there" in m.recall("hello", budget_tokens=50).text


# -- budgets: every budgeted text is within its budget, counted in cl100k ---------------------------------------
_budget_words = st.sampled_from(["cat", "Pixel", "teapot", "🐱", "猫", "émigré", "ORD-00042", "  ", "\n", "!!", "42",
                                 "👩‍👩‍👧‍👦", "naïve", "x" * 40])
_budget_texts = st.lists(_budget_words, min_size=1, max_size=30).map(" ".join).filter(lambda s: s.strip())


@settings(max_examples=40, deadline=None)
@given(st.lists(_budget_texts, min_size=0, max_size=6), st.integers(min_value=1, max_value=120),
       st.sampled_from(["evidence", "flat", "full"]))
def test_recall_text_never_exceeds_its_budget(batch, budget, mode):
    """Recall's text, counted with the tokenizer its budget is defined in, is within the budget at any budget,
    tiny or odd, in every recall mode; a budget too small for any message gives an empty text."""
    with Memory(None, config={"hierarchy": {"recall": mode}}) as m:
        if batch:
            m.add_many({"text": t, "speaker": "Ann" if k % 2 else None, "session_id": f"s{k % 3}",
                        "timestamp": 1_700_000_000 + 3600 * k} for k, t in enumerate(batch))
        r = m.recall("cat Pixel 🐱 猫 ORD-00042", budget_tokens=budget)
        assert tokenizer.count_tokens(r.text) == r.tokens <= budget
        assert all(item.text in r.text for item in r.messages)


@pytest.mark.parametrize("budget", [1, 2, 5, 17, 300])
def test_recall_budget_with_huge_and_emoji_messages(budget):
    with Memory(None) as m:
        m.add_many([{"text": "cat " * 50_000}, {"text": "🐱" * 2000 + " cat"}, {"text": "a cat"}])
        r = m.recall("cat 🐱", budget_tokens=budget)
        assert tokenizer.count_tokens(r.text) <= budget
        empty = m.using("nothing-here").recall("cat", budget_tokens=budget)
        assert empty.text == "" and empty.tokens == 0


@pytest.mark.parametrize("clock", [1_700_000_000.1234563, 1_700_000_000.1234567, 1_700_000_000.9999996])
def test_a_message_s_created_at_names_its_own_ingestion(monkeypatch, clock):
    """``MemoryItem.created_at`` is the ingestion time ``as_of`` and ``created_at`` filters compare with, so passing
    it back names the message itself: ``{"created_at": item.created_at}`` matches it and ``as_of=item.created_at``
    keeps it, whatever the clock read below the microsecond a datetime holds (the three clocks round down, up and
    into the next second)."""
    import types

    from hippo.engine import prepare

    monkeypatch.setattr(prepare, "time", types.SimpleNamespace(time=lambda: clock))
    mem = Memory(None)
    item = mem.add("The harbour ferry leaves at nine.")
    assert mem.get(item.id).created_at == item.created_at
    assert [m.id for m in mem.list(filter={"created_at": item.created_at})] == [item.id]
    assert [m.id for m in mem.list(filter={"created_at": {"$lte": item.created_at.isoformat()}})] == [item.id]
    assert [h.id for h in mem.search("harbour ferry", as_of=item.created_at)] == [item.id]
    assert [m.id for m in mem.recall("harbour ferry", as_of=item.created_at.timestamp()).messages] == [item.id]


def test_colon_memory_is_an_in_memory_store_as_in_sqlite(tmp_path, monkeypatch):
    """Memory(":memory:") is what Memory(None) is, as SQLite names a private in-memory database: it wrote a file
    called ":memory:" into the working directory, which every such handle there then shared."""
    monkeypatch.chdir(tmp_path)
    with Memory(":memory:") as first, Memory(":memory:") as second:
        first.add("I moved to Porto in April.")
        assert first.path is None and second.count() == 0
        assert [h.text for h in first.search("Porto")] == ["I moved to Porto in April."]
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(InvalidInput):
        Memory(":memory:", read_only=True)
    assert list(tmp_path.iterdir()) == []
    with Memory("./:memory:") as on_disk:  # a file of that name is still reachable by a path that says so
        on_disk.add("kept")
    assert (tmp_path / ":memory:").exists()


@pytest.mark.parametrize("field, value", [("speaker", "a\x01"), ("role", "robot"), ("timestamp", "next week"),
                                          ("metadata", {"x": float("nan")}), ("metadata", {"event_time": 1e13}),
                                          ("priority", "urgent"), ("session_id", 5), ("event_time", "soon")])
def test_add_many_names_the_item_and_field_it_refuses(field, value):
    """An add_many of a thousand messages refused with "speaker contains control character ..." left the caller to
    find which message: every field is named with its item's place, as the text already was."""
    with Memory(None) as mem:
        items = [{"text": f"message {i}"} for i in range(50)]
        items[41] = {"text": "the bad one", field: value}
        with pytest.raises(InvalidInput, match=rf"^items\[41\]\.{field}\b"):
            mem.add_many(items)
        assert mem.count() == 0
        with pytest.raises(InvalidInput, match=rf"^{field}\b"):  # add names its own argument
            mem.add("the bad one", **{field: value})


def test_numpy_numbers_in_a_filter_match_as_the_numbers_they_are():
    """``forget({"id": {"$in": list(ids)}})`` with ids from a numpy array forgot nothing (and ``$nin`` kept nothing
    out): numpy's integers were looked up as no number at all. The reference is the same filter with Python ints."""
    import numpy as np

    with Memory(None) as mem:
        ids = np.array([mem.add(f"message {i}", metadata={"n": i, "x": i / 2}).id for i in range(6)])
        for spec in ({"id": {"$in": list(ids[:3])}}, {"n": {"$in": list(np.arange(3))}},
                     {"n": {"$nin": list(np.arange(3))}}, {"x": {"$in": [np.float64(0.5), np.float32(1.0)]}},
                     {"n": np.int64(2)}, {"n": {"$gte": np.int64(4)}}):
            plain = {k: ({op: ([w.item() for w in v] if isinstance(v, list) else v.item()) for op, v in c.items()}
                         if isinstance(c, dict) else c.item()) for k, c in spec.items()}
            got, expected = [m.id for m in mem.list(filter=spec)], [m.id for m in mem.list(filter=plain)]
            assert got == expected and expected, (spec, got, expected)
        assert mem.forget({"id": {"$in": list(ids[:2])}}) == 2 and mem.count() == 4


@pytest.mark.parametrize("spec, where", [
    ({"speaker": "numpy"}, "filter['speaker']"), ({"n": {"$gt": "numpy"}}, "filter['n']['$gt']"),
    ({"n": {"$in": ["numpy"]}}, "filter['n']['$in']"), ({"n": {"$not": "numpy"}}, "filter['n']['$not']"),
])
def test_a_numpy_array_in_a_filter_is_refused_by_its_place(spec, where):
    """An array operand raised numpy's ValueError ("the truth value of an array ... is ambiguous") at the first
    message compared."""
    import re

    import numpy as np

    def arrays(value):
        if value == "numpy":
            return np.array([1, 2])
        if isinstance(value, dict):
            return {k: arrays(v) for k, v in value.items()}
        return [arrays(v) for v in value] if isinstance(value, list) else value

    with Memory(None) as mem:
        mem.add("hello", speaker="Ann", metadata={"n": 1})
        for call in (lambda f: mem.list(filter=f), lambda f: mem.search("hello", filter=f), lambda f: mem.forget(f)):
            with pytest.raises(InvalidInput, match="^" + re.escape(where) + " must be a JSON value"):
                call(arrays(spec))
        assert mem.count() == 1


def test_calls_made_from_an_export_progress_callback_answer(tmp_path):
    from tests.export_callback import check_calls_made_from_an_export_progress_callback_answer

    check_calls_made_from_an_export_progress_callback_answer(str(tmp_path / "m.db"), tmp_path)
