"""Glue between :class:`hippo.Memory` and :mod:`hippo.evidence`: candidate scores with their magnitudes, the
conversation's verbosity prior, and the packing order of a recall's candidates."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import numpy as np

from hippo import context, evidence

if TYPE_CHECKING:  # pragma: no cover
    from hippo.coindex import NamespaceIndex, Scored
    from hippo.memory import Memory

# The verbosity prior is a statistic of the whole conversation: recomputed when the namespace grew by this share.
_PRIOR_REFRESH = 0.01
_lock = threading.Lock()


def fused_scores(mem: "Memory", idx: "NamespaceIndex", query: str, raw: dict[str, "Scored"],
                 ranked: dict[str, np.ndarray], weights: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """Candidates of the lexical channel with their BM25 scores scaled to [0, 1] by the best one, best first."""
    lex = raw.get("lexical")
    rows = ranked.get("lexical", np.zeros(0, np.int64))
    if lex is None or rows.size == 0:
        return np.zeros(0, np.int64), np.zeros(0)
    scores = lex.scores[np.searchsorted(lex.rows, rows)]
    top = float(scores.max())
    scores = scores / top if top > 0 else scores
    order = np.lexsort((rows, -scores))
    return rows[order], scores[order]


def prior_of(idx: "NamespaceIndex", rows: np.ndarray) -> np.ndarray:
    """The verbosity prior (:func:`hippo.evidence.verbosity_prior`) of ``rows``, groups = (role, speaker)."""
    n = len(idx)
    cache = getattr(idx, "_verbosity_prior", None)
    if cache is None or n > cache[0] * (1.0 + _PRIOR_REFRESH) or n < cache[0]:
        lengths = idx.doc_lengths()[:n]
        groups = idx.role.view[:n].astype(np.int64) * (len(idx.speakers) + 1) + idx.speaker.view[:n]
        with _lock:
            cache = (n, evidence.verbosity_prior(lengths, groups), groups, evidence.verbosity_ratio(lengths, groups))
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


def order(idx: "NamespaceIndex", ids: list[int], rel: dict[int, float], by_id: dict[int, Any]) -> list[int]:
    """Message ids in packing order: expected evidence per token (:func:`hippo.evidence.packing_order`)."""
    if not ids:
        return []
    ids = sorted(ids, key=lambda k: (-rel[k], by_id[k].seq))  # rank order breaks ties
    scores = np.fromiter((rel[k] for k in ids), dtype=np.float64, count=len(ids))
    costs = np.fromiter((line_cost(by_id[k]) for k in ids), dtype=np.float64, count=len(ids))
    rows = np.fromiter((idx.row_of[k] for k in ids), dtype=np.int64, count=len(ids))
    prior = prior_of(idx, rows)
    a = evidence.cost_exponent(scores, ratio=idx._verbosity_prior[3])
    return [ids[j] for j in evidence.packing_order(scores, costs, prior, a).tolist()]


def line_cost(p: context.Piece) -> int:
    """Tokens a piece adds to a context: its text, its speaker prefix and the newline (headers are shared)."""
    return p.n_tokens + context._cached_count(context._prefix(p)) + 1

