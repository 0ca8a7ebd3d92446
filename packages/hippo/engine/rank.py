"""Ranking of one namespace's messages for a question: the candidate channels (lexical BM25 over the Content DWM,
Hamming-ball signatures, optional embedding codes) fused by weighted RRF (seed 002 Eq. 3), then reweighted by
time and truth (seed 002 §4.1 stage 9), by the speaker-profile prior (stage 9, ``f_L0``) and, for a request for
advice, by the user's stated preferences."""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

from hippo.base.types import Hit
from hippo.engine import evidence
from hippo.engine.items import event_datetime, make_item
from hippo.engine.scope import Ask
from hippo.engine.state import NamespaceState
from hippo.engine.truth import rank as truth_rank
from hippo.index import channels
from hippo.index.coindex import Scored
from hippo.store.base import MessageRow
from hippo.text import directives


def rank(state: NamespaceState, ask: Ask, limit: int, *, context: bool = False, magnitudes: bool = False,
         repeated: set[int] | None = None, left_out: np.ndarray | None = None
         ) -> tuple[np.ndarray, np.ndarray, dict, dict]:
    """``(rows, scores, per-channel scores, timings)``, best first, at most ``limit`` rows; the per-channel scores
    are by row (RRF) or, with ``magnitudes``, each channel's :class:`~hippo.index.coindex.Scored`. With
    ``context`` (building a recall context) lexical scores borrow from conversational neighbours, and each
    channel's candidates are distinct texts (:func:`hippo.index.channels.top_texts`): the rows that stand for
    copies are added to ``repeated``; a text whose kept copies are all in ``left_out`` (rows a recall excludes,
    ascending) or out of the question's time scope keeps its best copy that is neither too. With
    ``magnitudes`` the channels are fused by their scores (:func:`hippo.engine.evidence.fused_scores`) instead of
    their ranks: the evidence packer needs how far apart candidates are. Caller holds the read lock."""
    cfg = state.config
    rc = cfg.retrieval
    idx = state.index
    q = ask.terms
    cap = max(rc.candidate_limit, limit)  # each channel's candidates: a search for more hits than that gets them
    # A context holds each text once: so do the candidate lists it is built from (copies of a text are one
    # candidate, its best-scored copy, noted in ``repeated``). A search lists messages, copies among them.
    distinct = idx if context else None

    scope = ask.scope

    def leaves_out(cands: np.ndarray) -> np.ndarray:
        """Which of ``cands`` the recall will not show: excluded, or out of its time scope."""
        out = np.isin(cands, left_out) if left_out is not None and left_out.size else np.zeros(cands.size, bool)
        if scope.filters:
            state.truth.sync(idx)
            out |= ~truth_rank.time_filter(state.truth, cands, scope.since, scope.until, scope.as_of)
        return out

    def best(scored: Scored) -> np.ndarray:
        if not context:
            return channels.top(scored, cap)
        rows, stands = channels.top_texts(scored, cap, idx, leaves_out)
        if repeated is not None:
            repeated.update(stands.tolist())
        return rows

    t0 = time.perf_counter()
    timings: dict[str, float] = {}
    ranked: dict[str, np.ndarray] = {}
    raw: dict[str, Scored] = {}
    t = time.perf_counter()
    raw["lexical"] = channels.lexical(idx, q, cfg, smooth=context)
    ranked["lexical"] = truth_rank.with_period(idx, state.truth, cfg.temporal, ask.text, raw["lexical"],
                                               best(raw["lexical"]), cap,
                                               ask.scope.as_of, ask.scope.asked, distinct, repeated)
    timings["lexical_ms"] = (time.perf_counter() - t) * 1e3
    if rc.weight_signature > 0:
        t = time.perf_counter()
        raw["signature"] = channels.signature(idx, q, cfg)
        ranked["signature"] = best(raw["signature"])
        timings["signature_ms"] = (time.perf_counter() - t) * 1e3
    if state.host.embed is not None and rc.weight_embedding > 0:
        t = time.perf_counter()
        ranked["embedding"] = embedding_rows(state, ask, cap, best if context else None)
        timings["embedding_ms"] = (time.perf_counter() - t) * 1e3
    weights = {"lexical": rc.weight_lexical, "signature": rc.weight_signature, "embedding": rc.weight_embedding}
    if magnitudes:
        rows, scores = evidence.fused_scores(state, ask, raw, ranked, weights)
        per: dict = raw
    else:
        rows, scores, per = channels.rrf(ranked, weights, rc.rrf_k)
    t = time.perf_counter()
    state.truth.sync(idx)
    rows, scores, _fired = truth_rank.adjust(idx, state.truth, cfg.temporal, ask.text, rows, scores,
                                             since=scope.since, until=scope.until, as_of=scope.as_of,
                                             asked_at=scope.asked)
    if rc.profile_prior and rows.size:
        # seed 002 stage 9 f_L0: questions about a person's preferences or identity favour that person's own
        # attribute statements (a bounded factor; the identity for every other query)
        rows, scores = _reweighted(rows, scores, profile_factors(state, ask.text, rows))
    if rows.size:
        rows, scores = _reweighted(rows, scores, preference_factors(state, ask, rows))
    timings["truth_ms"] = (time.perf_counter() - t) * 1e3
    timings["rank_ms"] = (time.perf_counter() - t0) * 1e3
    return rows[:limit], scores[:limit], per, timings


def embedding_rows(state: NamespaceState, ask: Ask, limit: int,
                   texts: Callable[[Scored], np.ndarray] | None = None) -> np.ndarray:
    """Rows whose embedding codes are nearest the query's (XOR-popcount), nearest first. With ``texts`` (a
    channel's list of distinct texts: :func:`rank` with ``context``), the ``limit`` nearest are taken from the
    nearest codes, more of them read until they hold ``limit`` rows or every code: the copies of one text share
    their code, and thousands of them would fill the list."""
    codes = state.codes
    if codes is None or len(codes) == 0 or ask.vector is None:
        return np.zeros(0, np.int64)
    qcode = state.host.hasher.codes(ask.vector[None, :], 1)
    idx = state.index
    k = limit
    while True:
        got = codes.nearest(qcode, k)
        pairs = [(idx.row_of.get(i), d) for i, d in got]
        rows = np.asarray([r for r, _ in pairs if r is not None], dtype=np.int64)
        if texts is None:
            return rows
        dist = np.asarray([d for r, d in pairs if r is not None], dtype=np.float64)
        kept = texts(Scored(rows, -dist))  # nearest first, ties: the earlier message first
        if kept.size >= limit or len(got) < k:
            return kept
        k *= 4


def embedding_code(state: NamespaceState, ask: Ask) -> np.ndarray:
    """The query's SimHash code as 64-bit words (compared with units built from user embeddings)."""
    return np.ascontiguousarray(state.host.hasher.codes(ask.vector[None, :], 1)).view(np.uint64).reshape(-1)


def _reweighted(rows: np.ndarray, scores: np.ndarray, factors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, scores)`` with the scores times ``factors``, best first again; as they were where every factor is 1."""
    if not (factors != 1.0).any():
        return rows, scores
    scores = scores * factors
    order = np.argsort(-scores, kind="stable")
    return rows[order], scores[order]


def profile_factors(state: NamespaceState, query: str, rows: np.ndarray) -> np.ndarray:
    """The profile prior's factor per candidate row (1.0 unless the query asks about a person's traits)."""
    rows = np.asarray(rows, dtype=np.int64)
    # The intent check needs only the speakers' names: the full profile index (every message read) is built the
    # first time a query actually asks about a known speaker's preferences or identity, never for other queries
    # (nor for a question about traits that names no speaker the store knows, where every factor is 1: "What should
    # I consider ...?" in a user / assistant chat).
    speaker, asks = state.profile_names().query_intent(query)
    if not asks or speaker is None:
        return np.ones(rows.size, dtype=np.float64)
    return state.profiles().boost(query, state.index.ids.view[rows])


def preference_factors(state: NamespaceState, ask: Ask, rows: np.ndarray) -> np.ndarray:
    """Per candidate row: ``1 + config.retrieval.asker_preferences`` for a message stating its writer's preference
    (:func:`hippo.engine.evidence.preference_rows`) when the question asks the assistant for advice, in the first
    or second person (:func:`hippo.text.directives.asks_for_advice`); 1.0 for every other row and question. "I'm
    looking for something easy to carry around. What would you suggest?" is answered by "I prefer e-books for
    their portability", which shares almost none of its words; "What did I say about e-books?" recounts, and is
    not."""
    rows = np.asarray(rows, dtype=np.int64)
    out = np.ones(rows.size, dtype=np.float64)
    share = state.config.retrieval.asker_preferences
    if share <= 0 or rows.size == 0 or not directives.asks_for_advice(ask.text):
        return out
    stated = evidence.preference_rows(state)
    if stated.size:
        out[np.isin(rows, stated)] = 1.0 + share
    return out


def exact_first(state: NamespaceState, query: str, rows: np.ndarray, scores: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """A message that contains the whole query verbatim (case-insensitive) is the strongest cue there is: such
    messages move ahead of the rest among the top candidates, keeping their relative order."""
    idx = state.index
    needle = " ".join(query.split()).casefold()
    if len(needle) < 12 or rows.size < 2:
        return rows, scores
    head = min(rows.size, 20)
    exact = np.array([needle in " ".join(idx.text_of(r).split()).casefold() for r in rows[:head].tolist()])
    if not exact.any() or exact[0] and exact.sum() == 1:
        return rows, scores
    order = np.concatenate([np.flatnonzero(exact), np.flatnonzero(~exact), np.arange(head, rows.size)])
    return rows[order], np.maximum.accumulate(scores[order][::-1])[::-1]


def hits(state: NamespaceState, rows: np.ndarray, scores: np.ndarray, per: dict, pred, k: int, ask: Ask
         ) -> list[Hit]:
    """The first ``k`` ranked rows that pass ``pred``, as :class:`Hit` with their time-and-truth fields."""
    ids = state.index.ids.view[rows].tolist() if rows.size else []
    meta: dict[int, MessageRow] = state.rows(ids)
    kept: list[tuple[int, float, MessageRow]] = []
    for r, sc, i in zip(rows.tolist(), scores.tolist(), ids):
        row = meta.get(i)
        if row is None or (pred is not None and not pred(row)):
            continue
        kept.append((r, sc, row))
        if len(kept) >= k:
            break
    return hits_of(state, kept, per, ask)


def hits_of(state: NamespaceState, kept: list[tuple[int, float, MessageRow]], per: dict, ask: Ask) -> list[Hit]:
    """``kept`` (``(row, score, store row)`` each) as :class:`Hit` with their texts and time-and-truth fields."""
    idx = state.index
    truth = state.truth
    scope = ask.scope
    texts = idx.texts_of([r for r, _, _ in kept])  # one read of the Content DWM for all of them
    out: list[Hit] = []
    for (r, sc, row), text in zip(kept, texts):
        nxt = truth.superseder(r, scope.as_of, scope.until, idx.ts.a)
        out.append(make_item(row, text, Hit, score=float(sc), channels=dict(per.get(r, {})),
                             event_time=event_datetime(idx, r, float(truth.event_mid(np.asarray([r]))[0])),
                             superseded_by=int(idx.ids.a[nxt]) if nxt >= 0 else None,
                             surprise=round(float(truth.surprise.a[r]), 4),
                             salience=round(float(truth.salience.a[r]), 4)))
    return out
