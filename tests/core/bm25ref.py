"""A textbook BM25 (Robertson & Zaragoza) for reference checks: the tests build the documents' term frequencies
their own way (stems of reconstructed texts, sessions, CJK bigrams) and score them here."""

from __future__ import annotations

import math
from typing import Iterable, Sequence


def bm25(tf_per_term: Iterable[Sequence[int]], lengths: Sequence[float], k1: float, b: float,
         only: set[int] | None = None) -> dict[int, float]:
    """``{document: score}`` over the documents any term occurs in; ``tf_per_term`` holds, per query term, its
    frequency in every document (in the order of ``lengths``). With ``only``, only those documents are scored
    (document frequencies stay the whole collection's)."""
    n = len(lengths)
    avgdl = sum(lengths) / n
    out: dict[int, float] = {}
    for tf in tf_per_term:
        df = sum(1 for x in tf if x)
        if not df:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for d, x in enumerate(tf):
            if x and (only is None or d in only):
                out[d] = out.get(d, 0.0) + idf * x * (k1 + 1) / (x + k1 * (1 - b + b * lengths[d] / avgdl))
    return out
