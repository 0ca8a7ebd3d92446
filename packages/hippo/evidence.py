"""Spending a context budget on what is likely to be evidence.

A recalled context is a knapsack: each candidate message has a cost (its tokens in the context) and a value (the
probability that it is evidence for the question). Filling the budget by expected evidence per token,
``p_i / cost_i``, is the greedy solution of that knapsack. Ranking alone (``p_i`` order) wastes the budget on long
messages when the ranker is unsure; packing by a fixed value per token (``score / sqrt(tokens)``) wastes it on short
filler when the ranker is sure. Nothing here is fitted per data set: the estimates come from the question's own
score distribution and from the conversation itself.

* **Value.** The lexical relevance of a message (BM25 over the Content DWM, with neighbour smoothing and the
  time-and-truth factors) scaled by a *verbosity prior*: in a conversation where one speaker writes much longer
  messages than the other (an assistant's elaborations next to a user's short statements), a token of the verbose
  speaker is less likely to be the evidence a later question asks about. The prior is
  ``sqrt(median tokens of all messages / median tokens of this speaker's messages)``: 1 when speakers write alike
  (a chat between two people), below 1 for the verbose side, estimated from the conversation without labels.
* **Cost.** A message costs ``tokens ** a``; ``a`` is how much the question's ranking leaves to chance. When the
  scores are peaked (a few messages far above the rest) the best match is probably the evidence whatever its
  length, and ``a`` goes to 0; when they are flat, several short matches are a better bet than one long one, and
  ``a`` rises to its ceiling. Peakedness is ``score of the k-th candidate / best score``. The ceiling is
  ``max_exponent * (1 + ln r)``, where ``r`` (>= 1) is how much longer the verbose speaker's median message is than
  the conversation's: where one side elaborates at length, a message's value grows more slowly than its length, so
  length should count more; where everyone writes alike (r = 1) the ceiling is ``max_exponent``.

The functions work on numpy arrays of candidates and return orders; the caller packs whole messages in that order,
skipping what does not fit.
"""

from __future__ import annotations

import numpy as np

from hippo.errors import InvalidInput

__all__ = ["verbosity_prior", "verbosity_ratio", "cost_exponent", "packing_order"]

PEAK_K = 20            # peakedness compares the best score with the (PEAK_K + 1)-th
MAX_EXPONENT = 0.4     # cost exponent ceiling where speakers write alike (chosen on the odd half, docs/retrieval.md)


def _as_1d(x, name: str, dtype=np.float64) -> np.ndarray:
    try:
        arr = np.asarray(x, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"{name} must be a 1-d array of numbers: {exc}") from exc
    if arr.ndim != 1:
        raise InvalidInput(f"{name} must be 1-d, got shape {arr.shape}")
    return arr


def verbosity_prior(lengths, groups) -> np.ndarray:
    """Per-message prior ``sqrt(median(lengths) / median(lengths of the message's group))``.

    ``lengths`` are token counts of every message of the conversation, ``groups`` an integer code per message (its
    speaker or role). Groups whose median is at or below the overall median get exactly 1: a terse speaker is not
    favoured over the others, only a verbose one is discounted.
    """
    n = _as_1d(lengths, "lengths")
    g = _as_1d(groups, "groups", np.int64)
    if n.size != g.size:
        raise InvalidInput(f"lengths and groups must have the same length, got {n.size} and {g.size}")
    out = np.ones(n.size)
    if n.size == 0:
        return out
    if (n < 0).any() or not np.isfinite(n).all():
        raise InvalidInput("lengths must be finite and >= 0")
    overall = max(float(np.median(n)), 1.0)
    for code in np.unique(g).tolist():
        sel = g == code
        med = max(float(np.median(n[sel])), 1.0)
        if med > overall:
            out[sel] = (overall / med) ** 0.5
    return out


def verbosity_ratio(lengths, groups) -> float:
    """``r >= 1``: the largest group median of ``lengths`` over the overall median (1 when groups write alike)."""
    n = _as_1d(lengths, "lengths")
    g = _as_1d(groups, "groups", np.int64)
    if n.size != g.size:
        raise InvalidInput(f"lengths and groups must have the same length, got {n.size} and {g.size}")
    if n.size == 0:
        return 1.0
    overall = max(float(np.median(n)), 1.0)
    return max(1.0, max(float(np.median(n[g == code])) for code in np.unique(g).tolist()) / overall)


def cost_exponent(scores, *, ratio: float = 1.0, k: int = PEAK_K, max_exponent: float = MAX_EXPONENT) -> float:
    """How strongly cost counts for this question: ``max_exponent * (1 + ln ratio) * min(1, s_k / s_1)``, at most 1.

    Peaked scores (the ``k``-th best far below the best) give a small exponent, flat scores the ceiling. With
    fewer than ``k`` positive candidates there is nothing to choose among and the exponent is 0 (rank order)."""
    s = _as_1d(scores, "scores")
    if k < 1:
        raise InvalidInput(f"k must be >= 1, got {k}")
    if not 0.0 <= max_exponent <= 1.0:
        raise InvalidInput(f"max_exponent must be in [0, 1], got {max_exponent}")
    if not (np.isfinite(ratio) and ratio >= 1.0):
        raise InvalidInput(f"ratio must be a finite number >= 1, got {ratio}")
    pos = s[np.isfinite(s) & (s > 0)]
    if pos.size <= k:
        return 0.0
    part = -np.partition(-pos, k)  # part[k] is the (k+1)-th best, part[:k] the better ones
    best, kth = float(part[:k + 1].max()), float(part[k])
    return min(1.0, max_exponent * (1.0 + float(np.log(ratio))) * min(1.0, kth / best))


def packing_order(scores, costs, prior=None, exponent: float = 0.5) -> np.ndarray:
    """Indices of candidates in order of expected evidence per token, ``scores * prior / costs ** exponent``.

    Ties keep the input order (the ranker's), so with ``exponent = 0`` and a flat prior this is the rank order."""
    s = _as_1d(scores, "scores")
    c = _as_1d(costs, "costs")
    if s.size != c.size:
        raise InvalidInput(f"scores and costs must have the same length, got {s.size} and {c.size}")
    if s.size and (not np.isfinite(c).all() or (c <= 0).any()):
        raise InvalidInput("costs must be finite and > 0")
    if not np.isfinite(exponent) or exponent < 0:
        raise InvalidInput(f"exponent must be finite and >= 0, got {exponent}")
    value = np.nan_to_num(s, nan=0.0, posinf=0.0, neginf=0.0)
    if prior is not None:
        p = _as_1d(prior, "prior")
        if p.size != s.size:
            raise InvalidInput(f"prior must have the length of scores, got {p.size} and {s.size}")
        value = value * p
    key = value / c ** exponent if exponent else value
    return np.argsort(-key, kind="stable")
