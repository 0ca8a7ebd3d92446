"""Per-namespace time-and-truth annotations, derived from the co-index and kept up to date incrementally.

One :class:`Truth` hangs off each :class:`~hippo.index.coindex.NamespaceIndex` (``idx.truth``); it is rebuilt for free
when the index is reloaded. For every message row it holds:

* event time: the caller's ``event_time`` when given, else the first time expression in the text resolved against
  the message timestamp (:mod:`hippo.text.timeexpr`), else the timestamp itself; plus the ingestion time;
* surprise (seed 002 stage 4) and salience (the encoding gate's rule-based salience, seed 002 stage 1);
* attribute statements (:mod:`hippo.text.attributes`, the extractor the speaker profiles read too) and the supersedes
  links between them (seed 002 stage 3; seed 003 §3.3 resolves updates by recency with ``seq`` / ``time``):
  ``superseded_by[row]`` is the row of the newer statement, or -1. Only what people say of themselves (messages of
  the ``user`` role) and of named projects is read: an assistant's first-person text is advice, drafts and examples.

Nothing here is stored: it is a pure function of the messages, recomputed on load, so older stores read the same.
"""

from __future__ import annotations

import dataclasses
import math
import re
import threading
from dataclasses import dataclass

import numpy as np

from hippo.base.arrays import GrowArray
from hippo.index.coindex import ROLES, NamespaceIndex
from hippo.store.base import MessageRow
from hippo.text import attributes, fingerprints, timeexpr
from hippo.text.attributes import Statement
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
        # (entity, attribute) -> [(row, folded value, update cue)] of the attributes that hold one value at a time
        self.facts: dict[tuple[str, str], list[tuple[int, str, bool]]] = {}
        self.facts_of: dict[int, list[Statement]] = {}  # row -> the statements it makes (values that hold)
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
            role = idx.role.a
            user = ROLES.index("user")
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
                fp = fingerprints.fingerprints(text, [r.label() for r in refs])
                self.surprise.a[row] = fingerprints.surprise(fp, self.seen, text)
                self.salience.a[row] = salience(text)[0]
                self.seen |= fp
                if int(role[row]) != user:
                    continue
                statements = attributes.extract(text, idx.speakers[int(spk[row])])
                held = [st for st in statements if not st.negated]
                if held:
                    self.facts_of[row] = held
                for st in statements:
                    self._link(idx, row, st)
            self.done = n

    def _link(self, idx: NamespaceIndex, row: int, st: Statement) -> None:
        """Seed 002 stage 3: a statement of a single-valued attribute with a different value supersedes the latest
        earlier statement about the same entity and attribute; a statement that the value stops holding ("I'm not
        in Lyon anymore", "Biscuit passed away") supersedes the statement of that value. Nothing is deleted."""
        attribute = st.attribute
        if attribute == "favorite":  # "X is my favourite now": the favourite thing this entity last talked about
            kinds = [a for (e, a) in self.facts if e == st.entity and a.startswith("favorite_")]
            if len(kinds) != 1:
                return
            attribute = kinds[0]
            new = dataclasses.replace(st, attribute=attribute)
            self.facts_of[row] = [new if g is st else g for g in self.facts_of.get(row, [])]
            st = new
        if st.negated:
            for (entity, attr), history in self.facts.items():
                if entity != st.entity or not attributes.matches(attr, (attribute,)) or not history:
                    continue
                prev_row, prev_value, _ = history[-1]
                if prev_value == st.norm and prev_row != row and self.superseded_by.a[prev_row] < 0:
                    self._supersede(idx, prev_row, row, entity, attr, prev_value, "(no longer) " + prev_value, True)
            return
        if not attributes.single_valued(attribute) or not st.norm:
            return
        history = self.facts.setdefault((st.entity, attribute), [])
        # a second appointment with the same person is not a correction of the first: a scheduled time is
        # superseded only when the change is said ("rescheduled to", "moved to")
        said_change = st.update or not attribute.endswith("_time")
        if history and said_change:
            prev_row, prev_value, _ = history[-1]
            if not _same_value(prev_value, st.norm) and self.superseded_by.a[prev_row] < 0:
                self._supersede(idx, prev_row, row, st.entity, attribute, prev_value, st.norm, st.update)
        history.append((row, st.norm, st.update))

    def _supersede(self, idx: NamespaceIndex, old: int, new: int, entity: str, attribute: str, old_value: str,
                   new_value: str, update: bool) -> None:
        self.superseded_by.a[old] = new
        self.update_of[old] = update
        ids = idx.ids.view
        self.links.append(Link(int(ids[old]), int(ids[new]), entity, attribute, old_value, new_value,
                               "update" if update else "contradiction"))
        self.link_rows.append((old, new))

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


_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*|\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|"
                     r"aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|am|pm)\b")


def _same_value(a: str, b: str) -> bool:
    """Values that restate rather than update: the same numbers, months and halves of the day ("$550/month" and
    "550 monthly"; "April 28" differs from "October 28", "March 22 at 3 pm" from "March 22 at 4:30 pm"), or,
    without numbers, a shared word ("boston" and "boston area")."""
    na = [t if t[0].isdigit() else t[:3] for t in _NUMBER.findall(a)]
    nb = [t if t[0].isdigit() else t[:3] for t in _NUMBER.findall(b)]
    if any(c.isdigit() for c in a + b):
        return na == nb
    return bool(set(a.split()) & set(b.split()))
