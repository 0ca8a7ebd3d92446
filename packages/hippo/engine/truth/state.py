"""Per-namespace time-and-truth annotations, derived from the co-index and kept up to date incrementally.

One :class:`Truth` follows each namespace's :class:`~hippo.index.coindex.NamespaceIndex`. For every message row it
holds:

* event time: the caller's ``event_time`` when given, else the first time expression in the text resolved against
  the message timestamp (:mod:`hippo.text.timeexpr`), else the timestamp itself; plus the ingestion time;
* surprise (seed 002 stage 4) and salience (the encoding gate's rule-based salience, seed 002 stage 1);
* attribute statements (:mod:`hippo.text.attributes`, the extractor the speaker profiles read too) and the supersedes
  links between them (seed 002 stage 3; seed 003 §3.3 resolves updates by recency with ``seq`` / ``time``):
  ``superseded_by[row]`` is the row of the newer statement, or -1. Only what people say of themselves (messages of
  the ``user`` role) and of named projects is read: an assistant's first-person text is advice, drafts and examples.

Everything is a function of the messages in order; what depends on earlier rows (surprise counts fact fingerprints
not seen before, a fact supersedes the latest earlier statement) is kept in a form that deleting rows can replay
cheaply: each row's fingerprints as 64-bit hashes, each row's statements. Removing rows therefore leaves exactly the
annotations a rebuild over the surviving messages would compute, re-reading no text but the few earlier messages an
update's attribute is looked for in (:meth:`Truth._reread`). The whole state
is saved with the namespace's derived snapshot (:mod:`hippo.engine.persist`), never the only copy.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import re
import threading
from dataclasses import dataclass
from typing import Callable

import numpy as np

from hippo.base.arrays import GrowArray
from hippo.index.coindex import ROLES, NamespaceIndex
from hippo.store import snapshot
from hippo.text import attributes, fingerprints, lexicon, timeexpr
from hippo.text.attributes import Statement
from hippo.text.salience import salience

# stored by index in snapshots: a new granularity goes at the end
GRANULARITIES = ("none", "day", "week", "weekend", "month", "year", "caller", "days")
# An update's attribute is looked for in at most this many of the speaker's earlier messages that hold its head word,
# the newest first (a statement is updated within a stretch of history, and the search stays bounded).
REREAD_ROWS = 50
_CALLER = GRANULARITIES.index("caller")
CALLER = _CALLER
# the event times that are instants, not days kept from midnight UTC: the timestamp's and the caller's
INSTANT_GRANULARITIES = (GRANULARITIES.index("none"), _CALLER)


@dataclass(frozen=True)
class Link:
    old: int        # message id of the superseded statement
    new: int        # message id of the newer statement
    entity: str
    attribute: str
    old_value: str
    new_value: str
    kind: str       # "update" (the newer one carries an update cue) or "contradiction" (it does not)


def fingerprint_hash(fp: str) -> int:
    """A fact fingerprint as a stable 64-bit number (the same in every process; no text is kept)."""
    return int.from_bytes(hashlib.blake2b(fp.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


def surprise_of(new: np.ndarray | int, total: np.ndarray | int, text_len: np.ndarray | int,
                event: np.ndarray | bool) -> np.ndarray:
    """:func:`hippo.text.fingerprints.surprise` from its ingredients (new and total fingerprints, text length in
    characters, whether an event word is among them), vectorized; the same arithmetic in the same order."""
    new = np.asarray(new, dtype=np.float64)
    total = np.asarray(total, dtype=np.float64)
    score = 0.8 * new / np.maximum(total, 1.0)
    score = score + 0.1 * np.minimum(1.0, np.asarray(text_len, dtype=np.float64) / 300.0)
    score = score + np.where(np.asarray(event, dtype=bool), 0.1, 0.0)
    return np.where(total > 0, np.minimum(1.0, score), 0.0)


def surprise_one(new: int, total: int, text_len: int, event: bool) -> float:
    """:func:`surprise_of` of one message, in Python floats: the same arithmetic in the same order (IEEE doubles
    both), without numpy's per-call cost on scalars."""
    if not total > 0:
        return 0.0
    score = 0.8 * float(new) / max(float(total), 1.0)
    score = score + 0.1 * min(1.0, float(text_len) / 300.0)
    score = score + (0.1 if event else 0.0)
    return min(1.0, score)


def _last_run(history: list[tuple[int, str, bool]], same: Callable[[str], bool]) -> list[tuple[int, str]]:
    """``(row, value)`` of the statements at the end of ``history`` whose value is ``same``, oldest first: a value
    and its restatements ("I live in Oslo", "I still live in Oslo"), which a change of the value supersedes alike."""
    run: list[tuple[int, str]] = []
    for row, value, _ in reversed(history):
        if not same(value):
            break
        run.append((row, value))
    return run[::-1]


def said_at(idx: NamespaceIndex, rows: np.ndarray) -> np.ndarray:
    """When each of ``rows`` was said, as far as the store knows: its timestamp, else the time it was added."""
    said = idx.ts.a[rows].astype(np.float64)
    return np.where(np.isnan(said), idx.created.a[rows], said)


def said_at_row(idx: NamespaceIndex, row: int) -> float:
    """:func:`said_at` of one row, as a float, without numpy's per-call cost on a one-element array."""
    said = float(idx.ts.a[row])
    return said if said == said else float(idx.created.a[row])


def _names(attribute: str, attr: str) -> bool:
    """Whether a statement's ``attribute`` names the stored attribute ``attr``: as a pattern of it (a negation's
    "*"), or as "favorite", which resolves to a favourite kind ("favorite_food")."""
    return attributes.matches(attr, (attribute,)) or (attribute == "favorite" and attr.startswith("favorite_"))


class Truth:
    ROW_COLUMNS = {  # name -> (dtype, fill)
        "event_start": (np.float64, np.nan), "event_end": (np.float64, np.nan),
        # the instant that dates a period said with "since" (when it began: TimeRef.at), NaN for every other row
        "event_onset": (np.float64, np.nan),
        "gran": (np.int8, 0),              # index into GRANULARITIES; 0 = from the timestamp
        "has_time": (np.bool_, False),     # the text carries a time expression
        "created": (np.float64, np.nan),   # ingestion time (for as_of)
        "surprise": (np.float32, 0.0), "salience": (np.float32, 0.0),
        "superseded_by": (np.int64, -1),   # row of the newer statement
        "text_len": (np.int32, 0),         # characters (surprise's length bonus)
        "has_event": (np.bool_, False),    # an event word among the fingerprints
        "has_span": (np.bool_, False),     # the text states a span of time ("for 3 years")
        "fp_end": (np.int64, 0),           # end of the row's fingerprints in fp_hash
    }

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.done = 0                                  # rows covered so far
        self.annotated = 0                             # rows among them really annotated (see ``deferred``)
        # A deferred state stands in while the annotations are rebuilt in the background: rows it covers past
        # ``annotated`` are neutral (event time = timestamp, no fingerprint, fact or surprise).
        self.deferred = False
        self.latest: float | None = None               # the latest message timestamp: "now" for query dates
        for name, (dtype, fill) in self.ROW_COLUMNS.items():
            setattr(self, name, GrowArray(dtype, fill=fill))
        self.fp_hash = GrowArray(np.uint64)            # every row's fingerprint hashes, rows one after another
        self.phrase: dict[int, str] = {}               # row -> the time expression as said
        self._labels: dict[int, str | None] = {}        # row -> label(), cached
        self._seen: set[int] | None = set()            # hashes of the fingerprints of the annotated rows
        self._stated: dict[int, list[Statement]] = {}  # row -> every statement it makes (negated ones too)
        # derived from _stated in the order the rows were said (see :meth:`relink`)
        self._facts_of: dict[int, list[Statement]] = {}  # row -> the statements it makes (values that hold)
        # (entity, attribute) -> [(row, folded value, update cue)] of the attributes that hold one value at a time
        self._facts: dict[tuple[str, str], list[tuple[int, str, bool]]] = {}
        self._update_of: dict[int, bool] = {}           # superseded row -> the newer statement had an update cue
        self._links: list[Link] = []
        self._link_rows: list[tuple[int, int]] = []    # (old row, new row), parallel to links
        # facts and links of a loaded snapshot, turned into the structures above when first read
        self._pending_facts: Callable[[], None] | None = None
        self._facts_lock = threading.Lock()
        self._stated_at: float | None = None  # the latest said_at of a row in _stated (None: to be computed)
        # (row, statement, head word) of the updates that may have their earlier value read again (None: to be found)
        self._updates: list[tuple[int, Statement, str]] | None = None
        # (entity, attribute) -> (its history in ``_facts``, entries counted, the latest said_at among them): the
        # history only grows until ``_facts`` is made again, so a new entry is counted once
        self._said_last: dict[tuple[str, str], tuple[list, int, float]] = {}
        # rows whose statements were linked as they came since the links were last made in the order things were
        # said (None: unknown, as after a snapshot's load, or too many to keep): what a partial relink starts from
        self._unsettled: set[int] | None = set()
        # rows below this one come from a snapshot written before ``has_span`` was kept: read when first asked
        self.spans_unread = 0
        self._spans: dict[int, bool] = {}              # such a row -> its text states a span of time
        # rows below this one were annotated under another time rule (``untimed_rule``, that of the snapshot they
        # were loaded from): what the rule reads of them is read again by :meth:`retime`, the rest is kept
        self.untimed = 0
        self.untimed_rule: int | None = None
        # the fingerprint hashes of the rows read again so far, one row after another, and how many each row has
        self._retimed_fp, self._retimed_n = GrowArray(np.uint64), GrowArray(np.int64)

    def _facts_ready(self) -> None:
        make = self._pending_facts
        if make is not None:
            with self._facts_lock:
                if self._pending_facts is not None:
                    make()
                    self._pending_facts = None

    @property
    def stated(self) -> dict[int, list[Statement]]:
        self._facts_ready()
        return self._stated

    @stated.setter
    def stated(self, value: dict[int, list[Statement]]) -> None:
        self._facts_ready()
        self._stated = value

    @property
    def facts_of(self) -> dict[int, list[Statement]]:
        self._facts_ready()
        return self._facts_of

    @facts_of.setter
    def facts_of(self, value: dict[int, list[Statement]]) -> None:
        self._facts_ready()
        self._facts_of = value

    @property
    def facts(self) -> dict[tuple[str, str], list[tuple[int, str, bool]]]:
        self._facts_ready()
        return self._facts

    @facts.setter
    def facts(self, value: dict) -> None:
        self._facts_ready()
        self._facts = value
        self._said_last = {}

    @property
    def update_of(self) -> dict[int, bool]:
        return self._update_of  # read on every ranking: kept ready (one entry per link)

    @update_of.setter
    def update_of(self, value: dict[int, bool]) -> None:
        self._facts_ready()
        self._update_of = value

    @property
    def links(self) -> list[Link]:
        self._facts_ready()
        return self._links

    @links.setter
    def links(self, value: list[Link]) -> None:
        self._facts_ready()
        self._links = value

    @property
    def link_rows(self) -> list[tuple[int, int]]:
        self._facts_ready()
        return self._link_rows

    @link_rows.setter
    def link_rows(self, value: list[tuple[int, int]]) -> None:
        self._facts_ready()
        self._link_rows = value

    @property
    def seen(self) -> set[int]:
        """Hashes of every fingerprint of the annotated rows (built from ``fp_hash`` when first needed)."""
        if self._seen is None:
            self._seen = set(self.fp_hash.view.tolist())
        return self._seen

    def _columns(self):
        return [getattr(self, name) for name in self.ROW_COLUMNS]

    # -- building -------------------------------------------------------------------------------------------
    def sync(self, idx: NamespaceIndex, texts: dict[int, str] | None = None, upto: int | None = None) -> None:
        """Annotate the rows appended since the last call, up to ``upto`` (``texts`` may carry already-decoded
        texts by row)."""
        n = len(idx) if upto is None else min(upto, len(idx))
        if self.done >= n:
            return
        with self.lock:
            start = self.done
            if start >= n:
                return
            for col in self._columns():
                col.resize(n)
            if self.deferred:
                self._neutral(idx, start, n)
                return
            ids = idx.ids.view
            ts = idx.ts.a
            spk = idx.speaker.a
            role = idx.role.a
            user = ROLES.index("user")
            self._facts_ready()  # statements of a loaded snapshot first: new ones link to them
            relink = False
            stream = ((r, texts[r]) for r in range(start, n)) if texts and all(
                r in texts for r in range(start, n)) else idx.texts(start, n)
            for row, text in stream:
                t = float(ts[row])
                t = None if t != t else t
                if t is not None and (self.latest is None or t > self.latest):
                    self.latest = t
                self.created.a[row] = idx.created.a[row]
                refs = self._time(idx, row, text, t)
                self.has_time.a[row] = bool(refs)
                fp = fingerprints.fingerprints(text, [r.label() for r in refs])
                hashes = sorted(fingerprint_hash(f) for f in fp)
                seen = self.seen  # built from fp_hash when unset: before this row's own hashes join it
                new = sum(1 for h in hashes if h not in seen)
                self.fp_hash.extend(np.asarray(hashes, dtype=np.uint64))
                self.fp_end.a[row] = self.fp_hash.n
                self.text_len.a[row] = len(text)
                event = any(f.startswith("e:") for f in fp)
                self.has_event.a[row] = event
                self.has_span.a[row] = timeexpr.states_span(text)
                self.surprise.a[row] = surprise_one(new, len(fp), len(text), event)
                self.salience.a[row] = salience(text)[0]
                seen.update(hashes)
                if int(role[row]) == user:
                    statements = attributes.extract(text, idx.speakers[int(spk[row])])
                    at = said_at_row(idx, row)
                    if statements and self._unsettled is not None:
                        self._unsettled.add(row)
                    if self._out_of_order(idx, row, at, text, statements):
                        # said before statements it would link to (a history added out of order): the links are
                        # made again in the order the rows were said, once this batch is read
                        self._state(ids, row, statements, link=False)
                        relink = True
                    else:
                        self._state(ids, row, statements, reread=lambda r, st: self._reread(idx, r, st))
                    if statements:
                        if self._stated_at is not None:
                            self._stated_at = max(self._stated_at, at)
                        if self._updates is not None:
                            self._updates.extend(self._updates_in(row, statements))
                self.done = self.annotated = row + 1
            if relink:
                self.relink(ids, idx, partial=True)
            elif self._unsettled is not None and len(self._unsettled) > max(64, len(self._stated) // 4):
                self._unsettled = None  # a relink will make every link again, as cheaply

    def _out_of_order(self, idx: NamespaceIndex, row: int, at: float, text: str, statements: list[Statement]
                      ) -> bool:
        """Whether the user message ``row``, said at ``at`` (:func:`said_at`), was said before statements it would
        link to, so that linked as it comes it would be linked wrongly or not at all: one of its ``statements`` is
        about an attribute stated later, or its ``text`` states in other words the earlier value of an update said
        later (:meth:`_reread`). Only a message said before the latest statement is looked at. Caller holds the
        lock."""
        if self._stated_at is None:
            stated = np.fromiter(self._stated, dtype=np.int64, count=len(self._stated))
            self._stated_at = float(said_at(idx, stated).max()) if stated.size else -np.inf
        if at >= self._stated_at:
            return False
        entities = {st.entity for st in statements}
        for (entity, attr), history in self._facts.items():
            if entity in entities and self._said_last_of(idx, (entity, attr), history) > at and any(
                    st.entity == entity and _names(st.attribute, attr) for st in statements):
                return True
        # an update said later whose earlier value this message may state in other words
        if self._updates is None:
            self._updates = [u for r, sts in self._stated.items() for u in self._updates_in(r, sts)]
        if not self._updates:
            return False
        low = text.lower()
        speaker = int(idx.speaker.a[row])
        found = False
        for r, st, head in self._updates:
            if head[:3] in low and int(idx.speaker.a[r]) == speaker and \
                    said_at_row(idx, r) > at and attributes.restated(text, st) is not None:
                found = True  # every such update reads its earlier value again when the links are made again
                if self._unsettled is None:
                    break
                self._unsettled.add(r)
        return found

    @staticmethod
    def _updates_in(row: int, statements: list[Statement]) -> list[tuple[int, Statement, str]]:
        """``(row, statement, head word)`` of the updates among ``statements`` of ``row`` whose earlier value may be
        stated in other words (``attributes.restated_head``)."""
        return [(row, st, head) for st in statements
                if st.update and not st.reread and (head := attributes.restated_head(st)) is not None]

    def _said_last_of(self, idx: NamespaceIndex, key: tuple[str, str], history: list[tuple[int, str, bool]]
                      ) -> float:
        """The latest :func:`said_at` of the rows of ``history`` (the statements of ``key`` in ``_facts``), -inf for
        none; each entry is read once while the history grows. Caller holds the lock."""
        known = self._said_last.get(key)
        counted, latest = (known[1], known[2]) if known is not None and known[0] is history \
            and known[1] <= len(history) else (0, -np.inf)
        if counted < len(history):
            rows = np.fromiter((r for r, _, _ in history[counted:]), dtype=np.int64, count=len(history) - counted)
            latest = max(latest, float(said_at(idx, rows).max()))
            self._said_last[key] = (history, len(history), latest)
        return latest

    def _neutral(self, idx: NamespaceIndex, start: int, n: int) -> None:
        ts = idx.ts.view[start:n]
        self.event_start.a[start:n] = ts
        self.event_end.a[start:n] = ts
        self.event_onset.a[start:n] = np.nan
        self.created.a[start:n] = idx.created.view[start:n]
        self.fp_end.a[start:n] = self.fp_hash.n
        if ts.size and not np.isnan(ts).all():
            top = float(np.nanmax(ts))
            self.latest = top if self.latest is None else max(self.latest, top)
        self.done = n

    def copy(self, idx: NamespaceIndex, rows: int) -> "Truth":
        """An independent, not deferred copy of the first ``rows`` rows (annotated ones) of ``idx``."""
        meta, arrays = self.to_snapshot(rows)
        ts = idx.ts.view[:rows]
        meta["latest"] = float(np.nanmax(ts)) if ts.size and not np.isnan(ts).all() else None
        t = Truth.from_snapshot(meta, arrays, idx)
        t.untimed, t.untimed_rule = min(self.untimed, rows), self.untimed_rule
        return t

    @property
    def retimed(self) -> int:
        """How many of the rows below :attr:`untimed` :meth:`retime` has read."""
        return self._retimed_n.n

    def retime(self, idx: NamespaceIndex, upto: int | None = None) -> None:
        """Read again, by this version's time rule, what it reads of the rows below :attr:`untimed` (annotated under
        another one), from where the last call stopped up to ``upto`` (all when None): their event times and time
        expressions, their fingerprints (which hold the times' labels), event words and spans of time. Their
        statements, links, salience and lengths are the rule's business no more than their texts are, and stay.
        Once every such row is read, their fingerprints replace the old ones and every row's surprise is made again
        in order (a fingerprint one of them no longer has may be new in a later row), as :meth:`sync` makes it."""
        with self.lock:
            start, n = self._retimed_n.n, self.untimed if upto is None else min(upto, self.untimed)
            ts = idx.ts.a
            for row, text in idx.texts(start, n) if start < n else ():
                t = float(ts[row])
                refs = self._time(idx, row, text, None if t != t else t)
                self.has_time.a[row] = bool(refs)
                fp = fingerprints.fingerprints(text, [r.label() for r in refs])
                self._retimed_fp.extend(np.asarray(sorted(fingerprint_hash(f) for f in fp), dtype=np.uint64))
                self._retimed_n.extend(np.asarray([len(fp)], dtype=np.int64))
                self.has_event.a[row] = any(f.startswith("e:") for f in fp)
                self.has_span.a[row] = timeexpr.states_span(text)
            if self._retimed_n.n < self.untimed:
                return
            m, done = self.untimed, self.done
            ends = self.fp_end.view[:done]
            old_m = int(ends[m - 1]) if m else 0
            rest = self.fp_hash.view[old_m: int(ends[-1]) if done else 0]
            counts = np.concatenate([self._retimed_n.view, np.diff(ends[m:], prepend=old_m)])
            hashes = np.concatenate([self._retimed_fp.view, rest]).astype(np.uint64)
            self.fp_hash = GrowArray(np.uint64, max(64, hashes.size))
            self.fp_hash.extend(hashes)
            self.fp_end.a[:done] = np.cumsum(counts)
            # a fingerprint is new in a row where it is written before any earlier row wrote it (each time it
            # stands there, as sync counts it)
            rows = np.repeat(np.arange(done), counts)
            _, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
            new = np.bincount(rows[rows[first][inverse] == rows], minlength=done)
            self.surprise.a[:done] = surprise_of(new, counts, self.text_len.view[:done],
                                                 self.has_event.view[:done]).astype(np.float32)
            self._seen = None
            self.spans_unread, self._spans = 0, {}
            self.untimed, self.untimed_rule = 0, None
            self._retimed_fp, self._retimed_n = GrowArray(np.uint64), GrowArray(np.int64)

    def _time(self, idx: NamespaceIndex, row: int, text: str, t: float | None) -> list:
        """Set the row's event time (caller's, else the text's first time expression, else the timestamp);
        returns the time expressions found."""
        off = float(idx.utc_offset.a[row])
        refs = timeexpr.find(text, t, None if off != off else off)
        caller = float(idx.event_time.a[row])
        self.phrase.pop(row, None)
        self._labels.pop(row, None)
        self.gran.a[row] = 0
        self.event_start.a[row] = self.event_end.a[row] = self.event_onset.a[row] = np.nan
        if caller == caller:
            self.event_start.a[row], self.event_end.a[row] = caller, caller + timeexpr.DAY
            self.gran.a[row] = _CALLER
        elif refs:
            self.event_start.a[row], self.event_end.a[row] = refs[0].start, refs[0].end
            if refs[0].onset_end is not None:
                self.event_onset.a[row] = refs[0].at
            self.gran.a[row] = GRANULARITIES.index(refs[0].granularity)
            if refs[0].relative:
                self.phrase[row] = refs[0].phrase
        elif t is not None:
            self.event_start.a[row], self.event_end.a[row] = t, t
        return refs

    def _state(self, ids: np.ndarray, row: int, statements: list[Statement], link: bool = True,
               reread: Callable[[int, Statement], tuple[int, Statement] | None] | None = None) -> None:
        """Record the statements of ``row`` and link them to earlier ones (with ``link=False`` only the fact tables
        are filled: the links are known already). ``reread(row, statement)`` finds the earlier statement of an
        update's attribute said in other words (:meth:`_reread`); its finding is recorded as a statement of that
        earlier row, so that a replay of the rows' statements (:meth:`relink`) links the same rows."""
        if not statements:
            return
        self._stated[row] = statements
        held = [st for st in statements if not st.negated]
        if held:
            self._facts_of[row] = held
        for st in statements:
            if reread is not None and link and not self._facts.get((st.entity, st.attribute)):
                found = reread(row, st)
                if found is not None:
                    old, said = found
                    self._stated.setdefault(old, []).append(said)
                    self._facts_of.setdefault(old, []).append(said)
                    self._facts.setdefault((said.entity, said.attribute), []).append((old, said.norm, False))
            self._link(ids, row, st, link)

    def _reread(self, idx: NamespaceIndex, row: int, st: Statement) -> tuple[int, Statement] | None:
        """For an update of an amount whose attribute no earlier statement named (``attributes.restated_head``):
        the latest said of the speaker's messages said before it (:func:`said_at`; at the same time: added before
        it), among the last :data:`REREAD_ROWS` that hold the attribute's head word, that states the attribute in
        other words (``attributes.restated``), as ``(row, statement)``."""
        head = attributes.restated_head(st)
        if head is None:
            return None
        rows, _tf = idx.term_rows(lexicon.pattern(head))
        said = said_at(idx, rows)
        at = said_at_row(idx, row)
        # only rows annotated already (a background rebuild reads the index a chunk at a time): one said before but
        # read later relinks the namespace when it is read (:meth:`_out_of_order`)
        before = ((said < at) | ((said == at) & (rows < row))) & (rows < self.done)
        rows, said = rows[before], said[before]
        if rows.size == 0:
            return None
        user = ROLES.index("user")
        same = (idx.role.a[rows] == user) & (idx.speaker.a[rows] == idx.speaker.a[row])
        rows, said = rows[same], said[same]
        newest = rows[np.lexsort((rows, said))][-REREAD_ROWS:][::-1].tolist()
        for r, text in zip(newest, idx.texts_of(newest)):
            said_again = attributes.restated(text, st)
            if said_again is not None:
                return r, said_again
        return None

    def _link(self, ids: np.ndarray, row: int, st: Statement, link: bool = True) -> None:
        """Seed 002 stage 3: a statement of a single-valued attribute with a different value supersedes the latest
        earlier statement about the same entity and attribute; a statement that the value stops holding ("I'm not
        in Lyon anymore", "Biscuit passed away") supersedes the statement of that value. Nothing is deleted."""
        attribute = st.attribute
        if attribute == "favorite":  # "X is my favourite now": the favourite thing this entity last talked about
            kinds = [a for (e, a) in self._facts if e == st.entity and a.startswith("favorite_")]
            if len(kinds) != 1:
                return
            attribute = kinds[0]
            new = dataclasses.replace(st, attribute=attribute)
            self._facts_of[row] = [new if g is st else g for g in self._facts_of.get(row, [])]
            st = new
        if st.negated:
            if not link:
                return
            for (entity, attr), history in self._facts.items():
                if entity != st.entity or not attributes.matches(attr, (attribute,)) or not history:
                    continue
                for prev_row, prev_value in _last_run(history, lambda v: v == st.norm):
                    if prev_row != row and self.superseded_by.a[prev_row] < 0:
                        self._supersede(ids, prev_row, row, entity, attr, prev_value, "(no longer) " + prev_value,
                                        True)
            return
        if not attributes.single_valued(attribute) or not st.norm:
            return
        history = self._facts.setdefault((st.entity, attribute), [])
        # a second appointment with the same person is not a correction of the first: a scheduled time is
        # superseded only when the change is said ("rescheduled to", "moved to")
        said_change = st.update or not attribute.endswith("_time")
        if link and history and said_change:
            prev_value = history[-1][1]
            if not _same_value(prev_value, st.norm):
                for old_row, old_value in _last_run(history, lambda v: _same_value(v, prev_value)):
                    # a message that states two values ("I moved to Denver. Actually I now live in Seattle.") says
                    # the later one holds: it is not superseded by itself
                    if old_row != row and self.superseded_by.a[old_row] < 0:
                        self._supersede(ids, old_row, row, st.entity, attribute, old_value, st.norm, st.update)
        history.append((row, st.norm, st.update))

    def _supersede(self, ids: np.ndarray, old: int, new: int, entity: str, attribute: str, old_value: str,
                   new_value: str, update: bool) -> None:
        self.superseded_by.a[old] = new
        self._update_of[old] = update
        self._links.append(Link(int(ids[old]), int(ids[new]), entity, attribute, old_value, new_value,
                                "update" if update else "contradiction"))
        self._link_rows.append((old, new))

    def relink(self, ids: np.ndarray, idx: NamespaceIndex | None = None, partial: bool = False) -> None:
        """Recompute the fact tables and the supersedes links from every row's statements, in the order the rows
        were said (:func:`said_at`; rows said at the same time in row order): a statement supersedes the one said
        before it, whatever order they were added in. With ``idx`` (the index the rows are of), the statements read
        again for updates are read again (:meth:`_reread`), as a rebuild over these rows would; without it they are
        replayed in row order. ``partial`` (with ``idx``): only the statements that can depend on the ones linked
        as they came since the last relink are linked again (:meth:`_relink_part`), with the same result."""
        self._facts_ready()
        if partial and idx is not None and self._relink_part(ids, idx):
            self._unsettled = set()
            return
        self._unsettled = set()
        stated = self._stated
        if idx is not None:
            stated = {r: kept for r, v in stated.items() if (kept := [st for st in v if not st.reread])}
        self._stated, self._facts_of, self._facts = {}, {}, {}
        self._update_of, self._links, self._link_rows = {}, [], []
        self.superseded_by.a[: self.superseded_by.n] = -1
        reread = (lambda r, st: self._reread(idx, r, st)) if idx is not None else None
        self._stated_at, self._updates = None, None
        self._said_last = {}
        rows = sorted(stated)
        if idx is not None and rows:
            order = np.asarray(rows, dtype=np.int64)
            rows = [rows[k] for k in np.lexsort((order, said_at(idx, order))).tolist()]
        for row in rows:
            self._state(ids, row, stated[row], reread=reread)

    def _relink_part(self, ids: np.ndarray, idx: NamespaceIndex) -> bool:
        """:meth:`relink` of the statements that can depend on the rows linked as they came since the last relink
        (``_unsettled``); False when it cannot tell (nothing is changed then, or what was changed is what a whole
        relink makes again).

        A statement's links depend only on the statements of its own group: statements of one (entity, attribute)
        are one group, and groups join when one message states both (a message is superseded once), when a
        statement's attribute names others (a "favourite" resolved to the one favourite kind the entity has, a
        negation of an attribute pattern) or when an update's earlier value is read again from a message (which then
        states it). Linking again the groups of the unsettled rows, in the order their rows were said, gives the
        links a whole relink gives; the links are then ordered as it orders them (by when the newer statement was
        said, then by row, a row's links in the order its statements made them)."""
        unsettled = self._unsettled
        if unsettled is None:
            return False
        stated = self._stated
        parent: dict[tuple[str, str], tuple[str, str]] = {}

        def find(k: tuple[str, str]) -> tuple[str, str]:
            root = parent.setdefault(k, k)
            while root != parent[root]:
                root = parent[root]
            while parent[k] != root:
                parent[k], k = root, parent[k]
            return root

        def join(a: tuple[str, str], b: tuple[str, str]) -> None:
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[rb] = ra

        by_entity: dict[str, set[str]] = {}
        patterns: list[tuple[str, str]] = []
        for sts in stated.values():
            first = (sts[0].entity, sts[0].attribute)
            for st in sts:
                key = (st.entity, st.attribute)
                join(first, key)
                by_entity.setdefault(st.entity, set()).add(st.attribute)
                if st.attribute == "favorite" or "*" in st.attribute:
                    patterns.append(key)
        for entity, attribute in patterns:
            for attr in by_entity[entity]:
                if _names(attribute, attr):
                    join((entity, attribute), (entity, attr))
        moved = {find((st.entity, st.attribute)) for r in unsettled if r in stated for st in stated[r]}
        if not moved:
            return True
        rows = [r for r, sts in stated.items() if find((sts[0].entity, sts[0].attribute)) in moved]
        if 2 * len(rows) > len(stated):
            return False  # most of the statements: a whole relink costs as much
        replay = set(rows)
        # what the relink makes again leaves: the groups' facts, links, marks and statements read again
        kept = [(link, pair) for link, pair in zip(self._links, self._link_rows) if pair[1] not in replay]
        for link, (old, new) in zip(self._links, self._link_rows):
            if new in replay:
                self.superseded_by.a[old] = -1
                self._update_of.pop(old, None)
        for r in rows:
            self._facts_of.pop(r, None)
            own = [st for st in stated.pop(r) if not st.reread]
            if own:
                stated[r] = own
        self._facts = {k: v for k, v in self._facts.items() if find(k) not in moved}
        self._said_last = {k: v for k, v in self._said_last.items() if k in self._facts}
        self._links = [link for link, _ in kept]
        self._link_rows = [pair for _, pair in kept]
        found: list[int] = []

        def reread(r: int, st: Statement) -> tuple[int, Statement] | None:
            got = self._reread(idx, r, st)
            if got is not None:
                found.append(got[0])
            return got

        todo = np.asarray(sorted(r for r in rows if r in stated), dtype=np.int64)
        for row in todo[np.lexsort((todo, said_at(idx, todo)))].tolist():
            self._state(ids, row, stated[row], reread=reread)
        if any(r not in replay for r in found):
            return False  # an earlier value read from a message of another group joins the groups
        if self._link_rows:
            pairs = np.asarray(self._link_rows, dtype=np.int64)
            new = pairs[:, 1]
            order = np.lexsort((np.arange(new.size), new, said_at(idx, new))).tolist()
            self._links = [self._links[k] for k in order]
            self._link_rows = [self._link_rows[k] for k in order]
        return True

    def states_span(self, idx: NamespaceIndex, rows: np.ndarray) -> np.ndarray:
        """Per row of ``rows``: whether its text states a span of time ("for 3 years", "a few months":
        :func:`hippo.text.timeexpr.states_span`), read when the row was annotated; a row of a snapshot written
        before that is read the first time a question asks (a "how long" question), and its answer kept."""
        rows = np.asarray(rows, dtype=np.int64)
        out = self.has_span.a[rows].astype(bool)
        unread = rows < self.spans_unread
        if not unread.any():
            return out
        with self.lock:
            known = self._spans
            todo = [r for r in dict.fromkeys(rows[unread].tolist()) if r not in known]
        if todo:
            got = dict(zip(todo, map(timeexpr.states_span, idx.texts_of(todo))))
            with self.lock:
                self._spans.update(got)
                known = self._spans
        out[unread] = [known.get(r, False) for r in rows[unread].tolist()]
        return out

    # -- following deletions and updates --------------------------------------------------------------------
    def remove_rows(self, keep: np.ndarray, idx: NamespaceIndex) -> None:
        """Drop the rows where ``keep`` is False (``idx`` is the index after the same removal): every annotation
        that depended on earlier rows (surprise, supersedes links, the latest timestamp) is replayed over the
        surviving rows, as a rebuild would compute it."""
        with self.lock:
            keep = np.asarray(keep, dtype=bool)
            done = self.done
            keep_done = keep[:done]
            new_row = np.cumsum(keep_done) - 1
            counts = np.diff(self.fp_end.view[:done], prepend=0)
            pair_keep = np.repeat(keep_done, counts)
            hashes = self.fp_hash.view[: int(self.fp_end.a[done - 1]) if done else 0][pair_keep]
            counts = counts[keep_done]
            for name in self.ROW_COLUMNS:
                col = getattr(self, name)
                values = col.view[:done][keep_done].copy()
                fresh = GrowArray(col.a.dtype, max(64, values.size), fill=col.fill)
                fresh.extend(values)
                setattr(self, name, fresh)
            self.fp_end.a[: self.fp_end.n] = np.cumsum(counts)
            self.fp_hash = GrowArray(np.uint64, max(64, hashes.size))
            self.fp_hash.extend(hashes)
            self.done = int(keep_done.sum())
            self.annotated = int(keep[: self.annotated].sum())
            self.untimed = int(keep[: self.untimed].sum())
            self._retimed_fp, self._retimed_n = GrowArray(np.uint64), GrowArray(np.int64)  # read again from the first
            first_gone = int(np.argmin(keep_done)) if not keep_done.all() else self.done
            # the rows that have a phrase or statements, looked up in the kept mask (not a map of every row)
            self.phrase = {int(new_row[r]): v for r, v in self.phrase.items() if r < done and keep_done[r]}
            self.stated = {int(new_row[r]): v for r, v in self.stated.items() if r < done and keep_done[r]}
            self._labels = {}
            self.spans_unread = int(keep[: self.spans_unread].sum())
            self._spans = {}
            # surprise: a fingerprint is new in the first surviving row that has it
            self._seen = None
            if self.done and first_gone < self.done:
                rows = np.repeat(np.arange(self.done), counts)
                _, first = np.unique(hashes, return_index=True)  # hashes are in row order: first occurrence
                new = np.bincount(rows[first], minlength=self.done)
                s = surprise_of(new, counts, self.text_len.view, self.has_event.view).astype(np.float32)
                self.surprise.a[first_gone : self.done] = s[first_gone:]
            ts = idx.ts.view[: self.done]
            self.latest = float(np.nanmax(ts)) if ts.size and not np.isnan(ts).all() else None
            self.relink(idx.ids.view, idx)

    def update_rows(self, idx: NamespaceIndex, rows: list[int]) -> None:
        """Rows whose caller-given event time may have changed (a metadata update): their event time again."""
        with self.lock:
            for row in rows:
                if row < self.done:
                    t = float(idx.ts.a[row])
                    self._time(idx, row, idx.text_of(row), None if t != t else t)

    # -- snapshots ------------------------------------------------------------------------------------------
    def to_snapshot(self, rows: int | None = None) -> tuple[dict, dict[str, np.ndarray]]:
        done = self.done if rows is None else rows
        arrays = {name: getattr(self, name).view[:done] for name in self.ROW_COLUMNS if name != "created"}
        sup = arrays["superseded_by"]
        arrays["superseded_by"] = np.where(sup < done, sup, -1)  # links to rows past the cut are not kept
        arrays["fp_hash"] = self.fp_hash.view[: int(self.fp_end.a[done - 1]) if done else 0]
        strings = snapshot.Strings()
        facts = [(r, f) for r, fs in sorted(self.stated.items()) if r < done for f in fs]
        arrays.update({
            "facts.row": np.asarray([r for r, _ in facts], dtype=np.int64),
            "facts.entity": np.asarray([strings(f.entity) for _, f in facts], dtype=np.int32),
            "facts.attribute": np.asarray([strings(f.attribute) for _, f in facts], dtype=np.int32),
            "facts.value": np.asarray([strings(f.value) for _, f in facts], dtype=np.int32),
            "facts.sentence": np.asarray([strings(f.sentence) for _, f in facts], dtype=np.int32),
            "facts.span_start": np.asarray([f.span[0] for _, f in facts], dtype=np.int64),
            "facts.span_end": np.asarray([f.span[1] for _, f in facts], dtype=np.int64),
            "facts.update": np.asarray([f.update for _, f in facts], dtype=bool),
            "facts.negated": np.asarray([f.negated for _, f in facts], dtype=bool),
            "facts.first_person": np.asarray([f.first_person for _, f in facts], dtype=bool),
            "facts.reread": np.asarray([f.reread for _, f in facts], dtype=bool)})
        links = [(link, o, n) for link, (o, n) in zip(self.links, self.link_rows) if o < done and n < done]
        arrays.update({
            "links.old": np.asarray([o for _, o, _ in links], dtype=np.int64),
            "links.new": np.asarray([n for _, _, n in links], dtype=np.int64),
            "links.entity": np.asarray([strings(x.entity) for x, _, _ in links], dtype=np.int32),
            "links.attribute": np.asarray([strings(x.attribute) for x, _, _ in links], dtype=np.int32),
            "links.old_value": np.asarray([strings(x.old_value) for x, _, _ in links], dtype=np.int32),
            "links.new_value": np.asarray([strings(x.new_value) for x, _, _ in links], dtype=np.int32),
            "links.update": np.asarray([x.kind == "update" for x, _, _ in links], dtype=bool),
            "links.cue": np.asarray([self.update_of[o] for _, o, _ in links], dtype=bool)})
        phrase = sorted((r, p) for r, p in self.phrase.items() if r < done)
        arrays["phrase.row"] = np.asarray([r for r, _ in phrase], dtype=np.int64)
        arrays["phrase.text"] = np.asarray([strings(p) for _, p in phrase], dtype=np.int32)
        arrays.update(strings.arrays())
        # rows annotated under another time rule are saved under that rule's number (read again at the next load)
        return {"done": done, "latest": self.latest, "spans_unread": min(self.spans_unread, done),
                "time_rule": self.untimed_rule if self.untimed else timeexpr.RULE}, arrays

    @staticmethod
    def current(meta: dict) -> bool:
        """Whether annotations saved with ``meta`` read time expressions with this version's rules (a snapshot
        written before the rules had a version: version 1)."""
        return meta.get("time_rule", 1) == timeexpr.RULE

    @classmethod
    def from_snapshot(cls, meta: dict, arrays: dict[str, np.ndarray], idx: NamespaceIndex | np.ndarray) -> "Truth":
        """The annotations of a snapshot of the rows of ``idx`` (or of the rows whose message ids are ``idx``;
        then ``created`` stays unset). Facts and links become Python structures when first read."""
        t = cls()
        ids = idx if isinstance(idx, np.ndarray) else idx.ids.view
        done = int(meta["done"])
        if not 0 <= done <= ids.size:
            raise ValueError("annotations cover more rows than the index holds")
        for name, (dtype, fill) in cls.ROW_COLUMNS.items():
            if name == "created":
                values = (np.full(done, np.nan) if isinstance(idx, np.ndarray) else idx.created.view[:done])
            elif name == "event_onset" and name not in arrays:  # a snapshot written before onsets were kept
                values = np.full(done, np.nan)
            elif name == "has_span" and name not in arrays:  # a snapshot written before spans were kept
                values = np.zeros(done, dtype=dtype)
                t.spans_unread = done
            else:
                values = np.asarray(arrays[name], dtype=dtype)
            if values.shape != (done,):
                raise ValueError(f"annotation column {name} has the wrong length")
            setattr(t, name, GrowArray.wrap(np.array(values, dtype=dtype), fill=fill))
        hashes = np.asarray(arrays["fp_hash"], dtype=np.uint64)
        ends = t.fp_end.view
        if (done and (ends[-1] != hashes.size or (np.diff(ends, prepend=0) < 0).any())) or (not done and hashes.size):
            raise ValueError("fingerprint table does not match its rows")
        t.fp_hash = GrowArray.wrap(np.array(hashes, dtype=np.uint64))
        unread = meta.get("spans_unread", 0)
        if not isinstance(unread, int) or not 0 <= unread <= done:
            raise ValueError("spans_unread out of range")
        t.spans_unread = max(t.spans_unread, unread)
        sup = t.superseded_by.view
        if sup.size and (sup.max() >= done or sup.min() < -1):
            raise ValueError("supersedes link out of range")
        if (t.gran.view.size and (t.gran.view.min() < 0 or t.gran.view.max() >= len(GRANULARITIES))):
            raise ValueError("granularity out of range")
        text = snapshot.StringTable(arrays)
        f_rows = np.asarray(arrays["facts.row"], dtype=np.int64)
        f_cols = [arrays[f"facts.{c}"] for c in ("entity", "attribute", "value", "sentence", "span_start",
                                                  "span_end", "update", "negated", "first_person")]
        l_old, l_new = np.asarray(arrays["links.old"], dtype=np.int64), np.asarray(arrays["links.new"], np.int64)
        l_cols = [arrays[f"links.{c}"] for c in ("entity", "attribute", "old_value", "new_value", "update", "cue")]
        # a snapshot written before statements were read again for updates has no such column: none was
        f_again = np.asarray(arrays["facts.reread"], dtype=bool) if "facts.reread" in arrays \
            else np.zeros(f_rows.shape, dtype=bool)
        p_rows, p_text = np.asarray(arrays["phrase.row"], dtype=np.int64), arrays["phrase.text"]
        if any(c.shape != f_rows.shape for c in [*f_cols, f_again]) \
                or any(c.shape != l_old.shape for c in [l_new, *l_cols]) or p_text.shape != p_rows.shape:
            raise ValueError("fact, link or phrase columns disagree")
        for refs in (*f_cols[:4], *l_cols[:4], p_text):
            text.check(refs)
        if (f_rows.size and (f_rows.min() < 0 or f_rows.max() >= done or (np.diff(f_rows) < 0).any())) \
                or (p_rows.size and (p_rows.min() < 0 or p_rows.max() >= done)):
            raise ValueError("fact or phrase row out of range")
        # a link goes from the statement said earlier to the one said later, whatever order their rows were added in
        if l_old.size != int((sup >= 0).sum()) or (l_old.size and (
                min(l_old.min(), l_new.min()) < 0 or max(l_old.max(), l_new.max()) >= done
                or (sup[l_old] != l_new).any() or (l_old == l_new).any())):
            raise ValueError("supersedes links do not match their rows")
        t.phrase = {r: text(k) for r, k in zip(p_rows.tolist(), p_text.tolist())}
        ids = ids.copy()

        def make() -> None:
            strings: dict[int, str] = {}

            def s(k: int) -> str:
                v = strings.get(k)
                if v is None:
                    v = strings[k] = text(k)
                return v

            stated: dict[int, list[Statement]] = {}
            for r, e, a, v, sent, s0, s1, upd, neg, first, again in zip(f_rows.tolist(), *(c.tolist() for c in f_cols),
                                                                        f_again.tolist()):
                stated.setdefault(r, []).append(Statement(s(e), s(a), s(v), bool(upd), bool(neg), bool(first),
                                                          s(sent), (int(s0), int(s1)), bool(again)))
            t._stated, t._facts_of, t._facts = {}, {}, {}
            for r in sorted(stated):  # the fact tables as sync filled them; the links are the saved ones
                t._state(ids, r, stated[r], link=False)
            links, rows = [], []
            for o, n, e, a, ov, nv, upd in zip(l_old.tolist(), l_new.tolist(), *(c.tolist() for c in l_cols[:5])):
                links.append(Link(int(ids[o]), int(ids[n]), s(e), s(a), s(ov), s(nv),
                                  "update" if upd else "contradiction"))
                rows.append((o, n))
            t._links, t._link_rows = links, rows

        t._update_of = dict(zip(l_old.tolist(), (bool(c) for c in l_cols[5].tolist())))
        t._pending_facts = make
        t._unsettled = None  # the saved links may have been made as they came: the next relink makes them all
        t.done = t.annotated = done
        latest = meta.get("latest")
        t.latest = None if latest is None else float(latest)
        t._seen = None
        return t

    # -- reading ----------------------------------------------------------------------------------------------
    def event_span(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(start, end) of the event times of ``rows``, the end equal to the start for an instant: a time the caller
        gave (``add(..., event_time=...)``, kept as the day from it for a question's period) is the instant it
        names, as is a timestamp that dates the event."""
        s = self.event_start.a[rows]
        e = self.event_end.a[rows]
        return s, np.where(np.isnan(e) | (e <= s) | (self.gran.a[rows] == _CALLER), s, e)

    def event_mid(self, rows: np.ndarray) -> np.ndarray:
        """The event time of ``rows`` as one instant (``Hit.event_time``, timelines, chronological order): the middle
        of a resolved period ("yesterday": its noon), the caller's own time as given. A period said with "since"
        ("I've lived here since 2019", said in 2024) dates when it began, the middle of 2019: its days up to the
        message are what a question's period and the ``since`` / ``until`` filters are matched against."""
        s, e = self.event_span(rows)
        onset = self.event_onset.a[rows]
        return np.where(np.isnan(onset), (s + e) / 2.0, onset)

    def label(self, row: int, idx: NamespaceIndex) -> str | None:
        """The resolved event date of a row whose text dates it relatively or the caller dated ("7 May 2023"; a time
        the caller gave with its offset from UTC is on that calendar's day)."""
        if row in self._labels:
            return self._labels[row]
        g = GRANULARITIES[int(self.gran.a[row])]
        out = None
        if g != "none" and (row in self.phrase or g == "caller"):
            start, end = float(self.event_start.a[row]), float(self.event_end.a[row])
            off = float(idx.event_offset.a[row]) if g == "caller" else math.nan
            if off == off:
                start, end = start + off, end + off
            out = timeexpr.TimeRef(start, end, "day" if g == "caller" else g, "", True).label()
        self._labels[row] = out
        return out

    def span(self, idx: NamespaceIndex, message_ids: list[int]) -> tuple[float, float] | None:
        """Earliest event start and latest event end over some messages (a unit's event time), or None."""
        return self.spans(idx, [message_ids])[0]

    def spans(self, idx: NamespaceIndex, groups: list[list[int]]) -> list[tuple[float, float] | None]:
        """:meth:`span` of every group of message ids, in one pass over their rows."""
        out: list[tuple[float, float] | None] = [None] * len(groups)
        sizes = np.fromiter((len(g) for g in groups), dtype=np.int64, count=len(groups))
        if not sizes.sum():
            return out
        get, done = idx.row_of.get, self.done
        ids = [i for g in groups for i in g]
        rows = np.fromiter((get(i, done) for i in ids), dtype=np.int64, count=len(ids))
        group = np.repeat(np.arange(len(groups)), sizes)
        keep = rows < done
        rows, group = rows[keep], group[keep]
        s = self.event_start.a[rows]
        e = self.event_end.a[rows]
        e = np.where(np.isnan(e), s, e)
        dated = ~np.isnan(s)
        if not dated.any():
            return out
        first = np.full(len(groups), np.inf)
        last = np.full(len(groups), -np.inf)
        np.minimum.at(first, group[dated], s[dated])
        ends = ~np.isnan(e)  # a dated row always has an end (its start when it has none)
        np.maximum.at(last, group[ends], e[ends])
        for g in np.unique(group[dated]).tolist():
            out[g] = (float(first[g]), float(last[g]))
        return out

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
