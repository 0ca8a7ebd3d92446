"""Per-namespace time-and-truth annotations, derived from the co-index and kept up to date incrementally.

One :class:`Truth` hangs off each :class:`~hippo.index.coindex.NamespaceIndex` (``idx.truth``); it is rebuilt for free
when the index is reloaded. For every message row it holds:

* event time: the caller's ``event_time`` when given, else the first time expression in the text resolved against
  the message timestamp (:mod:`hippo.text.timeexpr`), else the timestamp itself; plus the ingestion time;
* surprise (seed 002 stage 4) and salience (the encoding gate's rule-based salience, seed 002 stage 1);
* attribute facts and the supersedes links between them (seed 002 stage 3; seed 003 §3.3 resolves updates by
  recency with ``seq`` / ``time``): ``superseded_by[row]`` is the row of the newer statement, or -1.

Nothing here is stored: it is a pure function of the messages, recomputed on load, so older stores read the same.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import numpy as np

from hippo.base.arrays import GrowArray
from hippo.index.coindex import NamespaceIndex
from hippo.store.base import MessageRow
from hippo.text import facts as factmod
from hippo.text import timeexpr
from hippo.text.salience import salience

GRANULARITIES = ("none", "day", "week", "weekend", "month", "year", "caller")


@dataclass(frozen=True)
class Link:
    old: int        # message id of the superseded statement
    new: int        # message id of the newer statement
    entity: str
    attribute: str
    old_value: str
    new_value: str
    kind: str       # "update" (the newer one carries an update cue) or "contradiction" (it does not)


class Truth:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.done = 0                                  # rows annotated so far
        self.latest: float | None = None               # the latest message timestamp: "now" for query dates
        self.event_start = GrowArray(np.float64, fill=np.nan)
        self.event_end = GrowArray(np.float64, fill=np.nan)
        self.gran = GrowArray(np.int8, fill=0)            # index into GRANULARITIES; 0 = from the timestamp
        self.has_time = GrowArray(np.bool_, fill=False)   # the text carries a time expression
        self.created = GrowArray(np.float64, fill=np.nan)  # ingestion time (for as_of)
        self.surprise = GrowArray(np.float32, fill=0.0)
        self.salience = GrowArray(np.float32, fill=0.0)
        self.superseded_by = GrowArray(np.int64, fill=-1)  # row of the newer statement
        self.phrase: dict[int, str] = {}               # row -> the time expression as said
        self._labels: dict[int, str | None] = {}        # row -> label(), cached
        self.caller_time: dict[int, float] = {}        # message id -> event time given by the caller
        self.created_of: dict[int, float] = {}         # message id -> ingestion time, until annotated
        self.seen: set[str] = set()                    # accumulated fact fingerprints
        self.facts: dict[tuple[str, str], list[tuple[int, str, bool]]] = {}  # (entity, attr) -> [(row, value, cue)]
        self.facts_of: dict[int, list[factmod.Fact]] = {}
        self.update_of: dict[int, bool] = {}            # superseded row -> the newer statement had an update cue
        self.links: list[Link] = []
        self.link_rows: list[tuple[int, int]] = []     # (old row, new row), parallel to links

    # -- building -------------------------------------------------------------------------------------------
    def observe(self, rows: list[MessageRow]) -> None:
        """Record what only the store rows know (caller event times, ingestion times); cheap, no decoding."""
        with self.lock:
            for r in rows:
                self.created_of[r.id] = r.created_at
                et = (r.metadata or {}).get("event_time")
                if isinstance(et, (int, float)) and math.isfinite(et):
                    self.caller_time[r.id] = float(et)

    def sync(self, idx: NamespaceIndex, texts: dict[int, str] | None = None) -> None:
        """Annotate the rows appended since the last call (``texts`` may carry already-decoded texts by row)."""
        n = len(idx)
        if self.done >= n:
            return
        with self.lock:
            start = self.done
            if start >= n:
                return
            for col in (self.event_start, self.event_end, self.gran, self.has_time, self.created, self.surprise,
                        self.salience, self.superseded_by):
                col.resize(n)
            ids = idx.ids.view
            ts = idx.ts.a
            spk = idx.speaker.a
            stream = ((r, texts[r]) for r in range(start, n)) if texts and all(
                r in texts for r in range(start, n)) else idx.texts(start, n)
            for row, text in stream:
                mid = int(ids[row])
                t = float(ts[row])
                t = None if t != t else t
                if t is not None and (self.latest is None or t > self.latest):
                    self.latest = t
                self.created.a[row] = self.created_of.pop(mid, np.nan)
                refs = timeexpr.find(text, t)
                if mid in self.caller_time:
                    e = self.caller_time[mid]
                    self.event_start.a[row], self.event_end.a[row] = e, e + timeexpr.DAY
                    self.gran.a[row] = GRANULARITIES.index("caller")
                elif refs:
                    self.event_start.a[row], self.event_end.a[row] = refs[0].start, refs[0].end
                    self.gran.a[row] = GRANULARITIES.index(refs[0].granularity)
                    if refs[0].relative:
                        self.phrase[row] = refs[0].phrase
                elif t is not None:
                    self.event_start.a[row], self.event_end.a[row] = t, t
                self.has_time.a[row] = bool(refs)
                fp = factmod.fingerprints(text, [r.label() for r in refs])
                self.surprise.a[row] = factmod.surprise(fp, self.seen, text)
                self.salience.a[row] = salience(text)[0]
                self.seen |= fp
                speaker = idx.speakers[int(spk[row])]
                fs = factmod.facts(text, speaker)
                if fs:
                    self.facts_of[row] = fs
                    for f in fs:
                        self._link(idx, row, f)
            self.done = n

    def _link(self, idx: NamespaceIndex, row: int, f: factmod.Fact) -> None:
        """Seed 002 stage 3: a statement about the same entity and attribute with a different value supersedes
        the latest earlier one; nothing is deleted."""
        attribute = f.attribute
        if attribute == "favorite":  # "X is my favourite now": the favourite thing this entity last talked about
            kinds = [a for (e, a) in self.facts if e == f.entity and a.startswith("favorite ")]
            if len(kinds) == 1:
                attribute = kinds[0]
                f = factmod.Fact(f.entity, attribute, f.value, f.cue, f.negated)
                self.facts_of[row] = [f if g.attribute == "favorite" else g for g in self.facts_of.get(row, [])]
        key = (f.entity, attribute)
        history = self.facts.setdefault(key, [])
        if history:
            prev_row, prev_value, _ = history[-1]
            if prev_value != f.value and not _overlap(prev_value, f.value) and self.superseded_by.a[prev_row] < 0:
                self.superseded_by.a[prev_row] = row
                self.update_of[prev_row] = f.cue
                ids = idx.ids.view
                self.links.append(Link(int(ids[prev_row]), int(ids[row]), f.entity, f.attribute, prev_value,
                                       f.value, "update" if f.cue else "contradiction"))
                self.link_rows.append((prev_row, row))
        history.append((row, f.value, f.cue))

    # -- reading ----------------------------------------------------------------------------------------------
    def event_mid(self, rows: np.ndarray) -> np.ndarray:
        s = self.event_start.a[rows]
        e = self.event_end.a[rows]
        return np.where(np.isnan(e), s, (s + e) / 2.0)

    def label(self, row: int) -> str | None:
        """The resolved event date of a row whose text dates it relatively or the caller dated ("7 May 2023")."""
        if row in self._labels:
            return self._labels[row]
        g = GRANULARITIES[int(self.gran.a[row])]
        out = None
        if g != "none" and (row in self.phrase or g == "caller"):
            out = timeexpr.TimeRef(float(self.event_start.a[row]), float(self.event_end.a[row]),
                                   "day" if g == "caller" else g, "", True).label()
        self._labels[row] = out
        return out

    def span(self, idx: NamespaceIndex, message_ids: list[int]) -> tuple[float, float] | None:
        """Earliest event start and latest event end over some messages (a unit's event time), or None."""
        rows = [idx.row_of[i] for i in message_ids if i in idx.row_of and idx.row_of[i] < self.done]
        if not rows:
            return None
        r = np.asarray(rows, dtype=np.int64)
        s = self.event_start.a[r]
        e = np.where(np.isnan(self.event_end.a[r]), s, self.event_end.a[r])
        if np.isnan(s).all():
            return None
        return float(np.nanmin(s)), float(np.nanmax(e))

    def stale_mark(self, row: int, *, current: bool, as_of: float | None = None, until: float | None = None,
                   said: np.ndarray | None = None) -> int:
        """The superseding row when ``row`` counts as stale: the newer statement announced the change ("I moved
        to..."), or the question asks for the current value (``current``); an unannounced different value may be
        just as true. -1 otherwise. Ranking demotes and packing marks by this one rule."""
        if row >= self.superseded_by.n or self.superseded_by.a[row] < 0:
            return -1
        if not (current or self.update_of.get(row, False)):
            return -1
        return self.superseder(row, as_of, until, said)

    def superseder(self, row: int, as_of: float | None = None, until: float | None = None,
                   said: np.ndarray | None = None) -> int:
        """The row that supersedes ``row`` (as known at ``as_of``, and said before ``until`` when ``said`` holds
        the message timestamps), or -1."""
        nxt = int(self.superseded_by.a[row]) if row < self.superseded_by.n else -1
        if nxt >= 0 and as_of is not None:
            c = self.created.a[nxt]
            if c == c and c > as_of:
                return -1
        if nxt >= 0 and until is not None and said is not None:
            t = said[nxt]
            if t == t and t >= until:
                return -1
        return nxt


def _overlap(a: str, b: str) -> bool:
    """Values that share a word ("boston" vs "boston area") restate rather than update."""
    return bool(set(a.split()) & set(b.split()))
