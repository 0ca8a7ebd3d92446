"""Ranked rows described for packing (:class:`~hippo.engine.pack.Piece`), from the span table alone; store rows
are read only when a metadata filter needs them."""

from __future__ import annotations

from typing import Callable

import numpy as np

from hippo.base.timeutil import fmt_day
from hippo.engine.pack import Piece, day_of
from hippo.engine.scope import Scope
from hippo.engine.state import NamespaceState
from hippo.engine.truth import rank as truth_rank
from hippo.engine.truth.state import GRANULARITIES
from hippo.index.coindex import ROLES
from hippo.store.base import MessageRow
from hippo.text import masking

_DAY_GRANULARITIES = (GRANULARITIES.index("day"), GRANULARITIES.index("caller"))


def pieces(state: NamespaceState, rows: np.ndarray, pred: Callable[[MessageRow], bool] | None,
           scope: Scope | None, repeated: set[int] | frozenset[int] = frozenset()) -> list[Piece]:
    """Candidates in rank order, each with its time-and-truth notes; those of ``repeated`` (rows standing for the
    copies of their text: :func:`hippo.engine.rank.rank`) marked so.

    The time scope applies here (``since`` / ``until`` / ``as_of``), and pieces carry the resolved date of a
    relatively dated event and a "superseded" mark with the date of the newer statement. For order / progression
    questions a piece is dated by its event time, so the packer groups and orders the context chronologically.
    Caller holds the read lock."""
    idx = state.index
    truth = state.truth
    tcfg = state.config.temporal
    rows = np.asarray(rows, dtype=np.int64)
    if scope is not None and scope.filters and rows.size:
        truth.sync(idx)
        rows = rows[truth_rank.time_filter(truth, rows, scope.since, scope.until, scope.as_of)]
    ids = idx.ids.view[rows].tolist() if rows.size else []
    lengths = idx.doc_lengths()
    meta = state.rows(ids) if pred is not None else None
    annotate = tcfg.enabled and tcfg.annotate and truth.done >= len(idx)
    chrono = annotate and scope is not None and scope.ordering
    as_of = scope.as_of if scope else None
    out = []
    # Most candidates carry no note: the rows that may (a resolved date, a superseding statement) are found with
    # array tests first, so the per-row work below is only building the piece.
    if annotate and rows.size:
        maybe_label = (truth.gran.a[rows] != 0).tolist()
        maybe_stale = (truth.superseded_by.a[rows] >= 0).tolist()
        events = truth.event_mid(rows).tolist() if chrono else None
    else:
        maybe_label = maybe_stale = events = None
    cols = zip(ids, rows.tolist(), lengths[rows].astype(np.int64).tolist(), idx.speaker.a[rows].tolist(),
               idx.role.a[rows].tolist(), idx.ts.a[rows].tolist(), idx.session.a[rows].tolist(),
               idx.seqs.a[rows].tolist(), idx.near_keys[rows].tolist())
    speakers, sessions = idx.speakers, idx.sessions
    offsets = idx.utc_offset.a[rows]
    current = scope is not None and scope.current
    until = scope.until if scope else None
    for k, (i, r, n_tok, spk, role, ts, sess, seq, digest) in enumerate(cols):
        if meta is not None and (i not in meta or not pred(meta[i])):
            continue
        off = float(offsets[k])
        p = Piece(key=i, n_tokens=n_tok, speaker=speakers[spk], role=ROLES[role], ts=None if ts != ts else ts,
                  session=sessions[sess], seq=seq, digest=digest, offset=None if off != off else off,
                  repeated=r in repeated)
        if annotate:
            notes = []
            label = truth.label(r, idx) if maybe_label[k] else None
            same_day = label is not None and ts == ts and label == day_of(p)  # "today": the header says it
            if label is not None and not same_day and not (chrono and truth.gran.a[r] in _DAY_GRANULARITIES):
                notes.append(label)
            nxt = truth.stale_mark(r, current=current, as_of=as_of, until=until, said=idx.ts.a) \
                if maybe_stale[k] else -1
            if nxt >= 0:
                notes.append("superseded " + fmt_day(float(idx.ts.a[nxt])) if idx.ts.a[nxt] == idx.ts.a[nxt]
                             else "superseded")
            p.note = "; ".join(notes) if notes else ""
            if chrono:
                ev = events[k]
                if ev == ev:
                    p.ts, p.session = ev, None
        out.append(p)
    return out


def copy_times(state: NamespaceState, pred: Callable[[MessageRow], bool] | None, scope: Scope | None,
               excluded: frozenset[int] = frozenset()) -> Callable[[Piece], list[float | None]]:
    """For :func:`hippo.engine.pack.pack`: the times of a piece's other copies in the namespace (the messages of
    the same tokens: :meth:`~hippo.index.coindex.NamespaceIndex.copies_of`) that ``pred`` and ``scope`` admit,
    the messages of ``excluded`` (ids a recall leaves out of its context) not among them."""
    idx = state.index

    plain = pred is None and (scope is None or not (scope.filters or scope.ordering))
    gone = np.fromiter(excluded, dtype=np.int64, count=len(excluded)) if excluded else None

    def times(p: Piece) -> list[float | None]:
        row = idx.row_of[p.key]
        rows = idx.copies_of(row)
        rows = rows[rows != row]
        if gone is not None and rows.size:
            rows = rows[~np.isin(idx.ids.a[rows], gone)]
        if plain:  # every copy is admitted and dated by when it was said: the span table has it
            return [None if t != t else t for t in idx.ts.a[rows].tolist()]
        return [q.ts for q in pieces(state, rows, pred, scope)]

    return times


def newest_copy(state: NamespaceState, pred: Callable[[MessageRow], bool] | None, scope: Scope | None,
                excluded: frozenset[int] = frozenset(), question: str = "") -> Callable[[Piece], Piece | None]:
    """For :func:`hippo.engine.pack.pack`: the piece to show for a machine output standing for its near-duplicates
    (:attr:`~hippo.index.coindex.NamespaceIndex.near_keys`): the newest copy (by when it was said, then by order)
    that ``pred``, ``scope`` and ``excluded`` admit, its text read; None where that is the piece's own text, or
    where ``question`` names a value (a run of letters and digits holding a digit, or an id drawn from letters: an
    id, a time, a count, :func:`hippo.text.masking.values`) the piece's text holds and the newest's does not: the
    question asked for that copy."""
    idx = state.index
    plain = pred is None and (scope is None or not (scope.filters or scope.ordering))
    gone = np.fromiter(excluded, dtype=np.int64, count=len(excluded)) if excluded else None
    asked = masking.values(question) if question else set()

    def newest(p: Piece) -> Piece | None:
        row = idx.row_of[p.key]
        if idx.near_keys[row] == idx.digests[row]:  # no machine output: its copies are the same text
            return None
        rows = idx.copies_of(row)
        if gone is not None and rows.size:
            rows = rows[~np.isin(idx.ids.a[rows], gone)]
        ts = idx.ts.a[rows]
        rows = rows[np.lexsort((idx.seqs.a[rows], np.where(ts == ts, ts, -np.inf)))[::-1]]  # newest first
        if not plain:
            admitted = {q.key for q in pieces(state, rows, pred, scope)}
            rows = rows[np.isin(idx.ids.a[rows], np.fromiter(admitted, dtype=np.int64, count=len(admitted)))]
        if rows.size == 0 or int(rows[0]) == row:
            return None
        last = int(rows[0])
        lengths = idx.doc_lengths()
        if idx.digests[last] == idx.digests[row] and lengths[last] == lengths[row]:
            return None  # an exact copy of the piece: the same line
        text = idx.texts_of([last])[0]
        if asked & (masking.values(p.text) - masking.values(text)):
            return None
        (q,) = pieces(state, np.asarray([last], dtype=np.int64), None, scope, {last})
        q.text = text
        return q

    return newest


def stand_ins(state: NamespaceState, rows: np.ndarray, scores: np.ndarray, repeated: set[int],
              pred: Callable[[MessageRow], bool] | None, scope: Scope | None) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, scores)`` (ranked) where a row standing for the copies of its text (``repeated``: the candidate
    lists keep a text's best few copies, :func:`hippo.engine.rank.rank`) is one a filter ``pred`` rejects,
    replaced by the earliest copy it admits (within the time ``scope``), which then stands for the others (added to
    ``repeated``); dropped when it admits none, or when that copy is a candidate already. The text is in the
    context as long as one of its copies the recall admits is. (A recall's ``exclude`` and time scope are handled
    where the lists are built: they need no store read.) Caller holds the read lock."""
    idx = state.index
    if not repeated or rows.size == 0 or pred is None:
        return rows, scores

    def admitted(cands: np.ndarray) -> np.ndarray:
        keep = np.ones(cands.size, dtype=bool)
        if scope is not None and scope.filters and cands.size:
            state.truth.sync(idx)
            keep &= truth_rank.time_filter(state.truth, cands, scope.since, scope.until, scope.as_of)
        if keep.any():
            ids = idx.ids.view[cands[keep]].tolist()
            meta = state.rows(ids)
            keep[keep] = [i in meta and bool(pred(meta[i])) for i in ids]
        return keep

    rows = np.asarray(rows, dtype=np.int64)
    stands = np.flatnonzero(np.isin(rows, np.fromiter(repeated, dtype=np.int64, count=len(repeated))))
    gone = stands[~admitted(rows[stands])]
    if gone.size == 0:
        return rows, scores
    rows = rows.copy()
    present = set(rows.tolist())
    drop = []
    for k in gone.tolist():
        copies = idx.copies_of(int(rows[k]))
        ok = copies[admitted(copies)]
        if ok.size == 0 or int(ok[0]) in present:
            drop.append(k)
            if ok.size:
                repeated.add(int(ok[0]))
            continue
        rows[k] = int(ok[0])
        present.add(int(ok[0]))
        repeated.add(int(ok[0]))
    if not drop:
        return rows, scores
    return np.delete(rows, drop), np.delete(np.asarray(scores), drop)
