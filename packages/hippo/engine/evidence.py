"""Spending a context budget on what is likely to be evidence.

A recalled context is a knapsack: each candidate message has a cost (its tokens in the context) and a value (the
probability that it is evidence for the question). Filling the budget by expected evidence per token,
``p_i / cost_i``, is the greedy solution of that knapsack. Ranking alone (``p_i`` order) wastes the budget on long
messages when the ranker is unsure; packing by a fixed value per token (``score / sqrt(tokens)``) wastes it on short
filler when the ranker is sure. Nothing here is fitted per data set: the estimates come from the question's own
score distribution and from the conversation itself.

* **Value.** The lexical relevance of a message (BM25 over the Content DWM, with neighbour smoothing and the
  time-and-truth factors) scaled by a *verbosity prior*: in a conversation where one role writes much longer
  messages than another (an assistant's elaborations next to a user's short statements), a token of the verbose
  role is less likely to be the evidence a later question asks about. The prior is
  ``sqrt(median tokens of all messages / median tokens of this role's messages)``: 1 when roles write alike, below
  1 for the verbose side, estimated from the conversation without labels. Roles, not speakers: between people, the
  one who writes longer messages also says more in them (a chat between two people, whatever each one's habits,
  gets 1 for everyone); it is an assistant's restating and explaining that thins its evidence. Each text counts
  once (copies of a tool output or of a pasted reply say nothing of how much their role writes).
* **Cost.** A message costs ``tokens ** a``; ``a`` is how much the question's ranking leaves to chance. When the
  scores are peaked (a few messages far above the rest) the best match is probably the evidence whatever its
  length, and ``a`` goes to 0; when they are flat, several short matches are a better bet than one long one, and
  ``a`` rises to its ceiling. Peakedness is ``score of the k-th candidate / best score``, k growing with the
  conversation past the sizes it was chosen on (:func:`peak_rank`), its copies and near-duplicates counted once. The
  ceiling is
  ``max_exponent * (1 + ln r)``, where ``r`` (>= 1) is how much longer the verbose role's median message is than
  the conversation's: where one side elaborates at length, a message's value grows more slowly than its length, so
  length should count more; where everyone writes alike (r = 1) the ceiling is ``max_exponent``.

* **Session lift.** A turn in the session that talks about the question's subject is more likely to be evidence
  than an equal match elsewhere (the reply that names nothing, the remark that continues the topic). Each value is
  multiplied by ``1 + w * s / s_max``, ``s`` the question's BM25 over whole sessions
  (:func:`hippo.index.channels.sessions`) and ``w = config.retrieval.session_weight * min(1, budget / mean session
  tokens)``: a session many times the budget is not a unit a question can be localised to, and the lift fades.

* **Named speakers.** A question that names speakers of the namespace ("What has Caroline painted?", "What did
  Mel say about the trip?") is answered by what they said: on LoCoMo 96% of the evidence of such questions is the
  named speaker's own messages, while their partner's replies match the same words ("Wow, Caroline, that painting
  is gorgeous!"). The lexical channel values the messages of the speakers the question does not name at
  ``config.retrieval.unnamed_speakers`` of their score (:func:`hippo.index.channels.lexical`), so the packing sees
  that value; a question naming both parties ("What did Caroline suggest to Melanie?"), or asked in the first
  person ("What did I tell Sam?": the asker is one of the people it is about), leaves every value as it was.

* **Standing instructions.** A message telling the assistant to always / never do something when the user asks
  about a kind of thing (:mod:`hippo.text.directives`) is a rule for every later answer in its scope, whatever
  words a question uses; its chance of being needed does not come from the question's lexical match. Such messages
  are valued like the best candidate times how much the question is about them (1 when a rule holds one of the
  question's words, else its session's match relative to the best session's: :func:`standing_weights`), up to
  ``config.retrieval.standing_share`` of the budget (an eighth: the rules of a long history do not crowd out the
  evidence; the weightiest, then the best matching, then the newest, when more than fit), or what the other
  candidates cannot fill of it when that is more (a question that matches little crowds out nothing), so the rules
  of the question's own stretch of history are packed first at a few dozen tokens each.

The first functions work on numpy arrays of candidates and return orders; the last ones apply them to one
namespace (:class:`~hippo.engine.state.NamespaceState`): candidate scores with their magnitudes, the conversation's
verbosity statistics (cached on the state, refreshed as it grows), the shortlist of candidates that can reach a
context and their packing order. The caller packs whole messages in that order, skipping what does not fit.

With a user embedding (``Memory(embed=...)``), SimHash codes only find candidates: 256 bits estimate a cosine too
coarsely to re-rank them. Candidates are re-scored by the exact cosine of their int8 vectors
(:class:`hippo.index.embedding.EmbeddingCodes`) with the query's float vector.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from hippo.base.errors import InvalidInput
from hippo.base.locks import ForkSafeLock
from hippo.engine import pack
from hippo.engine.scope import Ask
from hippo.engine.state import NamespaceState
from hippo.index.coindex import ROLES, Scored
from hippo.text import directives, tokenizer

__all__ = ["verbosity_prior", "verbosity_ratio", "cost_exponent", "peak_rank", "packing_order", "fused_scores",
           "shortlist", "order", "standing_rows", "standing_weights", "with_standing", "session_lift", "with_sessions"]

PEAK_K = 20            # peakedness compares the best score with the (PEAK_K + 1)-th ...
# ... in a conversation of up to PEAK_SPAN messages (the sizes PEAK_K was chosen on: BEAM's and LoCoMo's
# conversations hold 188-680), and with the same share of a longer one (:func:`peak_rank`): the 21st best of a history
# ten times longer is close to the best only because ten times more messages match some of the question's words, and
# a fixed rank would read the same question as ever flatter, packing ever shorter lines, as the history grows.
PEAK_SPAN = 600
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


# -- one namespace --------------------------------------------------------------------------------------------

# Weight of the embedding's evidence next to the lexical one (both scaled to [0, 1]); chosen on the odd half of
# BEAM 1-10 and LoCoMo with all-MiniLM-L6-v2 (docs/retrieval.md).
W_DENSE = 0.5
# The verbosity prior is a statistic of the whole conversation: recomputed when the namespace grew by this share.
_PRIOR_REFRESH = 0.01
# A shortlist holds candidates in packing order until their estimated cost reaches this many budgets (slack for
# lines that will not fit, dormant messages and notes), and at least _SHORTLIST_MIN of them.
_SHORTLIST_BUDGETS = 3.0
_SHORTLIST_MIN = 48
_STANDING_HEAD = 160   # tokens of a message read to recognise a standing instruction (its rule and scope)
_PREFIX_TOKENS = 4.0   # a context line's speaker prefix and newline, as the shortlist and the rules' share estimate it
_NOT_INSTRUCTING = (ROLES.index("assistant"), ROLES.index("tool"))
_lock = ForkSafeLock()


def fused_scores(state: NamespaceState, ask: Ask, raw: dict[str, Scored], ranked: dict[str, np.ndarray],
                 weights: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
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
    codes = state.codes
    if emb_rows.size and codes is not None and ask.vector is not None and weights.get("embedding", 0) > 0:
        cos = codes.cosines(state.index.ids.view[rows].tolist(), ask.vector)
        if np.isfinite(cos).any():
            cos = np.nan_to_num(cos, nan=float(np.nanmin(cos)))
            above = np.maximum(cos - float(np.median(cos)), 0.0)
            top = float(above.max())
            if top > 0:
                scores = scores + W_DENSE * above / top
    order_ = np.lexsort((rows, -scores))
    return rows[order_], scores[order_]


def _verbosity(state: NamespaceState) -> tuple[np.ndarray, np.ndarray, float]:
    """(prior per row, group per row, verbosity ratio) of the namespace, groups = roles; cached on the state until
    it grew by ``_PRIOR_REFRESH`` (a deletion resets the state's cache: rows are renumbered)."""
    return _statistics(state)[1:4]


def _statistics(state: NamespaceState) -> tuple[int, np.ndarray, np.ndarray, float, int]:
    """(rows counted, prior per row, group per row, verbosity ratio, distinct texts among the rows counted):
    :func:`_verbosity`'s statistics with the count :func:`_distinct_messages` reads."""
    idx = state.index
    n = len(idx)
    cache = state.verbosity
    if cache is None or n > cache[0] * (1.0 + _PRIOR_REFRESH) or n < cache[0]:
        lengths = idx.doc_lengths()[:n]
        groups = idx.role.view[:n].astype(np.int64)
        # Each text once, as in a context (:mod:`hippo.engine.pack`): an agent's tool output returned after every
        # call, a health check polled all day (its near-duplicates, :attr:`NamespaceIndex.near_keys`), or a reply
        # pasted again, says nothing of how much its role writes, and counting every copy would move the medians
        # towards the repeated text's length.
        first = _first_copies(idx.near_keys[:n], groups)
        prior = np.ones(n)
        by_group = dict(zip(groups[first].tolist(), verbosity_prior(lengths[first], groups[first]).tolist()))
        for code, value in by_group.items():
            if value != 1.0:
                prior[groups == code] = value
        with _lock:
            cache = (n, prior, groups, verbosity_ratio(lengths[first], groups[first]), int(first.size))
            state.verbosity = cache
    return cache


def _distinct_messages(state: NamespaceState) -> int:
    """How many distinct texts the namespace holds: a text and its copies, or a machine output and its
    near-duplicates (:attr:`NamespaceIndex.near_keys`), in one role count once, as they take one line in a context
    and at most a few places in a candidate list. Counted with the verbosity statistics (:func:`_verbosity`);
    the messages added since are counted one each."""
    cache = _statistics(state)
    return cache[4] + max(0, len(state.index) - cache[0])


def peak_rank(n_messages: int) -> int:
    """The rank whose score peakedness compares with the best (:func:`cost_exponent`'s ``k``) in a namespace of
    ``n_messages``: :data:`PEAK_K`, and past :data:`PEAK_SPAN` messages the same share of them."""
    if isinstance(n_messages, bool) or not isinstance(n_messages, (int, np.integer)) or n_messages < 0:
        raise InvalidInput(f"n_messages must be an int >= 0, got {n_messages!r}")
    return max(PEAK_K, int(round(PEAK_K * int(n_messages) / PEAK_SPAN)))


def _exponent(state: NamespaceState, scores: np.ndarray) -> float:
    """:func:`cost_exponent` of a question's candidate scores in this namespace, at the rank :func:`peak_rank` gives
    its size. A question with fewer positive candidates than that rank (a selective one, or a candidate list cut at
    ``candidate_limit`` in a very long history) is read at its last positive candidate, the flattest reading there is;
    only one with at most :data:`PEAK_K` of them is packed in rank order, however long the history."""
    s = np.asarray(scores, dtype=np.float64)
    positive = int(np.count_nonzero(np.isfinite(s) & (s > 0)))
    k = min(peak_rank(_distinct_messages(state)), max(PEAK_K, positive - 1))
    return cost_exponent(s, ratio=_verbosity(state)[2], k=k)


def _first_copies(digests: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Rows (ascending) of the first message of each text in each group: the copies' digests (or a machine output's
    near-duplicates' keys) are equal."""
    if digests.size == 0:
        return np.zeros(0, dtype=np.int64)
    key = np.asarray(digests, dtype=np.uint64) ^ (groups.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15))
    return np.sort(np.unique(key, return_index=True)[1])


def prior_of(state: NamespaceState, rows: np.ndarray) -> np.ndarray:
    """The verbosity prior (:func:`verbosity_prior`) of ``rows``."""
    idx = state.index
    prior, groups, _ = _verbosity(state)
    out = np.ones(rows.size)
    known = rows < prior.size
    out[known] = prior[rows[known]]
    if (~known).any():  # messages added since the last refresh: the prior of their group, when the group is known
        by_group = {int(g): float(p) for g, p in zip(groups.tolist(), prior.tolist())}
        new_groups = idx.role.view[rows[~known]].astype(np.int64)
        out[~known] = [by_group.get(int(g), 1.0) for g in new_groups.tolist()]
    return out


def _estimated_costs(state: NamespaceState, rows: np.ndarray) -> np.ndarray:
    """Tokens each row's line would take in a context, from the span table alone (its tokens and a prefix)."""
    return state.index.doc_lengths()[rows].astype(np.float64) + _PREFIX_TOKENS


def _later_copies(idx: Any, rows: np.ndarray) -> np.ndarray:
    """For ``rows`` in packing order, whether each is a copy of a row before it: the same text (digest) in the same
    voice (role and speaker), which the packer folds into the line of the first (:func:`hippo.engine.pack.pack`)."""
    if rows.size < 2:
        return np.zeros(rows.size, dtype=bool)
    key = idx.copy_keys(rows)
    first = np.zeros(rows.size, dtype=bool)
    first[np.unique(key, return_index=True)[1]] = True
    return ~first


def shortlist(state: NamespaceState, rows: np.ndarray, scores: np.ndarray, budget: int,
              excluded: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """The candidates that can reach a context of ``budget`` tokens, in their input (rank) order, and the cost
    exponent of the whole candidate list. Costs are estimated from the span table (tokens + a 4-token prefix), so
    only the shortlist needs its pieces described and annotated. Rows of ``excluded`` (ascending) will not be
    packed: they stay in the shortlist where they rank, but take none of its reach, so it reaches as far into the
    other candidates as it would without them. Neither do the copies of a text after its first (an agent's status
    line written hundreds of times): the packer gives them one line, and the reach goes on to distinct messages."""
    rows = np.asarray(rows, dtype=np.int64)
    scores = np.asarray(scores, dtype=np.float64)
    if rows.size == 0:
        return rows, scores, 0.0
    prior = prior_of(state, rows)
    a = _exponent(state, scores)
    est = _estimated_costs(state, rows)
    keyed = packing_order(scores, est, prior, a)
    out = np.zeros(keyed.size, dtype=bool)
    if excluded is not None and excluded.size:
        out = np.isin(rows[keyed], excluded)
    out[~out] = _later_copies(state.index, rows[keyed][~out])  # copies of a text that will be packed
    if out.any():
        reach = np.cumsum(np.where(out, 0.0, est[keyed]))
        least = int(np.searchsorted(np.cumsum(~out), _SHORTLIST_MIN)) + 1
    else:
        reach = np.cumsum(est[keyed])
        least = _SHORTLIST_MIN
    n = max(least, int(np.searchsorted(reach, _SHORTLIST_BUDGETS * budget)) + 1)
    keep = np.sort(keyed[:n])
    return rows[keep], scores[keep], a


def order(state: NamespaceState, ids: list[int], rel: dict[int, float], by_id: dict[int, Any],
          exponent: float | None = None) -> list[int]:
    """Message ids in packing order: expected evidence per token (:func:`packing_order`). ``exponent`` is the cost
    exponent when the caller computed it over a longer candidate list."""
    if not ids:
        return []
    idx = state.index
    ids = sorted(ids, key=lambda k: (-rel[k], by_id[k].seq))  # rank order breaks ties
    scores = np.fromiter((rel[k] for k in ids), dtype=np.float64, count=len(ids))
    costs = np.fromiter((pack.line_cost(by_id[k]) for k in ids), dtype=np.float64, count=len(ids))
    rows = np.fromiter((idx.row_of[k] for k in ids), dtype=np.int64, count=len(ids))
    prior = prior_of(state, rows)
    a = exponent if exponent is not None else _exponent(state, scores)
    return [ids[j] for j in packing_order(scores, costs, prior, a).tolist()]


@functools.lru_cache(maxsize=1)
def _opener_tokens() -> tuple[int, ...]:
    enc = tokenizer.encoding()
    return tuple(sorted({enc.encode_ordinary(w)[0] for w in directives.OPENERS}))


def _cached_rows(state: NamespaceState, attr: str, find: Callable[[int, int], Any]) -> np.ndarray:
    """Rows (ascending, read only) that ``find(after, end)`` marks among the messages starting at stream positions
    ``after`` to ``end``, cached on ``state.<attr>`` and extended with the messages appended since. A removal
    renumbers the rows (the index's layout changes; the state drops the cache too): they are found again."""
    idx = state.index
    key = (idx.layout, len(idx), len(idx.content))
    cache = getattr(state, attr)
    if cache is not None and cache[:3] == key:
        return cache[3]
    if cache is not None and cache[0] == key[0] and key[1] > cache[1] and key[2] > cache[2]:
        known, after = cache[3], cache[2]
    else:
        known, after = np.zeros(0, dtype=np.int64), 0
    rows = np.union1d(known, np.asarray(find(after, key[2]), dtype=np.int64)).astype(np.int64)
    rows.setflags(write=False)
    with _lock:
        setattr(state, attr, (*key, rows))
    return rows


def _from_users(idx: Any, rows: np.ndarray) -> np.ndarray:
    """``rows`` less the messages written by the assistant or a tool."""
    return rows[~np.isin(idx.role.view[rows], _NOT_INSTRUCTING)] if rows.size else rows


def standing_rows(state: NamespaceState) -> np.ndarray:
    """Rows of the namespace's standing instructions (:func:`hippo.text.directives.is_standing_instruction`),
    ascending, from messages not written by the assistant or a tool. Candidates are the messages whose first token
    opens one ("Always", "Never", "Please"), found from the tokens' occurrences; cached on the state and extended
    with the messages appended since (:func:`_cached_rows`)."""
    idx = state.index

    def find(after: int, _end: int) -> list[int]:
        found = []
        for r in _from_users(idx, idx.rows_opening_with(_opener_tokens(), after)).tolist():
            start, stop = idx.span(r)
            head = idx.content.access_range(start, min(stop, start + _STANDING_HEAD))
            if directives.is_standing_instruction(tokenizer.decode(head)):
                found.append(r)
        return found

    return _cached_rows(state, "standing", find)


@functools.lru_cache(maxsize=1)
def _preference_tokens() -> tuple[int, ...]:
    enc = tokenizer.encoding()
    ids = (enc.encode_ordinary(" " + w) for w in directives.PREFERENCE_WORDS)
    return tuple(sorted({t[0] for t in ids if len(t) == 1}))


def preference_rows(state: NamespaceState) -> np.ndarray:
    """Rows (ascending) of the messages that state their writer's preference in the first person
    (:func:`hippo.text.directives.states_preference`), from messages not written by the assistant or a tool. Only
    the messages holding one of the preference words are read, found from the words' occurrences; cached on the
    state and extended with the messages appended since (:func:`_cached_rows`)."""
    idx = state.index

    def find(after: int, end: int) -> list[int]:
        found = [idx.rows_of_positions(idx.content.positions(t, after, end)) for t in _preference_tokens()
                 if idx.content.count(t, after, end)]
        cand = np.unique(np.concatenate(found)).astype(np.int64) if found else np.zeros(0, dtype=np.int64)
        cand = _from_users(idx, cand[cand < len(idx)]).tolist()
        return [r for r, text in zip(cand, idx.texts_of(cand)) if directives.states_preference(text)]

    return _cached_rows(state, "preferences", find)


def standing_weights(state: NamespaceState, rules: np.ndarray, lexical: Scored | None = None,
                     session_scores: np.ndarray | None = None) -> np.ndarray:
    """Per standing instruction (rows ``rules``): how much the question is about it, in [0, 1]. 1 when the rule
    holds one of the question's own words (``lexical``: the lexical channel's result, whose term occurrences say
    so); otherwise its session's match to the question relative to the best session's (``session_scores``,
    :func:`hippo.index.channels.sessions`): a rule stated where the question's subject is discussed is more likely
    the one it needs than a rule of an unrelated stretch of the history. 1 where sessions say nothing (fewer than
    two, no session matching, or a rule in no session or sitting: :meth:`NamespaceIndex.units`)."""
    rules = np.asarray(rules, dtype=np.int64)
    out = np.ones(rules.size)
    if rules.size == 0 or session_scores is None:
        return out
    s = np.asarray(session_scores, dtype=np.float64)
    top = float(s.max()) if s.size else 0.0
    if top <= 0:
        return out
    idx = state.index
    codes = idx.units()[0][rules]
    out = s[codes] / top
    if None in idx.sessions:
        out[codes == idx.sessions.index(None)] = 1.0
    if lexical is not None and lexical.terms:
        for term_rows, _tf in lexical.terms:  # rows ascending: a binary search per rule
            if term_rows.size:
                at = np.minimum(np.searchsorted(term_rows, rules), term_rows.size - 1)
                out[term_rows[at] == rules] = 1.0
    return out


def with_standing(state: NamespaceState, rows: np.ndarray, scores: np.ndarray, budget: int,
                  lexical: Scored | None = None, session_scores: np.ndarray | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Candidates (best first) with the namespace's standing instructions valued like the best candidate times
    their :func:`standing_weights` (1 without ``lexical`` and ``session_scores``), as many as fit
    ``config.retrieval.standing_share`` of ``budget``, or the part of it the other candidates cannot fill when that
    is more (a question that matches little: "What can you tell me about existentialism?"): the weightiest first,
    then the best matching, then the newest. Instructions that do not fit keep the score they had."""
    rows = np.asarray(rows, dtype=np.int64)
    scores = np.asarray(scores, dtype=np.float64)
    share = state.config.retrieval.standing_share
    if share <= 0:
        return rows, scores
    rules = standing_rows(state)
    if rules.size == 0:
        return rows, scores
    # per row of the namespace: whether it is a candidate and its score (candidates are distinct rows)
    n = len(state.index)
    candidate = np.zeros(n, dtype=bool)
    candidate[rows] = True
    own = np.zeros(n)
    own[rows] = scores
    weight = standing_weights(state, rules, lexical, session_scores)
    cost = _estimated_costs(state, rules)
    top = float(scores.max()) if scores.size and scores.max() > 0 else 1.0
    # the share keeps rules from crowding out evidence; what the other candidates cannot fill crowds out nothing
    others = rows[~np.isin(rows, rules)]
    room = budget - float(_estimated_costs(state, others).sum())
    cap, used, lifted = max(share * budget, room), 0.0, {}
    own_rules = own[rules].tolist()
    for j in sorted(range(rules.size), key=lambda j: (-weight[j], -own_rules[j], -int(rules[j]))):
        if weight[j] <= 0 or used + cost[j] > cap:
            continue
        used += float(cost[j])
        lifted[int(rules[j])] = top * float(weight[j])
    if not lifted:
        return rows, scores
    lifted_arr = np.fromiter(lifted, dtype=np.int64, count=len(lifted))
    extra = lifted_arr[~candidate[lifted_arr]]
    merged = np.concatenate([rows, np.sort(extra)])
    vals = np.concatenate([scores, np.zeros(extra.size)])
    is_lifted = np.zeros(n, dtype=bool)
    is_lifted[lifted_arr] = True
    for k in np.flatnonzero(is_lifted[merged]).tolist():
        vals[k] = max(vals[k], lifted[int(merged[k])])
    keep = np.argsort(-vals, kind="stable")  # ties keep the ranker's order
    return merged[keep], vals[keep]


def session_lift(session_scores, session_tokens, budget: int, weight: float = 1.0) -> np.ndarray:
    """Per session code: the factor a message of that session is valued by, ``1 + w * s / max(s)`` with
    ``w = weight * min(1, budget / mean session tokens)``.

    ``session_scores`` is the question's BM25 over whole sessions (0 for codes that are not sessions),
    ``session_tokens`` their lengths. A session that fits in a context is a unit of conversation: a turn in the
    session that talks about the question's subject is more likely to be evidence than an equal match elsewhere
    (the reply that names nothing, the remark that continues the topic). A session many times the budget is not a
    unit a question can be localised to, and the lift fades with the ratio. Fewer than two sessions: all 1."""
    s = _as_1d(session_scores, "session_scores")
    n = _as_1d(session_tokens, "session_tokens")
    if s.size != n.size:
        raise InvalidInput(f"session_scores and session_tokens must have the same length, got {s.size} and {n.size}")
    if not (np.isfinite(s).all() and (s >= 0).all() and np.isfinite(n).all() and (n >= 0).all()):
        raise InvalidInput("session scores and tokens must be finite and >= 0")
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 1:
        raise InvalidInput(f"budget must be a positive int, got {budget!r}")
    if not (np.isfinite(weight) and weight >= 0):
        raise InvalidInput(f"weight must be finite and >= 0, got {weight!r}")
    out = np.ones(s.size)
    real = n > 0
    top = float(s.max()) if s.size else 0.0
    if int(real.sum()) < 2 or top <= 0 or weight == 0:
        return out
    w = weight * min(1.0, budget / float(n[real].mean()))
    return out + w * s / top


def with_sessions(state: NamespaceState, rows: np.ndarray, scores: np.ndarray, budget: int,
                  session_scores: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Candidates (best first) with each score multiplied by its session's :func:`session_lift`;
    ``session_scores`` is the question's BM25 over sessions (:func:`hippo.index.channels.sessions`)."""
    rows = np.asarray(rows, dtype=np.int64)
    scores = np.asarray(scores, dtype=np.float64)
    weight = state.config.retrieval.session_weight
    idx = state.index
    if weight <= 0 or rows.size == 0 or session_scores is None:
        return rows, scores
    code, lengths = idx.units()
    if lengths.size < 2:
        return rows, scores
    lift = session_lift(session_scores, lengths, budget, weight)
    scores = scores * lift[code[rows]]
    keep = np.argsort(-scores, kind="stable")
    return rows[keep], scores[keep]
