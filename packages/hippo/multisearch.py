"""Search over several namespaces of one store with scores on one scale (``Memory.search_many``).

``Memory.search`` ranks within one namespace: BM25 and signature weights use that namespace's statistics and
reciprocal rank fusion (seed 002 §4.1, Eq. 3) uses ranks within it, so the best message of a two-message namespace
and the best of a thousand-message one both get the top fused score. Merging per-namespace results by score
therefore interleaves namespaces instead of ranking their messages. Here every channel scores each namespace's
messages with the statistics of the union (``retrieval.corpus_stats``), fusion uses each candidate's rank in the
union, and the time-and-truth and profile reweighting then run per namespace on those fused scores: a message ranks
where it would if the namespaces were one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

from hippo import retrieval
from hippo.errors import InvalidInput
from hippo.filters import compile_filter
from hippo.hierarchy import lifecycle
from hippo.truth import rank as truth_rank

if TYPE_CHECKING:
    from hippo.memory import Memory
    from hippo.types import Hit


def _names(namespaces: Any) -> list[str]:
    from hippo.memory import _check_namespace

    if isinstance(namespaces, (str, bytes)) or not isinstance(namespaces, Iterable):
        raise InvalidInput(f"namespaces must be an iterable of namespace names, got {type(namespaces).__name__}")
    out: list[str] = []
    for ns in namespaces:
        ns = _check_namespace(ns, "namespaces")
        if ns not in out:
            out.append(ns)
    return out


def _channel_ranks(per_ns: list[dict[int, float]], limit: int, *, ascending: bool = False
                   ) -> list[tuple[int, int]]:
    """``(namespace position, row)`` of the best ``limit`` candidates of all namespaces, best first; ties keep
    namespace order, then row (insertion) order, as ``retrieval.top`` does within one namespace."""
    flat = [(score if ascending else -score, i, row) for i, cand in enumerate(per_ns) for row, score in cand.items()]
    flat.sort()
    return [(i, row) for _, i, row in flat[:limit]]


def search_many(mem: "Memory", namespaces: Iterable[str], query: str, *, k: int = 10,
                filter: dict[str, Any] | None = None, since: Any = None, until: Any = None,
                as_of: Any = None, priors: bool = True) -> list["Hit"]:
    from hippo.memory import _SCOPE, _check_int

    mem._live()
    names = _names(namespaces)
    query = mem._check_query(query)
    k = _check_int(k, "k", minimum=1)
    if not isinstance(priors, bool):
        raise InvalidInput(f"priors must be a bool, got {type(priors).__name__}")
    pred = compile_filter(filter)
    scope = mem._scope(query, since, until, as_of)
    if not names:
        return []
    s = mem._s
    cfg = s.config
    rc = cfg.retrieval
    views = [mem.using(ns) for ns in names]
    idxs = [v._index() for v in views]
    token = _SCOPE.set(scope)
    try:
        with s.lock.read():
            q = retrieval.analyze(query, lifecycle.keywords(mem, query))
            stats = retrieval.corpus_stats(idxs, q, cfg)
            channels: dict[str, list[tuple[int, int]]] = {}
            lex = []
            for idx in idxs:
                sc = retrieval.lexical(idx, q, cfg, stats=stats)
                lex.append(dict(zip(sc.rows.tolist(), sc.scores.tolist())))
            channels["lexical"] = _channel_ranks(lex, rc.candidate_limit)
            if rc.weight_signature > 0:
                sig = []
                for idx in idxs:
                    sc = retrieval.signature(idx, q, cfg, stats=stats)
                    sig.append(dict(zip(sc.rows.tolist(), sc.scores.tolist())))
                channels["signature"] = _channel_ranks(sig, rc.candidate_limit)
            if s.embed is not None and rc.weight_embedding > 0:
                channels["embedding"] = _embedding_ranks(mem, names, idxs, query, rc.candidate_limit)
            weights = {"lexical": rc.weight_lexical, "signature": rc.weight_signature,
                       "embedding": rc.weight_embedding}
            fused: dict[tuple[int, int], float] = {}
            per: dict[tuple[int, int], dict[str, float]] = {}
            for name, ranked in channels.items():
                w = weights.get(name, 1.0)
                if w <= 0:
                    continue
                for rank, key in enumerate(ranked, start=1):
                    score = w / (rc.rrf_k + rank)
                    fused[key] = fused.get(key, 0.0) + score
                    per.setdefault(key, {})[name] = score
            merged: list[tuple[float, int, int]] = []
            for i, (view, idx) in enumerate(zip(views, idxs)):
                cand = [(row, sc) for (j, row), sc in fused.items() if j == i]
                rows = np.asarray([r for r, _ in cand], dtype=np.int64)
                scores = np.asarray([sc for _, sc in cand], dtype=np.float64)
                if rows.size:
                    order = np.lexsort((rows, -scores))
                    rows, scores = rows[order], scores[order]
                idx.truth.sync(idx)
                if priors:
                    rows, scores, _ = truth_rank.adjust(idx, idx.truth, cfg.temporal, query, rows, scores,
                                                        since=scope.since, until=scope.until, as_of=scope.as_of)
                elif scope.filters and rows.size:
                    keep = truth_rank.time_filter(idx.truth, rows, scope.since, scope.until, scope.as_of)
                    rows, scores = rows[keep], scores[keep]
                if priors and rc.profile_prior and rows.size:
                    factors = view._profile_factors(idx, query, rows)
                    if (factors != 1.0).any():
                        scores = scores * factors
                merged.extend((float(sc), i, int(r)) for r, sc in zip(rows.tolist(), scores.tolist()))
            merged.sort(key=lambda t: (-t[0], t[1], t[2]))
            wide = pred is not None or scope.filters
            limit = max(k, 20) if not wide else max(k * 20, rc.candidate_limit)
            merged = _exact_first(idxs, query, merged[:limit])
            hits: list[tuple[int, Hit]] = []
            for i, (view, idx) in enumerate(zip(views, idxs)):
                mine = [(pos, row, sc) for pos, (sc, j, row) in enumerate(merged) if j == i]
                if not mine:
                    continue
                rows = np.asarray([row for _, row, _ in mine], dtype=np.int64)
                scores = np.asarray([sc for _, _, sc in mine], dtype=np.float64)
                ns_per = {row: per.get((i, row), {}) for _, row, _ in mine}
                place = {int(idx.ids.view[row]): pos for pos, row, _ in mine}
                for hit in view._hits(idx, rows, scores, ns_per, pred, k, scope):
                    hits.append((place[hit.id], hit))
            hits.sort(key=lambda t: t[0])
            return [h for _, h in hits[:k]]
    finally:
        _SCOPE.reset(token)


def _embedding_ranks(mem: "Memory", names: list[str], idxs: list, query: str, limit: int) -> list[tuple[int, int]]:
    """Union ranking of the embedding channel: Hamming distances of one query code are comparable everywhere."""
    s = mem._s
    qcode = None
    per_ns: list[dict[int, float]] = []
    for ns, idx in zip(names, idxs):
        entry = s.codes.get(ns)
        cand: dict[int, float] = {}
        if entry is not None and len(entry[0]):
            if qcode is None:
                qcode = np.ascontiguousarray(s.hasher.codes(s.embed_query([query]), 1))
            dist, ids = entry[0].search(qcode, min(limit, len(entry[0])))
            for d, j in zip(dist[0].tolist(), ids[0].tolist()):
                row = idx.row_of.get(entry[1][j]) if j >= 0 else None
                if row is not None:
                    cand[row] = float(d)
        per_ns.append(cand)
    return _channel_ranks(per_ns, limit, ascending=True)


def _exact_first(idxs: list, query: str, merged: list[tuple[float, int, int]]) -> list[tuple[float, int, int]]:
    """``Memory._exact_first`` over the union: messages holding the whole query verbatim lead the top candidates."""
    needle = " ".join(query.split()).casefold()
    if len(needle) < 12 or len(merged) < 2:
        return merged
    head = min(len(merged), 20)
    exact = [needle in " ".join(idxs[i].text_of(row).split()).casefold() for _, i, row in merged[:head]]
    if not any(exact) or exact[0] and sum(exact) == 1:
        return merged
    order = [m for m, e in zip(merged[:head], exact) if e] + [m for m, e in zip(merged[:head], exact) if not e]
    order += merged[head:]
    # scores stay non-increasing down the list, as in Memory._exact_first
    out, floor = [], None
    for sc, i, row in reversed(order):
        floor = sc if floor is None else max(floor, sc)
        out.append((floor, i, row))
    return out[::-1]
