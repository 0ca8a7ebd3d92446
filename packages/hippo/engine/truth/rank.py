"""Query-time reweighting of fused candidates by time and truth (seed 002 §4.1 stage 9, Eq. 4).

Each factor multiplies the running RRF score only when its condition holds, so an inactive factor is the identity:

* ``f_t``: the query carries temporal intent ("when", "before", a date...) and the candidate is in the temporally
  filtered set (it carries a time expression, or its event time falls in the period the query names): x1.3;
* surprise: ``1 + alpha * sigma`` for candidates with new fact fingerprints (alpha 0.2 as in the seed);
* salience: ``1 + beta * (s - 0.5)``, a small tilt towards decisions, corrections and detailed statements;
* truth: when the query asks about an attribute of an entity ("Where does Maya live now?"), the newest statement
  of it is injected if missing and lifted to the top group, and statements it superseded are ranked lower
  (seed 003 §3.3: updates resolved by recency). Superseded statements are never dropped.

Filters ``since`` / ``until`` (event time) and ``as_of`` (ingestion time, bi-temporal) remove candidates.
"""

from __future__ import annotations

import numpy as np

from hippo.base.config import TemporalConfig
from hippo.engine.truth.state import CALLER, INSTANT_GRANULARITIES, Truth
from hippo.index.coindex import NamespaceIndex, Scored
from hippo.text import attributes, timeexpr


def time_filter(truth: Truth, rows: np.ndarray, since: float | None, until: float | None,
                as_of: float | None) -> np.ndarray:
    """Boolean mask over ``rows``: event time overlaps ``[since, until)`` and ingested at or before ``as_of``."""
    keep = np.ones(rows.size, dtype=bool)
    if rows.size == 0:
        return keep
    if since is not None or until is not None:
        s, e = truth.event_span(rows)
        known = ~np.isnan(s)
        keep &= known
        if since is not None:  # an interval [s, e) ends before since when e == since; a point s is at or after it
            keep &= np.where(known, np.where(e > s, e > since, s >= since), False)
        if until is not None:
            keep &= np.where(known, s < until, False)
    if as_of is not None:
        c = truth.created.a[rows]
        keep &= np.isnan(c) | (c <= as_of)
    return keep


def fact_targets(truth: Truth, targets: tuple[list[str], set[str]], as_of: float | None,
                 until: float | None = None, said: np.ndarray | None = None) -> tuple[list[int], list[int]]:
    """(current rows, superseded rows) of the entity / attribute statements ``targets``
    (:func:`attributes.query_targets` of the query) names."""
    fams, names = targets
    if not fams:
        return [], []
    current: list[int] = []
    stale: list[int] = []
    for (entity, attr), history in truth.facts.items():
        if not attributes.matches(attr, fams) or (names and entity not in names):
            continue
        visible = [h for h in history if (as_of is None or not (truth.created.a[h[0]] > as_of))
                   and (until is None or said is None or not (said[h[0]] >= until))]
        if not visible:
            continue
        for row, _value, _cue in visible:
            (stale if truth.superseder(row, as_of, until, said) >= 0 else current).append(row)
    return current, stale


def asked(idx: NamespaceIndex, truth: Truth, query: str, as_of: float | None = None,
          asked_at: tuple[float, float | None] | None = None) -> timeexpr.QueryTime:
    """:func:`hippo.text.timeexpr.analyze_query` of ``query`` asked at ``asked_at`` (epoch seconds and the asker's
    offset from UTC, None: UTC's calendar) when given; else asked of the namespace (as it stood at ``as_of``, an
    ingestion time, when given): its days are then those of the calendar the latest message was said on (its
    ``utc_offset``, the asker's; UTC's when it has none), counted from that message's day. Truth must be synced."""
    now, offset = asked_at if asked_at is not None else latest_said(idx, truth, as_of)
    return timeexpr.analyze_query(query, now, offset)


def latest_said(idx: NamespaceIndex, truth: Truth, as_of: float | None = None) -> tuple[float | None, float | None]:
    """When the latest message was said (``truth.latest``; with ``as_of``, the latest of those added by then) and
    the offset from UTC it was said with (of several said then, the last added's), None when it has none."""
    if len(idx) == 0:
        return truth.latest, None
    ts = idx.ts.view
    if as_of is None:
        latest = truth.latest
    else:
        ts = np.where(idx.created.view > as_of, np.nan, ts)  # a row without an ingestion time is kept, as filters do
        latest = None if np.isnan(ts).all() else float(np.nanmax(ts))
    if latest is None:
        return None, None
    said = np.flatnonzero(ts == latest)
    if said.size == 0:
        return latest, None
    off = float(idx.utc_offset.a[int(said[-1])])
    return latest, None if off != off else off


def _periods(idx: NamespaceIndex, truth: Truth, qt: timeexpr.QueryTime) -> list[tuple[float, float]]:
    """The period ``qt`` names, and its copies in the history's other years when it is named without a year
    ("April 6-7": every April of the history, :func:`hippo.text.timeexpr.each_year`)."""
    windows = [qt.window]
    if qt.yearless:
        said = idx.ts.view
        if said.size and not np.isnan(said).all():
            windows = timeexpr.each_year(qt.window, float(np.nanmin(said)), truth.latest)
    return windows


def period_share(idx: NamespaceIndex, truth: Truth, qt: timeexpr.QueryTime, rows: np.ndarray) -> np.ndarray:
    """Per row, how surely it belongs to the period the query names (``qt.window``, not None), in [0, 1]: 1 for a
    message said in it; for one that tells of an event, the share of the event's time inside the period ("last
    year", said in 2023, is in April 2022 with a chance of about 1 in 12; "last week", said on 15 April 2022,
    surely is); 0 for the rest. Truth must be synced."""
    s = truth.event_start.a[rows]
    e = truth.event_end.a[rows]
    e = np.where(np.isnan(e) | (e <= s), s + timeexpr.DAY, e)
    said = idx.ts.a[rows]
    share = np.zeros(rows.size)
    dated = ~np.isnan(s)
    gran = truth.gran.a[rows]
    # a time the caller gave with its offset from UTC is the day of its calendar it falls on, kept as every day is
    own = (gran == CALLER) & ~np.isnan(idx.event_offset.a[rows])
    if own.any():
        day = np.floor((s + idx.event_offset.a[rows]) / timeexpr.DAY) * timeexpr.DAY
        s, e = np.where(own, day, s), np.where(own, day + timeexpr.DAY, e)
    if qt.offset is not None:
        # the period's days are the asker's calendar's, kept from midnight UTC as every day is: an instant (when a
        # message was said, the timestamp or a time the caller gave without an offset as its event time) is read on
        # the wall clock it was said by (its timestamp's offset; the asker's when it has none), so that a message
        # said at 23:30 on 1 March in New York is said on 1 March whatever offset the asker's clock has now
        off = idx.utc_offset.a[rows]
        off = np.where(np.isnan(off), qt.offset, off)
        said = said + off
        instant = np.isin(gran, INSTANT_GRANULARITIES) & ~own
        s, e = np.where(instant, s + off, s), np.where(instant, e + off, e)
    for lo, hi in _periods(idx, truth, qt):
        inside = np.clip(np.minimum(e, hi) - np.maximum(s, lo), 0.0, None) / np.where(dated, e - s, 1.0)
        share = np.maximum(share, np.where(dated, inside, 0.0))
        share = np.where(~np.isnan(said) & (said >= lo) & (said < hi), 1.0, share)
    return share


def with_period(idx: NamespaceIndex, truth: Truth, cfg: TemporalConfig, query: str, scored: Scored,
                top: np.ndarray, limit: int, as_of: float | None = None,
                asked_at: tuple[float, float | None] | None = None,
                distinct: NamespaceIndex | None = None, repeated: set[int] | None = None) -> np.ndarray:
    """``top`` (the lexical channel's best ``limit`` rows) and, when the query names a period, up to ``limit`` more
    rows that surely belong to it (:func:`period_share` 1): the lexically matched ones first, best first, then those
    that match none of its words, newest first. The period is a cue of its own: in a long history where the
    question's words are common ("What did Caroline do for Melanie on 25 May, 2022?", asked of years of their
    messages), the message said that day may rank past the candidate limit, where the period's factor
    (:func:`adjust`) never reaches it; and a question made of the period alone ("What did I do in May 2023?", "What
    happened last week?") matches no word at all. Unmatched rows carry no lexical score: they fill only the room
    the matched ones leave. With ``distinct`` (the index), the rows added are distinct texts, none a copy of a
    row of ``top`` (:meth:`NamespaceIndex.copy_keys`): the best-scored copy of a matched text, the newest of an
    unmatched one, added to ``repeated`` where it stands for other copies of the period."""
    if not cfg.enabled or len(idx) == 0:
        return top
    truth.sync(idx)
    qt = asked(idx, truth, query, as_of, asked_at)
    if qt.window is None:
        return top
    rows = scored.rows
    rest = ~np.isin(rows, top)
    rest[rest] = period_share(idx, truth, qt, rows[rest]) >= 1.0
    extra, sc = rows[rest], scored.scores[rest]
    extra = extra[np.lexsort((extra, -sc))]
    if distinct is not None:
        extra = _new_texts(distinct, top, extra, repeated)
    extra = extra[:limit]
    if extra.size < limit:
        every = np.arange(len(idx), dtype=np.int64)
        unmatched = every[~np.isin(every, rows)]
        unmatched = unmatched[period_share(idx, truth, qt, unmatched) >= 1.0][::-1]
        if distinct is not None:
            unmatched = _new_texts(distinct, np.concatenate([top, extra]), unmatched, repeated)
        extra = np.concatenate([extra, unmatched[:limit - extra.size]])
    return np.concatenate([top, extra]) if extra.size else top


def _new_texts(idx: NamespaceIndex, have: np.ndarray, rows: np.ndarray, repeated: set[int] | None = None
               ) -> np.ndarray:
    """``rows`` (in their order) less the copies of a text of ``have`` and the later copies of one another; the
    rows kept that had such later copies are added to ``repeated``."""
    if rows.size == 0:
        return rows
    keys = idx.copy_keys(rows)
    _, first, counts = np.unique(keys, return_index=True, return_counts=True)
    if repeated is not None:
        repeated.update(rows[first[counts > 1]].tolist())
    rows, keys = rows[np.sort(first)], keys[np.sort(first)]
    if have.size:
        rows = rows[~np.isin(keys, idx.copy_keys(have))]
    return rows


def adjust(idx: NamespaceIndex, truth: Truth, cfg: TemporalConfig, query: str, rows: np.ndarray,
           scores: np.ndarray, *, since: float | None = None, until: float | None = None,
           as_of: float | None = None, asked_at: tuple[float, float | None] | None = None
           ) -> tuple[np.ndarray, np.ndarray, dict]:
    """Reweighted ``(rows, scores)``, best first, and a dict of what fired (for ``Recall.timings`` / debugging)."""
    fired: dict = {}
    rows = np.asarray(rows, dtype=np.int64)
    scores = np.asarray(scores, dtype=np.float64).copy()
    if cfg.enabled:
        qt = asked(idx, truth, query, as_of, asked_at)
        targets = attributes.query_targets(query)
        current, stale = fact_targets(truth, targets, as_of, until, idx.ts.a)
        if current:
            have = set(rows.tolist())
            extra = [r for r in current if r not in have]
            if extra:
                top = float(scores.max()) if scores.size else 1.0
                rows = np.concatenate([rows, np.asarray(extra, dtype=np.int64)])
                scores = np.concatenate([scores, np.full(len(extra), 0.9 * top)])
            fired["facts"] = len(current)
        if rows.size:
            if qt.temporal:
                if qt.window is not None:
                    # the period the query names: the event happened in it, or the message was said in it
                    share = period_share(idx, truth, qt, rows)
                    in_set = share > 0
                    factor = 1.0 + (cfg.window_boost - 1.0) * share
                else:
                    in_set = truth.has_time.a[rows]
                    if qt.span:  # the answer is a span ("for 3 years"), which carries no date
                        in_set = in_set | truth.states_span(idx, rows)
                    factor = cfg.temporal_boost
                scores = np.where(in_set, scores * factor, scores)
                fired["temporal"] = int(in_set.sum())
            scores *= 1.0 + cfg.surprise_alpha * truth.surprise.a[rows].astype(np.float64)
            if cfg.salience_beta > 0:
                scores *= 1.0 + cfg.salience_beta * (truth.salience.a[rows].astype(np.float64) - 0.5)
            if qt.current and cfg.recency_boost > 0:
                # "now", "these days", "current": among the candidates by the person the query names, the newer
                # statement wins (seed 003 §3.3: updates resolved by recency with seq / time)
                codes = [c for c, sp in enumerate(idx.speakers) if sp is not None and sp.lower() in targets[1]]
                if codes:
                    own = np.isin(idx.speaker.a[rows], codes)
                    if own.sum() > 1:
                        seq = idx.seqs.a[rows[own]].astype(np.float64)
                        span = seq.max() - seq.min()
                        fresh = (seq - seq.min()) / span if span > 0 else np.ones_like(seq)
                        scores[own] *= 1.0 + cfg.recency_boost * fresh
                        fired["recency"] = int(own.sum())
            if current:
                top = float(scores.max())
                cur = np.isin(rows, np.asarray(current, dtype=np.int64))
                # The newest statements ordered by recency among themselves, all above the rest.
                if cur.any():
                    mids = truth.event_mid(rows[cur])
                    order = np.argsort(np.argsort(np.nan_to_num(mids, nan=0.0)))
                    scores[cur] = top * (1.0 + cfg.fact_boost) * (1.0 + 1e-3 * order)
            stale = [r for r in stale
                     if truth.stale_mark(r, current=qt.current, as_of=as_of, until=until, said=idx.ts.a) >= 0]
            if stale:
                old = np.isin(rows, np.asarray(stale, dtype=np.int64))
                scores = np.where(old, scores * cfg.superseded_factor, scores)
                fired["superseded"] = int(old.sum())
    keep = time_filter(truth, rows, since, until, as_of)
    rows, scores = rows[keep], scores[keep]
    order = np.argsort(-scores, kind="stable")
    return rows[order], scores[order], fired
