"""The session lift: BM25 over whole sessions (hippo.index.channels.sessions) and the factor it gives a message's
value (hippo.engine.evidence.session_lift / with_sessions), against a naive reference and hand computations."""

from __future__ import annotations

import numpy as np
import pytest

from hippo import Memory
from hippo.base.errors import InvalidInput
from hippo.engine import evidence
from hippo.engine.rank import rank
from hippo.engine.scope import scope_of
from hippo.index import channels
from hippo.text import textnorm, tokenizer
from hippo.text.query import analyze

from bm25ref import bm25

TURNS = [
    ("s1", "We drove to the coast and the kayak tour was cancelled by the storm."),
    ("s1", "The kayak guide promised another tour next month."),
    ("s1", "I bought waterproof boots for the next kayak tour."),
    ("s2", "My sister started a pottery class and glazed a teapot."),
    ("s2", "The kiln cracked her teapot, so she is making another."),
    (None, "A note without a session mentions the kayak once."),
    ("s3", "The storm flooded the garage; the boots survived."),
    ("s3", "Insurance covers the garage door but not the boots."),
]


def _store(**retrieval) -> Memory:
    mem = Memory(None, config={"retrieval": retrieval} if retrieval else None)
    mem.add_many({"text": t, "session_id": s, "speaker": "Ann" if k % 2 else "Bo"} for k, (s, t) in enumerate(TURNS))
    return mem


def _naive_sessions(mem: Memory, stems: list[str]) -> dict[str, float]:
    """BM25 over sessions: each session's reconstructed messages as one document (its length their tokens), the
    store's k1, the session b; messages without a session id belong to no document."""
    idx = mem.engine.state().index
    docs: dict[str, list[str]] = {}
    lengths: dict[str, int] = {}
    for r in range(len(idx)):
        sid = idx.sessions[int(idx.session.view[r])]
        if sid is None:
            continue
        text = idx.text_of(r)
        docs.setdefault(sid, []).extend(textnorm.stem(w) for w in textnorm.words(text))
        lengths[sid] = lengths.get(sid, 0) + len(tokenizer.encode(text))
    names = list(docs)
    got = bm25([[docs[sid].count(st) for sid in names] for st in stems], [lengths[sid] for sid in names],
               mem.config.retrieval.bm25_k1, channels.SESSION_B)
    return {sid: got.get(k, 0.0) for k, sid in enumerate(names)}


@pytest.mark.parametrize("question", ["kayak tour storm", "Where did my sister's teapot crack?", "boots garage"])
def test_session_bm25_matches_a_naive_reference(question):
    with _store() as mem:
        idx = mem.engine.state().index
        q = analyze(question)
        got = channels.sessions(idx, q, mem.config)
        want = _naive_sessions(mem, list(q.stems[: len(q.patterns) - q.supporting]))
        assert got.size == len(idx.sessions)
        for code, sid in enumerate(idx.sessions):
            assert got[code] == pytest.approx(want.get(sid, 0.0) if sid is not None else 0.0, rel=1e-9, abs=1e-12)
        assert got.max() > 0
        # the lexical channel's own occurrences (as a recall passes them) give the same statistics
        smoothed = channels.lexical(idx, q, mem.config, smooth=True)
        assert np.allclose(channels.sessions(idx, q, mem.config, smoothed), got, rtol=1e-12, atol=0)


def test_session_lift_by_hand():
    scores = [0.0, 2.0, 1.0, 0.0]
    tokens = [0.0, 1000.0, 3000.0, 2000.0]  # code 0 is not a session; mean of the others 2000
    assert evidence.session_lift(scores, tokens, 1000).tolist() == pytest.approx([1.0, 1.5, 1.25, 1.0])
    assert evidence.session_lift(scores, tokens, 4000).tolist() == pytest.approx([1.0, 2.0, 1.5, 1.0])
    assert evidence.session_lift(scores, tokens, 4000, weight=0.5).tolist() == pytest.approx([1.0, 1.5, 1.25, 1.0])
    # one session, or no match: nothing to prefer
    assert evidence.session_lift([0.0, 3.0], [0.0, 500.0], 1000).tolist() == [1.0, 1.0]
    assert evidence.session_lift([0.0, 0.0, 0.0], [0.0, 5.0, 9.0], 1000).tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("args", [
    ([1.0], [1.0, 2.0], 10, 1.0), ([-1.0, 1.0], [1.0, 2.0], 10, 1.0), ([1.0, 1.0], [1.0, float("nan")], 10, 1.0),
    ([1.0, 1.0], [1.0, 2.0], 0, 1.0), ([1.0, 1.0], [1.0, 2.0], True, 1.0), ([1.0, 1.0], [1.0, 2.0], 10, -1.0),
])
def test_session_lift_validates_its_input(args):
    with pytest.raises(InvalidInput):
        evidence.session_lift(*args[:3], weight=args[3])


def test_with_sessions_multiplies_each_score_by_its_sessions_lift():
    with _store() as mem:
        st = mem.engine.state()
        idx = st.index
        question = "kayak tour storm"
        ask = mem._ns.ask(st, question, scope_of(mem.config, question, None, None, None))
        rows = np.arange(len(idx), dtype=np.int64)
        scores = np.linspace(1.0, 0.3, rows.size)
        q = ask.terms
        ref = _naive_sessions(mem, list(q.stems[: len(q.patterns) - q.supporting]))
        top = max(ref.values())
        real = [sid for sid in idx.sessions if sid is not None]
        mean_tokens = sum(len(tokenizer.encode(idx.text_of(r))) for r in range(len(idx))
                          if idx.sessions[int(idx.session.view[r])] is not None) / len(real)
        for budget in (40, 5000):
            w = min(1.0, budget / mean_tokens)
            by_session = channels.sessions(idx, ask.terms, mem.config)
            got_rows, got_scores = evidence.with_sessions(st, rows, scores, budget, by_session)
            assert (np.diff(got_scores) <= 0).all()  # still best first
            got = dict(zip(got_rows.tolist(), got_scores.tolist()))
            for r, s in zip(rows.tolist(), scores.tolist()):
                sid = idx.sessions[int(idx.session.view[r])]
                lift = 1.0 if sid is None else 1.0 + w * ref[sid] / top
                assert got[r] == pytest.approx(s * lift, rel=1e-9)
    with _store(session_weight=0.0) as mem:  # turned off: unchanged
        st = mem.engine.state()
        ask = mem._ns.ask(st, "kayak", scope_of(mem.config, "kayak", None, None, None))
        rows, scores = np.arange(3), np.array([3.0, 2.0, 1.0])
        got_rows, got_scores = evidence.with_sessions(st, rows, scores, 100,
                                                      channels.sessions(st.index, ask.terms, mem.config))
        assert got_rows.tolist() == [0, 1, 2] and got_scores.tolist() == [3.0, 2.0, 1.0]


def test_session_weight_is_validated():
    for bad in (-0.1, 4.5, float("nan")):
        with pytest.raises(InvalidInput, match="session_weight"):
            Memory(None, config={"retrieval": {"session_weight": bad}})


def test_of_two_equal_matches_the_one_in_the_matching_session_goes_first():
    """The same sentence in two sessions matches a question alike; the copy in the session about the rest of the
    question (the kayak tour) moves ahead of the earlier copy, which the ranker's tie order put first. Neighbour
    smoothing is off, so the session lift alone decides."""
    turns = [("garage", "The storm flooded the garage."), ("garage", "I bought new boots yesterday."),
             ("kayak", "The kayak tour was cancelled by the storm."), ("kayak", "I bought new boots yesterday."),
             ("kayak", "The guide promised another kayak tour.")]
    for weight, first in ((0.0, 1), (1.0, 3)):
        with Memory(None, config={"retrieval": {"neighbor_weight": 0.0, "session_weight": weight}}) as mem:
            items = mem.add_many({"text": t, "session_id": s} for s, t in turns)
            q = "Which boots did I buy for the kayak tour?"
            ctx = mem.recall(q, budget_tokens=10_000)
            ids = [m.id for m in ctx.messages]
            # a context holds a text once: the copy the packing order puts first stands for both
            assert [i for i in ids if i in (items[1].id, items[3].id)] == [items[first].id]
            assert "user (2 times): I bought new boots yesterday." in ctx.text
            st = mem.engine.state()
            ask = mem._ns.ask(st, q, scope_of(mem.config, q, None, None, None))
            rows, scores, _, _ = rank(st, ask, 100, context=True, magnitudes=True)
            rows, scores = evidence.with_sessions(st, rows, scores, 10_000,
                                                  channels.sessions(st.index, ask.terms, mem.config))
            order = [r for r in rows.tolist() if r in (1, 3)]
            assert order[0] == first
