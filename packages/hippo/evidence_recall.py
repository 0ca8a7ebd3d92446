"""Glue between :class:`hippo.Memory` and :mod:`hippo.evidence`: candidate scores with their magnitudes, the
conversation's verbosity prior, and the packing order of a recall's candidates.

With a user embedding (``Memory(embed=...)``), SimHash codes only find candidates: 256 bits estimate a cosine too
coarsely to re-rank them (the embedding was nearly lost in rank fusion). Each message also keeps its embedding
quantized to int8 (one byte per dimension: 384 bytes for MiniLM, beside its 32-byte code), and candidates are
re-scored by exact cosine against the query's float vector."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import numpy as np

from hippo import context, evidence
from hippo.errors import LLMError

if TYPE_CHECKING:  # pragma: no cover
    from hippo.coindex import NamespaceIndex, Scored
    from hippo.memory import Memory

# The verbosity prior is a statistic of the whole conversation: recomputed when the namespace grew by this share.
_PRIOR_REFRESH = 0.01
_lock = threading.Lock()


# Weight of the embedding's evidence next to the lexical one (both scaled to [0, 1]); chosen on the odd half of
# BEAM 1-10 and LoCoMo with all-MiniLM-L6-v2 (docs/retrieval.md).
W_DENSE = 0.5


def quantize(vectors) -> np.ndarray:
    """int8 rows of ``vectors`` scaled by their own largest component (cosine needs no scale back)."""
    mat = np.asarray(vectors, dtype=np.float32)
    if mat.ndim != 2 or not np.isfinite(mat).all():
        raise LLMError(f"embed returned shape {mat.shape} or non-finite values; expected finite (n, dim) vectors")
    peak = np.abs(mat).max(axis=1, keepdims=True)
    peak[peak == 0] = 1.0
    return np.rint(mat / peak * 127.0).astype(np.int8)


class DenseVectors:
    """int8 embeddings of one namespace's messages, by message id (append-only, rebuilt with the codes)."""

    def __init__(self) -> None:
        self.pos: dict[int, int] = {}
        self.blocks: list[np.ndarray] = []
        self.mat: np.ndarray | None = None
        self.norm: np.ndarray | None = None
        self.lock = threading.Lock()

    def add(self, ids: list[int], q8: np.ndarray) -> None:
        with self.lock:
            base = sum(b.shape[0] for b in self.blocks)
            self.blocks.append(np.ascontiguousarray(q8, dtype=np.int8))
            for k, i in enumerate(ids):
                self.pos[int(i)] = base + k
            self.mat = None

    def add_blobs(self, ids: list[int], blobs: list[bytes]) -> None:
        """Vectors stored after the codes; blobs written before dense re-scoring have none and are skipped."""
        dims = {len(b) for b in blobs if b}
        if len(dims) != 1:
            return
        dim = dims.pop()
        keep = [(i, b) for i, b in zip(ids, blobs) if len(b) == dim]
        arr = np.frombuffer(b"".join(b for _, b in keep), dtype=np.int8).reshape(len(keep), dim)
        self.add([i for i, _ in keep], arr)

    def cosines(self, ids: list[int], q: np.ndarray) -> np.ndarray:
        """Cosine of each message's vector with ``q``; NaN where a message has no vector."""
        with self.lock:
            if self.mat is None and self.blocks:
                self.mat = np.concatenate(self.blocks).astype(np.float32)
                self.norm = np.linalg.norm(self.mat, axis=1)
                self.norm[self.norm == 0] = 1.0
            mat, norm = self.mat, self.norm
        out = np.full(len(ids), np.nan)
        if mat is None or mat.shape[1] != q.size:
            return out
        pos = np.fromiter((self.pos.get(int(i), -1) for i in ids), dtype=np.int64, count=len(ids))
        ok = pos >= 0
        qn = q / (float(np.linalg.norm(q)) or 1.0)
        out[ok] = (mat[pos[ok]] @ qn) / norm[pos[ok]]
        return out


_qcache = threading.local()


def query_vector(shared: Any, query: str) -> np.ndarray:
    """The query's embedding (one call to the user's model per query, shared by the channels of one recall)."""
    got = getattr(_qcache, "last", None)
    if got is not None and got[0] is shared and got[1] == query:
        return got[2]
    mat = np.asarray(shared.embed([query]), dtype=np.float32)
    if mat.ndim != 2 or mat.shape[0] != 1 or mat.shape[1] == 0 or not np.isfinite(mat).all():
        raise LLMError(f"embed returned shape {mat.shape} or non-finite values for the query")
    _qcache.last = (shared, query, mat[0])
    return mat[0]


def fused_scores(mem: "Memory", idx: "NamespaceIndex", query: str, raw: dict[str, "Scored"],
                 ranked: dict[str, np.ndarray], weights: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """Candidates with magnitudes, best first: BM25 scaled to [0, 1] by the best candidate, plus (with a user
    embedding) ``W_DENSE`` times the cosine above the candidates' median, scaled to [0, 1] likewise."""
    lex = raw.get("lexical")
    lex_rows = ranked.get("lexical", np.zeros(0, np.int64))
    emb_rows = ranked.get("embedding", np.zeros(0, np.int64))
    rows = np.union1d(lex_rows, emb_rows).astype(np.int64) if emb_rows.size else np.asarray(lex_rows, np.int64)
    if rows.size == 0:
        return np.zeros(0, np.int64), np.zeros(0)
    scores = np.zeros(rows.size)
    if lex is not None and lex.rows.size:
        at = np.searchsorted(lex.rows, rows)
        hit = (at < lex.rows.size) & (lex.rows[np.minimum(at, lex.rows.size - 1)] == rows)
        scores[hit] = lex.scores[at[hit]]
        top = float(scores.max())
        scores = scores / top if top > 0 else scores
    dense = mem._s.dense.get(mem.namespace)
    if emb_rows.size and dense is not None and weights.get("embedding", 0) > 0:
        cos = dense.cosines(idx.ids.view[rows].tolist(), query_vector(mem._s, query))
        if np.isfinite(cos).any():
            cos = np.nan_to_num(cos, nan=float(np.nanmin(cos)))
            above = np.maximum(cos - float(np.median(cos)), 0.0)
            top = float(above.max())
            if top > 0:
                scores = scores + W_DENSE * above / top
    order = np.lexsort((rows, -scores))
    return rows[order], scores[order]


def prior_of(idx: "NamespaceIndex", rows: np.ndarray) -> np.ndarray:
    """The verbosity prior (:func:`hippo.evidence.verbosity_prior`) of ``rows``, groups = (role, speaker)."""
    n = len(idx)
    gen = idx.state.generation  # a delete renumbers rows: recompute rather than map old rows
    cache = getattr(idx, "_verbosity_prior", None)
    if cache is None or n > cache[0] * (1.0 + _PRIOR_REFRESH) or n < cache[0] or cache[4] != gen:
        lengths = idx.doc_lengths()[:n]
        groups = idx.role.view[:n].astype(np.int64) * (len(idx.speakers) + 1) + idx.speaker.view[:n]
        with _lock:
            cache = (n, evidence.verbosity_prior(lengths, groups), groups, evidence.verbosity_ratio(lengths, groups),
                     gen)
            idx._verbosity_prior = cache
    prior, groups = cache[1], cache[2]
    out = np.ones(rows.size)
    known = rows < prior.size
    out[known] = prior[rows[known]]
    if (~known).any():  # messages added since the last refresh: the prior of their group, when the group is known
        by_group = {int(g): float(p) for g, p in zip(groups.tolist(), prior.tolist())}
        new_groups = idx.role.view[rows[~known]].astype(np.int64) * (len(idx.speakers) + 1) + idx.speaker.view[rows[~known]]
        out[~known] = [by_group.get(int(g), 1.0) for g in new_groups.tolist()]
    return out


# A shortlist holds candidates in packing order until their estimated cost reaches this many budgets (slack for
# lines that will not fit, dormant messages and notes), and at least _SHORTLIST_MIN of them.
_SHORTLIST_BUDGETS = 3.0
_SHORTLIST_MIN = 48


def shortlist(idx: "NamespaceIndex", rows: np.ndarray, scores: np.ndarray, budget: int
              ) -> tuple[np.ndarray, np.ndarray, float]:
    """The candidates that can reach a context of ``budget`` tokens, in their input (rank) order, and the cost
    exponent of the whole candidate list. Costs are estimated from the span table (tokens + a 4-token prefix), so
    only the shortlist needs its pieces described and annotated."""
    rows = np.asarray(rows, dtype=np.int64)
    scores = np.asarray(scores, dtype=np.float64)
    if rows.size == 0:
        return rows, scores, 0.0
    prior = prior_of(idx, rows)
    a = evidence.cost_exponent(scores, ratio=idx._verbosity_prior[3])
    est = idx.doc_lengths()[rows].astype(np.float64) + 4.0
    keyed = evidence.packing_order(scores, est, prior, a)
    reach = np.cumsum(est[keyed])
    n = max(_SHORTLIST_MIN, int(np.searchsorted(reach, _SHORTLIST_BUDGETS * budget)) + 1)
    keep = np.sort(keyed[:n])
    return rows[keep], scores[keep], a


def order(idx: "NamespaceIndex", ids: list[int], rel: dict[int, float], by_id: dict[int, Any],
          exponent: float | None = None) -> list[int]:
    """Message ids in packing order: expected evidence per token (:func:`hippo.evidence.packing_order`).
    ``exponent`` is the cost exponent when the caller computed it over a longer candidate list."""
    if not ids:
        return []
    ids = sorted(ids, key=lambda k: (-rel[k], by_id[k].seq))  # rank order breaks ties
    scores = np.fromiter((rel[k] for k in ids), dtype=np.float64, count=len(ids))
    costs = np.fromiter((line_cost(by_id[k]) for k in ids), dtype=np.float64, count=len(ids))
    rows = np.fromiter((idx.row_of[k] for k in ids), dtype=np.int64, count=len(ids))
    prior = prior_of(idx, rows)
    a = exponent if exponent is not None else evidence.cost_exponent(scores, ratio=idx._verbosity_prior[3])
    return [ids[j] for j in evidence.packing_order(scores, costs, prior, a).tolist()]


def line_cost(p: context.Piece) -> int:
    """Tokens a piece adds to a context: its text, its speaker prefix and the newline (headers are shared)."""
    return p.n_tokens + context._cached_count(context._prefix(p)) + 1

