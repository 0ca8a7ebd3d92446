"""Search over several namespaces of one store with scores on one scale (``Memory.search_many``).

``Memory.search`` ranks within one namespace: BM25 and signature weights use that namespace's statistics and
reciprocal rank fusion (seed 002 §4.1, Eq. 3) uses ranks within it, so the best message of a two-message namespace
and the best of a thousand-message one both get the top fused score. Merging per-namespace results by score
therefore interleaves namespaces instead of ranking their messages. Here every channel scores each namespace's
messages with the statistics of the union (``channels.corpus_stats``), fusion uses each candidate's rank in the
union, and the time-and-truth and profile reweighting then run per namespace on those fused scores: a message ranks
where it would if the namespaces were one.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from hippo.base.types import Hit
from hippo.engine.namespace import Namespace, Predicate
from hippo.engine.rank import hits_of, preference_factors, profile_factors
from hippo.engine.runtime import Runtime
from hippo.engine.scope import Scope, ask, spelled
from hippo.engine.state import NamespaceState
from hippo.engine.truth import rank as truth_rank
from hippo.index import channels
from hippo.store.base import MessageRow


def _channel_ranks(per_ns: list[dict[int, float]], limit: int, *, ascending: bool = False
                   ) -> list[tuple[int, int]]:
    """``(namespace position, row)`` of the best ``limit`` candidates of all namespaces, best first; ties keep
    namespace order, then row (insertion) order, as ``channels.top`` does within one namespace."""
    flat = [(score if ascending else -score, i, row) for i, cand in enumerate(per_ns) for row, score in cand.items()]
    flat.sort()
    return [(i, row) for _, i, row in flat[:limit]]


def search_many(rt: Runtime, names: list[str], query: str, k: int, pred: Predicate | None, scope: Scope,
                priors: bool = True, vector: np.ndarray | None = None) -> list[Hit]:
    """The ``k`` best messages of the namespaces ``names`` (validated, distinct) for ``query``."""
    if not names:
        return []
    cfg = rt.config
    rc = cfg.retrieval
    # each channel's candidates: a search for more hits than ``candidate_limit`` (or a filtered one) gets them
    cap = max(rc.candidate_limit, k if pred is None and not scope.filters else k * 20)
    states = [Namespace(rt, ns).state() for ns in names]
    a = ask(states[0], rt.llm, query, scope, vector)
    idxs = [st.index for st in states]
    with rt.lock.read():
        if rc.misspellings:
            a = spelled(idxs, a)
        q = a.terms
        stats = channels.corpus_stats(idxs, q, cfg)
        ranked: dict[str, list[tuple[int, int]]] = {}
        lex, lex_scored = [], []
        # without priors, a question's named speakers weigh nothing more than their words and the speaker field
        lex_cfg = cfg if priors else dataclasses.replace(cfg, retrieval=dataclasses.replace(
            rc, addressed_names=False, unnamed_speakers=1.0))
        for idx in idxs:
            sc = channels.lexical(idx, q, lex_cfg, stats=stats)
            lex_scored.append(sc)
            lex.append(dict(zip(sc.rows.tolist(), sc.scores.tolist())))
        ranked["lexical"] = _channel_ranks(lex, cap)
        if priors:  # each namespace's messages of the period the question names (truth_rank.with_period)
            for i, (st, idx) in enumerate(zip(states, idxs)):
                top = np.asarray([row for j, row in ranked["lexical"] if j == i], dtype=np.int64)
                more = truth_rank.with_period(idx, st.truth, cfg.temporal, query, lex_scored[i], top, cap,
                                              scope.as_of, scope.asked)
                ranked["lexical"] += [(i, int(row)) for row in more[top.size:].tolist()]
        if rc.weight_signature > 0:
            sig = []
            for idx in idxs:
                sc = channels.signature(idx, q, cfg, stats=stats)
                sig.append(dict(zip(sc.rows.tolist(), sc.scores.tolist())))
            ranked["signature"] = _channel_ranks(sig, cap)
        if rt.embed is not None and rc.weight_embedding > 0:
            ranked["embedding"] = _embedding_ranks(rt, states, a.vector, cap)
        weights = {"lexical": rc.weight_lexical, "signature": rc.weight_signature, "embedding": rc.weight_embedding}
        fused: dict[tuple[int, int], float] = {}
        per: dict[tuple[int, int], dict[str, float]] = {}
        for name, keys in ranked.items():
            w = weights.get(name, 1.0)
            if w <= 0:
                continue
            for rank, key in enumerate(keys, start=1):
                score = w / (rc.rrf_k + rank)
                fused[key] = fused.get(key, 0.0) + score
                per.setdefault(key, {})[name] = score
        merged: list[tuple[float, int, int]] = []
        for i, (st, idx) in enumerate(zip(states, idxs)):
            cand = [(row, sc) for (j, row), sc in fused.items() if j == i]
            rows = np.asarray([r for r, _ in cand], dtype=np.int64)
            scores = np.asarray([sc for _, sc in cand], dtype=np.float64)
            if rows.size:
                order = np.lexsort((rows, -scores))
                rows, scores = rows[order], scores[order]
            st.truth.sync(idx)
            if priors:
                rows, scores, _ = truth_rank.adjust(idx, st.truth, cfg.temporal, query, rows, scores,
                                                    since=scope.since, until=scope.until, as_of=scope.as_of,
                                                    asked_at=scope.asked)
            elif scope.filters and rows.size:
                keep = truth_rank.time_filter(st.truth, rows, scope.since, scope.until, scope.as_of)
                rows, scores = rows[keep], scores[keep]
            if priors and rows.size:  # a factor of 1 leaves a score exactly as it was
                if rc.profile_prior:
                    scores = scores * profile_factors(st, query, rows)
                scores = scores * preference_factors(st, a, rows)
            merged.extend((float(sc), i, int(r)) for r, sc in zip(rows.tolist(), scores.tolist()))
        merged.sort(key=lambda t: (-t[0], t[1], t[2]))
        wide = pred is not None or scope.filters
        limit = max(k, 20) if not wide else max(k * 20, rc.candidate_limit)
        merged = _exact_first(idxs, query, merged[:limit])
        # the first k candidates of the union that pass the filter, and only they, are made hits (their texts
        # decoded): a filtered search over many namespaces used to build k hits in each and keep k of them all
        metas: list[dict[int, MessageRow]] = []
        for i, (st, idx) in enumerate(zip(states, idxs)):
            rows = np.asarray([row for _, j, row in merged if j == i], dtype=np.int64)
            metas.append(st.rows(idx.ids.view[rows].tolist() if rows.size else []))
        chosen: list[tuple[int, int]] = []
        kept: list[list[tuple[int, float, MessageRow]]] = [[] for _ in states]
        for sc, i, row in merged:
            meta = metas[i].get(int(idxs[i].ids.view[row]))
            if meta is None or (pred is not None and not pred(meta)):
                continue
            chosen.append((i, row))
            kept[i].append((row, sc, meta))
            if len(chosen) >= k:
                break
        made: dict[tuple[int, int], Hit] = {}
        for i, st in enumerate(states):
            if kept[i]:
                ns_per = {r: per.get((i, r), {}) for r, _, _ in kept[i]}
                made.update(((i, r), hit) for (r, _, _), hit in zip(kept[i], hits_of(st, kept[i], ns_per, a)))
        return [made[key] for key in chosen]


def _embedding_ranks(rt: Runtime, states: list[NamespaceState], vector: np.ndarray, limit: int
                     ) -> list[tuple[int, int]]:
    """Union ranking of the embedding channel: Hamming distances of one query code are comparable everywhere."""
    qcode = None
    per_ns: list[dict[int, float]] = []
    for st in states:
        codes = st.codes
        cand: dict[int, float] = {}
        if codes is not None and len(codes):
            if qcode is None:
                qcode = np.ascontiguousarray(rt.hasher.codes(vector[None, :], 1))
            for mid, d in codes.nearest(qcode, limit):
                row = st.index.row_of.get(mid)
                if row is not None:
                    cand[row] = float(d)
        per_ns.append(cand)
    return _channel_ranks(per_ns, limit, ascending=True)


def _exact_first(idxs: list, query: str, merged: list[tuple[float, int, int]]) -> list[tuple[float, int, int]]:
    """``rank.exact_first`` over the union: messages holding the whole query verbatim lead the top candidates."""
    needle = " ".join(query.split()).casefold()
    if len(needle) < 12 or len(merged) < 2:
        return merged
    head = min(len(merged), 20)
    exact = [needle in " ".join(idxs[i].text_of(row).split()).casefold() for _, i, row in merged[:head]]
    if not any(exact) or exact[0] and sum(exact) == 1:
        return merged
    order = [m for m, e in zip(merged[:head], exact) if e] + [m for m, e in zip(merged[:head], exact) if not e]
    order += merged[head:]
    # scores stay non-increasing down the list, as in rank.exact_first
    out, floor = [], None
    for sc, i, row in reversed(order):
        floor = sc if floor is None else max(floor, sc)
        out.append((floor, i, row))
    return out[::-1]
