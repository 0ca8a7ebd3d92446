"""``Memory`` methods for time and truth: timelines and contradiction records (seed 002 §4.1 stage 3)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from hippo.base.errors import InvalidInput
from hippo.base.timeutil import to_datetime

if TYPE_CHECKING:
    from hippo.index.coindex import NamespaceIndex


class TruthMixin:
    """Timelines and contradictions; mixed into :class:`hippo.Memory`."""

    def timeline(self, query_or_entity: str, *, limit: int = 50, since: Any = None, until: Any = None,
                 as_of: Any = None) -> list[dict[str, Any]]:
        """Time-ordered assertions about a person or a topic, with provenance.

        ``query_or_entity`` is a speaker's name (their own statements that report events, facts or dates, plus
        messages that mention them) or any query (its best matches). At most ``limit`` entries, ordered by event
        time (then by position in the stream); each is a dict with ``id``, ``event_time`` (datetime or None),
        ``event`` (the resolved date as text when the message dates its event, else None), ``timestamp``,
        ``text``, ``speaker``, ``session_id``, ``superseded_by`` and ``facts`` (``attribute`` / ``value`` pairs).
        """
        from hippo.memory import _SCOPE, _check_int

        self._live()
        if not isinstance(query_or_entity, str):
            raise InvalidInput(f"query_or_entity must be a str, got {type(query_or_entity).__name__}")
        query = self._check_query(query_or_entity)
        limit = _check_int(limit, "limit", minimum=1)
        scope = self._scope(query, since, until, as_of)
        idx = self._index()
        token = _SCOPE.set(scope)
        try:
            with self._s.lock.read():
                truth = idx.truth
                truth.sync(idx)
                rows = self._timeline_rows(idx, query, limit)
                rows = self._pieces_rows(idx, rows)
                mids = truth.event_mid(np.asarray(rows, dtype=np.int64)) if rows else np.zeros(0)
                order = sorted(range(len(rows)), key=lambda k: (np.nan_to_num(mids[k], nan=np.inf),
                                                                 int(idx.seqs.a[rows[k]])))
                out = []
                for k in order:
                    r = rows[k]
                    nxt = truth.superseder(r, scope.as_of)
                    ts = float(idx.ts.a[r])
                    out.append({
                        "id": int(idx.ids.a[r]),
                        "event_time": to_datetime(float(mids[k])),
                        "event": truth.label(r),
                        "timestamp": to_datetime(ts),
                        "text": idx.text_of(r),
                        "speaker": idx.speakers[int(idx.speaker.a[r])],
                        "session_id": idx.sessions[int(idx.session.a[r])],
                        "superseded_by": int(idx.ids.a[nxt]) if nxt >= 0 else None,
                        "facts": [{"attribute": f.attribute, "value": f.value} for f in truth.facts_of.get(r, [])],
                    })
                return out
        finally:
            _SCOPE.reset(token)

    def _pieces_rows(self, idx: "NamespaceIndex", rows: list[int]) -> list[int]:
        """The rows that survive the call's time scope."""
        keep = {p.key for p in self._pieces(idx, np.asarray(rows, dtype=np.int64), None)}
        return [r for r in rows if int(idx.ids.a[r]) in keep]

    def _timeline_rows(self, idx: "NamespaceIndex", query: str, limit: int) -> list[int]:
        truth = idx.truth
        name = query.strip().lower()
        speaker_rows: list[int] = []
        codes = [c for c, s in enumerate(idx.speakers) if s is not None and s.lower() == name]
        if codes:
            spk = idx.speaker.a[: len(idx)]
            own = np.flatnonzero(np.isin(spk, codes))
            # assertions: statements that date an event, state a fact or carry new fact fingerprints
            informative = truth.has_time.a[own] | (truth.surprise.a[own] >= 0.5)
            informative |= np.isin(own, np.fromiter(truth.facts_of.keys(), dtype=np.int64, count=len(truth.facts_of)))
            speaker_rows = own[informative].tolist()
        ranked, scores, _, _ = self._rank(idx, query, max(limit, 50))
        if speaker_rows:
            # the person's own assertions first (most surprising first when over the limit), then mentions
            surprise = truth.surprise.a[np.asarray(speaker_rows)]
            speaker_rows = [speaker_rows[k] for k in np.argsort(-surprise, kind="stable")]
            seen = set(speaker_rows[:limit])
            mentions = [r for r in ranked.tolist() if r not in seen]
            return (speaker_rows[:limit] + mentions)[:limit]
        return ranked[:limit].tolist()

    def contradictions(self, *, include_updates: bool = False) -> list[dict[str, Any]]:
        """Open conflicts: pairs of statements about the same entity and attribute whose values differ, the newer
        one without an update cue and not itself updated since (seed 002 §4.1 stage 3, contradiction records
        indexed by entity and predicate). ``include_updates=True`` also lists resolved updates ("I moved to...").
        Each is a dict with ``old_id``, ``new_id``, ``entity``, ``attribute``, ``old_value``, ``new_value``,
        ``kind``, ``old_time``, ``new_time``, ``old_text`` and ``new_text``. Nothing is ever deleted."""
        self._live()
        if not isinstance(include_updates, bool):
            raise InvalidInput(f"include_updates must be a bool, got {type(include_updates).__name__}")
        idx = self._index()
        with self._s.lock.read():
            truth = idx.truth
            truth.sync(idx)
            out = []
            for link, (old_row, new_row) in zip(truth.links, truth.link_rows):
                if link.kind != "contradiction" and not include_updates:
                    continue
                if link.kind == "contradiction" and not include_updates and truth.superseder(new_row) >= 0:
                    continue  # a later statement settled it
                out.append({
                    "old_id": link.old, "new_id": link.new, "entity": link.entity, "attribute": link.attribute,
                    "old_value": link.old_value, "new_value": link.new_value, "kind": link.kind,
                    "old_time": to_datetime(float(idx.ts.a[old_row])), "new_time": to_datetime(float(idx.ts.a[new_row])),
                    "old_text": idx.text_of(old_row), "new_text": idx.text_of(new_row),
                })
            return out

    async def atimeline(self, query_or_entity: str, *, limit: int = 50, since: Any = None, until: Any = None,
                        as_of: Any = None) -> list[dict[str, Any]]:
        return await self._run(self.timeline, query_or_entity, limit=limit, since=since, until=until, as_of=as_of)

    async def acontradictions(self, *, include_updates: bool = False) -> list[dict[str, Any]]:
        return await self._run(self.contradictions, include_updates=include_updates)
